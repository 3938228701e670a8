/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_long: TAP checks of the direct engine's copies of long
 * blocks (more than 2 KiB) at every destination offset modulo 4 KiB around
 * the window where `rep movsb` is slow on AMD Zen 3 (1-31 bytes past the
 * source), which the engine copies in pieces where a probe finds it slow:
 * opal_datatype_direct_memcpy, a vector of long blocks into a contiguous
 * buffer and back, and two contiguous layouts.  Every byte of the
 * destination, 64 guard bytes on each side included, is compared with the
 * expected buffer.
 *
 * Usage: ddt_long (single process, singleton MPI_Init).
 */
#include <mpi.h>

#include "opal/constants.h"
#include "opal/datatype/opal_datatype.h"
#include "opal/datatype/opal_datatype_direct.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define SPAN (1u << 20)

static int ntests, nfailed;
static unsigned char *src, *dst, *want;

static void report(int ok, const char *what, size_t n, unsigned off, const char *detail)
{
	ntests++;
	if (ok) {
		printf("ok %d - %s, %zu bytes, destination %u past the source mod 4 KiB\n", ntests,
		       what, n, off);
		return;
	}
	nfailed++;
	printf("not ok %d - %s, %zu bytes, destination %u past the source mod 4 KiB: %s\n", ntests,
	       what, n, off, detail);
}

/* First differing byte of dst against want over [0, len), or -1. */
static long first_diff(size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (dst[i] != want[i])
			return (long)i;
	return -1;
}

static void fill(unsigned char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131u + seed + (i >> 12));
}

/* dst[GUARD + off ...] gets src[0, n) by opal_datatype_direct_memcpy. */
static void check_memcpy(size_t n, unsigned off)
{
	char detail[96] = "";
	size_t len = GUARD + off + n + GUARD;
	long d;

	fill(dst, len, 7);
	memcpy(want, dst, len);
	memcpy(want + GUARD + off, src + GUARD, n);
	opal_datatype_direct_memcpy(dst + GUARD + off, src + GUARD, n);
	d = first_diff(len);
	if (d >= 0)
		snprintf(detail, sizeof(detail), "byte %ld differs", d - (long)(GUARD + off));
	report(d < 0, "opal_datatype_direct_memcpy", n, off, detail);
}

/* A vector of count blocks of blen bytes (2 * blen apart) at src + GUARD
 * into a contiguous type at dst + GUARD + off, and the same contiguous
 * bytes back into a vector at dst. */
static void check_layouts(int blen, int count, unsigned off)
{
	MPI_Datatype vec, contig;
	opal_datatype_direct_layout_t *lv = NULL, *lc = NULL;
	size_t n = (size_t)blen * (size_t)count, len = GUARD + off + 2 * n + GUARD;
	char detail[96] = "";
	long d = 0;
	int rc;

	MPI_Type_vector(count, blen, 2 * blen, MPI_BYTE, &vec);
	MPI_Type_contiguous((int)n, MPI_BYTE, &contig);
	MPI_Type_commit(&vec);
	MPI_Type_commit(&contig);
	rc = opal_datatype_direct_layout_create((const opal_datatype_t *)vec, 1, &lv);
	if (rc == OPAL_SUCCESS)
		rc = opal_datatype_direct_layout_create((const opal_datatype_t *)contig, 1, &lc);

	/* gather: vector -> contiguous */
	fill(dst, len, 11);
	memcpy(want, dst, len);
	for (int k = 0; k < count; k++)
		memcpy(want + GUARD + off + (size_t)k * blen, src + GUARD + (size_t)k * 2 * blen,
		       (size_t)blen);
	if (rc == OPAL_SUCCESS)
		rc = opal_datatype_direct_layout_copy(lv, src + GUARD, lc, dst + GUARD + off, 0, n);
	if (rc == OPAL_SUCCESS && (d = first_diff(len)) >= 0)
		snprintf(detail, sizeof(detail), "gather: byte %ld differs", d);

	/* scatter: contiguous -> vector, and contiguous -> contiguous */
	if (rc == OPAL_SUCCESS && d < 0) {
		fill(dst, len, 13);
		memcpy(want, dst, len);
		for (int k = 0; k < count; k++)
			memcpy(want + GUARD + off + (size_t)k * 2 * blen, src + GUARD + (size_t)k * blen,
			       (size_t)blen);
		rc = opal_datatype_direct_layout_copy(lc, src + GUARD, lv, dst + GUARD + off, 0, n);
		if (rc == OPAL_SUCCESS && (d = first_diff(len)) >= 0)
			snprintf(detail, sizeof(detail), "scatter: byte %ld differs", d);
	}
	if (rc == OPAL_SUCCESS && d < 0) {
		fill(dst, len, 17);
		memcpy(want, dst, len);
		memcpy(want + GUARD + off + 5, src + GUARD + 5, n - 9);
		rc = opal_datatype_direct_layout_copy(lc, src + GUARD, lc, dst + GUARD + off, 5,
						      n - 4);
		if (rc == OPAL_SUCCESS && (d = first_diff(len)) >= 0)
			snprintf(detail, sizeof(detail), "contiguous [5, n-4): byte %ld differs", d);
	}
	if (rc != OPAL_SUCCESS)
		snprintf(detail, sizeof(detail), "engine returned %d", rc);
	report(rc == OPAL_SUCCESS && d < 0, "vector <-> contiguous layouts", n, off, detail);
	if (lv)
		opal_datatype_direct_layout_release(lv);
	if (lc)
		opal_datatype_direct_layout_release(lc);
	MPI_Type_free(&vec);
	MPI_Type_free(&contig);
}

int main(int argc, char **argv)
{
	static const size_t lens[] = {2048, 2049, 2113, 4096, 6000, 65537, 600000};
	static const unsigned offs[] = {0, 1, 8, 16, 31, 32, 33, 63, 64, 4095};
	size_t nl = sizeof(lens) / sizeof(lens[0]), no = sizeof(offs) / sizeof(offs[0]);

	MPI_Init(&argc, &argv);
	/* page-aligned, so that an offset of dst is its offset mod 4 KiB */
	src = aligned_alloc(4096, 2 * SPAN);
	dst = aligned_alloc(4096, 2 * SPAN + 8192);
	want = malloc(2 * SPAN + 8192);
	if (!src || !dst || !want) {
		printf("Bail out! aligned_alloc of %u bytes failed\n", 2 * SPAN);
		return 1;
	}
	fill(src, 2 * SPAN, 3);
	printf("TAP version 13\n1..%zu\n", nl * no + 3 * no);
	for (size_t i = 0; i < nl; i++)
		for (size_t j = 0; j < no; j++)
			check_memcpy(lens[i], offs[j]);
	for (size_t j = 0; j < no; j++) {
		check_layouts(2200, 8, offs[j]);
		check_layouts(4096, 16, offs[j]);
		check_layouts(16384, 4, offs[j]);
	}
	free(src);
	free(dst);
	free(want);
	MPI_Finalize();
	return nfailed ? 1 : 0;
}
