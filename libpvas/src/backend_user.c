// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The userspace backend: no kernel module.  The partitions are one
 * PROT_NONE, MAP_NORESERVE reservation, aligned to the partition size so an
 * address's owner is one division.  The loader maps over it with MAP_FIXED.
 * What it cannot do (docs/layout.md): confine the addresses the kernel picks
 * for a task's own mmaps, or reclaim those when the task dies.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "internal.h"

static int user_available(void)
{
	return 1;
}

static int user_group_create(struct pvas_group *g)
{
	size_t size = g->ctl->part_size, total = size * g->ctl->part_count;
	uintptr_t p, base;
	uint64_t id = 0;

	p = (uintptr_t)mmap(NULL, total + size, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if ((void *)p == MAP_FAILED)
		return -errno;
	base = (p + size - 1) & ~(size - 1);
	if (base > p)
		munmap((void *)p, base - p);
	if (p + size > base)
		munmap((void *)(base + total), p + size - base);
	g->ctl->base = base;
	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id = (uint64_t)base ^ (uint64_t)g->ctl->root_pid << 32;
	g->ctl->group_id = id | 1;
	return 0;
}

static void user_group_destroy(struct pvas_group *g)
{
	munmap((void *)g->ctl->base, g->ctl->part_size * g->ctl->part_count);
}

static int user_task_prepare(struct pvas_group *g, unsigned slot)
{
	(void)g;
	(void)slot;
	return 0;
}

static int user_task_join(struct pvas_group *g, unsigned slot)
{
	(void)g;
	(void)slot;
	return 0;
}

/* Drop everything in the partition and put the reservation back. */
static int user_task_reclaim(struct pvas_group *g, unsigned slot)
{
	void *lo = (void *)pvas_part_lo(g->ctl, slot);

	if (mmap(lo, g->ctl->part_size, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
		return -errno;
	return 0;
}

const struct pvas_backend pvas_backend_user = {
	.name = "user",
	.available = user_available,
	.group_create = user_group_create,
	.group_destroy = user_group_destroy,
	.task_prepare = user_task_prepare,
	.task_join = user_task_join,
	.task_reclaim = user_task_reclaim,
	.loader_map_flag = MAP_FIXED,
};
