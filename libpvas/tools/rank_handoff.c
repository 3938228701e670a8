// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rank-handoff.so: hands a rank started through a script over to the PVAS
 * fork agent.  `pvasrun --ompi-agent` execs a rank program that is not ELF
 * (a `#!` script) with this library in LD_PRELOAD and the agent's path in
 * $PVAS_OMPI_RANK_AGENT.  Every dynamically linked program the script runs
 * loads it; in the first one that links libmpi (the rank) the constructor
 * execs `<agent> --ompi-rank /proc/self/exe-target ARGV...` with both
 * variables removed, before main runs: that process becomes the rank's
 * stub, and the program a PVAS task.  In any other program (the shells,
 * env, hostname, ...) it does nothing.  See docs/ompi-launch.md.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_proto.h"

static int is_libmpi(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	(void)data;
	base = base ? base + 1 : info->dlpi_name;
	return base && !strncmp(base, "libmpi.so", 9);
}

/* LD_PRELOAD without self (entries are separated by ':' or ' '); NULL if
 * nothing is left. */
static char *preload_without(const char *list, const char *self)
{
	char *out = calloc(1, strlen(list) + 1), *o = out;
	size_t n, slen = strlen(self);

	if (!out)
		return NULL;
	while (*list) {
		n = strcspn(list, ": ");
		if (n && !(n == slen && !strncmp(list, self, n))) {
			if (o != out)
				*o++ = ':';
			memcpy(o, list, n);
			o += n;
		}
		list += n + (list[n] != 0);
	}
	if (o == out) {
		free(out);
		return NULL;
	}
	return out;
}

static _Noreturn void fail(const char *op, const char *obj, int err)
{
	fprintf(stderr, "pvas rank hand-off: %s: %s: %s\n", op, obj, strerror(err));
	_exit(127);
}

__attribute__((constructor)) static void handoff(int argc, char **argv, char **envp)
{
	const char *agent = getenv(PVAS_ENV_RANK_AGENT);
	char exe[PATH_MAX], **args, **env, *list, *pre;
	size_t klen = strlen(PVAS_ENV_RANK_AGENT), envc = 0, i, j = 0;
	Dl_info self;
	ssize_t n;
	int k;

	if (!agent || !dl_iterate_phdr(is_libmpi, NULL))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		fail("readlink", "/proc/self/exe", errno);
	exe[n] = 0;
	if (!dladdr((void *)handoff, &self) || !self.dli_fname)
		fail("dladdr", "rank-handoff.so", ENOENT);
	while (envp[envc])
		envc++;
	env = calloc(envc + 1, sizeof(*env));
	args = calloc((size_t)argc + 4, sizeof(*args));
	if (!env || !args)
		fail("hand over", exe, ENOMEM);
	for (i = 0; i < envc; i++) {
		if (!strncmp(envp[i], PVAS_ENV_RANK_AGENT, klen) && envp[i][klen] == '=')
			continue;
		if (!strncmp(envp[i], "LD_PRELOAD=", 11)) {
			pre = preload_without(envp[i] + 11, self.dli_fname);
			if (!pre)
				continue;
			list = malloc(strlen(pre) + 12);
			if (!list)
				fail("hand over", exe, ENOMEM);
			sprintf(list, "LD_PRELOAD=%s", pre);
			env[j++] = list;
			continue;
		}
		env[j++] = envp[i];
	}
	args[0] = (char *)agent;
	args[1] = "--ompi-rank";
	args[2] = exe;
	for (k = 0; k < argc; k++)
		args[3 + k] = argv[k];
	execve(agent, args, env);
	fail("exec the PVAS fork agent", agent, errno);
}
