// SPDX-License-Identifier: GPL-2.0
/*
 * pvas.ko address placement: the group mm's get_unmapped_area is replaced
 * by pvas_get_unmapped_area(), which
 *   - for a task bound to a slot, places every mapping the kernel chooses
 *     inside the task's own partition (top-down, like the default layout);
 *   - for any other process of the mm (the root, its threads, unbound
 *     CLONE_VM children) keeps them out of the group's range;
 *   - refuses MAP_FIXED into the group's range outside the caller's own
 *     partition (-EPERM).
 * It is called with mmap_lock held, takes no lock and reads the group
 * under RCU.
 */
#include <linux/err.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>

#include "pvas.h"

/* Neither stack_guard_gap nor mmap_min_addr is exported: our own values. */
#define PVAS_STACK_GUARD (256UL << PAGE_SHIFT)
#define PVAS_LOW_LIMIT (16UL << PAGE_SHIFT)

/* The first original hook seen, for an mm that lost its group. */
static pvas_gua_t pvas_default_gua;

void pvas_note_orig_gua(pvas_gua_t orig)
{
	if (!READ_ONCE(pvas_default_gua))
		WRITE_ONCE(pvas_default_gua, orig);
}

struct pvas_view {
	pvas_gua_t orig;
	unsigned long base, end;	/* the group's range */
	unsigned long lo, hi;		/* own partition, if bound */
	bool bound;
};

static bool pvas_view_get(struct mm_struct *mm, struct pvas_view *v)
{
	struct pvas_group *g;
	struct pvas_slot *s;

	rcu_read_lock();
	g = pvas_group_find_rcu(mm);
	if (!g) {
		rcu_read_unlock();
		return false;
	}
	v->orig = g->orig_gua;
	v->base = g->base;
	v->end = g->end;
	s = xa_load(&pvas_tasks, current->tgid);
	v->bound = s && s->group == g;
	if (v->bound) {
		v->lo = pvas_slot_lo(s);
		v->hi = v->lo + g->part_size;
	}
	rcu_read_unlock();
	return true;
}

pvas_gua_t pvas_orig_gua_for(struct mm_struct *mm)
{
	struct pvas_view v;

	if (pvas_view_get(mm, &v))
		return v.orig;
	return READ_ONCE(pvas_default_gua);
}

static bool pvas_overlaps(unsigned long addr, unsigned long len,
			  unsigned long lo, unsigned long hi)
{
	return addr < hi && addr + len > lo;
}

/*
 * Highest free [addr, addr + len) within [lo, hi), leaving a guard gap
 * below stacks that grow down.  mmap_lock held.
 */
static unsigned long pvas_search(struct mm_struct *mm, unsigned long len,
				 unsigned long lo, unsigned long hi)
{
	MA_STATE(mas, &mm->mm_mt, 0, 0);
	struct vm_area_struct *vma;
	unsigned long gap, last;

	for (;;) {
		if (hi <= lo || len > hi - lo)
			return -ENOMEM;
		mas_reset(&mas);
		if (mas_empty_area_rev(&mas, lo, hi - 1, len))
			return -ENOMEM;
		last = min(mas.last, hi - 1);
		if (last + 1 - lo < len)
			return -ENOMEM;
		gap = (last + 1 - len) & PAGE_MASK;
		if (gap < lo)
			return -ENOMEM;
		/* Check the answer; on any doubt search below the obstacle. */
		vma = find_vma(mm, gap);
		if (!vma)
			return gap;
		if (vma->vm_flags & VM_GROWSDOWN) {
			if (vma->vm_start >= gap + len + PVAS_STACK_GUARD)
				return gap;
			if (vma->vm_start < PVAS_STACK_GUARD)
				return -ENOMEM;
			hi = min(hi, vma->vm_start - PVAS_STACK_GUARD);
		} else {
			if (vma->vm_start >= gap + len)
				return gap;
			hi = min(hi, vma->vm_start);
		}
	}
}

static bool pvas_range_free(struct mm_struct *mm, unsigned long addr,
			    unsigned long len)
{
	return !find_vma_intersection(mm, addr, addr + len);
}

unsigned long pvas_get_unmapped_area(struct file *file, unsigned long addr,
				     unsigned long len, unsigned long pgoff,
				     unsigned long flags)
{
	struct mm_struct *mm = current->mm;
	struct pvas_view v;
	unsigned long ret;

	if (!pvas_view_get(mm, &v)) {
		/* The group is ending (or this mm was copied from one). */
		pvas_gua_t orig = READ_ONCE(pvas_default_gua);

		return orig ? orig(file, addr, len, pgoff, flags) : -ENOMEM;
	}
	if (!len || len > TASK_SIZE)
		return -ENOMEM;
	addr = PAGE_ALIGN(addr);

	if (flags & MAP_FIXED) {
		if (addr > TASK_SIZE - len)
			return -ENOMEM;
		if (pvas_overlaps(addr, len, v.base, v.end) &&
		    (!v.bound || addr < v.lo || addr + len > v.hi))
			return -EPERM;
		return v.orig(file, addr, len, pgoff, flags);
	}

	if (v.bound) {
		if (addr && addr >= v.lo && addr <= v.hi - len &&
		    pvas_range_free(mm, addr, len))
			return addr;
		return pvas_search(mm, len, v.lo, v.hi);
	}

	/* Root and unbound processes: anywhere but the group's range. */
	if (addr && pvas_overlaps(addr, len, v.base, v.end))
		addr = 0;
	ret = v.orig(file, addr, len, pgoff, flags);
	if (IS_ERR_VALUE(ret) || !pvas_overlaps(ret, len, v.base, v.end))
		return ret;
	ret = pvas_search(mm, len, PVAS_LOW_LIMIT, v.base);
	if (IS_ERR_VALUE(ret))
		ret = pvas_search(mm, len, v.end, mm->task_size);
	return ret;
}
