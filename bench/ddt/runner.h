/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/ddt: the timed ping-pong loop of each method (ranks 0 and 1). */
#ifndef DDT_RUNNER_H
#define DDT_RUNNER_H

#include "ddt.h"

/*
 * Run method m of case c between ranks 0 and 1 of `pair`: outer
 * iterations (types created/committed/freed, buffers allocated per outer
 * iteration as in DDTBench) of inner round trips.  Rank 0 stores the
 * round-trip time of every inner iteration (pack + send + receive +
 * unpack; rank 1's unpack and pack are inside it) in samples.  Afterwards
 * the received data is checked; returns 0 if this rank's check passed.
 */
int ddt_run_pingpong(struct ddt_case *c, enum ddt_method m, MPI_Comm pair,
		     const struct ddt_opts *o, const unsigned char *expected, double *samples);

#endif
