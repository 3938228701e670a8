// SPDX-License-Identifier: LGPL-2.1-or-later
/* Prints "ready", then waits for SIGTERM: prints "rank R got SIGTERM". */
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
	int i;

	sigaction(SIGTERM, &sa, NULL);
	printf("rank %d ready\n", env_int("PVAS_RANK"));
	fflush(stdout);
	for (i = 0; i < 3000 && !got; i++)
		usleep(10000);
	if (!got)
		FAIL("no SIGTERM within 30 s");
	printf("rank %d got SIGTERM\n", env_int("PVAS_RANK"));
	return 0;
}
