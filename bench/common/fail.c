/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fail.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int world_rank(void)
{
	int init = 0, fini = 0, r = -1;
	MPI_Initialized(&init);
	MPI_Finalized(&fini);
	if (init && !fini)
		MPI_Comm_rank(MPI_COMM_WORLD, &r);
	return r;
}

void bench_mpi_fail(const char *what, const char *file, int line, int rc)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
		snprintf(msg, sizeof(msg), "MPI error %d", rc);
	fprintf(stderr, "%s: rank %d: %s failed: %s (%s:%d)\n", bench_prog, world_rank(), what,
		msg, file, line);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}

void bench_die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: rank %d: fatal: ", bench_prog, world_rank());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	MPI_Abort(MPI_COMM_WORLD, 2);
	exit(2);
}
