/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * MPI_Alltoall and MPI_Ialltoall with vector types on both sides: the
 * block transpose of a distributed matrix (tests/multinode/run.sh).
 *
 * Each rank owns NL rows of an N x N matrix of uint64 (N = NL x size,
 * row-major).  Column block j (NL x NL, row stride N) goes to rank j; the
 * send type is MPI_Type_vector(NL, NL, N) resized to NL elements, so that
 * block j starts NL elements after block j-1.  The receiver stores the
 * block from rank i as its column block i with the same type: afterwards
 * rank r's row x, column block i holds rank i's row x, column block r.
 * Element values depend on (owner rank, row, column) only; every received
 * element is checked.  NL runs over sizes from 1 to 200 (320 KB blocks,
 * above the direct Rendezvous threshold).
 */
#include "common.h"

static uint64_t value(int owner, size_t row, size_t col)
{
	return t_word(((uint64_t)owner << 32) | row, col);
}

static void transpose(size_t nl, int nonblocking)
{
	size_t n = nl * (size_t)t_size;
	uint64_t *a = t_malloc(nl * n * sizeof(uint64_t));
	uint64_t *b = t_malloc(nl * n * sizeof(uint64_t));
	MPI_Datatype vec, blk;
	size_t bad = 0;

	for (size_t x = 0; x < nl; x++)
		for (size_t c = 0; c < n; c++) {
			a[x * n + c] = value(t_rank, x, c);
			b[x * n + c] = ~(uint64_t)0;
		}
	MPI_Type_vector((int)nl, (int)nl, (int)n, MPI_UINT64_T, &vec);
	MPI_Type_create_resized(vec, 0, (MPI_Aint)(nl * sizeof(uint64_t)), &blk);
	MPI_Type_commit(&blk);
	if (nonblocking) {
		MPI_Request req;

		MPI_Ialltoall(a, 1, blk, b, 1, blk, MPI_COMM_WORLD, &req);
		MPI_Wait(&req, MPI_STATUS_IGNORE);
	} else {
		MPI_Alltoall(a, 1, blk, b, 1, blk, MPI_COMM_WORLD);
	}
	for (int i = 0; i < t_size; i++)
		for (size_t x = 0; x < nl; x++)
			for (size_t k = 0; k < nl; k++) {
				uint64_t got = b[x * n + (size_t)i * nl + k];

				if (got != value(i, x, (size_t)t_rank * nl + k) && bad++ < 3)
					t_fail("%s nl=%zu: block from rank %d, row %zu, col %zu: %016llx",
					       nonblocking ? "MPI_Ialltoall" : "MPI_Alltoall", nl, i,
					       x, k, (unsigned long long)got);
			}
	t_errors += bad > 3 ? (int)(bad - 3) : 0;
	t_mix(b, nl * n * sizeof(uint64_t));
	MPI_Type_free(&blk);
	MPI_Type_free(&vec);
	free(b);
	free(a);
}

int main(int argc, char **argv)
{
	static const size_t nls[] = {1, 7, 64, 200};

	MPI_Init(&argc, &argv);
	t_init_ids();
	for (size_t i = 0; i < sizeof(nls) / sizeof(nls[0]); i++) {
		transpose(nls[i], 0);
		transpose(nls[i], 1);
	}
	return t_finish("alltoall_vec");
}
