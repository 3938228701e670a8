/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers for the test programs that run as PVAS tasks. */
#ifndef TASK_UTIL_H
#define TASK_UTIL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pvas.h"

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		fprintf(stderr, "task %s:%d: ", __FILE__, __LINE__);                               \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		exit(1);                                                                           \
	} while (0)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond))                                                                       \
			FAIL("check failed: %s (errno %d, %s)", #cond, errno, pvas_errmsg());      \
	} while (0)

static inline int env_int(const char *name)
{
	const char *v = getenv(name);

	if (!v)
		FAIL("%s not set", name);
	return atoi(v);
}

/* Wait (up to 60 s) until *p >= want. */
static inline void wait_at_least(_Atomic int *p, int want)
{
	struct timespec nap = { 0, 100000 };
	int i;

	for (i = 0; i < 600000 && atomic_load(p) < want; i++)
		if (i > 1000)
			nanosleep(&nap, NULL);
	if (atomic_load(p) < want)
		FAIL("timeout waiting for %d (at %d)", want, atomic_load(p));
}

#endif
