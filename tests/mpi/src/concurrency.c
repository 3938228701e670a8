/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Concurrency: 1,000 outstanding requests per rank (sends posted in reverse
 * tag order so that most arrive unexpected), a burst of 3,000 blocking small
 * sends before any receive, then MPI_THREAD_MULTIPLE with
 * two threads per rank exchanging concurrently on their own communicators.
 */
#include <pthread.h>

#include "common.h"

#define NREQ 1000
#define THREAD_ITERS 150

static const size_t req_sizes[] = {0, 8, 200, 1000, 5000, 40000, 70000};
#define NRS (sizeof(req_sizes) / sizeof(req_sizes[0]))

static int right, left;

static void outstanding(void)
{
	MPI_Request *rq = t_malloc(sizeof(MPI_Request) * 2 * NREQ);
	MPI_Status *st = t_malloc(sizeof(MPI_Status) * 2 * NREQ);
	unsigned char **sb = t_malloc(sizeof(void *) * NREQ),
		      **rb = t_malloc(sizeof(void *) * NREQ);

	for (int i = 0; i < NREQ; i++) {
		size_t n = req_sizes[i % NRS];

		sb[i] = t_malloc(n);
		rb[i] = t_malloc(n);
		t_fill(sb[i], n, ((uint64_t)t_rank << 20) | (uint64_t)i);
		MPI_Irecv(rb[i], (int)n, MPI_BYTE, left, i, MPI_COMM_WORLD, &rq[i]);
	}
	/* everybody has posted its receives: now send in reverse order so
	 * that matching walks the whole posted queue */
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = NREQ - 1; i >= 0; i--)
		MPI_Isend(sb[i], (int)req_sizes[i % NRS], MPI_BYTE, right, i, MPI_COMM_WORLD,
			  &rq[NREQ + i]);
	MPI_Waitall(2 * NREQ, rq, st);
	for (int i = 0; i < NREQ; i++) {
		size_t n = req_sizes[i % NRS],
		       bad = t_verify(rb[i], n, ((uint64_t)left << 20) | (uint64_t)i);
		int c;

		MPI_Get_count(&st[i], MPI_BYTE, &c);
		T_CHECK(bad == 0 && (size_t)c == n && st[i].MPI_TAG == i &&
			    st[i].MPI_SOURCE == left,
			"outstanding %d (%zu B): %zu bad words, count %d, tag %d", i, n, bad, c,
			st[i].MPI_TAG);
		t_mix_u64(((uint64_t)i << 32) ^ (uint64_t)c ^ bad);
		free(sb[i]);
		free(rb[i]);
	}

	/* and the other way round: unexpected messages first, then receives */
	for (int i = 0; i < NREQ; i++) {
		size_t n = req_sizes[(i + 3) % NRS];

		sb[i] = t_malloc(n);
		t_fill(sb[i], n, ((uint64_t)t_rank << 21) | (uint64_t)i);
		MPI_Isend(sb[i], (int)n, MPI_BYTE, right, i, MPI_COMM_WORLD, &rq[NREQ + i]);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	for (int i = 0; i < NREQ; i++) {
		size_t n = req_sizes[(i + 3) % NRS];

		rb[i] = t_malloc(n);
		MPI_Irecv(rb[i], (int)n, MPI_BYTE, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, &rq[i]);
	}
	MPI_Waitall(2 * NREQ, rq, st);
	for (int i = 0; i < NREQ; i++) {
		size_t n = req_sizes[(i + 3) % NRS],
		       bad = t_verify(rb[i], n, ((uint64_t)left << 21) | (uint64_t)i);

		T_CHECK(bad == 0 && st[i].MPI_SOURCE == left,
			"unexpected %d (%zu B): %zu bad words", i, n, bad);
		t_mix_u64(((uint64_t)i << 33) ^ bad);
		free(sb[i]);
		free(rb[i]);
	}
	free(sb);
	free(rb);
	free(rq);
	free(st);
}

/* 3,000 small blocking sends before any receive: more than the BTL's
 * fragment lists hold (btl_pvas_free_list_max 1024), so senders run dry and
 * must recycle fragments while the peers are still sending. */
#define BURST 3000
static void burst(void)
{
	unsigned char b[64];
	int bad = 0;

	for (int i = 0; i < BURST; i++) {
		t_fill(b, sizeof(b), ((uint64_t)t_rank << 24) | (uint64_t)i);
		MPI_Send(b, (int)sizeof(b), MPI_BYTE, right, 7, MPI_COMM_WORLD);
	}
	for (int i = 0; i < BURST; i++) {
		MPI_Recv(b, (int)sizeof(b), MPI_BYTE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		bad += t_verify(b, sizeof(b), ((uint64_t)left << 24) | (uint64_t)i) != 0;
	}
	T_CHECK(bad == 0, "burst: %d messages wrong or out of order", bad);
	t_mix_u64(BURST + (uint64_t)bad);
}

struct thread_arg {
	int id;
	MPI_Comm comm;
	uint64_t sum;
	int errors;
};

static void *thread_main(void *p)
{
	struct thread_arg *a = p;
	static const size_t tsz[] = {4, 300, 3000, 30000, 100000, 1 << 20};
	unsigned char *s = t_malloc(1 << 20), *r = t_malloc(1 << 20);
	uint64_t sum = 0;

	for (int it = 0; it < THREAD_ITERS; it++) {
		size_t n = tsz[(size_t)(it + a->id) % (sizeof(tsz) / sizeof(tsz[0]))];
		uint64_t key = ((uint64_t)a->id << 40) | ((uint64_t)it << 16);
		MPI_Request rq[2];
		MPI_Status st;
		int c;

		if (n == (1 << 20) && it % 5)
			n = 50000; /* keep the big ones rare */
		t_fill(s, n, key | (uint64_t)t_rank);
		MPI_Irecv(r, (int)n, MPI_BYTE, left, it, a->comm, &rq[0]);
		MPI_Isend(s, (int)n, MPI_BYTE, right, it, a->comm, &rq[1]);
		MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
		MPI_Wait(&rq[0], &st);
		MPI_Get_count(&st, MPI_BYTE, &c);
		if ((size_t)c != n || t_verify(r, n, key | (uint64_t)left) != 0)
			a->errors++;
		sum = sum * 31 + n + (uint64_t)c;
	}
	a->sum = sum;
	free(s);
	free(r);
	return NULL;
}

static void threads(void)
{
	struct thread_arg a[2];
	pthread_t th[2];

	for (int t = 0; t < 2; t++) {
		a[t].id = t;
		a[t].errors = 0;
		MPI_Comm_dup(MPI_COMM_WORLD, &a[t].comm);
	}
	for (int t = 0; t < 2; t++)
		if (pthread_create(&th[t], NULL, thread_main, &a[t])) {
			t_fail("pthread_create");
			return;
		}
	for (int t = 0; t < 2; t++) {
		pthread_join(th[t], NULL);
		T_CHECK(a[t].errors == 0, "thread %d: %d bad messages", t, a[t].errors);
		t_mix_u64(a[t].sum);
		MPI_Comm_free(&a[t].comm);
	}
}

int main(int argc, char **argv)
{
	int provided = 0;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	t_init_ids();
	right = (t_rank + 1) % t_size;
	left = (t_rank + t_size - 1) % t_size;
	T_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
	outstanding();
	burst();
	MPI_Barrier(MPI_COMM_WORLD);
	if (provided == MPI_THREAD_MULTIPLE)
		threads();
	return t_finish("concurrency");
}
