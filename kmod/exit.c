// SPDX-License-Identifier: GPL-2.0
/*
 * pvas.ko process life cycle, from two scheduler tracepoints (not exported
 * as symbols; found with for_each_kernel_tracepoint()):
 *   sched_process_exit: the last thread of a bound task is exiting (after
 *     exit_mm()): take its pvas_tasks entry and queue the slot's reclaim;
 *   sched_process_fork: fork() copied our get_unmapped_area pointer into
 *     a new, separate mm: give that mm the original one back.
 * Probes run with preemption disabled: no sleeping, no allocation.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "pvas.h"

struct pvas_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static void pvas_exit_probe(void *data, struct task_struct *p)
{
	struct pvas_slot *s;

	/* Only when the whole thread group is exiting. */
	if (atomic_read(&p->signal->live))
		return;
	s = xa_load(&pvas_tasks, p->tgid);
	if (!s)
		return;
	/* Exactly one taker: this probe (any thread) or PVAS_IOC_RELEASE. */
	if (xa_cmpxchg(&pvas_tasks, p->tgid, s, NULL, GFP_ATOMIC) == s)
		queue_work(pvas_wq, &s->reclaim);
}

static void pvas_fork_probe(void *data, struct task_struct *parent,
			    struct task_struct *child)
{
	struct mm_struct *mm = child->mm;
	pvas_gua_t orig;

	/* The child has not run yet: its new mm is ours alone. */
	if (!mm || mm == parent->mm ||
	    READ_ONCE(mm->get_unmapped_area) != pvas_get_unmapped_area)
		return;
	orig = parent->mm ? pvas_orig_gua_for(parent->mm) : NULL;
	if (orig)
		WRITE_ONCE(mm->get_unmapped_area, orig);
}

static struct pvas_tp pvas_tps[] = {
	{ .name = "sched_process_exit", .probe = pvas_exit_probe },
	{ .name = "sched_process_fork", .probe = pvas_fork_probe },
};

static void pvas_find_tp(struct tracepoint *tp, void *priv)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pvas_tps); i++)
		if (!strcmp(tp->name, pvas_tps[i].name))
			pvas_tps[i].tp = tp;
}

int pvas_tracepoints_init(void)
{
	size_t i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(pvas_tps); i++)
		pvas_tps[i].tp = NULL;
	for_each_kernel_tracepoint(pvas_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(pvas_tps); i++) {
		if (!pvas_tps[i].tp) {
			pr_err("tracepoint %s not found\n", pvas_tps[i].name);
			ret = -ENOENT;
			goto fail;
		}
		ret = tracepoint_probe_register(pvas_tps[i].tp,
						pvas_tps[i].probe, NULL);
		if (ret) {
			pr_err("cannot register on %s: %d\n",
			       pvas_tps[i].name, ret);
			goto fail;
		}
	}
	return 0;
fail:
	while (i--)
		tracepoint_probe_unregister(pvas_tps[i].tp, pvas_tps[i].probe,
					    NULL);
	tracepoint_synchronize_unregister();
	return ret;
}

void pvas_tracepoints_exit(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pvas_tps); i++)
		tracepoint_probe_unregister(pvas_tps[i].tp, pvas_tps[i].probe,
					    NULL);
	tracepoint_synchronize_unregister();
}
