/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/mpi/src/model_follow: ping-pong of one vector datatype, each rank
 * receiving into the buffer it sends from, for tests/mpi/model-follow.sh.
 *
 * The two ranks' cost models are told opposite things before MPI_Init
 * (MCA parameters in the environment): rank 0's that only the direct path
 * is cheap, rank 1's that the direct path costs a second.  With
 * pml_ob1_direct_model_follow, rank 1 (the higher name) takes the path
 * rank 0 names, so its pml_ob1_direct_stats count direct messages; without
 * it, none.  Every message's data is checked.  --blocks sets the vector's
 * doubles (4096: 32 KiB, above btl/pvas's eager limit; 512 fits it).
 *
 * Usage: model_follow [--iters N] [--blocks N]
 *        (2 ranks; exit 1 on a data mismatch)
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STRIDE = 8 }; /* doubles: one per 64-byte line */

int main(int argc, char **argv)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	int rank, size, iters = 40, bad = 0, blocks = 4096;
	double *buf;
	MPI_Datatype vec;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--iters") && i + 1 < argc) {
			iters = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) {
			blocks = atoi(argv[++i]);
			if (blocks < 1) {
				fprintf(stderr, "model_follow: --blocks must be at least 1\n");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: model_follow [--iters N] [--blocks N]\n");
			return 2;
		}
	}
	/* before MPI_Init, which reads them */
	if (r && !strcmp(r, "0")) {
		setenv("OMPI_MCA_pml_ob1_direct_model_o_staged", "1e9", 1);
		setenv("OMPI_MCA_pml_ob1_direct_model_o_cico", "1e9", 1);
	} else if (r && !strcmp(r, "1")) {
		setenv("OMPI_MCA_pml_ob1_direct_model_o_direct", "1e9", 1);
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "model_follow: needs 2 ranks, got %d\n", size);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = calloc((size_t)blocks * STRIDE, sizeof(double));
	if (!buf) {
		fprintf(stderr, "model_follow: calloc of %zu bytes failed\n",
			(size_t)blocks * STRIDE * sizeof(double));
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Type_vector(blocks, 1, STRIDE, MPI_DOUBLE, &vec);
	MPI_Type_commit(&vec);
	for (int it = 0; it < iters; it++) {
		/* rank 0 sends it * blocks + b, rank 1 sends it back plus 0.5
		 * (all exact in a double) */
		if (rank == 0) {
			for (int b = 0; b < blocks; b++)
				buf[b * STRIDE] = (double)it * blocks + b;
			MPI_Send(buf, 1, vec, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(buf, 1, vec, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(buf, 1, vec, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		for (int b = 0; b < blocks; b++) {
			double want = (double)it * blocks + b + (rank == 0 ? 0.5 : 0.0);
			if (buf[b * STRIDE] != want) {
				if (bad++ < 3)
					fprintf(stderr,
						"model_follow: rank %d iteration %d block %d: %g, "
						"expected %g\n",
						rank, it, b, buf[b * STRIDE], want);
			}
		}
		if (rank == 1) {
			for (int b = 0; b < blocks; b++)
				buf[b * STRIDE] += 0.5;
			MPI_Send(buf, 1, vec, 0, 0, MPI_COMM_WORLD);
		}
	}
	MPI_Type_free(&vec);
	free(buf);
	MPI_Finalize();
	return bad ? 1 : 0;
}
