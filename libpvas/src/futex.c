// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Sleeping waits between the root and its tasks.  Every task shares the
 * root's mm in both backends (clone(CLONE_VM); pvas.ko only constrains
 * where mappings go), so a private futex on a word of the control block
 * reaches every member of the group and nobody outside it.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int pvas_futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *deadline)
{
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
	if (syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, val, deadline, NULL,
		    FUTEX_BITSET_MATCH_ANY))
		return -errno;
	return 0;
}

void pvas_futex_wake_all(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void pvas_slot_changed(struct pvas_ctl_slot *s)
{
	atomic_fetch_add(&s->event, 1);
	pvas_futex_wake_all(&s->event);
}
