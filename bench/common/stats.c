/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "stats.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	double f = pos - (double)i;
	return v[i] * (1.0 - f) + v[i + 1] * f;
}

void bench_stats(double *samples, size_t n, struct bench_stats *s)
{
	s->n = n;
	if (n == 0) {
		s->min = s->q25 = s->median = s->q75 = s->max = 0;
		return;
	}
	qsort(samples, n, sizeof(double), cmp_double);
	s->min = samples[0];
	s->max = samples[n - 1];
	s->q25 = quantile(samples, n, 0.25);
	s->median = quantile(samples, n, 0.5);
	s->q75 = quantile(samples, n, 0.75);
}
