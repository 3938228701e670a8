/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memcpy-bw: memcpy bandwidth with 1..T threads, the copy-bound reference
 * of bench/compare.  Each thread copies its own --size buffer (default
 * 64 MiB, far above the caches) --reps times; a rep's bandwidth is the
 * bytes copied by all threads (counted once, not read + write) over the
 * wall time of the slowest thread.  Prints CSV: threads, bytes per thread,
 * reps, median / min / max GB/s (1e9 B/s).
 */
#include "stats.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t size = 64u << 20;
static int reps = 11;

struct worker {
	pthread_t th;
	unsigned char *src, *dst;
	pthread_barrier_t *bar;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	for (int r = 0; r < reps + 1; r++) {
		pthread_barrier_wait(w->bar);
		memcpy(w->dst, w->src, size);
		pthread_barrier_wait(w->bar);
	}
	return NULL;
}

static int run(int nt)
{
	struct worker w[64];
	pthread_barrier_t bar;
	double *bw = malloc(sizeof(double) * (size_t)reps);
	int rc = pthread_barrier_init(&bar, NULL, (unsigned)nt + 1);
	if (rc || !bw) {
		fprintf(stderr, "memcpy-bw: pthread_barrier_init/malloc: %s\n", strerror(rc ? rc : errno));
		return -1;
	}
	for (int i = 0; i < nt; i++) {
		w[i].src = malloc(size);
		w[i].dst = malloc(size);
		if (!w[i].src || !w[i].dst) {
			fprintf(stderr, "memcpy-bw: malloc 2 x %zu bytes: %s\n", size, strerror(errno));
			return -1;
		}
		memset(w[i].src, i + 1, size);
		memset(w[i].dst, 0, size);
		w[i].bar = &bar;
		rc = pthread_create(&w[i].th, NULL, work, &w[i]);
		if (rc) {
			fprintf(stderr, "memcpy-bw: pthread_create thread %d: %s\n", i, strerror(rc));
			return -1;
		}
	}
	for (int r = 0; r < reps + 1; r++) { /* rep 0 is a warm-up */
		pthread_barrier_wait(&bar);
		double t0 = bench_now_us();
		pthread_barrier_wait(&bar);
		if (r > 0)
			bw[r - 1] = (double)size * nt / (bench_now_us() - t0) / 1e3;
	}
	for (int i = 0; i < nt; i++) {
		pthread_join(w[i].th, NULL);
		free(w[i].src);
		free(w[i].dst);
	}
	pthread_barrier_destroy(&bar);
	struct bench_stats st;
	bench_stats(bw, (size_t)reps, &st);
	printf("%d,%zu,%d,%.3f,%.3f,%.3f\n", nt, size, reps, st.median, st.min, st.max);
	fflush(stdout);
	free(bw);
	return 0;
}

int main(int argc, char **argv)
{
	int maxt = 2, ch;
	static const struct option lo[] = {{"threads", required_argument, 0, 't'},
					   {"size", required_argument, 0, 's'},
					   {"reps", required_argument, 0, 'r'},
					   {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	while ((ch = getopt_long(argc, argv, "t:s:r:h", lo, NULL)) != -1) {
		switch (ch) {
		case 't': maxt = atoi(optarg); break;
		case 's': size = (size_t)atoll(optarg) << 20; break;
		case 'r': reps = atoi(optarg); break;
		case 'h':
			printf("usage: memcpy-bw [--threads T (default 2)] [--size MiB per thread "
			       "(default 64)] [--reps N (default 11)]\n"
			       "memcpy bandwidth with 1..T threads; CSV: threads,bytes_per_thread,"
			       "reps,median_gbps,min_gbps,max_gbps (GB = 1e9 B, bytes copied "
			       "counted once)\n");
			return 0;
		default:
			return 2;
		}
	}
	if (maxt < 1 || maxt > 64 || size == 0 || reps < 1) {
		fprintf(stderr, "memcpy-bw: bad arguments: --threads 1..64, --size >= 1, --reps >= 1\n");
		return 2;
	}
	printf("threads,bytes_per_thread,reps,median_gbps,min_gbps,max_gbps\n");
	for (int t = 1; t <= maxt; t++)
		if (run(t))
			return 1;
	return 0;
}
