// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Each task checks that its globals, TLS and errno are its own, that it
 * can read every other task's through exported pointers, and that all
 * tasks are distinct processes in one address space.
 * Prints "rank R task T pid P same_vm_root S ok".
 */
#include <unistd.h>

#include "task_util.h"

int g_var = -1;
static __thread int t_var = -1;

struct pub {
	_Atomic int arrived, left;
	int *g, *t;
	int rank;
	pid_t pid;
};
static struct pub me;

int main(void)
{
	int rank = env_int("PVAS_RANK"), size = env_int("PVAS_SIZE"), j, local = 0;
	struct pvas_info in;
	struct pub *zero;

	CHECK(pvas_self(&in) == 0);
	CHECK(in.task_id == rank && pvas_self_task_id() == rank);
	CHECK(pvas_owner(&g_var) == rank && pvas_owner(&local) == rank);
	CHECK((uintptr_t)&g_var >= in.part_lo && (uintptr_t)&g_var < in.part_hi);
	CHECK(pvas_same_vm(in.root_pid) == 1);
	CHECK(g_var == -1 && t_var == -1); /* fresh copies, not the root's */
	g_var = rank * 3 + 1;
	t_var = rank * 5 + 2;
	errno = 1000 + rank;
	me.g = &g_var;
	me.t = &t_var;
	me.rank = rank;
	me.pid = getpid();
	CHECK(pvas_export(&me) == 0);

	for (j = 0; j < size; j++) {
		struct pub *p = pvas_import(j, 60000);

		CHECK(p != NULL);
		CHECK(p->rank == j);
		if (j == rank)
			continue;
		CHECK(p->g != &g_var && *p->g == j * 3 + 1);
		CHECK(p->pid != me.pid && pvas_same_vm(p->pid) == 1);
		CHECK(pvas_owner(p->g) == j);
	}
	zero = pvas_import(0, 60000);
	CHECK(zero != NULL);
	add_and_wake(&zero->arrived, 1);
	wait_at_least(&zero->arrived, size); /* everyone has read everyone */
	CHECK(g_var == rank * 3 + 1 && t_var == rank * 5 + 2 && errno == 1000 + rank);
	printf("rank %d task %d pid %d same_vm_root %d ok\n", rank, in.task_id, (int)getpid(),
	       pvas_same_vm(in.root_pid));
	fflush(stdout);
	if (rank == 0)
		wait_at_least(&me.left, size - 1); /* nobody reads us any more */
	else
		add_and_wake(&zero->left, 1);
	return 0;
}
