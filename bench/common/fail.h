/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench: fatal errors of the MPI programs.  Messages name the program and
 * rank, the failed operation and its object, and the MPI error string or
 * errno text; then the job is aborted.
 */
#ifndef BENCH_FAIL_H
#define BENCH_FAIL_H

#include <mpi.h>

/* Program name used in messages ("ddt", "fft2d", ...); set by main. */
extern const char *bench_prog;

void bench_mpi_fail(const char *what, const char *file, int line, int rc)
	__attribute__((noreturn));
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#define MPI_CHECK(call)                                                                            \
	do {                                                                                       \
		int rc_ = (call);                                                                  \
		if (rc_ != MPI_SUCCESS)                                                            \
			bench_mpi_fail(#call, __FILE__, __LINE__, rc_);                            \
	} while (0)

#endif
