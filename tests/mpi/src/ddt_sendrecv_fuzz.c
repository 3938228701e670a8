/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/mpi/src/ddt_sendrecv_fuzz: MPI derived-datatype send/receive fuzzer
 * (tests/mpi/ddt-fuzz.sh runs it under btl pvas and vader).
 *
 * Each case is a random pair of nested datatypes with equal type signatures
 * (tests/ddt-copy/ddt_gen.c: every constructor, random counts and strides,
 * negative strides and lower bounds, resized, struct, subarray, darray,
 * FFT-shaped transposes, zero-size types), scaled to a log-uniform message
 * size between 0 and --max-bytes (a larger count, or the type wrapped in a
 * contiguous or a positive- or negative-stride hvector), and one "delivery
 * mode": blocking send/recv, isend/irecv (receive posted first, send first,
 * or unsynchronised), ssend, probe+recv, mprobe+mrecv (and improbe+imrecv),
 * persistent requests started twice, MPI_ANY_SOURCE (and MPI_ANY_TAG),
 * types freed right after MPI_Isend/MPI_Irecv before the wait, MPI_BOTTOM
 * with absolute addresses, sendrecv exchanges in both directions at once, and
 * local copies by a collective on MPI_COMM_SELF (Open MPI's
 * ompi_datatype_sndrcv, the local part of every Alltoall and Gather).
 * The direction (rank 0 -> 1 or 1 -> 0) is random too.
 *
 * Both ranks derive everything from (seed, case number) alone, so they build
 * the same types and the same send-buffer contents without talking.  The
 * receiver regenerates the send buffer, computes the reference itself
 * (MPI_Pack with the send type, MPI_Unpack into a copy of its guarded
 * receive buffer) and compares the whole receive buffer byte for byte,
 * guard bands and the gaps of the typemap included; it also checks the
 * received byte count (and source and tag for wildcard receives).
 *
 * Only the MPI API is used (no opal internals).  Ranks 0 and 1 run the
 * cases; more ranks are allowed and stay idle.
 *
 * Usage: ddt_sendrecv_fuzz [--seed S|random] [--cases N] [--case K]
 *                          [--max-bytes B] [--timeout SECONDS] [--thread-multiple]
 *                          [-v] [--help]
 * --thread-multiple initialises with MPI_THREAD_MULTIPLE (one thread still
 * makes all the calls, but Open MPI and the BTLs take their locks).
 * On a mismatch the receiver prints the seed, case, mode, both type
 * descriptions, the first differing byte and the command that reruns just
 * that case (--seed S --case K with the same --max-bytes); the program
 * finishes the other cases and exits 1.  MPI errors abort (exit 3), a case
 * that takes longer than --timeout exits (4) with the case named.
 * Output (rank 0): "# ..." diagnostics, then one line
 *   ddt_sendrecv_fuzz: PASS|FAIL seed=S cases=N ran=R skipped=K failed=F ...
 */
#include <mpi.h>

#include "ddt_gen.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FIXED_SEED 20261122ull

enum mode {
	M_SENDRECV,
	M_ISEND,
	M_SSEND,
	M_PROBE,
	M_MPROBE,
	M_PERSIST,
	M_ANYSRC,
	M_FREE,
	M_BOTTOM,
	M_EXCHANGE,
	M_LOCAL,
	NMODES
};
static const char *const mode_name[NMODES] = {
    "send/recv",	 "isend/irecv",	      "ssend",
    "probe+recv",	 "mprobe+mrecv",      "persistent",
    "any-source",	 "types-freed-early", "mpi-bottom",
    "sendrecv-exchange", "local-collective",
};
/* the three variants of each mode */
static const char *const variant_name[NMODES][3] = {
    {"MPI_Send/MPI_Recv", "MPI_Send/MPI_Irecv", "MPI_Isend/MPI_Recv"},
    {"unsynchronised", "receive posted first", "send posted first"},
    {"MPI_Ssend/MPI_Recv", "MPI_Ssend/MPI_Irecv", "MPI_Issend/MPI_Recv"},
    {"MPI_Probe(peer,tag)", "MPI_Probe(ANY_SOURCE,ANY_TAG)", "MPI_Iprobe loop"},
    {"MPI_Mprobe/MPI_Mrecv", "MPI_Improbe loop/MPI_Imrecv", "MPI_Mprobe(ANY_SOURCE)/MPI_Imrecv"},
    {"Send_init/Recv_init x2", "Send_init/Recv_init x2, receive started late",
     "Ssend_init/Recv_init x2"},
    {"MPI_Recv(ANY_SOURCE)", "MPI_Irecv(ANY_SOURCE)", "MPI_Recv(ANY_SOURCE,ANY_TAG)"},
    {"Isend/Irecv, free, wait", "Isend, free, barrier / Irecv, free, wait",
     "Issend/Irecv, free, wait"},
    {"MPI_Send/MPI_Recv", "MPI_Isend/MPI_Irecv", "MPI_Isend/MPI_Irecv"},
    {"MPI_Sendrecv", "Irecv+Isend, Waitall", "MPI_Sendrecv, MPI_BOTTOM"},
    {"MPI_Alltoall(MPI_COMM_SELF)", "MPI_Allgather(MPI_COMM_SELF)",
     "MPI_Gather(MPI_COMM_SELF), MPI_BOTTOM"},
};

/* scaling of one side: how the factor m is applied */
enum { SC_COUNT, SC_CONTIG, SC_HVECTOR };

struct params {
	int mode, variant, sender; /* sender: rank 0 or 1 (both in exchanges) */
	int sbottom, rbottom;
	enum ddt_pair_mode pmode;
	double target; /* message bytes aimed at */
	int how[2], gap[2], neg[2];
};

static uint64_t seed = FIXED_SEED;
static size_t max_bytes = 4 << 20;
static int verbose, rank, timeout_s = 60;
static MPI_Comm pair;
static char watch_msg[512];
static const char *prog;

static void watchdog(int sig)
{
	(void)sig;
	ssize_t w = write(2, watch_msg, strlen(watch_msg));
	(void)w;
	_exit(4);
}

static uint64_t case_state(uint64_t s, long k)
{
	return s ^ ((uint64_t)(k + 1) * 0xd1b54a32d192ed03ull);
}

/* Everything about case k that is not the pair itself, drawn first. */
static void draw_params(struct params *cp)
{
	cp->mode = (int)ddt_rnd(0, NMODES - 1);
	cp->variant = (int)ddt_rnd(0, 2);
	cp->sender = (int)ddt_rnd(0, 1);
	cp->sbottom = ddt_chance(70);
	cp->rbottom = ddt_chance(70);
	if (!cp->sbottom && !cp->rbottom)
		cp->rbottom = 1;
	long r = ddt_rnd(0, 99);
	cp->pmode = r < 45   ? DDT_PAIR_RANDOM
		    : r < 55 ? DDT_PAIR_SAME
		    : r < 63 ? DDT_PAIR_CONTIG_RECV
		    : r < 71 ? DDT_PAIR_CONTIG_SEND
		    : r < 81 ? DDT_PAIR_TRANSPOSE
		    : r < 91 ? DDT_PAIR_INDEX
			     : DDT_PAIR_ZERO;
	ddt_unit = (enum ddt_unit_kind)ddt_rnd(0, DDT_NUNITS - 1);
	/* log-uniform in [1, max_bytes + 1) */
	double u = (double)(ddt_rnd64() >> 11) * 0x1p-53;
	cp->target = exp2(u * log2((double)max_bytes + 1.0));
	for (int s = 0; s < 2; s++) {
		cp->how[s] = (int)ddt_rnd(0, 2);
		cp->gap[s] = ddt_chance(50) ? (int)ddt_rnd(0, 24) : 0;
		cp->neg[s] = ddt_chance(30);
	}
	if (cp->mode == M_EXCHANGE)
		cp->sender = -1;
}

/* Multiply both signatures by m (no random draws: cp holds them). */
static void scale(struct ddt_pair *p, const struct params *cp)
{
	if (p->n == 0 || cp->target < 2.0 * (double)p->n)
		return;
	long m = (long)(cp->target / (double)p->n);
	for (int s = 0; s < 2; s++) { /* keep the buffers under ddt_max_buffer */
		MPI_Aint lo, hi;
		ddt_span(s ? p->rt : p->st, s ? p->cr : p->cs, &lo, &hi);
		long lim = (long)(ddt_max_buffer - 4096) / (long)(hi - lo + cp->gap[s] + 1);
		if (m > lim)
			m = lim;
	}
	if (m < 2)
		return;
	for (int s = 0; s < 2; s++) {
		MPI_Datatype *t = s ? &p->rt : &p->st, w;
		long *c = s ? &p->cr : &p->cs;
		ddt_side = s;
		switch (cp->how[s]) {
		case SC_COUNT:
			*c *= m;
			ddt_say(" [count x%ld]", m);
			break;
		case SC_CONTIG:
			DDT_CHECK(MPI_Type_contiguous((int)m, *t, &w));
			DDT_CHECK(MPI_Type_commit(&w));
			*t = ddt_keep(w);
			ddt_say(" [in contig(%ld)]", m);
			break;
		default: { /* m blocks of the c elements, apart by their span + gap */
			MPI_Aint lo, hi;
			ddt_span(*t, *c, &lo, &hi);
			MPI_Aint stride = hi - lo + cp->gap[s];
			if (cp->neg[s])
				stride = -stride;
			DDT_CHECK(MPI_Type_create_hvector((int)m, (int)*c, stride, *t, &w));
			DDT_CHECK(MPI_Type_commit(&w));
			*t = ddt_keep(w);
			ddt_say(" [in hvector(%ld,%ld,%ldB)]", m, *c, (long)stride);
			*c = 1;
			break;
		}
		}
	}
}

/* MPI calls of the transfer: an error names the case, then aborts. */
static char case_name[256];
#define MCHK(x)                                                                                    \
	do {                                                                                       \
		int rc_ = (x);                                                                     \
		if (rc_ != MPI_SUCCESS) {                                                          \
			char es_[MPI_MAX_ERROR_STRING];                                            \
			int el_ = 0;                                                               \
			MPI_Error_string(rc_, es_, &el_);                                          \
			fprintf(stderr,                                                            \
				"rank %d: %s: %s failed: %s\n  rerun exactly this case: "          \
				"mpirun -np 2 <same --mca options> %s --seed %" PRIu64             \
				" --case %ld --max-bytes %zu -v\n",                                \
				rank, case_name, #x, es_, prog, seed, cur_case, max_bytes);        \
			MPI_Abort(MPI_COMM_WORLD, 3);                                              \
		}                                                                                  \
	} while (0)
static long cur_case;

struct xfer {
	void *sbuf, *rbuf;
	int scount, rcount;
	MPI_Datatype stype, rtype;
	int peer, tag;
};

/* The receiver's checks after one receive completed: status and buffer. */
static int check(const struct params *cp, struct ddt_pair *p, const struct xfer *x,
		 const MPI_Status *status, int round)
{
	int bad = 0, cnt = -1;
	char what[256] = "";
	MPI_Get_count(status, MPI_BYTE, &cnt);
	if ((size_t)cnt != p->n) {
		snprintf(what, sizeof(what), "received %d bytes (MPI_Get_count), expected %zu", cnt,
			 p->n);
		bad = 1;
	} else if (status->MPI_SOURCE != x->peer || status->MPI_TAG != x->tag) {
		snprintf(what, sizeof(what), "status source %d tag %d, expected %d %d",
			 status->MPI_SOURCE, status->MPI_TAG, x->peer, x->tag);
		bad = 1;
	}
	long d = ddt_first_diff(p->rb.mem, p->rref, p->rb.len), ndiff = 0;
	if (d >= 0) {
		for (size_t i = (size_t)d; i < p->rb.len; i++)
			ndiff += p->rb.mem[i] != p->rref[i];
		bad = 1;
	}
	if (!bad)
		return 0;
	fprintf(stderr,
		"FAIL seed=%" PRIu64 " case=%ld round=%d mode=%s (%s) direction=%d->%d bytes=%zu\n"
		"  pair: unit %d B; send %s x%ld%s\n"
		"                    recv %s x%ld%s\n",
		seed, cur_case, round, mode_name[cp->mode], variant_name[cp->mode][cp->variant],
		x->peer, rank, p->n, ddt_unit_size, ddt_desc[0], p->cs,
		x->sbuf == MPI_BOTTOM ? " (MPI_BOTTOM)" : "", ddt_desc[1], p->cr,
		x->rbuf == MPI_BOTTOM ? " (MPI_BOTTOM)" : "");
	if (what[0])
		fprintf(stderr, "  %s\n", what);
	if (d >= 0) {
		long off = (long)((p->rb.mem + d) - p->rb.base);
		const char *where = d < DDT_GUARD ? "in the guard below the buffer"
				    : (size_t)d >= p->rb.len - DDT_GUARD
					? "in the guard above the buffer"
					: "inside the receive span";
		fprintf(
		    stderr,
		    "  first differing byte: offset %ld from the receive buffer argument (%s): got "
		    "0x%02x, expected 0x%02x (was 0x%02x before); %ld bytes differ of %zu "
		    "checked\n",
		    off, where, p->rb.mem[d], p->rref[d], p->rinit[d], ndiff, p->rb.len);
	}
	fprintf(stderr,
		"  rerun exactly this case: mpirun -np 2 <same --mca options> %s --seed %" PRIu64
		" --case %ld --max-bytes %zu -v\n",
		prog, seed, cur_case, max_bytes);
	return 1;
}

/* One case's transfer.  Returns the number of failed checks (receiver). */
static int transfer(const struct params *cp, struct ddt_pair *p, long k)
{
	int me = rank, snd = cp->sender < 0 || cp->sender == me,
	    rcv = cp->sender < 0 || cp->sender != me;
	int v = cp->variant, fails = 0;
	struct xfer x = {
	    .sbuf = p->sb.base,
	    .rbuf = p->rb.base,
	    .scount = (int)p->cs,
	    .rcount = (int)p->cr,
	    .stype = p->st,
	    .rtype = p->rt,
	    .peer = 1 - me,
	    .tag = (int)(k % 32768),
	};
	int bottom =
	    cp->mode == M_BOTTOM || ((cp->mode == M_EXCHANGE || cp->mode == M_LOCAL) && v == 2);
	if (bottom && cp->sbottom) {
		x.stype = ddt_absolute(p->st, (int)p->cs, p->sb.base);
		x.sbuf = MPI_BOTTOM;
		x.scount = 1;
	}
	if (bottom && cp->rbottom) {
		x.rtype = ddt_absolute(p->rt, (int)p->cr, p->rb.base);
		x.rbuf = MPI_BOTTOM;
		x.rcount = 1;
	}
	if (rcv)
		memcpy(p->rb.mem, p->rinit, p->rb.len);
	MPI_Status status;
	MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
	MPI_Message msg;
	int flag;

	switch (cp->mode) {
	case M_SENDRECV:
	case M_BOTTOM:
		if (snd) {
			if (v == 0 || (cp->mode == M_SENDRECV && v == 1))
				MCHK(MPI_Send(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair));
			else {
				MCHK(MPI_Isend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
					       &rq[0]));
				MCHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
			}
		} else {
			if (v == 1) {
				MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair,
					       &rq[0]));
				MCHK(MPI_Wait(&rq[0], &status));
			} else
				MCHK(MPI_Recv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair,
					      &status));
		}
		break;
	case M_ISEND:
		if (snd) {
			if (v == 2)
				MCHK(MPI_Isend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
					       &rq[0]));
			if (v)
				MCHK(MPI_Barrier(pair));
			if (v != 2)
				MCHK(MPI_Isend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
					       &rq[0]));
			MCHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
		} else {
			if (v == 1)
				MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair,
					       &rq[0]));
			if (v)
				MCHK(MPI_Barrier(pair));
			if (v != 1)
				MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair,
					       &rq[0]));
			MCHK(MPI_Wait(&rq[0], &status));
		}
		break;
	case M_SSEND:
		if (snd) {
			if (v == 2) {
				MCHK(MPI_Issend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
						&rq[0]));
				MCHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
			} else
				MCHK(MPI_Ssend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair));
		} else if (v == 1) {
			MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair, &rq[0]));
			MCHK(MPI_Wait(&rq[0], &status));
		} else
			MCHK(MPI_Recv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair, &status));
		break;
	case M_PROBE:
		if (snd) {
			MCHK(MPI_Send(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair));
		} else {
			MPI_Status ps;
			if (v == 2) {
				do
					MCHK(MPI_Iprobe(x.peer, x.tag, pair, &flag, &ps));
				while (!flag);
			} else
				MCHK(MPI_Probe(v ? MPI_ANY_SOURCE : x.peer, v ? MPI_ANY_TAG : x.tag,
					       pair, &ps));
			int pc = -1;
			MPI_Get_count(&ps, MPI_BYTE, &pc);
			if ((size_t)pc != p->n || ps.MPI_SOURCE != x.peer || ps.MPI_TAG != x.tag) {
				fprintf(stderr,
					"FAIL seed=%" PRIu64
					" case=%ld: probe says %d bytes from %d tag %d, "
					"expected %zu from %d tag %d\n",
					seed, k, pc, ps.MPI_SOURCE, ps.MPI_TAG, p->n, x.peer,
					x.tag);
				fails++;
			}
			MCHK(MPI_Recv(x.rbuf, x.rcount, x.rtype, ps.MPI_SOURCE, ps.MPI_TAG, pair,
				      &status));
		}
		break;
	case M_MPROBE:
		if (snd) {
			MCHK(MPI_Isend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair, &rq[0]));
			MCHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
		} else {
			MPI_Status ps;
			if (v == 0) {
				MCHK(MPI_Mprobe(x.peer, x.tag, pair, &msg, &ps));
				MCHK(MPI_Mrecv(x.rbuf, x.rcount, x.rtype, &msg, &status));
			} else {
				if (v == 1) {
					do
						MCHK(MPI_Improbe(x.peer, x.tag, pair, &flag, &msg,
								 &ps));
					while (!flag);
				} else
					MCHK(MPI_Mprobe(MPI_ANY_SOURCE, x.tag, pair, &msg, &ps));
				MCHK(MPI_Imrecv(x.rbuf, x.rcount, x.rtype, &msg, &rq[0]));
				MCHK(MPI_Wait(&rq[0], &status));
			}
		}
		break;
	case M_PERSIST:
		if (snd) {
			if (v == 2)
				MCHK(MPI_Ssend_init(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
						    &rq[0]));
			else
				MCHK(MPI_Send_init(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
						   &rq[0]));
			for (int r = 0; r < 2; r++) {
				MCHK(MPI_Start(&rq[0]));
				if (v == 1)
					MCHK(MPI_Barrier(pair));
				MCHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
			}
			MCHK(MPI_Request_free(&rq[0]));
		} else {
			MCHK(MPI_Recv_init(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair, &rq[0]));
			for (int r = 0; r < 2; r++) {
				if (r)
					memcpy(p->rb.mem, p->rinit, p->rb.len);
				if (v == 1)
					MCHK(MPI_Barrier(pair));
				MCHK(MPI_Start(&rq[0]));
				MCHK(MPI_Wait(&rq[0], &status));
				if (r == 0)
					fails += check(cp, p, &x, &status, 0);
			}
			MCHK(MPI_Request_free(&rq[0]));
		}
		if (rcv)
			fails += check(cp, p, &x, &status, 1);
		return fails;
	case M_ANYSRC:
		if (snd) {
			MCHK(MPI_Send(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair));
		} else if (v == 1) {
			MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, MPI_ANY_SOURCE, x.tag, pair,
				       &rq[0]));
			MCHK(MPI_Wait(&rq[0], &status));
		} else
			MCHK(MPI_Recv(x.rbuf, x.rcount, x.rtype, MPI_ANY_SOURCE,
				      v ? MPI_ANY_TAG : x.tag, pair, &status));
		break;
	case M_FREE:
		/* the reference is computed: every derived type of the case goes
		 * right after posting, the request must keep what it needs */
		if (snd) {
			if (v == 2)
				MCHK(MPI_Issend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
						&rq[0]));
			else
				MCHK(MPI_Isend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair,
					       &rq[0]));
			ddt_free_pool();
			if (v == 1)
				MCHK(MPI_Barrier(pair));
			MCHK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
		} else {
			if (v == 1)
				MCHK(MPI_Barrier(pair));
			MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair, &rq[0]));
			ddt_free_pool();
			MCHK(MPI_Wait(&rq[0], &status));
		}
		break;
	case M_EXCHANGE:
		if (v == 1) {
			MPI_Status sts[2];
			MCHK(MPI_Irecv(x.rbuf, x.rcount, x.rtype, x.peer, x.tag, pair, &rq[0]));
			MCHK(MPI_Isend(x.sbuf, x.scount, x.stype, x.peer, x.tag, pair, &rq[1]));
			MCHK(MPI_Waitall(2, rq, sts));
			status = sts[0];
		} else
			MCHK(MPI_Sendrecv(x.sbuf, x.scount, x.stype, x.peer, x.tag, x.rbuf,
					  x.rcount, x.rtype, x.peer, x.tag, pair, &status));
		break;
	case M_LOCAL:
		/* no message: the receiving rank copies its own send buffer (the
		 * same contents as the peer's) with a collective on MPI_COMM_SELF */
		if (!rcv)
			break;
		if (v == 0)
			MCHK(MPI_Alltoall(x.sbuf, x.scount, x.stype, x.rbuf, x.rcount, x.rtype,
					  MPI_COMM_SELF));
		else if (v == 1)
			MCHK(MPI_Allgather(x.sbuf, x.scount, x.stype, x.rbuf, x.rcount, x.rtype,
					   MPI_COMM_SELF));
		else
			MCHK(MPI_Gather(x.sbuf, x.scount, x.stype, x.rbuf, x.rcount, x.rtype, 0,
					MPI_COMM_SELF));
		/* what a receive from the peer would have said */
		MCHK(MPI_Status_set_elements(&status, MPI_BYTE, (int)p->n));
		status.MPI_SOURCE = x.peer;
		status.MPI_TAG = x.tag;
		break;
	}
	if (rcv)
		fails += check(cp, p, &x, &status, 0);
	return fails;
}

struct totals {
	long ran, skipped, failed, bytes_lo, bytes_hi; /* bytes: cases' message sizes */
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [--seed S|random] [--cases N] [--case K] [--max-bytes B] [--timeout SEC] "
	    "[--repeat R] [--thread-multiple] [-v]\n"
	    "  MPI derived-datatype send/receive fuzzer (ranks 0 and 1; more ranks stay idle).\n"
	    "  --seed S       seed (default %llu; 'random': chosen by rank 0 and printed)\n"
	    "  --cases N      run cases 0..N-1 (default 500)\n"
	    "  --case K       run case K only (reproduce a failure: same --seed and --max-bytes)\n"
	    "  --max-bytes B  largest message, bytes (default 4194304; sizes are log-uniform in "
	    "[0,B])\n"
	    "  --timeout SEC  a case taking longer ends the run, naming the case (default 60)\n"
	    "  --repeat R     transfer each case R times, each one checked (default 1; once\n"
	    "                 in mode types-freed-early)\n"
	    "  --thread-multiple  MPI_Init_thread with MPI_THREAD_MULTIPLE (locks taken; "
	    "error if not provided)\n"
	    "  -v             describe every case (rank 0)\n",
	    prog, FIXED_SEED);
}

int main(int argc, char **argv)
{
	long ncases = 500, only_case = -1, repeat = 1;
	int random_seed = 0, size, thread_multiple = 0;

	prog = argv[0];
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "random"))
				random_seed = 1;
			else
				seed = strtoull(argv[i], NULL, 0);
		} else if (!strcmp(argv[i], "--cases") && i + 1 < argc) {
			ncases = strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--case") && i + 1 < argc) {
			only_case = strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--max-bytes") && i + 1 < argc) {
			max_bytes = (size_t)strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = (int)strtol(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
			repeat = strtol(argv[++i], NULL, 0);
			if (repeat < 1) {
				fprintf(stderr, "%s: --repeat %s: at least 1\n", prog, argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "--thread-multiple")) {
			thread_multiple = 1;
		} else if (!strcmp(argv[i], "-v")) {
			verbose = 1;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return 2;
		}
	}
	if (max_bytes > (256u << 20)) {
		fprintf(stderr, "%s: --max-bytes at most 256 MiB\n", prog);
		return 2;
	}
	if (thread_multiple) {
		int provided = MPI_THREAD_SINGLE;

		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
		if (provided != MPI_THREAD_MULTIPLE) {
			fprintf(stderr,
				"%s: MPI_Init_thread: MPI_THREAD_MULTIPLE not provided (%d)\n",
				prog, provided);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	} else {
		MPI_Init(&argc, &argv);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 2) {
		if (rank == 0)
			fprintf(stderr, "%s: needs 2 ranks\n", prog);
		MPI_Finalize();
		return 2;
	}
	if (random_seed) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = ((uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^
			((uint64_t)getpid() << 32)) &
		       0xffffffffffffull;
		MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	}
	MPI_Comm_split(MPI_COMM_WORLD, rank < 2 ? 0 : MPI_UNDEFINED, rank, &pair);
	if (pair != MPI_COMM_NULL) /* MCHK names the case, then aborts */
		MPI_Comm_set_errhandler(pair, MPI_ERRORS_RETURN);
	ddt_fill_words = 1;
	ddt_max_buffer = 4 * max_bytes > (8u << 20) ? 4 * max_bytes : (8u << 20);
	signal(SIGALRM, watchdog);

	long k0 = only_case >= 0 ? only_case : 0, k1 = only_case >= 0 ? only_case + 1 : ncases;
	long per_mode[NMODES][3] = {{0}}; /* ran, skipped, failed */
	double per_mode_bytes[NMODES] = {0};
	long nzero = 0, n32k = 0, n1m = 0, largest = 0, first_fail = -1;
	struct totals tot = {0};
	double t0 = MPI_Wtime();
	if (rank == 0) {
		printf("# ddt_sendrecv_fuzz: seed %" PRIu64
		       ", cases %ld..%ld, max-bytes %zu, %d ranks (%s)\n",
		       seed, k0, k1 - 1, max_bytes, size, size > 2 ? "ranks 2.. idle" : "0 and 1");
		fflush(stdout);
	}
	for (long k = k0; k < k1 && pair != MPI_COMM_NULL; k++) {
		struct params cp;
		struct ddt_pair p;
		char why[256];

		cur_case = k;
		ddt_rng_state = case_state(seed, k);
		draw_params(&cp);
		snprintf(case_name, sizeof(case_name), "seed %" PRIu64 " case %ld mode %s (%s)",
			 seed, k, mode_name[cp.mode], variant_name[cp.mode][cp.variant]);
		snprintf(watch_msg, sizeof(watch_msg),
			 "rank %d: %s: no progress for %d s (hang?)\n"
			 "  rerun exactly this case: mpirun -np 2 <same --mca options> %s --seed "
			 "%" PRIu64 " --case %ld --max-bytes %zu -v\n",
			 rank, case_name, timeout_s, prog, seed, k, max_bytes);
		alarm((unsigned)timeout_s);
		int rcv = cp.sender < 0 || cp.sender != rank;
		int res = ddt_pair_types(&p, cp.pmode, why, sizeof(why));
		if (res == DDT_PASS && (size_t)p.n > max_bytes) {
			res = DDT_SKIP;
			snprintf(why, sizeof(why), "%zu bytes > --max-bytes", p.n);
		}
		if (res == DDT_PASS) {
			scale(&p, &cp);
			res =
			    ddt_pair_buffers(&p, rcv ? 0 : DDT_PAIR_NO_REFERENCE, why, sizeof(why));
		}
		if (verbose && rank == 0)
			printf(
			    "case %ld: %s (%s), %s, %s%zu bytes\n  send %s x%ld\n  recv %s x%ld\n",
			    k, mode_name[cp.mode], variant_name[cp.mode][cp.variant],
			    cp.sender < 0 ? "both ways"
			    : cp.sender	  ? "1->0"
					  : "0->1",
			    res == DDT_SKIP ? "skipped: " : "", p.n, ddt_desc[0], p.cs, ddt_desc[1],
			    p.cr);
		if (res ==
		    DDT_FAIL) { /* the receiver's own reference failed: both sides can't go on */
			fprintf(stderr,
				"FAIL seed=%" PRIu64
				" case=%ld: %s\n  send %s x%ld\n  recv %s x%ld\n",
				seed, k, why, ddt_desc[0], p.cs, ddt_desc[1], p.cr);
			MPI_Abort(MPI_COMM_WORLD, 3);
		}
		if (res == DDT_SKIP) {
			if (verbose && rank == 0)
				printf("  (%s)\n", why);
			per_mode[cp.mode][1]++;
			tot.skipped++;
		} else {
			/* types-freed-early frees the case's types: one transfer */
			long reps = cp.mode == M_FREE ? 1 : repeat;
			int f = 0;

			for (long r = 0; r < reps && !f; r++)
				f = transfer(&cp, &p, k);
			per_mode[cp.mode][0]++;
			per_mode_bytes[cp.mode] += (double)p.n;
			tot.ran++;
			nzero += p.n == 0;
			n32k += p.n >= 32768;
			n1m += p.n >= (1u << 20);
			if ((long)p.n > largest)
				largest = (long)p.n;
			if (f) {
				per_mode[cp.mode][2]++;
				tot.failed++;
				if (first_fail < 0)
					first_fail = k;
			}
		}
		ddt_pair_free(&p);
		fflush(stdout);
	}
	alarm(0);

	/* failures are counted by receivers: add them up (and the first one) */
	long fails = tot.failed, allfails = 0, ff = first_fail < 0 ? LONG_MAX : first_fail, allff;
	long pm[NMODES], allpm[NMODES];
	for (int m = 0; m < NMODES; m++)
		pm[m] = per_mode[m][2];
	MPI_Allreduce(&fails, &allfails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&ff, &allff, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
	MPI_Reduce(pm, allpm, NMODES, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	double secs = MPI_Wtime() - t0;
	if (rank == 0) {
		double all = 0;
		for (int m = 0; m < NMODES; m++) {
			all += per_mode_bytes[m];
			printf("# mode %-18s %4ld cases, %3ld skipped, %ld failed, %.1f MB\n",
			       mode_name[m], per_mode[m][0], per_mode[m][1], allpm[m],
			       per_mode_bytes[m] / 1e6);
		}
		printf("# sizes: %ld zero-byte, %ld >= 32 KiB, %ld >= 1 MiB, largest %ld B\n",
		       nzero, n32k, n1m, largest);
		printf("ddt_sendrecv_fuzz: %s seed=%" PRIu64
		       " cases=%ld ran=%ld skipped=%ld failed=%ld "
		       "mbytes=%.1f largest=%ld ge1m=%ld secs=%.1f",
		       allfails ? "FAIL" : "PASS", seed, k1 - k0, tot.ran, tot.skipped, allfails,
		       all / 1e6, largest, n1m, secs);
		if (allfails)
			printf(" first: --seed %" PRIu64 " --case %ld --max-bytes %zu", seed, allff,
			       max_bytes);
		printf("\n");
		fflush(stdout);
	}
	if (pair != MPI_COMM_NULL)
		MPI_Comm_free(&pair);
	MPI_Finalize();
	return allfails ? 1 : 0;
}
