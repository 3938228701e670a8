/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "runner.h"
#include "check.h"
#include "stats.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* --inject-error: rank 0 flips one payload byte of its last send. */
static void corrupt(void *buf, size_t n)
{
	((unsigned char *)buf)[n / 2] ^= 0x5a;
}

static int run_ddt(struct ddt_case *c, MPI_Comm pair, const struct ddt_opts *o,
		   double *samples)
{
	int peer = 1 - c->rank;
	for (int oi = 0; oi < o->outer; oi++) {
		struct ddt_types t;
		c->pat->types(c, c->rank, oi, &t);
		for (int ii = 0; ii < o->inner; ii++) {
			if (c->rank == 0) {
				double t0 = bench_now_us();
				if (o->inject && oi == o->outer - 1 && ii == o->inner - 1) {
					int psize, pos = 0;
					MPI_CHECK(MPI_Pack_size(1, t.st, pair, &psize));
					void *tmp = ddt_alloc((size_t)psize, "inject buffer");
					MPI_CHECK(MPI_Pack(t.sbuf, 1, t.st, tmp, psize, &pos, pair));
					corrupt(tmp, (size_t)pos);
					MPI_CHECK(MPI_Send(tmp, pos, MPI_PACKED, peer, 0, pair));
					free(tmp);
				} else {
					MPI_CHECK(MPI_Send(t.sbuf, 1, t.st, peer, 0, pair));
				}
				MPI_CHECK(MPI_Recv(t.rbuf, 1, t.rt, peer, 0, pair, MPI_STATUS_IGNORE));
				samples[oi * o->inner + ii] = bench_now_us() - t0;
			} else {
				MPI_CHECK(MPI_Recv(t.rbuf, 1, t.rt, peer, 0, pair, MPI_STATUS_IGNORE));
				MPI_CHECK(MPI_Send(t.sbuf, 1, t.st, peer, 0, pair));
			}
		}
		if (t.rt != t.st)
			MPI_CHECK(MPI_Type_free(&t.rt));
		MPI_CHECK(MPI_Type_free(&t.st));
	}
	return 0;
}

static int run_manual(struct ddt_case *c, MPI_Comm pair, const struct ddt_opts *o,
		      double *samples)
{
	int peer = 1 - c->rank;
	int n = (int)c->bytes;
	for (int oi = 0; oi < o->outer; oi++) {
		void *buf = ddt_alloc(c->bytes, "manual pack buffer");
		for (int ii = 0; ii < o->inner; ii++) {
			if (c->rank == 0) {
				double t0 = bench_now_us();
				c->pat->pack(c, 0, oi, c->arena, buf);
				if (o->inject && oi == o->outer - 1 && ii == o->inner - 1)
					corrupt(buf, c->bytes);
				MPI_CHECK(MPI_Send(buf, n, MPI_BYTE, peer, 0, pair));
				MPI_CHECK(MPI_Recv(buf, n, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE));
				c->pat->unpack(c, 0, oi, c->arena, buf);
				samples[oi * o->inner + ii] = bench_now_us() - t0;
			} else {
				MPI_CHECK(MPI_Recv(buf, n, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE));
				c->pat->unpack(c, 1, oi, c->arena, buf);
				c->pat->pack(c, 1, oi, c->arena, buf);
				MPI_CHECK(MPI_Send(buf, n, MPI_BYTE, peer, 0, pair));
			}
		}
		free(buf);
	}
	return 0;
}

static int run_pack(struct ddt_case *c, MPI_Comm pair, const struct ddt_opts *o,
		    double *samples)
{
	int peer = 1 - c->rank;
	for (int oi = 0; oi < o->outer; oi++) {
		struct ddt_types t;
		int psize, pos;
		c->pat->types(c, c->rank, oi, &t);
		MPI_CHECK(MPI_Pack_size(1, t.st, pair, &psize));
		void *buf = ddt_alloc((size_t)psize, "MPI_Pack buffer");
		for (int ii = 0; ii < o->inner; ii++) {
			if (c->rank == 0) {
				double t0 = bench_now_us();
				pos = 0;
				MPI_CHECK(MPI_Pack(t.sbuf, 1, t.st, buf, psize, &pos, pair));
				if (o->inject && oi == o->outer - 1 && ii == o->inner - 1)
					corrupt(buf, (size_t)pos);
				MPI_CHECK(MPI_Send(buf, pos, MPI_PACKED, peer, 0, pair));
				MPI_CHECK(MPI_Recv(buf, psize, MPI_PACKED, peer, 0, pair,
						   MPI_STATUS_IGNORE));
				pos = 0;
				MPI_CHECK(MPI_Unpack(buf, psize, &pos, t.rbuf, 1, t.rt, pair));
				samples[oi * o->inner + ii] = bench_now_us() - t0;
			} else {
				MPI_CHECK(MPI_Recv(buf, psize, MPI_PACKED, peer, 0, pair,
						   MPI_STATUS_IGNORE));
				pos = 0;
				MPI_CHECK(MPI_Unpack(buf, psize, &pos, t.rbuf, 1, t.rt, pair));
				pos = 0;
				MPI_CHECK(MPI_Pack(t.sbuf, 1, t.st, buf, psize, &pos, pair));
				MPI_CHECK(MPI_Send(buf, pos, MPI_PACKED, peer, 0, pair));
			}
		}
		free(buf);
		if (t.rt != t.st)
			MPI_CHECK(MPI_Type_free(&t.rt));
		MPI_CHECK(MPI_Type_free(&t.st));
	}
	return 0;
}

#define GUARD 64

/* Contiguous transfer of the same byte count as bytes/4 MPI_FLOATs. */
static int run_reference(struct ddt_case *c, MPI_Comm pair, const struct ddt_opts *o,
			 double *samples)
{
	int peer = 1 - c->rank;
	int n = (int)(c->bytes / 4);
	float *sbuf = ddt_alloc(c->bytes, "reference send buffer");
	unsigned char *rbuf = ddt_alloc(c->bytes + GUARD, "reference receive buffer");
	unsigned char *want = ddt_alloc(c->bytes + GUARD, "reference expectation");
	ddt_fill(sbuf, c->bytes, 4, c->rank, DDT_SALT_REF);
	ddt_fill(rbuf, c->bytes + GUARD, 4, c->rank, DDT_SALT_ARENA);
	memcpy(want, rbuf, c->bytes + GUARD);
	ddt_fill(want, c->bytes, 4, peer, DDT_SALT_REF);
	MPI_CHECK(MPI_Barrier(pair));

	for (int it = 0; it < o->outer * o->inner; it++) {
		if (c->rank == 0) {
			double t0 = bench_now_us();
			if (o->inject && it == o->outer * o->inner - 1)
				corrupt(sbuf, c->bytes);
			MPI_CHECK(MPI_Send(sbuf, n, MPI_FLOAT, peer, 0, pair));
			MPI_CHECK(MPI_Recv(rbuf, n, MPI_FLOAT, peer, 0, pair, MPI_STATUS_IGNORE));
			samples[it] = bench_now_us() - t0;
		} else {
			MPI_CHECK(MPI_Recv(rbuf, n, MPI_FLOAT, peer, 0, pair, MPI_STATUS_IGNORE));
			MPI_CHECK(MPI_Send(sbuf, n, MPI_FLOAT, peer, 0, pair));
		}
	}
	int rc = ddt_check_bytes(c, "reference", "receive buffer (+64 B guard)", rbuf, want,
				 c->bytes + GUARD);
	free(sbuf);
	free(rbuf);
	free(want);
	return rc;
}

int ddt_run_pingpong(struct ddt_case *c, enum ddt_method m, MPI_Comm pair,
		     const struct ddt_opts *o, const unsigned char *expected, double *samples)
{
	if (m == M_REF)
		return run_reference(c, pair, o, samples);
	ddt_check_fill(c);
	MPI_CHECK(MPI_Barrier(pair)); /* outside the timed loop */
	if (m == M_DDT)
		run_ddt(c, pair, o, samples);
	else if (m == M_MANUAL)
		run_manual(c, pair, o, samples);
	else
		run_pack(c, pair, o, samples);
	return ddt_check_bytes(c, ddt_method_name[m], "arena after the run", c->arena, expected,
			       c->arena_bytes);
}
