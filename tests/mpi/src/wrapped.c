/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A rank started through a wrapper script (tests/mpi/wrapper.sh).
 * `wrapped VALUE MODE`: $PVAS_WRAPPER_VAR (exported by the script) must be
 * VALUE, and with MODE
 *   user, kmod  every rank is a PVAS task of one group on that backend,
 *               its globals lie in its own partition, every peer shares
 *               its address space and the script's shell ($PVAS_WRAPPER_SHELL,
 *               a pid) does not; under kmod a fresh 64 MiB malloc is in the
 *               rank's own partition too (pvas_owner);
 *   none        no rank is in a group (btl list without pvas).
 * Each rank prints "wrapped rank R task T backend B".
 */
#include <unistd.h>

#include <pvas.h>

#include "common.h"

struct ident {
	uint64_t group_id;
	int64_t pid;
	int64_t task_id;
};

static int g_mine; /* a global: in the rank's own partition */

int main(int argc, char **argv)
{
	const char *var = getenv("PVAS_WRAPPER_VAR"), *shell = getenv("PVAS_WRAPPER_SHELL");
	const char *mode = argc > 2 ? argv[2] : "?";
	int want_task = strcmp(mode, "none") != 0;
	struct pvas_info info;
	struct ident me, *all;
	int in_group;

	MPI_Init(&argc, &argv);
	t_init_ids();
	T_CHECK(argc > 2 && (!strcmp(mode, "user") || !strcmp(mode, "kmod") || !want_task),
		"usage: wrapped VALUE user|kmod|none");
	T_CHECK(var && argc > 1 && !strcmp(var, argv[1]), "PVAS_WRAPPER_VAR is '%s', want '%s'",
		var ? var : "(unset)", argc > 1 ? argv[1] : "?");
	in_group = pvas_self(&info) == 0;
	memset(&me, 0, sizeof(me));
	me.pid = getpid();
	me.task_id = in_group ? info.task_id : -1;
	me.group_id = in_group ? info.group_id : 0;
	printf("wrapped rank %d task %lld backend %s\n", t_rank, (long long)me.task_id,
	       in_group ? info.backend : "none");
	fflush(stdout);
	if (want_task) {
		T_CHECK(in_group && info.task_id >= 0, "rank %d is not a PVAS task: %s", t_rank,
			pvas_errmsg());
		if (in_group) {
			T_CHECK(!strcmp(info.backend, mode), "rank %d: backend %s, want %s", t_rank,
				info.backend, mode);
			T_CHECK(pvas_owner(&g_mine) == info.task_id, "rank %d: own global in task %d",
				t_rank, pvas_owner(&g_mine));
			T_CHECK(pvas_same_vm(info.root_pid) == 1, "rank %d: root not in my mm", t_rank);
		}
		T_CHECK(shell && pvas_same_vm((pid_t)atoi(shell)) == 0,
			"rank %d: the script's shell (pid %s) shares my address space", t_rank,
			shell ? shell : "unset");
		if (in_group && !strcmp(mode, "kmod")) {
			char *big = t_malloc(64UL << 20);

			T_CHECK(pvas_owner(big) == info.task_id, "rank %d: 64 MiB malloc in task %d",
				t_rank, pvas_owner(big));
			free(big);
		}
	} else {
		T_CHECK(!in_group, "rank %d is in a PVAS group", t_rank);
	}
	all = t_malloc(sizeof(*all) * (size_t)t_size);
	MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE,
		      MPI_COMM_WORLD);
	for (int p = 0; p < t_size && want_task; p++) {
		T_CHECK(all[p].group_id == all[0].group_id, "rank %d: group %llx != %llx", p,
			(unsigned long long)all[p].group_id, (unsigned long long)all[0].group_id);
		if (p != t_rank)
			T_CHECK(pvas_same_vm((pid_t)all[p].pid) == 1, "rank %d (pid %lld) not in my mm",
				p, (long long)all[p].pid);
	}
	t_mix_u64((uint64_t)want_task);
	free(all);
	return t_finish("wrapped");
}
