/* SPDX-License-Identifier: GPL-2.0 */
/* pvas.ko internals shared by the files of kmod/. */
#ifndef PVAS_KMOD_H
#define PVAS_KMOD_H

#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <uapi/pvas.h>

/* modinfo's version; dkms.conf's PACKAGE_VERSION is the same */
#define PVAS_MODULE_VERSION "0.1"

struct dentry;
struct file;
struct pid;

typedef unsigned long (*pvas_gua_t)(struct file *file, unsigned long addr,
				    unsigned long len, unsigned long pgoff,
				    unsigned long flags);

struct pvas_group;

/* One partition.  state and pid are protected by group->lock. */
struct pvas_slot {
	struct pvas_group *group;
	u32 index;
	u32 state;		/* PVAS_SLOT_* */
	struct pid *pid;	/* thread group bound to it (BOUND) */
	pid_t tgid;		/* its key in pvas_tasks */
	struct work_struct reclaim;
};

struct pvas_group {
	struct hlist_node node;	/* in pvas_groups, keyed by mm */
	struct kref ref;	/* creator's file + one per non-free slot */
	struct mutex lock;	/* slot states */
	struct mm_struct *mm;	/* mmgrab()ed */
	pvas_gua_t orig_gua;	/* mm->get_unmapped_area before us */
	struct pid *root;	/* creator's thread group */
	kuid_t uid;		/* creator's euid */
	u64 id;
	unsigned long base, end, part_size;
	unsigned int part_shift;
	u32 part_count;
	struct dentry *dir;	/* debugfs pvas/<id> */
	struct pvas_slot *slots;
};

/* Tasks bound to a slot, by global tgid; RCU readable. */
extern struct xarray pvas_tasks;
extern struct workqueue_struct *pvas_wq;
extern struct dentry *pvas_debugfs_root;
extern atomic_t pvas_groups_created;	/* since load, debugfs pvas/ */
extern atomic_t pvas_tasks_joined;

static inline unsigned long pvas_slot_lo(const struct pvas_slot *s)
{
	return s->group->base + ((unsigned long)s->index << s->group->part_shift);
}

/* group.c */
struct pvas_group *pvas_group_create(struct pvas_ioc_create *arg);
void pvas_group_put(struct pvas_group *g);
void pvas_group_close(struct pvas_group *g);
struct pvas_group *pvas_group_find_rcu(struct mm_struct *mm);
int pvas_slot_reserve(struct pvas_group *g, u32 slot);
int pvas_slot_join(struct pvas_group *g, u32 slot);
int pvas_slot_release(struct pvas_group *g, u32 slot);
int pvas_owner(struct pvas_group *g, struct pvas_ioc_owner *arg);
int pvas_tasks_query(struct pvas_group *g, struct pvas_ioc_tasks *arg);
bool pvas_may_access(const struct pvas_group *g);
void pvas_reclaim_work(struct work_struct *work);

/* mmap.c */
unsigned long pvas_get_unmapped_area(struct file *file, unsigned long addr,
				     unsigned long len, unsigned long pgoff,
				     unsigned long flags);
void pvas_note_orig_gua(pvas_gua_t orig);
pvas_gua_t pvas_orig_gua_for(struct mm_struct *mm);

/* exit.c */
int pvas_tracepoints_init(void);
void pvas_tracepoints_exit(void);

/* stats.c */
void pvas_partition_usage(struct mm_struct *mm, unsigned long lo,
			  unsigned long hi, u64 *rss, u64 *mapped);
void pvas_debugfs_init(void);
void pvas_debugfs_add(struct pvas_group *g);
void pvas_debugfs_remove(struct pvas_group *g);

#endif /* PVAS_KMOD_H */
