// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * `pvasrun --ompi-agent APP ARGS...`: Open MPI's orte_fork_agent.
 *
 * ORTE starts this instead of each rank (after chdir and CPU binding).  If
 * the job's btl list includes pvas, the rank is handed to the node-local
 * root of the job, which spawns it as a PVAS task with our argv,
 * environment, cwd, stdio descriptors and CPU binding; this process stays
 * as the rank's stand-in for ORTE: it forwards every signal it gets and
 * exits with the task's status (or dies by the same signal).  Otherwise it
 * simply execs the application.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include "agent_proto.h"

extern char **environ;

#define ME "pvasrun --ompi-agent"

/* Does OMPI_MCA_btl (e.g. "self,pvas", not "^pvas") select pvas? */
static int wants_pvas(void)
{
	const char *v = getenv("OMPI_MCA_btl");
	char buf[512], *tok, *save;

	if (!v || v[0] == '^' || strlen(v) >= sizeof(buf))
		return 0;
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, "pvas"))
			return 1;
	return 0;
}

/* A name for the job that all its ranks on this node agree on. */
static int job_key(char *key, size_t len)
{
	const char *ns = getenv("PMIX_NAMESPACE");
	const char *jobid = getenv("OMPI_MCA_ess_base_jobid");
	const char *src = ns ? ns : jobid;
	unsigned long long h = 1469598103934665603ULL;

	if (!src)
		return -1;
	for (; *src; src++)
		h = (h ^ (unsigned char)*src) * 1099511628211ULL;
	snprintf(key, len, "pvas-%u-%016llx", (unsigned)getuid(), h);
	return 0;
}

/* Resolve the program like execvp, to an absolute path. */
static int resolve(const char *prog, char *out)
{
	const char *path = getenv("PATH");
	char cand[PATH_MAX];

	if (strchr(prog, '/'))
		return realpath(prog, out) ? 0 : -1;
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(cand, sizeof(cand), "%.*s%s%s", (int)n, path, n ? "/" : "", prog);
		if (!access(cand, X_OK) && realpath(cand, out))
			return 0;
		path += n + (path[n] == ':');
	}
	errno = ENOENT;
	return -1;
}

static void set_addr(struct sockaddr_un *a, socklen_t *len, const char *key)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* Abstract namespace: no file, gone with the last socket. */
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%.100s", key);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(key));
}

/* Start the node root on the listening socket lfd, detached from ORTE. */
static int start_root(int lfd, const char *key)
{
	pid_t pid = fork(), st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (fork() != 0)
			_exit(0);
		setsid();
		int null = open("/dev/null", O_RDWR);

		/* Never hold a rank's stdio open: ORTE waits for its EOF. */
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
		pvas_node_root(lfd, key);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/*
 * The ranks of a job on this node elect the one that starts the root under
 * a flock (a sleeping wait): on ORTE's session directory of the daemon that
 * starts them (OMPI_FILE_LOCATION), else on $TMPDIR or /tmp.  Whoever holds
 * it finds a listening root or binds and listens itself before unlocking,
 * so nobody ever sees the name bound but not yet listening.
 */
static int lock_election(const char **what)
{
	const char *dirs[3] = { getenv("OMPI_FILE_LOCATION"), getenv("TMPDIR"), "/tmp" };
	int i, fd = -1;

	for (i = 0; i < 3 && fd < 0; i++)
		if (dirs[i] && *dirs[i])
			fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		*what = "open a directory to lock (OMPI_FILE_LOCATION, TMPDIR, /tmp)";
		return -1;
	}
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			*what = "flock the election directory";
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Connect to the job's root, starting it if there is none.  On failure,
 * *what names the operation that failed (errno is set). */
static int connect_root(const char *key, const char **what)
{
	struct sockaddr_un a;
	socklen_t len;
	int fd, lfd = -1, lock, err;

	set_addr(&a, &len, key);
	lock = lock_election(what);
	if (lock < 0)
		return -1;
	*what = "socket";
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || !connect(fd, (struct sockaddr *)&a, len))
		goto out;
	err = errno;
	close(fd);
	fd = -1;
	errno = err;
	*what = "connect";
	if (err != ECONNREFUSED && err != ENOENT)
		goto out;
	/* No root: start it on a socket that is listening before we unlock. */
	lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	*what = "bind and listen";
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, len) || listen(lfd, 256))
		goto out;
	close(lock); /* the root must not inherit the lock */
	lock = -1;
	*what = "start the node root";
	if (start_root(lfd, key))
		goto out;
	*what = "connect to the new node root";
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, len)) {
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
out:
	err = errno;
	if (lfd >= 0)
		close(lfd);
	if (lock >= 0)
		close(lock);
	errno = err;
	return fd;
}

static int send_spawn(int fd, const char *path, char **argv)
{
	size_t len = strlen(path) + 1, n, i, envc = 0, argc = 0;
	char cwd[PATH_MAX], *p;
	struct agent_spawn *m;
	int fds[3] = { 0, 1, 2 }, rc;
	union {
		char buf[CMSG_SPACE(sizeof(fds))];
		struct cmsghdr align;
	} cm;
	struct iovec iov;
	struct msghdr mh = { 0 };
	struct cmsghdr *c;

	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	len += strlen(cwd) + 1;
	for (; argv[argc]; argc++)
		len += strlen(argv[argc]) + 1;
	for (; environ[envc]; envc++)
		len += strlen(environ[envc]) + 1;
	if (sizeof(*m) + len > AGENT_MAX_MSG) {
		errno = E2BIG;
		return -1;
	}
	m = calloc(1, sizeof(*m) + len);
	if (!m)
		return -1;
	m->h = (struct agent_hdr){ AGENT_MAGIC, AGENT_VERSION, AGENT_SPAWN, 0 };
	m->argc = (uint32_t)argc;
	m->envc = (uint32_t)envc;
	m->strings_len = (uint32_t)len;
	m->has_cpuset = !sched_getaffinity(0, sizeof(m->cpuset), &m->cpuset);
	p = m->strings;
#define PUT(s) (n = strlen(s) + 1, memcpy(p, (s), n), p += n)
	PUT(path);
	PUT(cwd);
	for (i = 0; i < argc; i++)
		PUT(argv[i]);
	for (i = 0; i < envc; i++)
		PUT(environ[i]);
#undef PUT
	iov.iov_base = m;
	iov.iov_len = sizeof(*m) + len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = cm.buf;
	mh.msg_controllen = sizeof(cm.buf);
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	rc = sendmsg(fd, &mh, MSG_NOSIGNAL) == (ssize_t)iov.iov_len ? 0 : -1;
	free(m);
	return rc;
}

/* Die like the task did: same exit code, or same signal (no core). */
static _Noreturn void mirror(int st)
{
	if (WIFSIGNALED(st)) {
		struct rlimit no_core = { 0, 0 };
		sigset_t s;
		int sig = WTERMSIG(st);

		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigemptyset(&s);
		sigaddset(&s, sig);
		sigprocmask(SIG_UNBLOCK, &s, NULL);
		raise(sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

/* Is path an ELF file?  (An unreadable one counts as ELF: the root's
 * loader then reports why it cannot be opened.) */
static int is_elf(const char *path)
{
	char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 1;
	n = read(fd, magic, sizeof(magic));
	close(fd);
	return n != (ssize_t)sizeof(magic) ? n < 0 : !memcmp(magic, "\177ELF", 4);
}

/*
 * path is a script (or any non-ELF program): exec it as an ordinary
 * process, the way ORTE would, with the hand-off library preloaded so that
 * the MPI program it finally runs re-enters us as `--ompi-rank`.
 */
static int exec_with_handoff(const char *path, char **argv)
{
	char self[PATH_MAX], lib[PATH_MAX + 64], *cut, *list;
	const char *pre = getenv("LD_PRELOAD");
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		fprintf(stderr, "%s: readlink /proc/self/exe: %s\n", ME, strerror(errno));
		return 127;
	}
	self[n] = 0;
	snprintf(lib, sizeof(lib), "%s", self);
	for (int up = 0; up < 2; up++) { /* <prefix>/bin/pvasrun -> <prefix> */
		cut = strrchr(lib, '/');
		if (cut)
			*cut = 0;
	}
	snprintf(lib + strlen(lib), sizeof(lib) - strlen(lib), "/%s", PVAS_RANK_HANDOFF_LIB);
	if (access(lib, R_OK)) {
		fprintf(stderr,
			"%s: %s is not an ELF program (a script?); the MPI program it runs "
			"becomes a PVAS task through %s: %s\n",
			ME, path, lib, strerror(errno));
		return 127;
	}
	list = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
	if (!list) {
		fprintf(stderr, "%s: LD_PRELOAD for %s: %s\n", ME, path, strerror(ENOMEM));
		return 127;
	}
	sprintf(list, "%s%s%s", lib, pre && *pre ? ":" : "", pre && *pre ? pre : "");
	if (setenv("LD_PRELOAD", list, 1) || setenv(PVAS_ENV_RANK_AGENT, self, 1)) {
		fprintf(stderr, "%s: setenv for %s: %s\n", ME, path, strerror(errno));
		return 127;
	}
	free(list);
	execv(path, argv);
	fprintf(stderr, "%s: exec %s: %s\n", ME, path, strerror(errno));
	return 127;
}

static int run_as_task(const char *key, const char *path, char **argv);

int pvas_ompi_agent(int argc, char **argv)
{
	char key[128], path[PATH_MAX];

	if (argc < 1) {
		fprintf(stderr, "%s: no application given\n", ME);
		return 1;
	}
	if (!wants_pvas() || job_key(key, sizeof(key))) {
		execvp(argv[0], argv);
		fprintf(stderr, "%s: exec %s: %s\n", ME, argv[0], strerror(errno));
		return 127;
	}
	if (resolve(argv[0], path)) {
		fprintf(stderr, "%s: %s: %s\n", ME, argv[0], strerror(errno));
		return 127;
	}
	if (!is_elf(path))
		return exec_with_handoff(path, argv);
	return run_as_task(key, path, argv);
}

int pvas_ompi_rank(int argc, char **argv)
{
	char key[128];

	if (argc < 2) {
		fprintf(stderr, "pvasrun --ompi-rank: want EXE ARGV0 [ARGS...]\n");
		return 1;
	}
	/* The script may have changed the btl list or the job's variables. */
	if (!wants_pvas() || job_key(key, sizeof(key))) {
		execv(argv[0], argv + 1);
		fprintf(stderr, "pvasrun --ompi-rank: exec %s: %s\n", argv[0], strerror(errno));
		return 127;
	}
	return run_as_task(key, argv[0], argv + 1);
}

/* Hand path to the job's node root as a PVAS task; stay as its stand-in. */
static int run_as_task(const char *key, const char *path, char **argv)
{
	struct agent_reply rep;
	struct pollfd pfd[2];
	const char *what = NULL;
	sigset_t fwd;
	int fd, sfd, sig;

	/* If mpirun or orted dies, even by SIGKILL, so do we; the root then
	 * kills the task.  (Checked against a parent that is already gone.) */
	pid_t parent = getppid();

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || getppid() != parent) {
		fprintf(stderr, "%s: parent %d gone before %s started\n", ME, (int)parent, argv[0]);
		return 1;
	}
	/* Every signal ORTE may send is forwarded; SIGKILL of this stub
	 * closes the socket, and the root then kills the task. */
	sigfillset(&fwd);
	for (sig = 0; sig < 5; sig++) {
		static const int keep[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGCHLD };

		sigdelset(&fwd, keep[sig]);
	}
	sigdelset(&fwd, SIGPIPE);
	sigprocmask(SIG_BLOCK, &fwd, NULL);
	sfd = signalfd(-1, &fwd, SFD_CLOEXEC);
	if (sfd < 0) {
		fprintf(stderr, "%s: signalfd: %s\n", ME, strerror(errno));
		return 1;
	}
	fd = connect_root(key, &what);
	if (fd < 0) {
		fprintf(stderr, "%s: node root @%s: %s: %s\n", ME, key, what, strerror(errno));
		return 1;
	}
	if (send_spawn(fd, path, argv)) {
		fprintf(stderr, "%s: send spawn request for %s: %s\n", ME, path, strerror(errno));
		return 1;
	}
	if (recv(fd, &rep, sizeof(rep), 0) != (ssize_t)sizeof(rep) ||
	    rep.h.magic != AGENT_MAGIC || rep.h.type != AGENT_REPLY) {
		fprintf(stderr, "%s: no reply from the node root for %s\n", ME, path);
		return 1;
	}
	if (rep.h.value) {
		rep.msg[sizeof(rep.msg) - 1] = 0;
		fprintf(stderr, "%s: %s\n", ME, rep.msg);
		return 127;
	}
	pfd[0] = (struct pollfd){ .fd = fd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	for (;;) {
		struct agent_hdr h;
		struct signalfd_siginfo si;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		if (pfd[1].revents & POLLIN && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			h = (struct agent_hdr){ AGENT_MAGIC, AGENT_VERSION, AGENT_SIGNAL,
						(int32_t)si.ssi_signo };
			send(fd, &h, sizeof(h), MSG_NOSIGNAL);
		}
		if (pfd[0].revents) {
			ssize_t n = recv(fd, &h, sizeof(h), 0);

			if (n == (ssize_t)sizeof(h) && h.magic == AGENT_MAGIC && h.type == AGENT_EXIT)
				mirror(h.value);
			if (n <= 0) {
				fprintf(stderr, "%s: node root went away; rank %s (pid %d) lost\n",
					ME, path, rep.pid);
				return 1;
			}
		}
	}
}
