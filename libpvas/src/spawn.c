// SPDX-License-Identifier: LGPL-2.1-or-later
/* Root side of the task life cycle: spawn, wait, kill. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define UNPOISON(p, n) __asan_unpoison_memory_region((p), (n))
#else
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define BOOT_STACK_SIZE (256UL << 10)
#define DEFAULT_STACK_SIZE (8UL << 20)

extern char **environ;

void pvas_spawn_attr_init(struct pvas_spawn_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->partition = -1;
	a->fd_stdin = a->fd_stdout = a->fd_stderr = -1;
}

static size_t stack_size_for(const struct pvas_ctl *c, const struct pvas_spawn_attr *a)
{
	size_t cap = c->part_size / 4 < PVAS_MAX_STACK ? c->part_size / 4 : PVAS_MAX_STACK;
	size_t sz = a->stack_size;
	struct rlimit rl;

	if (!sz) {
		sz = DEFAULT_STACK_SIZE;
		if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur != RLIM_INFINITY)
			sz = rl.rlim_cur;
	}
	return sz > cap ? cap : sz;
}

/* envp plus our PVAS_TASK entry (an older one, e.g. inherited, is dropped). */
static char **task_env(char *const *envp, const char *entry)
{
	size_t n = 0, i, j = 0, klen = strlen(PVAS_ENV_TASK);
	char **v;

	while (envp && envp[n])
		n++;
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < n; i++)
		if (strncmp(envp[i], PVAS_ENV_TASK, klen) || envp[i][klen] != '=')
			v[j++] = envp[i];
	v[j++] = (char *)entry;
	return v;
}

static int pick_slot(struct pvas_group *g, int want, const char *path)
{
	struct pvas_ctl *c = g->ctl;
	unsigned i;

	if (want >= 0) {
		if ((unsigned)want >= c->part_count) {
			pvas_set_errorf(EINVAL, "pvas_spawn: %s: partition %d out of range 0..%u", path,
					want, c->part_count - 1);
			return -1;
		}
		if (atomic_load(&c->slot[want].state) != SLOT_FREE) {
			pvas_set_errorf(EBUSY, "pvas_spawn: %s: partition %d in use", path, want);
			return -1;
		}
		return want;
	}
	for (i = 0; i < c->part_count; i++)
		if (atomic_load(&c->slot[i].state) == SLOT_FREE)
			return (int)i;
	pvas_set_errorf(ENOSPC, "pvas_spawn: %s: partitions exhausted (all %u in use)", path,
			c->part_count);
	return -1;
}

/* Return a slot to the free pool once its task is gone. */
static void release_slot(struct pvas_group *g, unsigned slot)
{
	struct pvas_ctl_slot *s = &g->ctl->slot[slot];

	g->be->task_reclaim(g, slot);
	if (s->boot_stack) {
		UNPOISON((void *)s->boot_stack, s->boot_stack_size);
		munmap((void *)s->boot_stack, s->boot_stack_size);
		s->boot_stack = 0;
	}
	if (g->pidfds[slot] >= 0)
		close(g->pidfds[slot]);
	g->pidfds[slot] = -1;
	atomic_store(&s->export_ptr, NULL);
	atomic_store(&s->pid, 0);
	atomic_store(&s->state, SLOT_FREE);
	pvas_slot_changed(s); /* pvas_import waiters: the task has ended */
}

static ssize_t read_status(int fd, struct pvas_child_status *st)
{
	size_t got = 0;

	while (got < sizeof(*st)) {
		ssize_t r = read(fd, (char *)st + got, sizeof(*st) - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* The task failed before it started: reap it and say why. */
static void spawn_failed(struct pvas_group *g, unsigned slot, pid_t pid, const char *path,
			 const struct pvas_child_status *st, ssize_t got)
{
	int wst = 0;

	while (waitpid(pid, &wst, __WALL) < 0 && errno == EINTR)
		;
	if (atomic_load(&g->ctl->slot[slot].state) == SLOT_LIVE) /* died after going live */
		atomic_fetch_sub(&g->ctl->ntasks, 1);
	release_slot(g, slot);
	if (got == (ssize_t)sizeof(*st) && st->e.err) {
		if (st->e.object[0])
			pvas_set_errorf(st->e.err, "pvas_spawn: %s: %s", st->e.op, st->e.object);
		else
			pvas_set_errorf(st->e.err, "pvas_spawn: %s: %s", st->e.op, path);
	} else if (WIFSIGNALED(wst)) {
		pvas_set_errorf(ECHILD, "pvas_spawn: %s: task died by signal %d (%s) while loading",
				path, WTERMSIG(wst), strsignal(WTERMSIG(wst)));
	} else {
		pvas_set_errorf(ECHILD, "pvas_spawn: %s: task exited (status %d) while loading",
				path, WEXITSTATUS(wst));
	}
}

int pvas_spawn(pvas_group_t *g, const char *path, char *const argv[], char *const envp[],
	       const struct pvas_spawn_attr *attr, pid_t *pid_out, int *id_out)
{
	struct pvas_spawn_attr defattr;
	char *default_argv[2] = { (char *)path, NULL };
	char env_entry[128], **env = NULL;
	struct pvas_child_ctx ctx;
	struct pvas_child_status st;
	struct pvas_ctl *c;
	sigset_t all, saved;
	int pipefd[2] = { -1, -1 }, pidfd = -1, slot, err, rc = -1;
	void *boot = MAP_FAILED;
	pid_t pid;
	ssize_t got;
	size_t stack_size;

	if (!g || !path || !*path) {
		pvas_set_error("pvas_spawn", path ? "empty path" : "NULL argument", EINVAL);
		return -1;
	}
	if (!attr) {
		pvas_spawn_attr_init(&defattr);
		attr = &defattr;
	}
	if (!argv)
		argv = default_argv;
	if (!envp)
		envp = environ;
	c = g->ctl;

	pthread_mutex_lock(&g->lock);
	slot = pick_slot(g, attr->partition, path);
	if (slot < 0)
		goto unlock;
	stack_size = stack_size_for(c, attr);
	if (stack_size < (64UL << 10)) {
		pvas_set_errorf(EINVAL, "pvas_spawn: %s: stack size %zu below 64 KiB", path,
				stack_size);
		goto unlock;
	}
	atomic_store(&c->slot[slot].state, SLOT_LOADING);
	snprintf(env_entry, sizeof(env_entry), "%s=%d:%lx:%d:%u", PVAS_ENV_TASK, (int)c->root_pid,
		 (unsigned long)c, slot, atomic_fetch_add(&c->slot[slot].gen, 1) + 1);
	env = task_env(envp, env_entry);
	if (!env) {
		pvas_set_error("pvas_spawn: environment", path, ENOMEM);
		goto free_slot;
	}
	if (pvas_stack_bytes(argv, env, path) > stack_size / 4) {
		pvas_set_errorf(E2BIG, "pvas_spawn: %s: argv + envp take %zu bytes, limit %zu", path,
				pvas_stack_bytes(argv, env, path), stack_size / 4);
		goto free_slot;
	}
	err = g->be->task_prepare(g, (unsigned)slot);
	if (err) {
		pvas_set_errorf(-err, "pvas_spawn: %s: prepare partition %d (%s backend)", path,
				slot, g->be->name);
		goto free_slot;
	}
	boot = mmap(NULL, BOOT_STACK_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (boot == MAP_FAILED) {
		pvas_set_error("pvas_spawn: mmap boot stack", path, errno);
		goto free_slot;
	}
	c->slot[slot].boot_stack = (uintptr_t)boot;
	c->slot[slot].boot_stack_size = BOOT_STACK_SIZE;
	if (pipe2(pipefd, O_CLOEXEC)) {
		pvas_set_error("pvas_spawn: pipe2", path, errno);
		goto free_slot;
	}

	memset(&ctx, 0, sizeof(ctx));
	ctx.g = g;
	ctx.slot = (unsigned)slot;
	ctx.attr = *attr;
	ctx.req.path = path;
	ctx.req.argv = argv;
	ctx.req.envp = env;
	ctx.req.lo = pvas_part_lo(c, (unsigned)slot);
	ctx.req.hi = ctx.req.lo + c->part_size;
	ctx.req.stack_size = stack_size;
	ctx.req.map_flag = g->be->loader_map_flag;
	ctx.status_fd = pipefd[1];
	ctx.root_pid = getpid();

	/* The child must not run any of our handlers before it resets them. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &saved);
	ctx.mask = attr->sigmask ? *attr->sigmask : saved;
	pid = clone(pvas_child_main, (char *)boot + BOOT_STACK_SIZE, CLONE_VM | CLONE_PIDFD | SIGCHLD,
		    &ctx, &pidfd);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (pid < 0) {
		pvas_set_error("pvas_spawn: clone", path, err);
		goto free_slot;
	}
	g->pidfds[slot] = pidfd;

	memset(&st, 0, sizeof(st));
	got = read_status(pipefd[0], &st);
	if (got != (ssize_t)sizeof(st) || !st.ok) {
		spawn_failed(g, (unsigned)slot, pid, path, &st, got);
		boot = MAP_FAILED; /* released with the slot */
		goto unlock;
	}
	if (pid_out)
		*pid_out = pid;
	if (id_out)
		*id_out = slot;
	rc = 0;
	goto unlock;

free_slot:
	release_slot(g, (unsigned)slot);
unlock:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	free(env);
	pthread_mutex_unlock(&g->lock);
	return rc;
}

/* Reap the task in slot (its pidfd is readable); returns 0 or -1. */
static int reap(struct pvas_group *g, unsigned slot, int *status)
{
	pid_t pid = atomic_load(&g->ctl->slot[slot].pid);
	int st = 0;

	while (waitpid(pid, &st, __WALL) < 0) {
		if (errno == EINTR)
			continue;
		if (errno != ECHILD) {
			pvas_set_errorf(errno, "pvas_wait: waitpid %d", (int)pid);
			return -1;
		}
		st = 0; /* reaped behind our back (SIGCHLD ignored?) */
		break;
	}
	if (status)
		*status = st;
	atomic_store(&g->ctl->slot[slot].state, SLOT_DEAD);
	atomic_fetch_sub(&g->ctl->ntasks, 1);
	release_slot(g, slot);
	return 0;
}

int pvas_wait(pvas_group_t *g, int task_id, int *status, int options)
{
	struct pollfd *pfd;
	unsigned *slots, n, i, count;
	int r;

	if (!g || task_id < -1 || (task_id >= 0 && (unsigned)task_id >= g->ctl->part_count) ||
	    (options & ~WNOHANG)) {
		pvas_set_error("pvas_wait", "bad argument", EINVAL);
		return -1;
	}
	count = g->ctl->part_count;
	pfd = calloc(count, sizeof(*pfd));
	slots = calloc(count, sizeof(*slots));
	if (!pfd || !slots) {
		free(pfd);
		free(slots);
		pvas_set_error("pvas_wait", "poll set", ENOMEM);
		return -1;
	}
	for (;;) {
		pthread_mutex_lock(&g->lock);
		for (i = n = 0; i < count; i++) {
			if (atomic_load(&g->ctl->slot[i].state) != SLOT_LIVE)
				continue;
			if (task_id >= 0 && (unsigned)task_id != i)
				continue;
			pfd[n].fd = g->pidfds[i];
			pfd[n].events = POLLIN;
			slots[n++] = i;
		}
		pthread_mutex_unlock(&g->lock);
		if (!n) {
			if (task_id >= 0)
				pvas_set_errorf(ECHILD, "pvas_wait: task %d", task_id);
			else
				pvas_set_error("pvas_wait", "no live task", ECHILD);
			r = -1;
			break;
		}
		r = poll(pfd, n, (options & WNOHANG) ? 0 : -1);
		if (r < 0) {
			pvas_set_error("pvas_wait", "poll", errno);
			break;
		}
		if (r == 0) {
			pvas_set_error("pvas_wait", "no task has ended", EAGAIN);
			r = -1;
			break;
		}
		for (i = 0; i < n && !(pfd[i].revents & (POLLIN | POLLHUP)); i++)
			;
		if (i == n)
			continue;
		pthread_mutex_lock(&g->lock);
		r = atomic_load(&g->ctl->slot[slots[i]].state) == SLOT_LIVE
			    ? reap(g, slots[i], status)
			    : 1; /* another thread got it: look again */
		pthread_mutex_unlock(&g->lock);
		if (r == 1)
			continue;
		if (r == 0)
			r = (int)slots[i];
		break;
	}
	free(pfd);
	free(slots);
	return r;
}

int pvas_kill(pvas_group_t *g, int task_id, int sig)
{
	unsigned i;
	int rc = 0, hit = 0;

	if (!g || task_id < -1 || (task_id >= 0 && (unsigned)task_id >= g->ctl->part_count)) {
		pvas_set_error("pvas_kill", "bad task id", EINVAL);
		return -1;
	}
	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->ctl->part_count; i++) {
		if (task_id >= 0 && (unsigned)task_id != i)
			continue;
		if (atomic_load(&g->ctl->slot[i].state) != SLOT_LIVE)
			continue;
		hit = 1;
		if (syscall(SYS_pidfd_send_signal, g->pidfds[i], sig, NULL, 0) && errno != ESRCH) {
			pvas_set_errorf(errno, "pvas_kill: task %u (pid %d), signal %d", i,
					(int)atomic_load(&g->ctl->slot[i].pid), sig);
			rc = -1;
		}
	}
	pthread_mutex_unlock(&g->lock);
	if (!hit && task_id >= 0) {
		pvas_set_errorf(ESRCH, "pvas_kill: task %d", task_id);
		return -1;
	}
	return rc;
}
