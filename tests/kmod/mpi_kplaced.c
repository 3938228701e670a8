// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI program that proves its ranks are placed by pvas.ko (run by
 * tests/kmod/mpi-guest under --mca btl self,pvas).  Every rank checks that
 * it is a PVAS task of a kmod-backend group, and that a fresh 64 MiB
 * malloc (glibc serves it by mmap, so the kernel picks the address) lies
 * in its own partition: pvas_owner() of its first and last byte is the
 * rank's own task id.  Rank 0 prints one "# rank" line per rank and
 * "mpi_kplaced: PASS np=N" or "mpi_kplaced: FAIL np=N"; the exit status
 * is 0 only when every rank passed.
 */
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pvas.h"

#define KPLACED_BYTES (64UL << 20)

struct kplaced {
	int64_t pid;
	int64_t task_id;
	int64_t owner_first, owner_last, owner_errno;
	uint64_t group_id;
	uint64_t addr, part_lo, part_hi;
	char backend[16];
	char error[128];
};

static void check_self(struct kplaced *me)
{
	struct pvas_info info;
	char *p;

	me->pid = getpid();
	me->task_id = -1;
	me->owner_first = -1;
	me->owner_last = -1;
	if (pvas_self(&info)) {
		snprintf(me->error, sizeof(me->error), "not a PVAS task: %s", pvas_errmsg());
		return;
	}
	me->task_id = info.task_id;
	me->group_id = info.group_id;
	me->part_lo = info.part_lo;
	me->part_hi = info.part_hi;
	snprintf(me->backend, sizeof(me->backend), "%s", info.backend);

	p = malloc(KPLACED_BYTES);
	if (!p) {
		snprintf(me->error, sizeof(me->error), "malloc(64 MiB): errno %d", errno);
		return;
	}
	memset(p, 0x5a, KPLACED_BYTES); /* resident, not just reserved */
	me->addr = (uintptr_t)p;
	errno = 0;
	me->owner_first = pvas_owner(p);
	me->owner_last = pvas_owner(p + KPLACED_BYTES - 1);
	me->owner_errno = errno;
	free(p);
}

/* Rank 0: judge every rank's report; returns the number of failures. */
static int judge(const struct kplaced *all, int size)
{
	int bad = 0;

	for (int r = 0; r < size; r++) {
		const struct kplaced *k = &all[r];
		const char *why = k->error[0] ? k->error : NULL;

		if (!why && strcmp(k->backend, "kmod"))
			why = "backend is not kmod";
		else if (!why && k->group_id != all[0].group_id)
			why = "not in rank 0's group";
		else if (!why && (k->owner_first != k->task_id || k->owner_last != k->task_id))
			why = "pvas_owner() of the malloc is not the rank's own task";
		else if (!why && (k->addr < k->part_lo || k->addr + KPLACED_BYTES > k->part_hi))
			why = "the malloc is outside the rank's partition";
		for (int q = 0; !why && q < r; q++)
			if (all[q].task_id == k->task_id)
				why = "same task id as a lower rank";
		printf("# rank %d pid %lld: task %lld of group %#llx, backend %s; 64 MiB malloc at %#llx, pvas_owner() = %lld/%lld (errno %lld), partition [%#llx, %#llx): %s\n",
		       r, (long long)k->pid, (long long)k->task_id,
		       (unsigned long long)k->group_id, k->backend[0] ? k->backend : "-",
		       (unsigned long long)k->addr, (long long)k->owner_first,
		       (long long)k->owner_last, (long long)k->owner_errno,
		       (unsigned long long)k->part_lo, (unsigned long long)k->part_hi,
		       why ? why : "ok");
		bad += !!why;
	}
	return bad;
}

int main(int argc, char **argv)
{
	struct kplaced me, *all = NULL;
	int rank, size, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	memset(&me, 0, sizeof(me));
	check_self(&me);
	if (rank == 0) {
		all = calloc((size_t)size, sizeof(*all));
		if (!all) {
			fprintf(stderr, "mpi_kplaced: calloc(%d reports): errno %d\n", size, errno);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	MPI_Gather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, 0,
		   MPI_COMM_WORLD);
	if (rank == 0) {
		bad = judge(all, size);
		printf("mpi_kplaced: %s np=%d\n", bad ? "FAIL" : "PASS", size);
		fflush(stdout);
		free(all);
	}
	MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
	MPI_Finalize();
	return bad ? 1 : 0;
}
