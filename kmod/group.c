// SPDX-License-Identifier: GPL-2.0
/*
 * pvas.ko groups and their slots: CREATE, RESERVE, JOIN, RELEASE, OWNER,
 * TASKS, the reclaim of a slot and the end of a group.
 *
 * Locking: pvas_groups_lock (mutex) serialises writers of pvas_groups,
 * which RCU readers (the get_unmapped_area hook) walk.  group->lock
 * protects the slot states and may be held while taking mmap_lock, never
 * the other way round (the hook takes no lock of ours).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/hashtable.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "pvas.h"

DEFINE_XARRAY(pvas_tasks);
static DEFINE_HASHTABLE(pvas_groups, 6);
static DEFINE_MUTEX(pvas_groups_lock);
static atomic64_t pvas_next_id = ATOMIC64_INIT(0);

struct pvas_group *pvas_group_find_rcu(struct mm_struct *mm)
{
	struct pvas_group *g;

	hash_for_each_possible_rcu(pvas_groups, g, node, (unsigned long)mm)
		if (g->mm == mm)
			return g;
	return NULL;
}

bool pvas_may_access(const struct pvas_group *g)
{
	return uid_eq(current_euid(), g->uid);
}

static bool pvas_is_root(const struct pvas_group *g)
{
	return task_tgid(current) == g->root;
}

struct pvas_group *pvas_group_create(struct pvas_ioc_create *arg)
{
	struct mm_struct *mm = current->mm;
	unsigned long total, addr;
	struct pvas_group *g;
	u32 i;
	int ret;

	if (arg->flags || !mm)
		return ERR_PTR(-EINVAL);
	if (!is_power_of_2(arg->part_size) ||
	    arg->part_size < (1ULL << PVAS_MIN_PART_SHIFT) ||
	    arg->part_size > (1ULL << PVAS_MAX_PART_SHIFT))
		return ERR_PTR(-EINVAL);
	if (arg->part_count < 1 || arg->part_count > PVAS_MAX_PARTS)
		return ERR_PTR(-EINVAL);
	if (check_mul_overflow((unsigned long)arg->part_size,
			       (unsigned long)arg->part_count, &total) ||
	    total > TASK_SIZE / 2)
		return ERR_PTR(-ENOMEM);

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return ERR_PTR(-ENOMEM);
	g->slots = kvcalloc(arg->part_count, sizeof(*g->slots), GFP_KERNEL);
	if (!g->slots) {
		kfree(g);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&g->ref);
	mutex_init(&g->lock);
	g->part_size = arg->part_size;
	g->part_shift = ilog2(arg->part_size);
	g->part_count = arg->part_count;
	g->uid = current_euid();
	for (i = 0; i < g->part_count; i++) {
		g->slots[i].group = g;
		g->slots[i].index = i;
		INIT_WORK(&g->slots[i].reclaim, pvas_reclaim_work);
	}

	mutex_lock(&pvas_groups_lock);
	if (mmap_write_lock_killable(mm)) {
		ret = -EINTR;
		goto fail;
	}
	rcu_read_lock();
	ret = pvas_group_find_rcu(mm) ? -EBUSY : 0;
	rcu_read_unlock();
	if (ret)
		goto fail_locked;
	/* An mm still carrying our hook without a group is not usable. */
	if (mm->get_unmapped_area == pvas_get_unmapped_area) {
		ret = -EBUSY;
		goto fail_locked;
	}
	/* Room for the range plus one partition of slack for the alignment. */
	addr = get_unmapped_area(NULL, 0, total + g->part_size, 0,
				 MAP_PRIVATE | MAP_ANONYMOUS);
	if (IS_ERR_VALUE(addr)) {
		ret = (long)addr;
		goto fail_locked;
	}
	g->base = ALIGN(addr, g->part_size);
	g->end = g->base + total;
	g->mm = mm;
	mmgrab(mm);
	g->orig_gua = mm->get_unmapped_area;
	pvas_note_orig_gua(g->orig_gua);
	g->root = get_task_pid(current, PIDTYPE_TGID);
	g->id = atomic64_inc_return(&pvas_next_id);
	__module_get(THIS_MODULE);
	hash_add_rcu(pvas_groups, &g->node, (unsigned long)mm);
	/* Readers see the group before the hook that looks for it. */
	smp_wmb();
	WRITE_ONCE(mm->get_unmapped_area, pvas_get_unmapped_area);
	mmap_write_unlock(mm);
	mutex_unlock(&pvas_groups_lock);

	pvas_debugfs_add(g);
	atomic_inc(&pvas_groups_created);
	arg->base = g->base;
	arg->group_id = g->id;
	return g;

fail_locked:
	mmap_write_unlock(mm);
fail:
	mutex_unlock(&pvas_groups_lock);
	kvfree(g->slots);
	kfree(g);
	return ERR_PTR(ret);
}

/* The last reference is gone: no slot is in use, no fd refers to it. */
static void pvas_group_release(struct kref *ref)
{
	struct pvas_group *g = container_of(ref, struct pvas_group, ref);
	struct mm_struct *mm = g->mm;

	pvas_debugfs_remove(g);
	mutex_lock(&pvas_groups_lock);
	hash_del_rcu(&g->node);
	mutex_unlock(&pvas_groups_lock);
	/* The mm may be dead already; mmgrab() keeps mm_struct and its lock. */
	mmap_write_lock(mm);
	if (mm->get_unmapped_area == pvas_get_unmapped_area)
		WRITE_ONCE(mm->get_unmapped_area, g->orig_gua);
	mmap_write_unlock(mm);
	/* Wait for hook and tracepoint readers that may still see g. */
	synchronize_rcu();
	put_pid(g->root);
	mmdrop(mm);
	kvfree(g->slots);
	kfree(g);
	/* Last: see pvas_exit() for why this is safe from our workqueue. */
	module_put(THIS_MODULE);
}

/*
 * The last fd of the group is closed: nobody can JOIN any more, so the
 * RESERVED slots are freed; the group lives on while tasks are bound.
 */
void pvas_group_close(struct pvas_group *g)
{
	unsigned int i, n = 0;

	mutex_lock(&g->lock);
	for (i = 0; i < g->part_count; i++) {
		if (g->slots[i].state == PVAS_SLOT_RESERVED) {
			g->slots[i].state = PVAS_SLOT_FREE;
			n++;
		}
	}
	mutex_unlock(&g->lock);
	while (n--)
		kref_put(&g->ref, pvas_group_release);	/* not the last */
	pvas_group_put(g);
}

void pvas_group_put(struct pvas_group *g)
{
	might_sleep();
	kref_put(&g->ref, pvas_group_release);
}

/* Common checks of RESERVE, JOIN, RELEASE. */
static int pvas_slot_check(struct pvas_group *g, u32 slot)
{
	if (!pvas_may_access(g))
		return -EPERM;
	if (current->mm != g->mm)
		return -EINVAL;
	if (slot >= g->part_count)
		return -EINVAL;
	return 0;
}

int pvas_slot_reserve(struct pvas_group *g, u32 slot)
{
	struct pvas_slot *s;
	int ret = pvas_slot_check(g, slot);

	if (ret)
		return ret;
	if (!pvas_is_root(g))
		return -EPERM;
	s = &g->slots[slot];
	mutex_lock(&g->lock);
	if (s->state == PVAS_SLOT_FREE) {
		s->state = PVAS_SLOT_RESERVED;
		kref_get(&g->ref);
	} else {
		ret = -EBUSY;
	}
	mutex_unlock(&g->lock);
	return ret;
}

int pvas_slot_join(struct pvas_group *g, u32 slot)
{
	struct pvas_slot *s;
	int ret = pvas_slot_check(g, slot);

	if (ret)
		return ret;
	if (pvas_is_root(g))
		return -EINVAL;
	s = &g->slots[slot];
	mutex_lock(&g->lock);
	if (s->state != PVAS_SLOT_RESERVED) {
		ret = -EBUSY;
		goto out;
	}
	s->tgid = current->tgid;
	/* Fails with -EBUSY if this process is bound already. */
	ret = xa_insert(&pvas_tasks, s->tgid, s, GFP_KERNEL);
	if (ret)
		goto out;
	s->pid = get_task_pid(current, PIDTYPE_TGID);
	s->state = PVAS_SLOT_BOUND;
	atomic_inc(&pvas_tasks_joined);
out:
	mutex_unlock(&g->lock);
	return ret;
}

/* Is the thread group bound to s still running?  Under group->lock. */
static bool pvas_slot_alive(struct pvas_slot *s)
{
	struct task_struct *t;
	bool alive;

	rcu_read_lock();
	t = pid_task(s->pid, PIDTYPE_TGID);
	alive = t && atomic_read(&t->signal->live) > 0;
	rcu_read_unlock();
	return alive;
}

int pvas_slot_release(struct pvas_group *g, u32 slot)
{
	struct pvas_slot *s;
	bool put = false;
	int ret = pvas_slot_check(g, slot);

	if (ret)
		return ret;
	s = &g->slots[slot];
	mutex_lock(&g->lock);
	switch (s->state) {
	case PVAS_SLOT_RESERVED:
		s->state = PVAS_SLOT_FREE;
		put = true;
		break;
	case PVAS_SLOT_BOUND:
		if (pvas_slot_alive(s)) {
			ret = -EBUSY;
			break;
		}
		/*
		 * Dead.  Normally the exit tracepoint has taken the entry and
		 * queued the reclaim; if not, do it here.  Either way, wait.
		 */
		if (xa_cmpxchg(&pvas_tasks, s->tgid, s, NULL, GFP_KERNEL) == s)
			queue_work(pvas_wq, &s->reclaim);
		break;
	}
	mutex_unlock(&g->lock);
	if (put) {
		pvas_group_put(g);	/* the fd holds another reference */
		return 0;
	}
	if (!ret)
		flush_work(&s->reclaim);
	return ret;
}

/* Workqueue: unmap a dead task's partition, free its slot. */
void pvas_reclaim_work(struct work_struct *work)
{
	struct pvas_slot *s = container_of(work, struct pvas_slot, reclaim);
	struct pvas_group *g = s->group;
	struct mm_struct *mm = g->mm;

	if (mmget_not_zero(mm)) {
		kthread_use_mm(mm);
		vm_munmap(pvas_slot_lo(s), g->part_size);
		kthread_unuse_mm(mm);
		mmput(mm);
	}
	mutex_lock(&g->lock);
	put_pid(s->pid);
	s->pid = NULL;
	s->tgid = 0;
	s->state = PVAS_SLOT_FREE;
	mutex_unlock(&g->lock);
	pvas_group_put(g);
}

int pvas_owner(struct pvas_group *g, struct pvas_ioc_owner *arg)
{
	struct pvas_slot *s;

	if (!pvas_may_access(g))
		return -EPERM;
	arg->slot = -1;
	arg->pid = 0;
	if (arg->addr < g->base || arg->addr >= g->end)
		return 0;
	s = &g->slots[(arg->addr - g->base) >> g->part_shift];
	arg->slot = s->index;
	mutex_lock(&g->lock);
	if (s->state == PVAS_SLOT_BOUND)
		arg->pid = pid_vnr(s->pid);
	mutex_unlock(&g->lock);
	return 0;
}

int pvas_tasks_query(struct pvas_group *g, struct pvas_ioc_tasks *arg)
{
	struct pvas_task_info *info = NULL;
	struct mm_struct *mm = NULL;
	u32 i, n = 0, cap;
	int ret = 0;

	if (!pvas_may_access(g))
		return -EPERM;
	if (arg->flags)
		return -EINVAL;
	cap = min_t(u32, arg->count, g->part_count);
	if (cap) {
		info = kvcalloc(cap, sizeof(*info), GFP_KERNEL);
		if (!info)
			return -ENOMEM;
	}
	if (mmget_not_zero(g->mm))
		mm = g->mm;
	mutex_lock(&g->lock);
	if (mm && mmap_read_lock_killable(mm)) {
		mutex_unlock(&g->lock);
		ret = -EINTR;
		goto out;
	}
	for (i = 0; i < g->part_count; i++) {
		struct pvas_slot *s = &g->slots[i];
		struct pvas_task_info *t;
		unsigned long lo;

		if (s->state == PVAS_SLOT_FREE)
			continue;
		if (n < cap) {
			t = &info[n];
			t->slot = i;
			t->state = s->state;
			t->pid = s->state == PVAS_SLOT_BOUND ? pid_vnr(s->pid) : 0;
			lo = pvas_slot_lo(s);
			if (mm)
				pvas_partition_usage(mm, lo, lo + g->part_size,
						     &t->rss, &t->mapped);
		}
		n++;
	}
	if (mm)
		mmap_read_unlock(mm);
	mutex_unlock(&g->lock);
	if (copy_to_user(u64_to_user_ptr(arg->buf), info,
			 (size_t)min(n, cap) * sizeof(*info)))
		ret = -EFAULT;
	arg->count = n;
out:
	if (mm)
		mmput(mm);
	kvfree(info);
	return ret;
}
