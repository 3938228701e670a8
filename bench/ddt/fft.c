/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FFT: the transpose of a distributed 2-D FFT, on all P ranks with
 * MPI_Alltoall.  Each rank holds m[R][N'] of complex doubles (cx =
 * contig(2, d)); peer k gets the R x R block at columns kR through the
 * gather type resized(vec(R, R, N', cx), 0, 16R B) and it lands transposed
 * through the scatter type contig(R, resized(vec(R, 1, N', cx), 0, 16 B)).
 * One round trip = Alltoall(m -> recv) + Alltoall(recv -> m): afterwards
 * recv holds the transpose of the global matrix and m its original values.
 */
#include "ddt.h"
#include "check.h"
#include "stats.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* N; spec bytes are for P = 2 */
static const struct ddt_size fft_sizes[] = {
	{"256", 524288, {256}},     {"512", 2097152, {512}},   {"768", 4718592, {768}},
	{"1024", 8388608, {1024}}, {"1536", 18874368, {1536}},
};

#define CX 16 /* bytes of one complex double */

/* N' = N + (N mod P) as in the spec; when that is not a multiple of P
 * (P = 3: 256 -> 257) we round N up to the next multiple of P instead. */
static size_t fft_nprime(int n, int p)
{
	size_t np = (size_t)n + (size_t)(n % p);
	if (np % (size_t)p)
		np = ((size_t)n + (size_t)p - 1) / (size_t)p * (size_t)p;
	return np;
}

struct fft;
static void make_types(const struct fft *f, MPI_Datatype *gather, MPI_Datatype *scatter);

struct fft {
	int P, rank;
	size_t np, r;
	unsigned char *m, *recv, *sb, *rb, *want_m, *want_recv;
	size_t mbytes, blk; /* blk: bytes per peer */
};

/* value of global element (row, col): two doubles */
static void put_value(const struct fft *f, unsigned char *dst, size_t row, size_t col)
{
	uint64_t v[2];
	size_t g = row * f->np + col;
	v[0] = ddt_value_bits(2 * g, 0, 7, 8);
	v[1] = ddt_value_bits(2 * g + 1, 0, 7, 8);
	memcpy(dst, v, sizeof(v));
}

static void make_types(const struct fft *f, MPI_Datatype *gather, MPI_Datatype *scatter)
{
	MPI_Datatype cx, v, col, colr;
	int r = (int)f->r, np = (int)f->np;
	MPI_CHECK(MPI_Type_contiguous(2, MPI_DOUBLE, &cx));
	MPI_CHECK(MPI_Type_vector(r, r, np, cx, &v));
	MPI_CHECK(MPI_Type_create_resized(v, 0, (MPI_Aint)CX * r, gather));
	MPI_CHECK(MPI_Type_vector(r, 1, np, cx, &col));
	MPI_CHECK(MPI_Type_create_resized(col, 0, CX, &colr));
	MPI_CHECK(MPI_Type_contiguous(r, colr, scatter));
	MPI_CHECK(MPI_Type_commit(gather));
	MPI_CHECK(MPI_Type_commit(scatter));
	MPI_CHECK(MPI_Type_free(&cx));
	MPI_CHECK(MPI_Type_free(&v));
	MPI_CHECK(MPI_Type_free(&col));
	MPI_CHECK(MPI_Type_free(&colr));
}

/* Payload from the datatypes: P x MPI_Type_size(gather) (= scatter).
 * spec: the table for P = 2, else the spec's formula 16 N'^2 / P. */
static size_t fft_bytes(const struct ddt_pattern *pat, int size_idx, int nprocs, size_t *spec)
{
	struct fft f = {.P = nprocs};
	f.np = fft_nprime(pat->sizes[size_idx].p[0], nprocs);
	f.r = f.np / (size_t)nprocs;
	*spec = nprocs == 2 ? pat->sizes[size_idx].spec_bytes : CX * f.np * f.np / (size_t)nprocs;
	MPI_Datatype g, s;
	int gs, ss;
	make_types(&f, &g, &s);
	MPI_CHECK(MPI_Type_size(g, &gs));
	MPI_CHECK(MPI_Type_size(s, &ss));
	MPI_CHECK(MPI_Type_free(&g));
	MPI_CHECK(MPI_Type_free(&s));
	if (gs != ss)
		return 0;
	return (size_t)gs * (size_t)nprocs;
}

/* hand pack: peer k's block = rows 0..R-1, columns kR..kR+R-1 */
static void man_pack(const struct fft *f, const unsigned char *src)
{
	size_t row = f->r * CX;
	for (int k = 0; k < f->P; k++)
		for (size_t i = 0; i < f->r; i++)
			memcpy(f->sb + (size_t)k * f->blk + i * row,
			       src + (i * f->np + (size_t)k * f->r) * CX, row);
}

/* hand unpack: peer k's element (i, j) goes to dst[j][kR + i] */
static void man_unpack(const struct fft *f, unsigned char *dst)
{
	for (int k = 0; k < f->P; k++) {
		const unsigned char *b = f->rb + (size_t)k * f->blk;
		for (size_t i = 0; i < f->r; i++)
			for (size_t j = 0; j < f->r; j++)
				memcpy(dst + (j * f->np + (size_t)k * f->r + i) * CX,
				       b + (i * f->r + j) * CX, CX);
	}
}

static int fft_check(const struct fft *f, const struct ddt_pattern *pat, int size_idx,
		     enum ddt_method m)
{
	struct ddt_case c = {.pat = pat, .size = &pat->sizes[size_idx], .rank = f->rank,
			     .esize = 8};
	int rc = 0;
	if (m == M_REF) {
		for (int k = 0; k < f->P && !rc; k++) {
			uint64_t *w = (uint64_t *)f->want_recv;
			size_t ne = f->blk / 8;
			for (size_t j = 0; j < ne; j++)
				w[j] = ddt_value_bits((size_t)f->rank * ne + j, k, DDT_SALT_REF, 8);
			rc = ddt_check_bytes(&c, "reference", "receive block", f->rb + k * f->blk,
					     w, f->blk);
		}
		return rc;
	}
	rc |= ddt_check_bytes(&c, ddt_method_name[m], "transposed receive array", f->recv,
			      f->want_recv, f->mbytes);
	rc |= ddt_check_bytes(&c, ddt_method_name[m], "send array after the round trip", f->m,
			      f->want_m, f->mbytes);
	return rc;
}

static int fft_collective(const struct ddt_pattern *pat, int size_idx, enum ddt_method meth,
			  const struct ddt_opts *o, double *samples)
{
	struct fft f;
	MPI_Comm w = MPI_COMM_WORLD;
	MPI_CHECK(MPI_Comm_size(w, &f.P));
	MPI_CHECK(MPI_Comm_rank(w, &f.rank));
	f.np = fft_nprime(pat->sizes[size_idx].p[0], f.P);
	f.r = f.np / (size_t)f.P;
	f.mbytes = f.r * f.np * CX;
	f.blk = f.r * f.r * CX;
	f.m = ddt_alloc(f.mbytes, "FFT matrix");
	f.recv = ddt_alloc(f.mbytes, "FFT receive matrix");
	f.sb = ddt_alloc(f.mbytes, "FFT send buffer");
	f.rb = ddt_alloc(f.mbytes, "FFT receive buffer");
	f.want_m = ddt_alloc(f.mbytes, "FFT expected matrix");
	f.want_recv = ddt_alloc(f.mbytes, "FFT expected receive matrix");

	size_t g0 = (size_t)f.rank * f.r;
	for (size_t i = 0; i < f.r; i++)
		for (size_t col = 0; col < f.np; col++) {
			put_value(&f, f.m + (i * f.np + col) * CX, g0 + i, col);
			put_value(&f, f.want_recv + (i * f.np + col) * CX, col, g0 + i);
		}
	memcpy(f.want_m, f.m, f.mbytes);
	ddt_fill(f.recv, f.mbytes, 8, f.rank, DDT_SALT_ARENA);
	if (meth == M_REF)
		ddt_fill(f.sb, f.mbytes, 8, f.rank, DDT_SALT_REF);

	int pblk = (int)f.blk;
	MPI_CHECK(MPI_Barrier(w));
	for (int oi = 0; oi < o->outer; oi++) {
		MPI_Datatype gather = MPI_DATATYPE_NULL, scatter = MPI_DATATYPE_NULL;
		if (meth == M_DDT || meth == M_PACK)
			make_types(&f, &gather, &scatter);
		for (int ii = 0; ii < o->inner; ii++) {
			double t0 = bench_now_us();
			if (o->inject && f.rank == 0 && oi == o->outer - 1 && ii == o->inner - 1)
				(meth == M_REF ? f.sb : f.m)[CX * f.r + 3] ^= 0x5a;
			switch (meth) {
			case M_DDT:
				MPI_CHECK(MPI_Alltoall(f.m, 1, gather, f.recv, 1, scatter, w));
				MPI_CHECK(MPI_Alltoall(f.recv, 1, gather, f.m, 1, scatter, w));
				break;
			case M_MANUAL:
				man_pack(&f, f.m);
				MPI_CHECK(MPI_Alltoall(f.sb, pblk, MPI_BYTE, f.rb, pblk, MPI_BYTE, w));
				man_unpack(&f, f.recv);
				man_pack(&f, f.recv);
				MPI_CHECK(MPI_Alltoall(f.sb, pblk, MPI_BYTE, f.rb, pblk, MPI_BYTE, w));
				man_unpack(&f, f.m);
				break;
			case M_PACK:
				for (int pass = 0; pass < 2; pass++) {
					unsigned char *src = pass ? f.recv : f.m;
					unsigned char *dst = pass ? f.m : f.recv;
					for (int k = 0; k < f.P; k++) {
						int pos = 0;
						MPI_CHECK(MPI_Pack(src + (size_t)k * f.r * CX, 1, gather,
								   f.sb + (size_t)k * f.blk, pblk, &pos,
								   w));
					}
					MPI_CHECK(MPI_Alltoall(f.sb, pblk, MPI_PACKED, f.rb, pblk,
							       MPI_PACKED, w));
					for (int k = 0; k < f.P; k++) {
						int pos = 0;
						MPI_CHECK(MPI_Unpack(f.rb + (size_t)k * f.blk, pblk, &pos,
								     dst + (size_t)k * f.r * CX, 1,
								     scatter, w));
					}
				}
				break;
			default:
				MPI_CHECK(MPI_Alltoall(f.sb, pblk, MPI_BYTE, f.rb, pblk, MPI_BYTE, w));
				MPI_CHECK(MPI_Alltoall(f.rb, pblk, MPI_BYTE, f.sb, pblk, MPI_BYTE, w));
				break;
			}
			if (f.rank == 0)
				samples[oi * o->inner + ii] = bench_now_us() - t0;
		}
		if (gather != MPI_DATATYPE_NULL) {
			MPI_CHECK(MPI_Type_free(&gather));
			MPI_CHECK(MPI_Type_free(&scatter));
		}
	}
	int bad = fft_check(&f, pat, size_idx, meth) ? 1 : 0, anybad = 0;
	MPI_CHECK(MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, w));
	free(f.m);
	free(f.recv);
	free(f.sb);
	free(f.rb);
	free(f.want_m);
	free(f.want_recv);
	return anybad ? -1 : 0;
}

const struct ddt_pattern ddt_fft = {
	.name = "FFT",
	.nsizes = sizeof(fft_sizes) / sizeof(fft_sizes[0]),
	.sizes = fft_sizes,
	.collective = fft_collective,
	.collective_bytes = fft_bytes,
};
