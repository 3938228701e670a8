// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rank 1 dies by SIGSEGV; every other rank waits until it is gone and
 * then finishes, printing "rank R done after rank 1 died".
 */
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "task_util.h"

static struct {
	_Atomic int ready, left;
	_Atomic pid_t pid1;
} box; /* used in task 0 only */

/* A real fault, also in the UBSan build (which would catch it first). */
__attribute__((no_sanitize_undefined, noinline)) static void crash(void)
{
	volatile int *volatile bad = NULL;

	*bad = 1;
}

int main(void)
{
	int rank = env_int("PVAS_RANK"), size = env_int("PVAS_SIZE");
	__typeof__(box) *zero;
	struct pollfd pfd;
	pid_t victim;

	if (rank == 0)
		CHECK(pvas_export(&box) == 0);
	zero = pvas_import(0, 60000);
	CHECK(zero != NULL);
	if (rank == 1) {
		atomic_store(&zero->pid1, getpid());
		add_and_wake(&zero->ready, 1);
		crash();
		return 0;
	}
	wait_at_least(&zero->ready, 1);
	victim = atomic_load(&zero->pid1);
	/* A pidfd becomes readable when its process has exited. */
	pfd.fd = (int)syscall(SYS_pidfd_open, victim, 0);
	pfd.events = POLLIN;
	CHECK(pfd.fd >= 0 || errno == ESRCH); /* ESRCH: already reaped */
	if (pfd.fd >= 0) {
		CHECK(poll(&pfd, 1, 10000) == 1);
		close(pfd.fd);
	}
	printf("rank %d done after rank 1 died\n", rank);
	fflush(stdout);
	if (rank == 0)
		wait_at_least(&box.left, size - 2);
	else
		add_and_wake(&zero->left, 1);
	return 0;
}
