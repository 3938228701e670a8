/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Proof of membership.  `membership pvas`: every rank is a PVAS task
 * (pvas_self works), all ranks report the same group id (MPI_Allgather),
 * distinct pids, and pvas_same_vm(pid) == 1 for every peer.
 * `membership none`: no rank is in a group and pvas_same_vm(peer) == 0.
 */
#include <unistd.h>

#include <pvas.h>

#include "common.h"

struct ident {
	uint64_t group_id;
	int64_t pid;
	int64_t in_group;
	int64_t task_id;
};

int main(int argc, char **argv)
{
	int want_pvas = argc > 1 && !strcmp(argv[1], "pvas");
	struct pvas_info info;
	struct ident me, *all;

	MPI_Init(&argc, &argv);
	t_init_ids();
	memset(&me, 0, sizeof(me));
	me.pid = getpid();
	me.in_group = pvas_self(&info) == 0;
	me.group_id = me.in_group ? info.group_id : 0;
	me.task_id = me.in_group ? info.task_id : -1;
	all = t_malloc(sizeof(*all) * (size_t)t_size);
	MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE,
		      MPI_COMM_WORLD);

	for (int p = 0; p < t_size; p++) {
		int same = p == t_rank ? -2 : pvas_same_vm((pid_t)all[p].pid);

		if (want_pvas) {
			T_CHECK(all[p].in_group, "rank %d is not a PVAS task", p);
			T_CHECK(all[p].task_id >= 0, "rank %d: task id %lld", p,
				(long long)all[p].task_id);
			T_CHECK(all[p].group_id == all[0].group_id, "rank %d: group %llx != %llx",
				p, (unsigned long long)all[p].group_id,
				(unsigned long long)all[0].group_id);
			if (p != t_rank) {
				T_CHECK(all[p].pid != me.pid, "rank %d has my pid", p);
				T_CHECK(same == 1, "pvas_same_vm(rank %d, pid %lld) = %d", p,
					(long long)all[p].pid, same);
			}
		} else {
			T_CHECK(!all[p].in_group, "rank %d is in a PVAS group", p);
			if (p != t_rank)
				T_CHECK(same == 0, "pvas_same_vm(rank %d, pid %lld) = %d", p,
					(long long)all[p].pid, same);
		}
	}
	/* the summary must not depend on pids or group ids */
	t_mix_u64((uint64_t)want_pvas);
	free(all);
	return t_finish(want_pvas ? "membership-pvas" : "membership-none");
}
