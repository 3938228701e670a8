// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The node-local root of an MPI job: one PVAS group, one task per rank.
 * Started (detached, stdio on /dev/null) by the first rank's stub; serves
 * the stubs of the job on an abstract unix socket; accepts only its own
 * uid (SO_PEERCRED); kills a task whose stub has gone; reports each task's
 * end to its stub; exits when its last task has ended and no stub is left.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "agent_proto.h"
#include "pvas.h"

#define MAX_CLIENTS 1024
/* No task and no stub for this long: exit.  Before the first stub came,
 * wait longer (the starting stub connects right after forking us). */
#define IDLE_EXIT_MS 500
#define FIRST_CLIENT_MS 10000

struct client {
	int fd;
	int task; /* -1 before the task is spawned */
};

static struct client clients[MAX_CLIENTS];
static int nclients;
static pvas_group_t *group;

static void drop(int i)
{
	if (clients[i].task >= 0)
		pvas_kill(group, clients[i].task, SIGKILL); /* its stub is gone */
	close(clients[i].fd);
	clients[i] = clients[--nclients];
}

static void reply(int fd, int err, pid_t pid, int task, const char *msg)
{
	struct agent_reply r;

	memset(&r, 0, sizeof(r));
	r.h = (struct agent_hdr){ AGENT_MAGIC, AGENT_VERSION, AGENT_REPLY, err };
	r.pid = pid;
	r.task_id = task;
	snprintf(r.msg, sizeof(r.msg), "%s", msg ? msg : "");
	send(fd, &r, sizeof(r), MSG_NOSIGNAL);
}

/* Split the SPAWN strings into path, cwd, argv[], envp[] (NULL-terminated). */
static int unpack(struct agent_spawn *m, size_t len, char **path, char **cwd, char ***argv,
		  char ***envp)
{
	char *p = m->strings, *end;
	size_t n = (size_t)m->argc + m->envc + 2, i;
	char **v;

	if (len < sizeof(*m) || m->strings_len != len - sizeof(*m) || m->argc < 1 ||
	    m->argc > 65536 || m->envc > 65536 || !m->strings_len ||
	    m->strings[m->strings_len - 1] != 0)
		return -1;
	end = m->strings + m->strings_len;
	v = calloc(n + 2, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < n; i++) {
		if (p >= end) {
			free(v);
			return -1;
		}
		v[i] = p;
		p += strlen(p) + 1;
	}
	*path = v[0];
	*cwd = v[1];
	/* argv and envp each need a NULL: move envp one slot up. */
	memmove(&v[2 + m->argc + 1], &v[2 + m->argc], m->envc * sizeof(*v));
	v[2 + m->argc] = NULL;
	v[2 + m->argc + 1 + m->envc] = NULL;
	*argv = &v[2];
	*envp = &v[2 + m->argc + 1];
	return 0;
}

static void handle_spawn(int i, struct agent_spawn *m, size_t len, int *fds, int nfds)
{
	struct pvas_spawn_attr a;
	char *path, *cwd, **argv, **envp, msg[512];
	sigset_t none;
	pid_t pid;
	int task;

	if (nfds != 3 || clients[i].task >= 0 || unpack(m, len, &path, &cwd, &argv, &envp)) {
		reply(clients[i].fd, EINVAL, 0, -1, "node root: malformed spawn request");
		return;
	}
	sigemptyset(&none);
	pvas_spawn_attr_init(&a);
	a.cwd = cwd;
	a.fd_stdin = fds[0];
	a.fd_stdout = fds[1];
	a.fd_stderr = fds[2];
	a.sigmask = &none;
	if (m->has_cpuset) {
		a.cpuset = &m->cpuset;
		a.cpuset_size = sizeof(m->cpuset);
	}
	if (pvas_spawn(group, path, argv, envp, &a, &pid, &task)) {
		snprintf(msg, sizeof(msg), "%s", pvas_errmsg());
		reply(clients[i].fd, errno ? errno : EIO, 0, -1, msg);
	} else {
		clients[i].task = task;
		reply(clients[i].fd, 0, pid, task, NULL);
	}
	free(argv - 2);
}

static void handle_client(int i)
{
	static char buf[AGENT_MAX_MSG + 4096];
	union {
		char c[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.c,
			     .msg_controllen = sizeof(cm.c) };
	struct agent_hdr *h = (struct agent_hdr *)buf;
	int fds[8], nfds = 0, k;
	struct cmsghdr *c;
	ssize_t n = recvmsg(clients[i].fd, &mh, MSG_CMSG_CLOEXEC);

	if (n <= 0) {
		drop(i);
		return;
	}
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (nfds > 8)
				nfds = 8;
			memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
		}
	if ((size_t)n < sizeof(*h) || h->magic != AGENT_MAGIC || h->version != AGENT_VERSION ||
	    (mh.msg_flags & MSG_TRUNC)) {
		drop(i);
	} else if (h->type == AGENT_SPAWN) {
		handle_spawn(i, (struct agent_spawn *)buf, (size_t)n, fds, nfds);
	} else if (h->type == AGENT_SIGNAL && clients[i].task >= 0 && h->value > 0 &&
		   h->value < 65) {
		pvas_kill(group, clients[i].task, h->value);
	}
	for (k = 0; k < nfds; k++)
		close(fds[k]);
}

static void handle_accept(int lfd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || cr.uid != getuid() ||
	    nclients == MAX_CLIENTS) {
		syslog(LOG_WARNING, "pvas node root: refused a connection (uid %u)",
		       (unsigned)cr.uid);
		close(fd);
		return;
	}
	clients[nclients++] = (struct client){ fd, -1 };
}

/* Tell each ended task's stub how it ended. */
static void reap_tasks(void)
{
	int st, task, i;

	while ((task = pvas_wait(group, -1, &st, WNOHANG)) >= 0)
		for (i = 0; i < nclients; i++)
			if (clients[i].task == task) {
				struct agent_hdr h = { AGENT_MAGIC, AGENT_VERSION, AGENT_EXIT, st };

				send(clients[i].fd, &h, sizeof(h), MSG_NOSIGNAL);
				clients[i].task = -1;
				close(clients[i].fd);
				clients[i] = clients[--nclients];
				break;
			}
}

_Noreturn void pvas_node_root(int lfd, const char *key)
{
	static struct pollfd pfd[MAX_CLIENTS + 2];
	sigset_t set;
	int sfd, i;

	int served = 0;

	prctl(PR_SET_NAME, "pvas-root", 0, 0, 0);
	openlog("pvas", LOG_PID, LOG_USER);
	if (pvas_create(NULL, &group)) {
		syslog(LOG_ERR, "node root %s: %s", key, pvas_errmsg());
		_exit(1);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	for (;;) {
		struct signalfd_siginfo si;
		int n = 0, r, idle = nclients == 0 && pvas_group_ntasks(group) == 0;

		pfd[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (i = 0; i < nclients; i++)
			pfd[n++] = (struct pollfd){ .fd = clients[i].fd, .events = POLLIN };
		r = poll(pfd, (nfds_t)n, idle ? (served ? IDLE_EXIT_MS : FIRST_CLIENT_MS) : -1);
		if (r == 0 && idle)
			break;
		if (r < 0)
			continue;
		if (pfd[0].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo != SIGCHLD) {
				pvas_kill(group, -1, SIGKILL);
				close(lfd);
				lfd = -1;
			}
			reap_tasks();
		}
		if (lfd >= 0 && pfd[1].revents) {
			handle_accept(lfd);
			served = 1;
		}
		/* Clients from the back: drop() moves the last one into i. */
		for (i = n - 1; i >= 2; i--)
			if (pfd[i].revents && i - 2 < nclients && clients[i - 2].fd == pfd[i].fd)
				handle_client(i - 2);
		if (lfd < 0 && pvas_group_ntasks(group) == 0)
			break;
	}
	pvas_destroy(group, 1);
	_exit(0);
}
