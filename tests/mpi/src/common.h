/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Helpers shared by the MPI test programs (tests/mpi/run.sh).
 *
 * Every program verifies its data itself, counts failures, and prints a
 * summary line from rank 0 that depends only on the data exchanged (not on
 * the transport), e.g. "p2p np=4 checksum=...": run.sh compares these lines
 * between --mca btl self,pvas and --mca btl self,vader.  Exit status 0 only
 * when every check passed on every rank.
 */
#ifndef PVAS_MPI_TEST_COMMON_H
#define PVAS_MPI_TEST_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_rank, t_size, t_errors __attribute__((unused));
static uint64_t t_sum = 1469598103934665603ULL; /* FNV-1a */

static inline void t_mix(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++) {
		t_sum ^= c[i];
		t_sum *= 1099511628211ULL;
	}
}

static inline void t_mix_u64(uint64_t v)
{
	t_mix(&v, sizeof(v));
}

static inline void t_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void t_fail(const char *fmt, ...)
{
	va_list ap;

	t_errors++;
	if (t_errors > 20)
		return;
	fprintf(stderr, "rank %d: FAIL: ", t_rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define T_CHECK(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			t_fail(__VA_ARGS__);                                                       \
	} while (0)

/* Deterministic content: byte i of a message identified by key is byte
 * i % 8 of the 64-bit word t_word(key, i / 8). */
static inline uint64_t t_word(uint64_t key, uint64_t w)
{
	uint64_t x =
	    key * 0x9E3779B97F4A7C15ULL + w * 0xBF58476D1CE4E5B9ULL + 0x94D049BB133111EBULL;

	x ^= x >> 31;
	x *= 0xD6E8FEB86659FD93ULL;
	return x ^ (x >> 29);
}

static inline void t_fill(void *buf, size_t n, uint64_t key)
{
	unsigned char *b = buf;
	size_t w;

	for (w = 0; w < n / 8; w++) {
		uint64_t v = t_word(key, w);

		memcpy(b + 8 * w, &v, 8);
	}
	if (n % 8) {
		uint64_t v = t_word(key, w);

		memcpy(b + 8 * w, &v, n % 8);
	}
}

/* Number of 8-byte words that differ from the pattern (0: good). */
static inline size_t t_verify(const void *buf, size_t n, uint64_t key)
{
	const unsigned char *b = buf;
	size_t bad = 0, w;

	for (w = 0; w < n / 8; w++) {
		uint64_t v = t_word(key, w);

		bad += memcmp(b + 8 * w, &v, 8) != 0;
	}
	if (n % 8) {
		uint64_t v = t_word(key, w);

		bad += memcmp(b + 8 * w, &v, n % 8) != 0;
	}
	return bad;
}

static inline void *t_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", t_rank, n);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static inline void t_init_ids(void)
{
	MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
	MPI_Comm_size(MPI_COMM_WORLD, &t_size);
}

/*
 * Combine every rank's checksum and error count; rank 0 prints
 * "<name> np=<n> checksum=<hex>" then PASS or FAIL.  Returns the exit code.
 */
static inline int t_finish(const char *name)
{
	uint64_t *sums = NULL;
	int errors = 0;

	if (t_rank == 0)
		sums = t_malloc(sizeof(uint64_t) * (size_t)t_size);
	MPI_Gather(&t_sum, 1, MPI_UINT64_T, sums, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	MPI_Reduce(&t_errors, &errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (t_rank == 0) {
		uint64_t all = 1469598103934665603ULL;

		for (int r = 0; r < t_size; r++) {
			all ^= sums[r];
			all *= 1099511628211ULL;
		}
		printf("%s np=%d checksum=%016llx\n", name, t_size, (unsigned long long)all);
		printf("%s: %s (%d errors)\n", name, errors ? "FAIL" : "PASS", errors);
		fflush(stdout);
		free(sums);
	}
	MPI_Bcast(&errors, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return errors ? 1 : 0;
}

#endif
