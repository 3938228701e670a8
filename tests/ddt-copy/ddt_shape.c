/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddt_shape: TAP checks of the index-list counts of the
 * direct engine's layout shape (opal_datatype_direct_layout_shape), which
 * ob1's cost model reads: the lines of the index list at the packed
 * stream's half that hold bytes of both halves (index_shared_lines), and
 * the 4-KiB pages its index lists touch (index_pages).  Each case is a small
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

static void check(const char *name, MPI_Datatype type, size_t index_blocks, size_t shared,
		  size_t pages)
{
	opal_datatype_direct_layout_t *l;
	opal_datatype_direct_shape_t sh = {0};
	int rc = opal_datatype_direct_layout_create((const opal_datatype_t *)type, 1, &l);

	if (rc == OPAL_SUCCESS) {
		opal_datatype_direct_layout_shape(l, &sh);
		opal_datatype_direct_layout_release(l);
	}
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

/* An index list of n blocks of blen bytes at disp[] (bytes). */
static MPI_Datatype index_type(int n, int blen, const MPI_Aint *disp)
{
	MPI_Datatype t;

	MPI_Type_create_hindexed_block(n, blen, disp, MPI_BYTE, &t);
	MPI_Type_commit(&t);
	return t;
}

int main(int argc, char **argv)
{
	/* halves {0, 200} and {8, 232}: lines 0 and 3 are in both */
	static const MPI_Aint mixed[] = {0, 200, 8, 232};
	/* halves {0, 136} and {256, 392}: no line in both */
	static const MPI_Aint apart[] = {0, 136, 256, 392};
	/* 24 bytes, the half at byte 12 inside the second block (at 100, line
	 * 1): it counts in the first half; the third (at 64, line 1) in the
	 * second: one shared line */
	static const MPI_Aint straddle[] = {0, 100, 64};
	/* a block across a line boundary (60..67) in the first half, one at
	 * 68 in the second: line 1 shared */
	static const MPI_Aint across[] = {60, 300, 68, 500};
	/* halves {0, 200} and {8, 20}: line 0 is hit twice, counts once */
	static const MPI_Aint twice[] = {0, 200, 8, 20};
	/* pages 0, 1, 2 and 3 (a block across), 24 */
	static const MPI_Aint paged[] = {0, 4096, 12282, 100000};
	MPI_Datatype t, v;

	MPI_Init(&argc, &argv);
	printf("TAP version 13\n1..7\n");
	t = index_type(4, 4, mixed);
	check("halves meeting in two lines", t, 4, 2, 1);
	MPI_Type_free(&t);
	t = index_type(4, 4, twice);
	check("a line the second half hits twice counts once", t, 4, 1, 1);
	MPI_Type_free(&t);
	t = index_type(4, 4, apart);
	check("halves in lines of their own", t, 4, 0, 1);
	MPI_Type_free(&t);
	t = index_type(3, 8, straddle);
	check("a block across the half counts in the first half", t, 3, 1, 1);
	MPI_Type_free(&t);
	t = index_type(4, 8, across);
	check("a block across a line boundary marks both lines", t, 4, 1, 1);
	MPI_Type_free(&t);
	t = index_type(4, 8, paged);
	check("pages: one each, two for a block across a page boundary", t, 4, 0, 5);
	MPI_Type_free(&t);
	MPI_Type_vector(64, 4, 16, MPI_BYTE, &v);
	MPI_Type_commit(&v);
	check("a vector has no index list", v, 0, 0, 0);
	MPI_Type_free(&v);
	MPI_Finalize();
	return nfailed ? 1 : 0;
}
