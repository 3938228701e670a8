/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench/ddt: data checks of the ping-pong patterns.
 *
 * Both ranks fill their whole arena with rank-specific position hashes
 * (ddt_fill: the "guard": every byte has a known value).  The expected
 * final arena of a rank is computed by replaying the run with the
 * hand-written pack/unpack on copies of both ranks' arenas; the hand code
 * is itself checked against MPI_Pack/MPI_Unpack of the real datatypes
 * (ddt_check_consistency), so the expectation does not trust either alone.
 * After a method's timed loop, the whole arena must equal the expectation:
 * this checks the received type map and that no other byte changed.
 */
#ifndef DDT_CHECK_H
#define DDT_CHECK_H

#include "ddt.h"

#define DDT_SALT_ARENA 1u
#define DDT_SALT_REF 2u

/* Fill c->arena with this rank's initial values. */
void ddt_check_fill(struct ddt_case *c);

/* Malloc'ed expected final arena of c->rank after all outer iterations. */
unsigned char *ddt_check_expected(const struct ddt_case *c);

/* Compare the manual pack/unpack with MPI_Pack/MPI_Unpack of the datatypes
 * on this rank (outer iterations 0 and last).  Returns 0 or -1 (printed). */
int ddt_check_consistency(struct ddt_case *c);

/* Compare n bytes; on mismatch print pattern/size/method/offset, return -1. */
int ddt_check_bytes(const struct ddt_case *c, const char *method, const char *what,
		    const void *got, const void *want, size_t n);

#endif
