/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Progress: one side of a large derived-datatype transfer computes for a
 * second (no MPI call) while the transfer is in flight; the transfer must
 * complete and the data must be right.  Ranks 0 (sender) and 1 (receiver);
 * other ranks only take part in the final checks.
 *
 *   case a: sender   MPI_Isend, compute, MPI_Wait;  receiver MPI_Recv
 *   case b: receiver MPI_Irecv, compute, MPI_Wait;  sender   MPI_Send
 *   case c: both post (Isend / Irecv), compute, MPI_Wait
 *
 * The message is a vector of doubles (several MiB of payload); the receive
 * type is another, signature-equal type: a different vector (a, c) or
 * contiguous doubles (b).  Both buffers have guard areas in front and
 * behind; every byte of the receive buffer (payload, gaps between blocks,
 * guards) and of the send buffer (must be unchanged) is checked.
 *
 * Diagnostics, not checks: the time each side spent in each call, in
 * particular how long the side that does not compute waited.  With ob1's
 * direct Rendezvous (shared-address-space BTL) the receiver of case a can
 * copy every chunk itself and its MPI_Recv ends long before the sender's
 * compute second is over; with a pack/unpack pipeline it waits for it.
 *
 * Usage: progress [--case a|b|c|all] [--mib N] [--compute-ms MS] [--iters N]
 * Output (rank 0): "progress case X: ..." lines with the timings and data
 * verdicts, then the common summary ("progress np=N checksum=..." and
 * "progress: PASS"); the checksum depends only on the data.
 */
#include "common.h"

#include <time.h>

#define GUARD 4096 /* bytes of guard in front of and behind each buffer */

/* A vector of doubles: blocks of bl doubles every stride doubles;
 * bl == stride: contiguous. */
struct shape {
	const char *name;
	size_t bl, stride;
};

struct pcase {
	char id;
	const char *what;
	struct shape s, r; /* send and receive layouts */
	int s_computes, r_computes;
};

/* payload doubles: a multiple of every block length below */
static size_t n_elems;
static double compute_s = 1.0;

static const struct pcase cases[] = {
	{'a', "sender computes after MPI_Isend, receiver in MPI_Recv",
	 {"vector(bl 2, stride 3)", 2, 3}, {"vector(bl 4, stride 5)", 4, 5}, 1, 0},
	{'b', "receiver computes after MPI_Irecv, sender in MPI_Send",
	 {"vector(bl 2, stride 3)", 2, 3}, {"contiguous", 0, 0}, 0, 1},
	{'c', "both compute after posting (MPI_Isend / MPI_Irecv)",
	 {"vector(bl 1, stride 2)", 1, 2}, {"vector(bl 8, stride 9)", 8, 9}, 1, 1},
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static size_t shape_bl(const struct shape *sh)
{
	return sh->bl ? sh->bl : n_elems;
}

static size_t shape_stride(const struct shape *sh)
{
	return sh->bl ? sh->stride : n_elems;
}

/* extent in doubles */
static size_t shape_extent(const struct shape *sh)
{
	return (n_elems / shape_bl(sh) - 1) * shape_stride(sh) + shape_bl(sh);
}

/* index (in doubles) of payload element k */
static size_t shape_index(const struct shape *sh, size_t k)
{
	return k / shape_bl(sh) * shape_stride(sh) + k % shape_bl(sh);
}

/* payload element at double index j, or SIZE_MAX for a gap */
static size_t shape_element(const struct shape *sh, size_t j)
{
	size_t q = j / shape_stride(sh), rem = j % shape_stride(sh);

	return rem < shape_bl(sh) ? q * shape_bl(sh) + rem : SIZE_MAX;
}

static MPI_Datatype shape_type(const struct shape *sh)
{
	MPI_Datatype t;

	if (!sh->bl)
		MPI_Type_contiguous((int)n_elems, MPI_DOUBLE, &t);
	else
		MPI_Type_vector((int)(n_elems / sh->bl), (int)sh->bl, (int)sh->stride, MPI_DOUBLE,
				&t);
	MPI_Type_commit(&t);
	return t;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pure computation (no MPI call, no system call but the vDSO clock) for
 * compute_s seconds; returns the seconds spent. */
volatile double progress_sink; /* keeps the computation */

static double compute(void)
{
	double t0 = now(), t, x = 1.0, y = 0.5;

	do {
		for (int i = 0; i < 200000; i++) {
			x = x * 1.0000001 + y;
			y = y * 0.9999999 - 1e-12 * x;
		}
		t = now();
	} while (t - t0 < compute_s);
	progress_sink = x + y;
	return t - t0;
}

static uint64_t word_at(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* Check the whole receive allocation: payload element k of the receive
 * layout holds the sender's element k, every other word its guard value.
 * Returns the number of bad words. */
static size_t check_recv(const struct pcase *pc, const unsigned char *rbuf, size_t rwords,
			 uint64_t skey, uint64_t gkey)
{
	size_t bad = 0, g = GUARD / 8;

	for (size_t w = 0; w < rwords; w++) {
		size_t k = SIZE_MAX;
		uint64_t want;

		if (w >= g && w - g < shape_extent(&pc->r))
			k = shape_element(&pc->r, w - g);
		want = k != SIZE_MAX ? t_word(skey, g + shape_index(&pc->s, k)) : t_word(gkey, w);
		if (word_at(rbuf + 8 * w) != want) {
			if (bad < 5)
				t_fail("case %c: receive buffer byte offset %zd (%s) differs", pc->id,
				       (ssize_t)(8 * w) - GUARD,
				       k != SIZE_MAX ? "payload"
				       : w < g || w - g >= shape_extent(&pc->r) ? "guard"
										: "gap");
			bad++;
		}
	}
	return bad;
}

struct side_times {
	double call, compute, wait; /* ms: posting call, computation, MPI_Wait */
};

static void run_case(const struct pcase *pc, int iter)
{
	const int tag = 100 + pc->id;
	uint64_t skey = ((uint64_t)pc->id << 32) | (uint64_t)iter, gkey = skey ^ 0xA5A5A5A5ULL;
	struct side_times me = {0, 0, 0}, peer = {0, 0, 0};
	double t0;
	MPI_Request rq;
	size_t bad = 0;

	if (t_rank > 1) { /* the three barriers of ranks 0 and 1 */
		for (int i = 0; i < 3; i++)
			MPI_Barrier(MPI_COMM_WORLD);
		return;
	}
	const struct shape *sh = t_rank == 0 ? &pc->s : &pc->r;
	size_t words = shape_extent(sh) + 2 * (GUARD / 8);
	unsigned char *buf = t_malloc(8 * words);
	MPI_Datatype dt = shape_type(sh);
	int computes = t_rank == 0 ? pc->s_computes : pc->r_computes;

	t_fill(buf, 8 * words, t_rank == 0 ? skey : gkey);
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (t_rank == 0) {
		if (computes) {
			MPI_Isend(buf + GUARD, 1, dt, 1, tag, MPI_COMM_WORLD, &rq);
			me.call = MPI_Wtime() - t0;
			me.compute = compute();
			t0 = MPI_Wtime();
			MPI_Wait(&rq, MPI_STATUS_IGNORE);
			me.wait = MPI_Wtime() - t0;
		} else {
			MPI_Send(buf + GUARD, 1, dt, 1, tag, MPI_COMM_WORLD);
			me.call = MPI_Wtime() - t0;
		}
	} else {
		MPI_Status st;
		int count = -1;

		if (computes) {
			MPI_Irecv(buf + GUARD, 1, dt, 0, tag, MPI_COMM_WORLD, &rq);
			me.call = MPI_Wtime() - t0;
			me.compute = compute();
			t0 = MPI_Wtime();
			MPI_Wait(&rq, &st);
			me.wait = MPI_Wtime() - t0;
		} else {
			MPI_Recv(buf + GUARD, 1, dt, 0, tag, MPI_COMM_WORLD, &st);
			me.call = MPI_Wtime() - t0;
		}
		MPI_Get_count(&st, MPI_DOUBLE, &count);
		T_CHECK(count == (int)n_elems, "case %c: received %d doubles, want %zu", pc->id,
			count, n_elems);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	me.call *= 1e3;
	me.compute *= 1e3;
	me.wait *= 1e3;

	/* data: the receiver checks everything, the sender its unchanged buffer */
	if (t_rank == 0) {
		bad = t_verify(buf, 8 * words, skey);
		T_CHECK(bad == 0, "case %c: send buffer changed (%zu words)", pc->id, bad);
	} else {
		bad = check_recv(pc, buf, words, skey, gkey);
		t_mix(buf, 8 * words);
	}
	t_mix_u64(((uint64_t)pc->id << 56) ^ bad);

	/* report (rank 0) */
	size_t bads[2] = {bad, 0};
	double mt[3] = {me.call, me.compute, me.wait}, pt[3];
	if (t_rank == 1) {
		MPI_Send(mt, 3, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD);
		MPI_Send(&bad, 1, MPI_UINT64_T, 0, 2, MPI_COMM_WORLD);
	} else {
		uint64_t b;

		MPI_Recv(pt, 3, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Recv(&b, 1, MPI_UINT64_T, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		peer = (struct side_times){pt[0], pt[1], pt[2]};
		bads[1] = (size_t)b;
		printf("progress case %c (%s), %zu payload bytes, %s -> %s:\n", pc->id, pc->what,
		       8 * n_elems, pc->s.name, pc->r.name);
		if (pc->s_computes)
			printf("  sender:   MPI_Isend %.3f ms, compute %.1f ms, MPI_Wait %.3f ms\n",
			       me.call, me.compute, me.wait);
		else
			printf("  sender:   MPI_Send %.3f ms\n", me.call);
		if (pc->r_computes)
			printf("  receiver: MPI_Irecv %.3f ms, compute %.1f ms, MPI_Wait %.3f ms\n",
			       peer.call, peer.compute, peer.wait);
		else
			printf("  receiver: MPI_Recv %.3f ms\n", peer.call);
		/* one machine-readable line: ms spent in MPI by each side, and
		 * the peer's compute time */
		printf("progress-time case=%c sender_mpi_ms=%.3f receiver_mpi_ms=%.3f "
		       "sender_compute_ms=%.1f receiver_compute_ms=%.1f\n",
		       pc->id, me.call + me.wait, peer.call + peer.wait, me.compute, peer.compute);
		printf("progress case %c: data %s (send buffer %s, receive buffer: payload, gaps "
		       "and guards %s)\n",
		       pc->id, bads[0] || bads[1] ? "BAD" : "ok", bads[0] ? "CHANGED" : "unchanged",
		       bads[1] ? "WRONG" : "right");
		fflush(stdout);
	}
	MPI_Type_free(&dt);
	free(buf);
	MPI_Barrier(MPI_COMM_WORLD);
}

static void usage(int code)
{
	if (t_rank == 0)
		fprintf(code ? stderr : stdout,
			"usage: mpirun -np 2 progress [--case a|b|c|all] [--mib N] "
			"[--compute-ms MS] [--iters N]\n");
	MPI_Finalize();
	exit(code);
}

int main(int argc, char **argv)
{
	const char *which = "all";
	long mib = 4, iters = 1, ms = 1000;

	MPI_Init(&argc, &argv);
	t_init_ids();
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;
		long *dst = NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help"))
			usage(0);
		if (i + 1 >= argc)
			usage(2);
		if (!strcmp(a, "--case")) {
			which = argv[++i];
			continue;
		}
		if (!strcmp(a, "--mib"))
			dst = &mib;
		else if (!strcmp(a, "--iters"))
			dst = &iters;
		else if (!strcmp(a, "--compute-ms"))
			dst = &ms;
		else
			usage(2);
		*dst = strtol(argv[++i], &end, 10);
		if (*end || *dst < 1 || *dst > 1000000)
			usage(2);
	}
	if (strcmp(which, "all") && (strlen(which) != 1 || !strchr("abc", which[0])))
		usage(2);
	if (t_size < 2) {
		fprintf(stderr, "progress: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	n_elems = (size_t)mib * (1 << 20) / 8; /* a multiple of 8 */
	compute_s = (double)ms / 1e3;
	for (long it = 0; it < iters; it++)
		for (size_t c = 0; c < NCASES; c++)
			if (!strcmp(which, "all") || which[0] == cases[c].id)
				run_case(&cases[c], (int)it);
	return t_finish("progress");
}
