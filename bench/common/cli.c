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

int bench_getopt(int argc, char **argv, const char *shortopts, const struct option *lo, int rank,
		 const char *usage, struct bench_opts *o)
{
	char so[64];
	int ch;

	snprintf(so, sizeof(so), "%sh", shortopts);
	while ((ch = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		switch (ch) {
		case BENCH_OPT_FORMAT:
			o->fmt = bench_parse_format(optarg);
			break;
		case BENCH_OPT_OUT:
			o->out = optarg;
			break;
		case BENCH_OPT_INJECT:
			o->inject = 1;
			break;
		case 'h':
			bench_usage_exit(rank, usage, 0);
		case '?':
			bench_usage_exit(rank, usage, 2);
		default:
			return ch;
		}
	}
	if (optind < argc) {
		if (rank == 0)
			fprintf(stderr, "%s: unexpected argument '%s'\n", bench_prog, argv[optind]);
		bench_usage_exit(rank, usage, 2);
	}
	return -1;
}
