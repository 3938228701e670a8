/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_shape: TAP checks of the index-list counts of the
 * direct engine's layout shape (opal_datatype_direct_layout_shape), which
 * ob1's cost model reads: the lines of the index list at the packed
 * stream's half that hold bytes of both halves (index_shared_lines), and
 * the 4-KiB pages its index lists touch (index_pages), and the pages of its
 * sparse lines (sparse_pages, vectors too).  Each case is a small
 * hindexed_block type whose counts follow by hand; a vector must count
 * none.
 *
 * Usage: ddt_shape (single process, singleton MPI_Init).
 */
#include <mpi.h>

#include "opal/constants.h"
#include "opal/datatype/opal_datatype.h"
#include "opal/datatype/opal_datatype_direct.h"

#include <stdio.h>

static int ntests, nfailed;

/* The engine's shape of (type, 1) into *sh (zeroed first); the layout's
 * create status. */
static int type_shape(MPI_Datatype type, opal_datatype_direct_shape_t *sh)
{
	opal_datatype_direct_layout_t *l;
	int rc = opal_datatype_direct_layout_create((const opal_datatype_t *)type, 1, &l);

	*sh = (opal_datatype_direct_shape_t){0};
	if (rc == OPAL_SUCCESS) {
		opal_datatype_direct_layout_shape(l, sh);
		opal_datatype_direct_layout_release(l);
	}
	return rc;
}

static void check(const char *name, MPI_Datatype type, size_t index_blocks, size_t shared,
		  size_t pages)
{
	opal_datatype_direct_shape_t sh;
	int rc = type_shape(type, &sh);

	ntests++;
	if (rc != OPAL_SUCCESS || sh.index_blocks != index_blocks ||
	    sh.index_shared_lines != shared || sh.index_pages != pages) {
		nfailed++;
		printf(
		    "not ok %d - %s: layout_create %d; index blocks %zu (want %zu), shared lines "
		    "%zu (want %zu), pages %zu (want %zu)\n",
		    ntests, name, rc, sh.index_blocks, index_blocks, sh.index_shared_lines, shared,
		    sh.index_pages, pages);
	} else {
		printf("ok %d - %s: %zu index blocks, %zu shared lines, %zu pages\n", ntests, name,
		       index_blocks, shared, pages);
	}
}

/* Index lists of 4-byte or 8-byte blocks (hindexed_block over MPI_BYTE) and
 * their counts, worked out by hand: lines of 64 bytes, pages of 4096; the
 * packed stream's half falls after half the blocks, or inside one. */
static const struct {
	const char *name;
	int n, blen;
	MPI_Aint disp[4];
	size_t shared, pages;
} lists[] = {
    /* halves {0, 200} and {8, 232}: lines 0 and 3 are in both */
    {"halves meeting in two lines", 4, 4, {0, 200, 8, 232}, 2, 1},
    /* halves {0, 200} and {8, 20}: line 0 is hit twice, counts once */
    {"a line the second half hits twice counts once", 4, 4, {0, 200, 8, 20}, 1, 1},
    /* halves {0, 136} and {256, 392}: no line in both */
    {"halves in lines of their own", 4, 4, {0, 136, 256, 392}, 0, 1},
    /* 24 bytes, the half at byte 12 inside the second block (at 100, line
     * 1): it counts in the first half; the third (at 64, line 1) in the
     * second */
    {"a block across the half counts in the first half", 3, 8, {0, 100, 64}, 1, 1},
    /* a block across a line boundary (60..67) in the first half, one at
     * 68 in the second: line 1 shared */
    {"a block across a line boundary marks both lines", 4, 8, {60, 300, 68, 500}, 1, 1},
    /* pages 0, 1, 2 and 3 (a block across), 24 */
    {"pages: one each, two for a block across a page boundary",
     4,
     8,
     {0, 4096, 12282, 100000},
     0,
     5},
};

/* The pages of a layout's sparse lines (sparse_pages). */
static void check_sparse_pages(const char *name, MPI_Datatype type, size_t pages)
{
	opal_datatype_direct_shape_t sh;
	int rc = type_shape(type, &sh);

	ntests++;
	if (rc != OPAL_SUCCESS || sh.sparse_pages != pages) {
		nfailed++;
		printf("not ok %d - %s: layout_create %d; sparse pages %zu (want %zu)\n", ntests,
		       name, rc, sh.sparse_pages, pages);
	} else {
		printf("ok %d - %s: %zu sparse pages\n", ntests, name, pages);
	}
}

/* Vectors of bytes and the pages of their sparse lines: the span in pages
 * (its last block ends at (count - 1) * stride + blen), at most one a block;
 * none where the blocks are no sparse lines. */
static const struct {
	const char *name;
	int count, blen, stride;
	size_t pages;
} vectors[] = {
    /* span 1023 * 256 + 8 = 261896 bytes: 63 whole pages, and one more */
    {"sparse pages: a strided run's span", 1024, 8, 256, 64},
    /* a block a page (and more) apart: one page each */
    {"sparse pages: at most one a block", 100, 8, 4160, 100},
    /* 64-byte blocks: no sparse line */
    {"sparse pages: none without sparse lines", 100, 64, 4160, 0},
    /* 4-byte blocks 16 apart share lines: no sparse line */
    {"sparse pages: none for blocks that share lines", 1000, 4, 16, 0},
};

int main(int argc, char **argv)
{
	int nlists = (int)(sizeof(lists) / sizeof(lists[0]));
	int nvectors = (int)(sizeof(vectors) / sizeof(vectors[0]));
	MPI_Datatype t;

	MPI_Init(&argc, &argv);
	printf("TAP version 13\n1..%d\n", nlists + 2 + nvectors);
	for (int i = 0; i < nlists; i++) {
		MPI_Type_create_hindexed_block(lists[i].n, lists[i].blen, lists[i].disp, MPI_BYTE,
					       &t);
		MPI_Type_commit(&t);
		check(lists[i].name, t, (size_t)lists[i].n, lists[i].shared, lists[i].pages);
		MPI_Type_free(&t);
	}
	MPI_Type_vector(64, 4, 16, MPI_BYTE, &t);
	MPI_Type_commit(&t);
	check("a vector has no index list", t, 0, 0, 0);
	MPI_Type_free(&t);
	for (int i = 0; i < nvectors; i++) {
		MPI_Type_vector(vectors[i].count, vectors[i].blen, vectors[i].stride, MPI_BYTE, &t);
		MPI_Type_commit(&t);
		check_sparse_pages(vectors[i].name, t, vectors[i].pages);
		MPI_Type_free(&t);
	}
	MPI_Type_create_hindexed_block(lists[5].n, lists[5].blen, lists[5].disp, MPI_BYTE, &t);
	MPI_Type_commit(&t);
	check_sparse_pages("an index list's sparse pages are its pages", t, lists[5].pages);
	MPI_Type_free(&t);
	MPI_Finalize();
	return nfailed ? 1 : 0;
}
