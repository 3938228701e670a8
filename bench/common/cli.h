/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench: what every MPI benchmark does at start-up and on its command line. */
#ifndef BENCH_CLI_H
#define BENCH_CLI_H

#include "output.h"

#include <getopt.h>

/* MPI_Init, errors returned (and reported by MPI_CHECK) on MPI_COMM_WORLD,
 * this process's rank and the world size. */
void bench_mpi_start(int *argc, char ***argv, int *rank, int *size);

/* The options every MPI benchmark takes: --format F, --out FILE,
 * --inject-error (corrupt one received byte: the data check must fail) and
 * -h/--help. */
struct bench_opts {
	enum ddt_format fmt;
	const char *out; /* NULL: stdout */
	int inject;
};

/* getopt_long values of the shared options; a program's own long options
 * take values from BENCH_OPT_OWN up. */
enum { BENCH_OPT_FORMAT = 256, BENCH_OPT_OUT, BENCH_OPT_INJECT, BENCH_OPT_OWN };

/* The end of every program's option table. */
/* clang-format off */
#define BENCH_OPTIONS                                                      \
	{"format", required_argument, 0, BENCH_OPT_FORMAT},               \
	{"out", required_argument, 0, BENCH_OPT_OUT},                     \
	{"inject-error", no_argument, 0, BENCH_OPT_INJECT},               \
	{"help", no_argument, 0, 'h'},                                    \
	{0, 0, 0, 0}
/* clang-format on */

/* getopt_long over lo (the program's options followed by BENCH_OPTIONS) and
 * shortopts (the program's short options, 'h' is added): stores the shared
 * options in o and returns each of the program's own options, -1 at the
 * end.  --help exits 0; an unknown option, a bad --format or a stray
 * argument exits 2 with the usage (bench_usage_exit). */
int bench_getopt(int argc, char **argv, const char *shortopts, const struct option *lo, int rank,
		 const char *usage, struct bench_opts *o);

/* The value of --format: csv or json; anything else is fatal. */
enum ddt_format bench_parse_format(const char *arg);

/* --help (code 0: usage on stdout) or a bad option (code 2: on stderr):
 * rank 0 prints the usage, MPI is finalized, the process exits. */
void bench_usage_exit(int rank, const char *usage, int code) __attribute__((noreturn));

#endif
