// SPDX-License-Identifier: GPL-2.0
/*
 * pvas.ko accounting: bytes mapped and resident in a partition, the
 * debugfs view /sys/kernel/debug/pvas/<group id>/tasks, and the totals
 * since load pvas/groups_created and pvas/tasks_joined (a test can tell
 * from them that a job's processes really joined groups).
 *
 * Residency is counted by walking the page tables of the partition's
 * VMAs under mmap_read_lock; in 6.1 page-table pages are only freed under
 * mmap_write_lock, so the walk is safe, and a racing fault or THP split
 * only makes the figure approximate.
 */
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/seq_file.h>
#include <linux/sched/mm.h>
#include <linux/pid.h>

#include "pvas.h"

static u64 pvas_walk_pmd(pud_t *pud, unsigned long addr, unsigned long end)
{
	unsigned long next;
	u64 pages = 0;
	pmd_t *pmd = pmd_offset(pud, addr);

	for (; addr < end; pmd++, addr = next) {
		pmd_t val = READ_ONCE(*pmd);
		pte_t *pte, *start;

		next = pmd_addr_end(addr, end);
		if (pmd_none(val) || !pmd_present(val))
			continue;
		if (pmd_trans_huge(val) || pmd_devmap(val) || pmd_large(val)) {
			pages += (next - addr) >> PAGE_SHIFT;
			continue;
		}
		if (pmd_bad(val))
			continue;
		start = pte_offset_map(pmd, addr);
		for (pte = start; addr < next; pte++, addr += PAGE_SIZE)
			if (pte_present(READ_ONCE(*pte)))
				pages++;
		pte_unmap(start);
		addr = next;
	}
	return pages;
}

static u64 pvas_walk(struct mm_struct *mm, unsigned long addr,
		     unsigned long end)
{
	unsigned long next;
	u64 pages = 0;
	pgd_t *pgd = pgd_offset(mm, addr);

	for (; addr < end; pgd++, addr = next) {
		p4d_t *p4d;
		pud_t *pud;
		unsigned long pnext, a;

		next = pgd_addr_end(addr, end);
		if (pgd_none(*pgd) || pgd_bad(*pgd))
			continue;
		p4d = p4d_offset(pgd, addr);
		if (p4d_none(*p4d) || p4d_bad(*p4d))
			continue;
		pud = pud_offset(p4d, addr);
		for (a = addr; a < next; pud++, a = pnext) {
			pud_t val = READ_ONCE(*pud);

			pnext = pud_addr_end(a, next);
			if (pud_none(val) || !pud_present(val))
				continue;
			if (pud_large(val)) {
				pages += (pnext - a) >> PAGE_SHIFT;
				continue;
			}
			if (pud_bad(val))
				continue;
			pages += pvas_walk_pmd(pud, a, pnext);
		}
	}
	return pages;
}

void pvas_partition_usage(struct mm_struct *mm, unsigned long lo,
			  unsigned long hi, u64 *rss, u64 *mapped)
{
	struct vm_area_struct *vma;
	u64 pages = 0, bytes = 0;

	mmap_assert_locked(mm);
	for (vma = find_vma(mm, lo); vma && vma->vm_start < hi;
	     vma = find_vma(mm, vma->vm_end)) {
		unsigned long s = max(vma->vm_start, lo);
		unsigned long e = min(vma->vm_end, hi);

		bytes += e - s;
		if (!(vma->vm_flags & (VM_PFNMAP | VM_IO)))
			pages += pvas_walk(mm, s, e);
	}
	*rss = pages << PAGE_SHIFT;
	*mapped = bytes;
}

static int pvas_tasks_show(struct seq_file *m, void *unused)
{
	struct pvas_group *g = m->private;
	struct mm_struct *mm = NULL;
	u64 rss, mapped, trss = 0, tmapped = 0;
	u32 i;

	if (!pvas_may_access(g))
		return -EPERM;
	seq_printf(m, "# group %llu base 0x%lx part_size 0x%lx parts %u\n",
		   g->id, g->base, g->part_size, g->part_count);
	seq_puts(m, "# slot state pid lo rss_kib mapped_kib\n");
	if (mmget_not_zero(g->mm))
		mm = g->mm;
	mutex_lock(&g->lock);
	if (mm && mmap_read_lock_killable(mm)) {
		mutex_unlock(&g->lock);
		mmput(mm);
		return -EINTR;
	}
	for (i = 0; i < g->part_count; i++) {
		struct pvas_slot *s = &g->slots[i];
		unsigned long lo = pvas_slot_lo(s);

		if (s->state == PVAS_SLOT_FREE)
			continue;
		rss = 0;
		mapped = 0;
		if (mm)
			pvas_partition_usage(mm, lo, lo + g->part_size, &rss,
					     &mapped);
		trss += rss;
		tmapped += mapped;
		seq_printf(m, "%u %s %d 0x%lx %llu %llu\n", i,
			   s->state == PVAS_SLOT_BOUND ? "bound" : "reserved",
			   s->state == PVAS_SLOT_BOUND ? pid_vnr(s->pid) : 0,
			   lo, rss >> 10, mapped >> 10);
	}
	if (mm)
		mmap_read_unlock(mm);
	mutex_unlock(&g->lock);
	if (mm)
		mmput(mm);
	seq_printf(m, "# total rss_kib %llu mapped_kib %llu\n", trss >> 10,
		   tmapped >> 10);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pvas_tasks);

atomic_t pvas_groups_created = ATOMIC_INIT(0);
atomic_t pvas_tasks_joined = ATOMIC_INIT(0);

void pvas_debugfs_init(void)
{
	pvas_debugfs_root = debugfs_create_dir("pvas", NULL);
	debugfs_create_atomic_t("groups_created", 0444, pvas_debugfs_root,
				&pvas_groups_created);
	debugfs_create_atomic_t("tasks_joined", 0444, pvas_debugfs_root,
				&pvas_tasks_joined);
}

void pvas_debugfs_add(struct pvas_group *g)
{
	char name[24];

	snprintf(name, sizeof(name), "%llu", g->id);
	g->dir = debugfs_create_dir(name, pvas_debugfs_root);
	debugfs_create_file("tasks", 0444, g->dir, g, &pvas_tasks_fops);
}

void pvas_debugfs_remove(struct pvas_group *g)
{
	/* Waits for readers of the files. */
	debugfs_remove(g->dir);
	g->dir = NULL;
}
