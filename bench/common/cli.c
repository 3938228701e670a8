// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fail.h"

void bench_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
	MPI_CHECK(MPI_Init(argc, argv));
	MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, size));
}

enum ddt_format bench_parse_format(const char *arg)
{
	if (!strcmp(arg, "csv"))
		return FMT_CSV;
	if (!strcmp(arg, "json"))
		return FMT_JSON;
	bench_die("bad --format '%s' (csv or json)", arg);
}

void bench_usage_exit(int rank, const char *usage, int code)
{
	if (rank == 0)
		fputs(usage, code ? stderr : stdout);
	MPI_Finalize();
	exit(code);
}
