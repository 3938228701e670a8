/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * PVAS user/kernel interface: /dev/pvas ioctls.  Shared by pvas.ko and
 * libpvas's kernel backend.  Every structure has explicit padding and only
 * fixed-size types so that it is the same for all ABIs.
 *
 * Life cycle (see docs/kmod.md):
 *   root:  fd = open("/dev/pvas");  PVAS_IOC_VERSION;  PVAS_IOC_CREATE
 *          (the caller's mm becomes the group's; the kernel picks the base)
 *   root:  PVAS_IOC_RESERVE slot  -> the slot is kept for one child
 *   child: clone(CLONE_VM) of the root, inherits a copy of fd;
 *          PVAS_IOC_JOIN slot     -> the task is bound to its partition;
 *          from now on every address the kernel picks for it lies there
 *   any:   PVAS_IOC_OWNER addr    -> which slot holds addr
 *   any:   PVAS_IOC_TASKS         -> the group's non-free slots
 *   kernel: a task that exits has its partition unmapped and its slot freed
 *   root:  PVAS_IOC_RELEASE slot  -> after waitpid (or a failed clone):
 *          waits until the slot is free again (idempotent)
 *          the group ends with its last task and the root's fd
 *
 * Errors (negated in the kernel, errno in userspace):
 *   EINVAL  bad argument (flags not 0, slot out of range, size not a power
 *           of two, ...) or the caller's mm is not the group's
 *   EPERM   caller's effective uid is not the group creator's, or a
 *           root-only operation from another process
 *   EBUSY   fd or mm already has a group; slot not free; task still alive
 *   ENOTTY  no group on this fd yet (or unknown ioctl)
 *   ENOMEM  no room for the group's range
 *   EFAULT  bad user pointer
 */
#ifndef _UAPI_PVAS_H
#define _UAPI_PVAS_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PVAS_UAPI_VERSION 1
#define PVAS_DEVICE_NAME "pvas"
#define PVAS_IOC_MAGIC 0xB7

#define PVAS_MAX_PARTS 4096
#define PVAS_MIN_PART_SHIFT 30	/* part_size >= 1 GiB */
#define PVAS_MAX_PART_SHIFT 42	/* part_size <= 4 TiB */

struct pvas_ioc_version {
	__u32 version;	/* out: PVAS_UAPI_VERSION of the module */
	__u32 flags;	/* out: reserved, 0 */
};

struct pvas_ioc_create {
	__u64 part_size;	/* in: bytes, power of two, 1 GiB .. 4 TiB */
	__u32 part_count;	/* in: 1 .. PVAS_MAX_PARTS */
	__u32 flags;		/* in: must be 0 */
	__u64 base;		/* out: start of partition 0 */
	__u64 group_id;		/* out: unique id of the group */
};

struct pvas_ioc_slot {
	__u32 slot;		/* in: partition index */
	__u32 flags;		/* in: must be 0 */
};

struct pvas_ioc_owner {
	__u64 addr;		/* in */
	__s32 slot;		/* out: partition index, -1 if none */
	__s32 pid;		/* out: pid bound to it, 0 if none */
};

/* Slot states as reported by PVAS_IOC_TASKS. */
#define PVAS_SLOT_FREE 0
#define PVAS_SLOT_RESERVED 1	/* RESERVE done, JOIN not yet */
#define PVAS_SLOT_BOUND 2	/* a live task is bound to it */

struct pvas_task_info {
	__u32 slot;		/* partition index */
	__u32 state;		/* PVAS_SLOT_* */
	__s32 pid;		/* task's pid (caller's pid namespace), or 0 */
	__u32 pad;		/* 0 */
	__u64 rss;		/* bytes resident in the partition */
	__u64 mapped;		/* bytes mapped in the partition */
};

struct pvas_ioc_tasks {
	__u64 buf;		/* in: user address of pvas_task_info[count] */
	__u32 count;		/* in: capacity; out: number of non-free slots */
	__u32 flags;		/* in: must be 0 */
};

#define PVAS_IOC_VERSION _IOR(PVAS_IOC_MAGIC, 0, struct pvas_ioc_version)
#define PVAS_IOC_CREATE _IOWR(PVAS_IOC_MAGIC, 1, struct pvas_ioc_create)
#define PVAS_IOC_RESERVE _IOW(PVAS_IOC_MAGIC, 2, struct pvas_ioc_slot)
#define PVAS_IOC_JOIN _IOW(PVAS_IOC_MAGIC, 3, struct pvas_ioc_slot)
#define PVAS_IOC_OWNER _IOWR(PVAS_IOC_MAGIC, 4, struct pvas_ioc_owner)
#define PVAS_IOC_RELEASE _IOW(PVAS_IOC_MAGIC, 5, struct pvas_ioc_slot)
#define PVAS_IOC_TASKS _IOWR(PVAS_IOC_MAGIC, 6, struct pvas_ioc_tasks)

#endif /* _UAPI_PVAS_H */
