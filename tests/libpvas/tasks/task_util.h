/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers for the test programs that run as PVAS tasks. */
#ifndef TASK_UTIL_H
#define TASK_UTIL_H

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

/*
 * Counters the tasks wait on: they live in one task's memory and the tasks
 * share one mm, so a private futex reaches all of them.  wait_at_least
 * sleeps (up to 60 s) until *p >= want; add_and_wake adds and wakes.
 */
static inline void add_and_wake(_Atomic int *p, int n)
{
	int saved_errno = errno;

	atomic_fetch_add(p, n);
	syscall(SYS_futex, (int *)p, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	errno = saved_errno;
}

static inline void wait_at_least(_Atomic int *p, int want)
{
	struct timespec deadline;
	int v, saved_errno = errno; /* t_identity checks that errno is its own */

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += 60;
	while ((v = atomic_load(p)) < want)
		if (syscall(SYS_futex, (int *)p, FUTEX_WAIT_BITSET_PRIVATE, v, &deadline, NULL,
			    FUTEX_BITSET_MATCH_ANY) &&
		    errno == ETIMEDOUT)
			break;
	if (atomic_load(p) < want)
		FAIL("timeout waiting for %d (at %d)", want, atomic_load(p));
	errno = saved_errno;
}

#endif
