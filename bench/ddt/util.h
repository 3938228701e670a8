/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ddt: error reporting, allocation, deterministic fill values and
 * DDTBench-style random index lists.
 */
#ifndef DDT_UTIL_H
#define DDT_UTIL_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "fail.h"

#define ddt_die bench_die

/* malloc/aligned alloc that dies with "malloc <what> (<n> bytes): <errno>". */
void *ddt_alloc(size_t n, const char *what);

/*
 * Deterministic element value: a hash of (element index, rank, salt) made
 * into the bit pattern of a finite float (esize 4) or double (esize 8).
 * Buffers are compared bytewise, so the values only need to be distinct
 * and never NaN (moves through FP registers keep them unchanged).
 */
void ddt_fill(void *buf, size_t bytes, size_t esize, int rank, uint32_t salt);
uint64_t ddt_value_bits(uint64_t index, int rank, uint32_t salt, size_t esize);

/*
 * Index list as in DDTBench: p = [1..g]; for i in 0..g-1 swap p[i] with
 * p[rand() % g]; idx = p[0..n-1] - 1.  Uses the C rand() stream (the
 * caller seeds it with srand()).  Returns a malloc'ed array of n ints.
 */
int *ddt_index_list(int n, int g);

/* First differing byte offset of a and b, or (size_t)-1 if equal. */
size_t ddt_first_diff(const void *a, const void *b, size_t n);

#endif
