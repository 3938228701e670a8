// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend: pvas.ko (/dev/pvas, include/uapi/pvas.h).  The module
 * picks the group's range and keeps the root's mappings out of it; a task
 * that joined its slot gets every address the kernel picks inside its own
 * partition, cannot MAP_FIXED into another one, and has its partition
 * unmapped by the kernel when it dies (docs/kmod.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "uapi/pvas.h"

#define PVAS_DEV_PATH "/dev/" PVAS_DEVICE_NAME

static int kmod_open(void)
{
	struct pvas_ioc_version v = {0};
	int fd = open(PVAS_DEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (ioctl(fd, PVAS_IOC_VERSION, &v) || v.version != PVAS_UAPI_VERSION) {
		close(fd);
		return -EPROTO;
	}
	return fd;
}

static int kmod_available(void)
{
	int fd = kmod_open();

	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* O_CLOEXEC is fine: a child keeps the fd until libpvas's close-on-exec
 * emulation, which runs after task_join. */
static int kmod_group_create(struct pvas_group *g)
{
	struct pvas_ioc_create c = {
		.part_size = g->ctl->part_size,
		.part_count = g->ctl->part_count,
	};
	int fd = kmod_open();

	if (fd < 0)
		return fd == -EPROTO ? -EPROTO : -ENODEV;
	if (ioctl(fd, PVAS_IOC_CREATE, &c)) {
		int err = errno;

		close(fd);
		return -err;
	}
	g->dev_fd = fd;
	g->ctl->base = (uintptr_t)c.base;
	g->ctl->group_id = c.group_id;
	return 0;
}

/* The group ends in the kernel with this fd and the last task. */
static void kmod_group_destroy(struct pvas_group *g)
{
	if (g->dev_fd >= 0)
		close(g->dev_fd);
	g->dev_fd = -1;
}

static int kmod_slot_ioctl(struct pvas_group *g, unsigned long cmd, unsigned slot)
{
	struct pvas_ioc_slot s = {.slot = slot};

	return ioctl(g->dev_fd, cmd, &s) ? -errno : 0;
}

static int kmod_task_prepare(struct pvas_group *g, unsigned slot)
{
	return kmod_slot_ioctl(g, PVAS_IOC_RESERVE, slot);
}

/* Child, before the loader: no allocation. */
static int kmod_task_join(struct pvas_group *g, unsigned slot)
{
	return kmod_slot_ioctl(g, PVAS_IOC_JOIN, slot);
}

/* After waitpid (or a failed start): waits until the kernel has unmapped
 * the partition and freed the slot. */
static int kmod_task_reclaim(struct pvas_group *g, unsigned slot)
{
	int r;

	do
		r = kmod_slot_ioctl(g, PVAS_IOC_RELEASE, slot);
	while (r == -EINTR);
	return r;
}

const struct pvas_backend pvas_backend_kmod = {
	.name = "kmod",
	.available = kmod_available,
	.group_create = kmod_group_create,
	.group_destroy = kmod_group_destroy,
	.task_prepare = kmod_task_prepare,
	.task_join = kmod_task_join,
	.task_reclaim = kmod_task_reclaim,
	/* The partition is a hole: map into it, never over anything. */
	.loader_map_flag = MAP_FIXED_NOREPLACE,
};
