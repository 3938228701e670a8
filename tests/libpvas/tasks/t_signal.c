// SPDX-License-Identifier: LGPL-2.1-or-later
/* Prints "ready", then waits for SIGTERM: prints "rank R got SIGTERM". */
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "task_util.h"

static volatile sig_atomic_t got;

static void on_term(int sig)
{
	got = sig;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct timespec limit = { 30, 0 };
	sigset_t term, during;

	sigaction(SIGTERM, &sa, NULL);
	/* Blocked until ppoll: a SIGTERM right after "ready" is not lost. */
	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, &during);
	sigdelset(&during, SIGTERM);
	printf("rank %d ready\n", env_int("PVAS_RANK"));
	fflush(stdout);
	while (!got && ppoll(NULL, 0, &limit, &during) < 0 && errno == EINTR)
		;
	if (!got)
		FAIL("no SIGTERM within 30 s");
	printf("rank %d got SIGTERM\n", env_int("PVAS_RANK"));
	return 0;
}
