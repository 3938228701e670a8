/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench: what every MPI benchmark does at start-up and on its command line. */
#ifndef BENCH_CLI_H
#define BENCH_CLI_H

#include "output.h"

/* MPI_Init, errors returned (and reported by MPI_CHECK) on MPI_COMM_WORLD,
 * this process's rank and the world size. */
void bench_mpi_start(int *argc, char ***argv, int *rank, int *size);

/* The value of --format: csv or json; anything else is fatal. */
enum ddt_format bench_parse_format(const char *arg);

/* --help (code 0: usage on stdout) or a bad option (code 2: on stderr):
 * rank 0 prints the usage, MPI is finalized, the process exits. */
void bench_usage_exit(int rank, const char *usage, int code) __attribute__((noreturn));

#endif
