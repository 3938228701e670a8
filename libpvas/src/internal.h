/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libpvas internals: the group, its control block and the backend interface. */
#ifndef PVAS_INTERNAL_H
#define PVAS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "pvas.h"

#define PVAS_CTL_MAGIC 0x5056415343544c31ULL /* "PVASCTL1" */
/* Layout of struct pvas_ctl; a task trusts only a block of its own layout. */
#define PVAS_CTL_VERSION 2
/* Environment entry through which a task finds its group:
 * PVAS_TASK=<root pid>:<control block address, hex>:<task id>:<generation> */
#define PVAS_ENV_TASK "PVAS_TASK"

enum pvas_slot_state { SLOT_FREE = 0, SLOT_LOADING, SLOT_LIVE, SLOT_DEAD };

/* One per partition; lives in the root's memory, read by every task. */
struct pvas_ctl_slot {
	_Atomic int state;	/* enum pvas_slot_state */
	_Atomic pid_t pid;
	_Atomic uint32_t gen;	/* bumped each time the slot is reused */
	_Atomic(void *) export_ptr;
	/* Futex word: bumped, and its waiters woken, after every change of
	 * state or export_ptr (pvas_slot_changed). */
	_Atomic uint32_t event;
	uintptr_t boot_stack;	/* root-owned clone stack, freed at reap */
	size_t boot_stack_size;
};

/* The group control block: one mapping in the root, shared by all tasks. */
struct pvas_ctl {
	uint64_t magic;
	uint32_t version;
	pid_t root_pid;
	uint64_t group_id;
	uintptr_t base;
	size_t part_size;
	unsigned part_count;
	char backend[8];
	_Atomic int ntasks;
	struct pvas_ctl_slot slot[];
};

struct pvas_group;

/*
 * A backend.  Hooks marked "child" run in the clone(CLONE_VM) child while
 * the root's spawning thread is blocked: they may use libc but must not
 * allocate, and return 0 or a negative errno.
 */
struct pvas_backend {
	const char *name;
	/* 1 if usable on this machine. */
	int (*available)(void);
	/* Root: reserve the partitions, set g->ctl->base and group_id. */
	int (*group_create)(struct pvas_group *g);
	void (*group_destroy)(struct pvas_group *g);
	/* Root, before the clone: keep slot for the coming child. */
	int (*task_prepare)(struct pvas_group *g, unsigned slot);
	/* Child: bind this process to its partition (before the loader). */
	int (*task_join)(struct pvas_group *g, unsigned slot);
	/* Root, after the task was reaped or failed to start. */
	int (*task_reclaim)(struct pvas_group *g, unsigned slot);
	/* MAP_FIXED or MAP_FIXED_NOREPLACE: how the loader maps into the
	 * partition (user: over a PROT_NONE reservation; kmod: into a hole). */
	int loader_map_flag;
};

extern const struct pvas_backend pvas_backend_user;
extern const struct pvas_backend pvas_backend_kmod;

struct pvas_group {
	struct pvas_ctl *ctl;
	size_t ctl_size;
	const struct pvas_backend *be;
	int dev_fd; /* kmod backend: the /dev/pvas fd, else -1 */
	int *pidfds; /* root-private, per slot: pidfd of the live task or -1 */
	pthread_mutex_t lock;
};

/* Root side of a task's partition range. */
static inline uintptr_t pvas_part_lo(const struct pvas_ctl *c, unsigned slot)
{
	return c->base + (uintptr_t)slot * c->part_size;
}

/* Record a failure: "<op>: <object>: <strerror(err)>"; sets errno = err. */
void pvas_set_error(const char *op, const char *object, int err);
void pvas_set_errorf(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Futex waits inside the group (futex.c).  pvas_futex_wait sleeps while
 * *word == val, until woken or until the absolute CLOCK_MONOTONIC deadline
 * (NULL: none); returns 0 or -errno (EAGAIN: *word had changed, EINTR,
 * ETIMEDOUT).
 */
int pvas_futex_wait(_Atomic uint32_t *word, uint32_t val, const struct timespec *deadline);
void pvas_futex_wake_all(_Atomic uint32_t *word);
/* Announce a change of a slot's state or export pointer to its waiters. */
void pvas_slot_changed(struct pvas_ctl_slot *s);

/* The group the calling process belongs to (task) or created last (root). */
struct pvas_ctl *pvas_current_ctl(int *task_id);
void pvas_set_root_ctl(struct pvas_ctl *ctl);

#endif
