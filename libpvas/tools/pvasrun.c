// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pvasrun: run N tasks of a program in one PVAS group.
 * See `pvasrun --help`.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_proto.h"
#include "pvas.h"

extern char **environ;

static const char usage[] =
	"Usage: pvasrun [options] -n N PROGRAM [ARGS...]\n"
	"       pvasrun --info [--backend B] [--partition-size S] [--partitions P]\n"
	"       pvasrun --ompi-agent APP [ARGS...]\n"
	"\n"
	"Run N tasks of PROGRAM (a PIE executable) in one PVAS group: N real\n"
	"processes that share one virtual address space, each loaded into its own\n"
	"partition.  Each task gets PVAS_RANK (0..N-1) and PVAS_SIZE (N) in its\n"
	"environment; libpvas's pvas_self() gives it its task id and partition.\n"
	"\n"
	"Options:\n"
	"  -n, --np N              number of tasks (default 1)\n"
	"  -b, --bind-to WHAT      core | hwthread | none (default none): bind task i\n"
	"                          to core (hwthread) i mod count, found with hwloc\n"
	"  -B, --backend B         auto | user | kmod (default: $PVAS_BACKEND, else\n"
	"                          auto = kmod when /dev/pvas exists)\n"
	"  -s, --partition-size S  bytes per partition, power of two >= 1G (suffix\n"
	"                          K, M, G, T; default 16G)\n"
	"  -p, --partitions P      partitions in the group (default max(N, 512))\n"
	"      --stack S           initial stack of each task (default RLIMIT_STACK)\n"
	"      --stdin WHO         0 (task 0 gets stdin, others /dev/null; default),\n"
	"                          all, or none\n"
	"      --abort-on-failure  kill every task as soon as one fails\n"
	"  -t, --timeout SEC       kill every task after SEC seconds (exit 124)\n"
	"  -v, --verbose           progress while spawning, and every task's end\n"
	"      --info              print the backend and partition layout, then exit\n"
	"      --ompi-agent        Open MPI's orte_fork_agent mode (set by the PVAS\n"
	"                          build of Open MPI): when OMPI_MCA_btl selects pvas,\n"
	"                          run APP as a PVAS task of the job's node-local\n"
	"                          root, forwarding signals and mirroring its exit;\n"
	"                          otherwise exec APP.  An APP that is not ELF (a\n"
	"                          script) runs as an ordinary process, and the\n"
	"                          program linking libmpi it runs becomes the task\n"
	"      --ompi-rank EXE ARGV...  how that program re-enters the agent\n"
	"                          (internal; docs/ompi-launch.md)\n"
	"  -h, --help              this text\n"
	"\n"
	"Signals: SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 sent to\n"
	"pvasrun are forwarded to every task (a terminal's ^C already reaches the\n"
	"whole foreground process group, so it is not sent twice).  A second\n"
	"SIGINT or SIGTERM kills the tasks.  When pvasrun dies, its tasks get\n"
	"SIGKILL.\n"
	"\n"
	"Exit status: the worst of the tasks': a task killed by signal S counts\n"
	"as 128+S; 1 if pvasrun itself fails (e.g. PROGRAM cannot be loaded).\n"
	"Every task that dies abnormally (signal, or non-zero status) is reported\n"
	"on stderr with its task id and pid.\n";

struct opts {
	int np;
	enum { BIND_NONE, BIND_CORE, BIND_HWTHREAD } bind;
	struct pvas_group_attr gattr;
	size_t stack;
	enum { STDIN_0, STDIN_ALL, STDIN_NONE } in;
	int abort_on_failure, timeout, verbose, info;
};

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'T': case 't': v <<= 10; /* fall through */
	case 'G': case 'g': v <<= 10; /* fall through */
	case 'M': case 'm': v <<= 10; /* fall through */
	case 'K': case 'k': v <<= 10; end++; break;
	case 0: break;
	default: return -1;
	}
	if (*end && strcmp(end, "iB") && strcmp(end, "B"))
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "pvasrun: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'pvasrun --help'.\n");
	exit(1);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "np", required_argument, 0, 'n' },
		{ "bind-to", required_argument, 0, 'b' },
		{ "backend", required_argument, 0, 'B' },
		{ "partition-size", required_argument, 0, 's' },
		{ "partitions", required_argument, 0, 'p' },
		{ "stack", required_argument, 0, 'S' },
		{ "stdin", required_argument, 0, 'I' },
		{ "abort-on-failure", no_argument, 0, 'A' },
		{ "timeout", required_argument, 0, 't' },
		{ "verbose", no_argument, 0, 'v' },
		{ "info", no_argument, 0, 'i' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	int c, n;

	memset(o, 0, sizeof(*o));
	o->np = 1;
	pvas_group_attr_init(&o->gattr);
	o->gattr.partition_count = 0;
	/* '+': options end at PROGRAM; its own options are not ours. */
	while ((c = getopt_long(argc, argv, "+n:b:B:s:p:t:vh", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_int(optarg, 1, PVAS_MAX_PARTITION_COUNT, &o->np))
				die_usage("bad task count '%s' (want 1..4096)", optarg);
			break;
		case 'b':
			if (!strcmp(optarg, "none"))
				o->bind = BIND_NONE;
			else if (!strcmp(optarg, "core"))
				o->bind = BIND_CORE;
			else if (!strcmp(optarg, "hwthread"))
				o->bind = BIND_HWTHREAD;
			else
				die_usage("bad --bind-to '%s' (want core, hwthread or none)", optarg);
			break;
		case 'B':
			if (!strcmp(optarg, "auto"))
				o->gattr.backend = PVAS_BACKEND_AUTO;
			else if (!strcmp(optarg, "user"))
				o->gattr.backend = PVAS_BACKEND_USER;
			else if (!strcmp(optarg, "kmod"))
				o->gattr.backend = PVAS_BACKEND_KMOD;
			else
				die_usage("bad --backend '%s' (want auto, user or kmod)", optarg);
			/* An explicit option beats the environment. */
			setenv(PVAS_ENV_BACKEND, optarg, 1);
			break;
		case 's':
			if (parse_size(optarg, &o->gattr.partition_size))
				die_usage("bad partition size '%s'", optarg);
			break;
		case 'p':
			if (parse_int(optarg, 1, PVAS_MAX_PARTITION_COUNT, &n))
				die_usage("bad partition count '%s' (want 1..4096)", optarg);
			o->gattr.partition_count = (unsigned)n;
			break;
		case 'S':
			if (parse_size(optarg, &o->stack))
				die_usage("bad stack size '%s'", optarg);
			break;
		case 'I':
			if (!strcmp(optarg, "0"))
				o->in = STDIN_0;
			else if (!strcmp(optarg, "all"))
				o->in = STDIN_ALL;
			else if (!strcmp(optarg, "none"))
				o->in = STDIN_NONE;
			else
				die_usage("bad --stdin '%s' (want 0, all or none)", optarg);
			break;
		case 'A':
			o->abort_on_failure = 1;
			break;
		case 't':
			if (parse_int(optarg, 1, INT_MAX, &o->timeout))
				die_usage("bad timeout '%s'", optarg);
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'i':
			o->info = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default:
			fprintf(stderr, "Try 'pvasrun --help'.\n");
			exit(1);
		}
	}
	if (!o->gattr.partition_count)
		o->gattr.partition_count = o->np > 512 ? (unsigned)o->np : 512;
	if ((unsigned)o->np > o->gattr.partition_count)
		die_usage("%s: more tasks than partitions", "-n");
	if (!o->info && optind >= argc)
		die_usage("%s", "no PROGRAM given");
	return optind;
}

static void print_size(FILE *f, size_t b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (b >= 1024 && !(b % 1024) && u < 4) {
		b /= 1024;
		u++;
	}
	fprintf(f, "%zu %s", b, unit[u]);
}

static int info(const struct opts *o)
{
	struct pvas_info in;
	pvas_group_t *g;

	if (pvas_create(&o->gattr, &g)) {
		fprintf(stderr, "pvasrun: %s\n", pvas_errmsg());
		return 1;
	}
	pvas_self(&in);
	printf("libpvas:        %d.%d\n", PVAS_VERSION_MAJOR, PVAS_VERSION_MINOR);
	printf("backend:        %s%s\n", in.backend,
	       !strcmp(in.backend, "user")
		       ? (access("/dev/pvas", F_OK) ? " (no /dev/pvas: pvas.ko not loaded)"
						    : " (forced)")
		       : " (/dev/pvas)");
	printf("partitions:     %u x ", in.partition_count);
	print_size(stdout, in.partition_size);
	printf("\nrange:          %#lx - %#lx\n", (unsigned long)in.base,
	       (unsigned long)(in.base + in.partition_size * in.partition_count));
	printf("partition i:    [base + i*size, base + (i+1)*size)\n");
	printf("  program at    +2 MiB (aligned to its segment alignment), then ld.so\n");
	printf("  stack         top at end - 1 MiB, RLIMIT_STACK bytes (default 8 MiB)\n");
	printf("  heap          %s\n", !strcmp(in.backend, "kmod")
					       ? "malloc's mmap, confined to the partition"
					       : "malloc's mmap, placed by the kernel (not confined)");
	pvas_destroy(g, 1);
	return 0;
}

struct run {
	pvas_group_t *g;
	int np, live, worst, forwarded, verbose, timed_out;
	int *rank_of; /* task id -> rank */
};

static int status_code(int st)
{
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

/* Reap whatever ended; report abnormal ends.  Returns 1 if one failed. */
static int reap(struct run *r)
{
	int st, id, failed = 0;

	while ((id = pvas_wait(r->g, -1, &st, WNOHANG)) >= 0) {
		int rank = r->rank_of[id], code = status_code(st);

		r->live--;
		if (code > r->worst)
			r->worst = code;
		if (WIFSIGNALED(st)) {
			fprintf(stderr, "pvasrun: rank %d (task %d) killed by signal %d (%s)%s\n",
				rank, id, WTERMSIG(st), strsignal(WTERMSIG(st)),
				WCOREDUMP(st) ? ", core dumped" : "");
			failed = 1;
		} else if (code) {
			fprintf(stderr, "pvasrun: rank %d (task %d) exited with status %d\n", rank,
				id, code);
			failed = 1;
		} else if (r->verbose) {
			fprintf(stderr, "pvasrun: rank %d (task %d) exited normally\n", rank, id);
		}
	}
	return failed;
}

static int setup_binding(const struct opts *o, hwloc_topology_t *topo, int *nunits)
{
	hwloc_obj_type_t t = o->bind == BIND_CORE ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;

	if (o->bind == BIND_NONE)
		return 0;
	if (hwloc_topology_init(topo) || hwloc_topology_load(*topo)) {
		fprintf(stderr, "pvasrun: hwloc: cannot load the topology: %s\n", strerror(errno));
		return -1;
	}
	*nunits = hwloc_get_nbobjs_by_type(*topo, t);
	if (*nunits <= 0) {
		fprintf(stderr, "pvasrun: hwloc: no %s found\n", hwloc_obj_type_string(t));
		return -1;
	}
	if (o->np > *nunits)
		fprintf(stderr, "pvasrun: note: %d tasks on %d %ss: oversubscribed\n", o->np,
			*nunits, hwloc_obj_type_string(t));
	return 0;
}

/* Tasks start with pvasrun's original signal mask (*mask). */
static int spawn_all(const struct opts *o, struct run *r, char **argv, const sigset_t *mask)
{
	hwloc_topology_t topo = NULL;
	int nunits = 0, i, devnull = -1, rc = 0;
	cpu_set_t set;
	char rank_env[32], size_env[32];
	size_t envc = 0;
	char **env;

	if (setup_binding(o, &topo, &nunits))
		return -1;
	while (environ[envc])
		envc++;
	env = calloc(envc + 3, sizeof(*env));
	if (!env) {
		perror("pvasrun: environment");
		return -1;
	}
	for (size_t k = 0, j = 0; k < envc; k++)
		if (strncmp(environ[k], "PVAS_RANK=", 10) && strncmp(environ[k], "PVAS_SIZE=", 10))
			env[j++] = environ[k], env[j] = NULL;
	for (i = 0; env[i]; i++)
		;
	env[i] = rank_env;
	env[i + 1] = size_env;
	snprintf(size_env, sizeof(size_env), "PVAS_SIZE=%d", o->np);
	if (o->in != STDIN_ALL) {
		devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (devnull < 0) {
			perror("pvasrun: open /dev/null");
			rc = -1;
			goto out;
		}
	}
	for (i = 0; i < o->np; i++) {
		struct pvas_spawn_attr a;
		pid_t pid;
		int id;

		pvas_spawn_attr_init(&a);
		a.stack_size = o->stack;
		a.sigmask = mask;
		if (o->in == STDIN_NONE || (o->in == STDIN_0 && i > 0))
			a.fd_stdin = devnull;
		if (topo) {
			hwloc_obj_t u = hwloc_get_obj_by_type(
				topo, o->bind == BIND_CORE ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU,
				(unsigned)(i % nunits));

			hwloc_cpuset_to_glibc_sched_affinity(topo, u->cpuset, &set, sizeof(set));
			a.cpuset = &set;
			a.cpuset_size = sizeof(set);
		}
		snprintf(rank_env, sizeof(rank_env), "PVAS_RANK=%d", i);
		if (pvas_spawn(r->g, argv[0], argv, env, &a, &pid, &id)) {
			fprintf(stderr, "pvasrun: rank %d: %s\n", i, pvas_errmsg());
			rc = -1;
			break;
		}
		r->rank_of[id] = i;
		r->live++;
		if (o->verbose && (i + 1 == o->np || (i + 1) % 64 == 0))
			fprintf(stderr, "pvasrun: spawned %d/%d tasks\n", i + 1, o->np);
	}
out:
	if (devnull >= 0)
		close(devnull);
	if (topo)
		hwloc_topology_destroy(topo);
	free(env);
	return rc;
}

static void kill_all(struct run *r, int sig, const char *why)
{
	if (r->live > 0 && why)
		fprintf(stderr, "pvasrun: %s: sending %s to %d task(s)\n", why, strsignal(sig),
			r->live);
	pvas_kill(r->g, -1, sig);
}

int main(int argc, char **argv)
{
	static const int fwd[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct opts o;
	struct run r = { 0 };
	sigset_t set, old;
	int first, sfd;
	size_t i;

	if (argc > 1 && !strcmp(argv[1], "--ompi-agent"))
		return pvas_ompi_agent(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "--ompi-rank"))
		return pvas_ompi_rank(argc - 2, argv + 2);
	first = parse_opts(argc, argv, &o);
	if (o.info)
		return info(&o);

	sigemptyset(&set);
	for (i = 0; i < sizeof(fwd) / sizeof(fwd[0]); i++)
		sigaddset(&set, fwd[i]);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGALRM);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		perror("pvasrun: signalfd");
		return 1;
	}
	if (pvas_create(&o.gattr, &r.g)) {
		fprintf(stderr, "pvasrun: %s\n", pvas_errmsg());
		return 1;
	}
	r.np = o.np;
	r.verbose = o.verbose;
	r.rank_of = calloc(o.gattr.partition_count, sizeof(int));
	if (!r.rank_of) {
		perror("pvasrun: calloc");
		return 1;
	}
	if (spawn_all(&o, &r, argv + first, &old)) {
		kill_all(&r, SIGKILL, NULL);
		while (r.live > 0 && pvas_wait(r.g, -1, NULL, 0) >= 0)
			r.live--;
		pvas_destroy(r.g, 1);
		return 1;
	}
	if (o.timeout)
		alarm((unsigned)o.timeout);

	while (r.live > 0) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));

		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			perror("pvasrun: read signalfd");
			kill_all(&r, SIGKILL, "internal error");
			break;
		}
		if (si.ssi_signo == SIGCHLD) {
			if (reap(&r) && o.abort_on_failure)
				kill_all(&r, SIGKILL, "a task failed (--abort-on-failure)");
			continue;
		}
		if (si.ssi_signo == SIGALRM) {
			kill_all(&r, SIGKILL, "timeout");
			r.timed_out = 1;
			continue;
		}
		if ((si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) && r.forwarded++) {
			kill_all(&r, SIGKILL, "second interrupt");
			continue;
		}
		/* A terminal's signals already reached the foreground group. */
		if (si.ssi_code == SI_KERNEL)
			continue;
		pvas_kill(r.g, -1, (int)si.ssi_signo);
	}
	reap(&r);
	pvas_destroy(r.g, 1);
	free(r.rank_of);
	return r.timed_out ? 124 : r.worst;
}
