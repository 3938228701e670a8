/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench: timer and order statistics of per-iteration samples (all programs). */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>
#include <time.h>

static inline double bench_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

struct bench_stats {
	size_t n;
	double min, q25, median, q75, max;
};

/* Sorts samples in place; quantiles by linear interpolation. */
void bench_stats(double *samples, size_t n, struct bench_stats *s);

#endif
