/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Failure: the last rank segfaults while the others wait for it in
 * MPI_Recv.  mpirun must notice, exit non-zero and leave nothing behind. */
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

int main(int argc, char **argv)
{
	int buf = 0;

	MPI_Init(&argc, &argv);
	t_init_ids();
	MPI_Barrier(MPI_COMM_WORLD);
	if (t_rank == t_size - 1) {
		/* a real invalid access (a NULL store could be optimised out) */
		volatile int *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		usleep(200000);
		*bad = 1; /* SIGSEGV */
		raise(SIGSEGV);
	}
	MPI_Recv(&buf, 1, MPI_INT, t_size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Finalize();
	return 0;
}
