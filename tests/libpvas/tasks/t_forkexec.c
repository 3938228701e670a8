// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fork + exec from inside a task.  The exec'd program (argv[1]) inherits
 * PVAS_TASK but not the address space: it must not think it is a task.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "task_util.h"

int main(int argc, char **argv)
{
	int st;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "--child")) {
		/* Exec'd: a fresh process outside the group. */
		CHECK(pvas_self_task_id() == -1 && errno == ENOENT);
		return 7;
	}
	CHECK(pvas_self_task_id() >= 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execl(argv[0], argv[0], "--child", (char *)NULL);
		_exit(99);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "exit 5", (char *)NULL);
		_exit(99);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 5);
	return 0;
}
