/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *ddt_alloc(size_t n, const char *what)
{
	void *p = NULL;
	int rc = posix_memalign(&p, 64, n ? n : 64);
	if (rc != 0)
		ddt_die("posix_memalign %s (%zu bytes): %s", what, n, strerror(rc));
	return p;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t ddt_value_bits(uint64_t index, int rank, uint32_t salt, size_t esize)
{
	uint64_t h = mix64(index * 0x9e3779b97f4a7c15ULL + ((uint64_t)(unsigned)rank << 40) +
			   ((uint64_t)salt << 20) + 1);
	if (esize == 4)
		return (h & 0x3fffffffULL) | 0x00800000ULL; /* finite, normal float */
	return (h & 0x3fffffffffffffffULL) | 0x0010000000000000ULL; /* finite, normal double */
}

void ddt_fill(void *buf, size_t bytes, size_t esize, int rank, uint32_t salt)
{
	size_t n = bytes / esize;
	if (esize == 4) {
		uint32_t *p = buf;
		for (size_t i = 0; i < n; i++)
			p[i] = (uint32_t)ddt_value_bits(i, rank, salt, 4);
	} else {
		uint64_t *p = buf;
		for (size_t i = 0; i < n; i++)
			p[i] = ddt_value_bits(i, rank, salt, 8);
	}
	/* tail bytes that do not form a whole element */
	unsigned char *t = (unsigned char *)buf + n * esize;
	for (size_t i = n * esize; i < bytes; i++)
		*t++ = (unsigned char)(0xa5 ^ i ^ (unsigned)rank);
}

int *ddt_index_list(int n, int g)
{
	int *p = ddt_alloc((size_t)g * sizeof(int), "index permutation");
	for (int i = 0; i < g; i++)
		p[i] = i + 1;
	for (int i = 0; i < g; i++) {
		int j = rand() % g;
		int t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	int *idx = ddt_alloc((size_t)n * sizeof(int), "index list");
	for (int i = 0; i < n; i++)
		idx[i] = p[i] - 1;
	free(p);
	return idx;
}

size_t ddt_first_diff(const void *a, const void *b, size_t n)
{
	if (memcmp(a, b, n) == 0)
		return (size_t)-1;
	const unsigned char *x = a, *y = b;
	for (size_t i = 0; i < n; i++)
		if (x[i] != y[i])
			return i;
	return (size_t)-1;
}
