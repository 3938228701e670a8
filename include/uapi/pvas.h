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
 *   kernel: a task that exits has its partition unmapped and its slot freed
 *          the group ends with its last task and the root's fd
 */
#ifndef _UAPI_PVAS_H
#define _UAPI_PVAS_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define PVAS_UAPI_VERSION 1
#define PVAS_DEVICE_NAME "pvas"
#define PVAS_IOC_MAGIC 0xB7

struct pvas_ioc_version {
	__u32 version;	/* out: PVAS_UAPI_VERSION of the module */
	__u32 flags;	/* out: reserved, 0 */
};

struct pvas_ioc_create {
	__u64 part_size;	/* in: bytes, power of two, >= 1 GiB */
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

#define PVAS_MAX_PARTS 4096

#define PVAS_IOC_VERSION _IOR(PVAS_IOC_MAGIC, 0, struct pvas_ioc_version)
#define PVAS_IOC_CREATE _IOWR(PVAS_IOC_MAGIC, 1, struct pvas_ioc_create)
#define PVAS_IOC_RESERVE _IOW(PVAS_IOC_MAGIC, 2, struct pvas_ioc_slot)
#define PVAS_IOC_JOIN _IOW(PVAS_IOC_MAGIC, 3, struct pvas_ioc_slot)
#define PVAS_IOC_OWNER _IOWR(PVAS_IOC_MAGIC, 4, struct pvas_ioc_owner)
#define PVAS_IOC_RELEASE _IOW(PVAS_IOC_MAGIC, 5, struct pvas_ioc_slot)

#endif /* _UAPI_PVAS_H */
