// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The task side of pvas_spawn: runs in the clone(CLONE_VM) child, on a
 * root-allocated boot stack, with the root's thread pointer, while the
 * root's spawning thread is parked in read() on the status pipe.  It does
 * what execve would (reset handlers, close-on-exec) plus the spawn
 * attributes, loads the program with the loader and jumps into ld.so.
 * Rules: no heap, signals stay blocked until the jump, and nothing of the
 * root's is touched after the status has been written.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "child.h"

/* The kernel's struct sigaction for rt_sigaction(2). */
struct k_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static void set_status(struct pvas_child_status *st, const char *op, const char *obj, int err)
{
	st->e.err = err;
	snprintf(st->e.op, sizeof(st->e.op), "%s", op);
	snprintf(st->e.object, sizeof(st->e.object), "%s", obj ? obj : "");
}

/* As execve does: caught signals revert to SIG_DFL, ignored ones stay. */
static void reset_signal_handlers(void)
{
	struct k_sigaction dfl = { .handler = SIG_DFL }, old;
	int sig;

	for (sig = 1; sig <= 64; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (syscall(SYS_rt_sigaction, sig, NULL, &old, sizeof(uint64_t)))
			continue;
		if (old.handler == SIG_DFL || old.handler == SIG_IGN)
			continue;
		syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(uint64_t));
	}
}

/* Close every descriptor marked close-on-exec, except keep. */
static void close_cloexec_fds(int keep)
{
	char buf[4096];
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;

	if (dfd < 0) {
		struct rlimit rl;
		int fd, max = 65536;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)max)
			max = (int)rl.rlim_cur;
		for (fd = 3; fd < max; fd++)
			if (fd != keep && (fcntl(fd, F_GETFD) & FD_CLOEXEC) > 0)
				close(fd);
		return;
	}
	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		long off = 0;

		while (off < n) {
			const char *name = buf + off + 19; /* d_ino, d_off, d_reclen, d_type */
			unsigned short reclen;
			int fd = 0, flags;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			off += reclen;
			if (name[0] < '0' || name[0] > '9')
				continue;
			for (; *name >= '0' && *name <= '9'; name++)
				fd = fd * 10 + (*name - '0');
			if (fd == keep || fd == dfd)
				continue;
			flags = fcntl(fd, F_GETFD);
			if (flags > 0 && (flags & FD_CLOEXEC))
				close(fd);
		}
	}
	close(dfd);
}

/* stdin/stdout/stderr redirections; sources may overlap targets. */
static int redirect_stdio(const struct pvas_spawn_attr *a, struct pvas_child_status *st)
{
	const int src[3] = { a->fd_stdin, a->fd_stdout, a->fd_stderr };
	int tmp[3] = { -1, -1, -1 }, i;

	for (i = 0; i < 3; i++) {
		if (src[i] < 0)
			continue;
		tmp[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 10);
		if (tmp[i] < 0) {
			static const char *const what[3] = { "stdin", "stdout", "stderr" };

			set_status(st, "redirect (bad file descriptor)", what[i], errno);
			return -1;
		}
	}
	for (i = 0; i < 3; i++)
		if (tmp[i] >= 0 && dup2(tmp[i], i) < 0) {
			set_status(st, "dup2", "stdio", errno);
			return -1;
		}
	return 0; /* the temporaries are close-on-exec */
}

/* brk is one per address space: make it fail so each task's malloc falls
 * back to mmap (docs/heap.md).  Returns 0 or an errno value. */
static int forbid_brk(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_brk, 0, 1),
		/* brk returns 0: glibc sees a failed brk and uses mmap. */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (!syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return 0;
	/* Without CAP_SYS_ADMIN a filter needs no_new_privs. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return errno;
	return 0;
}

static void send_status(int fd, const struct pvas_child_status *st)
{
	const char *p = (const char *)st;
	size_t left = sizeof(*st);

	while (left) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		left -= (size_t)w;
	}
}

static int setup(struct pvas_child_ctx *c, struct pvas_load_result *res,
		 struct pvas_child_status *st)
{
	const struct pvas_spawn_attr *a = &c->attr;
	const char *base;
	int r;

	r = c->g->be->task_join(c->g, c->slot);
	if (r) {
		set_status(st, "join partition", c->g->be->name, -r);
		return -1;
	}
	reset_signal_handlers();
	if (a->cwd && chdir(a->cwd)) {
		set_status(st, "chdir", a->cwd, errno);
		return -1;
	}
	if (redirect_stdio(a, st))
		return -1;
	if (a->cpuset && sched_setaffinity(0, a->cpuset_size, a->cpuset)) {
		set_status(st, "sched_setaffinity", "cpuset", errno);
		return -1;
	}
	base = strrchr(c->req.path, '/');
	prctl(PR_SET_NAME, base ? base + 1 : c->req.path, 0, 0, 0);
	if (!(a->flags & PVAS_SPAWN_NO_PDEATHSIG)) {
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != c->root_pid) {
			set_status(st, "spawn (root exited)", c->req.path, ESRCH);
			return -1;
		}
	}
	if (pvas_load(&c->req, res, &st->e))
		return -1;
	r = forbid_brk();
	if (r) {
		set_status(st, "seccomp (forbid brk)", c->req.path, r);
		return -1;
	}
	return 0;
}

/* A system call that cannot touch errno (which lives in the root's TLS). */
static long raw_syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c)
			 : "rcx", "r11", "memory");
	return ret;
}

static long raw_syscall4(long nr, long a, long b, long c, long d)
{
	register long r10 __asm__("r10") = d;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Not instrumented by ASan: it runs on the boot stack, which ASan does not
 * know, and its call to the _Noreturn pvas_enter would make ASan warn. */
__attribute__((no_sanitize_address)) int pvas_child_main(void *arg)
{
	struct pvas_child_ctx *c = arg;
	struct pvas_child_status st;
	struct pvas_load_result res;
	sigset_t mask;
	int fd = c->status_fd;

	memset(&st, 0, sizeof(st));
	if (setup(c, &res, &st)) {
		send_status(fd, &st);
		syscall(SYS_exit_group, 127);
	}
	/* Live before the root hears of it: the task may run first. */
	atomic_store(&c->g->ctl->slot[c->slot].pid, (pid_t)syscall(SYS_getpid));
	atomic_store(&c->g->ctl->slot[c->slot].state, SLOT_LIVE);
	atomic_fetch_add(&c->g->ctl->ntasks, 1);
	pvas_slot_changed(&c->g->ctl->slot[c->slot]);
	mask = c->mask;
	close_cloexec_fds(fd);
	st.ok = 1;
	send_status(fd, &st);
	/* From here on the root may have returned: touch nothing of its. */
	raw_syscall3(SYS_close, fd, 0, 0);
	raw_syscall4(SYS_rt_sigprocmask, SIG_SETMASK, (long)&mask, 0, sizeof(uint64_t));
	pvas_enter(res.entry, res.sp);
}
