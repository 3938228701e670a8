/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/mpi/src/model_eager: ping-pong of one vector of single bytes that
 * fits an eager fragment, each rank receiving into the buffer it sends
 * from, for tests/mpi/model-eager.sh.  Every message's data is checked.
 *
 * Usage: model_eager [--iters N]   (2 ranks; exit 1 on a data mismatch)
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCKS = 4000, STRIDE = 3 }; /* 4000 bytes, one in three */

static unsigned char value(int it, int b, int rank)
{
	return (unsigned char)(it * 7 + b * 13 + rank);
}

int main(int argc, char **argv)
{
	int rank, size, iters = 200, bad = 0;
	unsigned char *buf;
	MPI_Datatype vec;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atoi(argv[++i]);
		} else {
			fprintf(stderr, "usage: model_eager [--iters N]\n");
			return 2;
		}
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "model_eager: needs 2 ranks, got %d\n", size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = calloc((size_t)BLOCKS * STRIDE, 1);
	if (!buf) {
		fprintf(stderr, "model_eager: calloc of %zu bytes failed\n",
			(size_t)BLOCKS * STRIDE);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Type_vector(BLOCKS, 1, STRIDE, MPI_UNSIGNED_CHAR, &vec);
	MPI_Type_commit(&vec);
	for (int it = 0; it < iters; it++) {
		int from = rank == 0 ? 1 : 0;

		if (rank == 0) {
			for (int b = 0; b < BLOCKS; b++)
				buf[b * STRIDE] = value(it, b, 0);
			MPI_Send(buf, 1, vec, 1, 0, MPI_COMM_WORLD);
		}
		MPI_Recv(buf, 1, vec, from, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		for (int b = 0; b < BLOCKS; b++) {
			if (buf[b * STRIDE] != value(it, b, from) && bad++ < 3)
				fprintf(stderr,
					"model_eager: rank %d iteration %d block %d: %u, expected %u\n",
					rank, it, b, buf[b * STRIDE], value(it, b, from));
		}
		if (rank == 1) {
			for (int b = 0; b < BLOCKS; b++)
				buf[b * STRIDE] = value(it, b, 1);
			MPI_Send(buf, 1, vec, 0, 0, MPI_COMM_WORLD);
		}
	}
	MPI_Type_free(&vec);
	free(buf);
	MPI_Finalize();
	return bad ? 1 : 0;
}
