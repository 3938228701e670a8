/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Failure: every rank blocks in MPI forever after printing "ready"; the
 * test sends SIGTERM to mpirun, which must exit and leave nothing behind. */
#include "common.h"

int main(int argc, char **argv)
{
	int buf = 0;

	MPI_Init(&argc, &argv);
	t_init_ids();
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == 0) {
		printf("ready\n");
		fflush(stdout);
	}
	MPI_Recv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
