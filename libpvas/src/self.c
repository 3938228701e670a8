// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Identity and sharing, seen from inside a task (or from the root).
 * A task finds its group through $PVAS_TASK, set by pvas_spawn.  The value
 * is trusted only after kcmp(KCMP_VM) shows the named root really shares
 * our address space: a program started by fork+exec from a task inherits
 * the variable but not the address space.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static struct pvas_ctl *root_ctl;      /* group this process created last */
static struct pvas_ctl *task_ctl;      /* group this process is a task of */
static int task_slot = -1;
static pthread_once_t task_once = PTHREAD_ONCE_INIT;

int pvas_same_vm(pid_t pid)
{
	long r = syscall(SYS_kcmp, getpid(), pid, KCMP_VM, 0, 0);

	if (r < 0) {
		pvas_set_errorf(errno, "pvas_same_vm: kcmp(KCMP_VM) with pid %d", (int)pid);
		return -1;
	}
	return r == 0;
}

static void find_task_group(void)
{
	const char *v = getenv(PVAS_ENV_TASK);
	unsigned long addr;
	unsigned gen;
	int root, slot;
	struct pvas_ctl *c;

	if (!v || sscanf(v, "%d:%lx:%d:%u", &root, &addr, &slot, &gen) != 4 || slot < 0)
		return;
	if (syscall(SYS_kcmp, getpid(), root, KCMP_VM, 0, 0) != 0)
		return; /* not (or no longer) in that address space */
	c = (struct pvas_ctl *)addr;
	if (c->magic != PVAS_CTL_MAGIC || c->version != PVAS_CTL_VERSION || c->root_pid != root ||
	    (unsigned)slot >= c->part_count ||
	    atomic_load(&c->slot[slot].gen) != gen)
		return;
	task_ctl = c;
	task_slot = slot;
}

void pvas_set_root_ctl(struct pvas_ctl *ctl)
{
	root_ctl = ctl;
}

struct pvas_ctl *pvas_current_ctl(int *task_id)
{
	pthread_once(&task_once, find_task_group);
	if (task_ctl) {
		*task_id = task_slot;
		return task_ctl;
	}
	*task_id = -1;
	return root_ctl;
}

static struct pvas_ctl *need_ctl(const char *op, int *task_id)
{
	struct pvas_ctl *c = pvas_current_ctl(task_id);

	if (!c)
		pvas_set_errorf(ENOENT, "%s: not in a PVAS group (no valid %s)", op, PVAS_ENV_TASK);
	return c;
}

int pvas_self(struct pvas_info *info)
{
	int id;
	struct pvas_ctl *c = need_ctl("pvas_self", &id);

	if (!c)
		return -1;
	info->group_id = c->group_id;
	info->task_id = id;
	info->ntasks = atomic_load(&c->ntasks);
	info->root_pid = c->root_pid;
	info->base = c->base;
	info->partition_size = c->part_size;
	info->partition_count = c->part_count;
	info->part_lo = id >= 0 ? pvas_part_lo(c, (unsigned)id) : 0;
	info->part_hi = id >= 0 ? info->part_lo + c->part_size : 0;
	info->backend = c->backend;
	return 0;
}

int pvas_self_task_id(void)
{
	int id;

	if (!pvas_current_ctl(&id) || id < 0) {
		pvas_set_errorf(ENOENT, "pvas_self_task_id: not a PVAS task");
		return -1;
	}
	return id;
}

int pvas_owner(const void *addr)
{
	int id;
	struct pvas_ctl *c = need_ctl("pvas_owner", &id);
	uintptr_t a = (uintptr_t)addr, slot;

	if (!c)
		return -1;
	if (a < c->base || a - c->base >= c->part_size * c->part_count)
		goto none;
	slot = (a - c->base) / c->part_size;
	if (atomic_load(&c->slot[slot].state) != SLOT_LIVE)
		goto none;
	return (int)slot;
none:
	pvas_set_errorf(ENOENT, "pvas_owner: %p is in no live task's partition", addr);
	return -1;
}

int pvas_export(void *ptr)
{
	int id;
	struct pvas_ctl *c = need_ctl("pvas_export", &id);

	if (!c)
		return -1;
	if (id < 0) {
		pvas_set_errorf(EPERM, "pvas_export: the root has no export slot");
		return -1;
	}
	atomic_store(&c->slot[id].export_ptr, ptr);
	pvas_slot_changed(&c->slot[id]);
	return 0;
}

/* Deadline timeout_ms from now on CLOCK_MONOTONIC. */
static void deadline_in(struct timespec *t, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += timeout_ms / 1000;
	t->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/*
 * Sleeps on the slot's futex word (internal.h): the exporting task, the
 * child going live and the root reclaiming the slot all wake it.  The task
 * waited for is the one live in the slot when first seen (identified by
 * the slot's generation): ESRCH once it is no longer live, also if another
 * task has taken the slot in the meantime.
 */
void *pvas_import(int task_id, int timeout_ms)
{
	int self, seen_live = 0, r, saved_errno = errno;
	struct pvas_ctl *c = need_ctl("pvas_import", &self);
	struct pvas_ctl_slot *s;
	struct timespec deadline;
	uint32_t live_gen = 0;

	if (!c)
		return NULL;
	if (task_id < 0 || (unsigned)task_id >= c->part_count) {
		pvas_set_errorf(ENOENT, "pvas_import: task %d (group has %u partitions)", task_id,
				c->part_count);
		return NULL;
	}
	s = &c->slot[task_id];
	if (timeout_ms > 0)
		deadline_in(&deadline, timeout_ms);
	for (;;) {
		uint32_t ev = atomic_load(&s->event), gen = atomic_load(&s->gen);
		int st = atomic_load(&s->state);
		void *p = atomic_load(&s->export_ptr);

		if (atomic_load(&s->gen) != gen)
			continue; /* the slot changed hands while we looked */
		if (st == SLOT_LIVE) {
			if (seen_live && gen != live_gen)
				break; /* ours ended, a new task took the slot */
			seen_live = 1;
			live_gen = gen;
			if (p) {
				errno = saved_errno; /* EAGAIN/EINTR of the waits */
				return p;
			}
		} else if (seen_live || st == SLOT_DEAD) {
			break;
		}
		/* A free slot may be filled soon (spawning is sequential). */
		if (timeout_ms == 0)
			goto timed_out;
		r = pvas_futex_wait(&s->event, ev, timeout_ms > 0 ? &deadline : NULL);
		if (r == -ETIMEDOUT)
			goto timed_out;
		if (r && r != -EAGAIN && r != -EINTR) {
			pvas_set_errorf(-r, "pvas_import: futex wait on task %d's export slot",
					task_id);
			return NULL;
		}
	}
	pvas_set_errorf(ESRCH, "pvas_import: task %d ended", task_id);
	return NULL;
timed_out:
	pvas_set_errorf(ETIMEDOUT, "pvas_import: task %d exported nothing within %d ms", task_id,
			timeout_ms);
	return NULL;
}
