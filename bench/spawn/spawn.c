// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench/spawn: time to start and reap N tasks of a program with pvas_spawn
 * against fork+execve of the same program, interleaved in one run.
 * Medians (and min/max) over rounds; markdown on stdout and in --out.
 * fork+execve runs in a helper process forked before the group exists, so
 * its cost is that of an ordinary small process, not of the group's root
 * (whose address space holds every task's mappings).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pvas.h"
#include "stats.h"

#define MAX_COUNTS 16
#define MAX_BACKENDS 2

static const char usage[] =
	"Usage: spawn-bench [--counts 1,16,64,256] [--rounds R] [--backends LIST]\n"
	"                   [--out FILE] PROGRAM\n"
	"Times starting and reaping N copies of PROGRAM (a PIE) with pvas_spawn and\n"
	"with fork+execve, alternating the methods in every round; prints medians.\n"
	"--backends user,kmod measures both libpvas backends in the same run (one\n"
	"group each); the default is libpvas's choice ($PVAS_BACKEND forces one).\n";

static double now_ms(void)
{
	return bench_now_us() / 1e3;
}

/* "model name" of /proc/cpuinfo, caches from glibc (CPUID), CPU count. */
static void print_machine(FILE *o)
{
	char line[256], model[192] = "unknown CPU";
	FILE *c = fopen("/proc/cpuinfo", "r");
	char *v;

	while (c && fgets(line, sizeof(line), c)) {
		v = strchr(line, ':');
		if (strncmp(line, "model name", 10) || !v)
			continue;
		v += strspn(v + 1, " \t") + 1;
		snprintf(model, sizeof(model), "%s", v);
		model[strcspn(model, "\n")] = '\0';
		break;
	}
	if (c)
		fclose(c);
	fprintf(o, "Machine: %s; L1d %ld KiB, L2 %ld KiB, L3 %ld KiB (glibc sysconf); %ld CPUs.\n",
		model, sysconf(_SC_LEVEL1_DCACHE_SIZE) / 1024,
		sysconf(_SC_LEVEL2_CACHE_SIZE) / 1024, sysconf(_SC_LEVEL3_CACHE_SIZE) / 1024,
		sysconf(_SC_NPROCESSORS_ONLN));
}

static double run_pvas(pvas_group_t *g, const char *prog, int n)
{
	char *argv[] = { (char *)prog, NULL };
	double t0 = now_ms();
	int i, st;

	for (i = 0; i < n; i++)
		if (pvas_spawn(g, prog, argv, NULL, NULL, NULL, NULL)) {
			fprintf(stderr, "spawn-bench: %s\n", pvas_errmsg());
			exit(1);
		}
	for (i = 0; i < n; i++)
		if (pvas_wait(g, -1, &st, 0) < 0 || st) {
			fprintf(stderr, "spawn-bench: task failed: %s (status %d)\n", pvas_errmsg(), st);
			exit(1);
		}
	return now_ms() - t0;
}

static double run_fork(const char *prog, int n)
{
	extern char **environ;
	char *argv[] = { (char *)prog, NULL };
	double t0 = now_ms();
	int i, st;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("spawn-bench: fork");
			exit(1);
		}
		if (pid == 0) {
			execve(prog, argv, environ);
			_exit(127);
		}
	}
	for (i = 0; i < n; i++)
		if (wait(&st) < 0 || st) {
			fprintf(stderr, "spawn-bench: child failed (status %d)\n", st);
			exit(1);
		}
	return now_ms() - t0;
}

/* The fork+exec baseline, in a clean process: reads N, answers ms. */
static int cmd_fd[2], ans_fd[2];

static void start_forker(const char *prog)
{
	int n;
	double ms;

	if (pipe(cmd_fd) || pipe(ans_fd)) {
		perror("spawn-bench: pipe");
		exit(1);
	}
	if (fork() == 0) {
		close(cmd_fd[1]);
		close(ans_fd[0]);
		while (read(cmd_fd[0], &n, sizeof(n)) == (ssize_t)sizeof(n)) {
			ms = run_fork(prog, n);
			if (write(ans_fd[1], &ms, sizeof(ms)) != (ssize_t)sizeof(ms))
				_exit(1);
		}
		_exit(0);
	}
	close(cmd_fd[0]);
	close(ans_fd[1]);
}

static double forker(int n)
{
	double ms;

	if (write(cmd_fd[1], &n, sizeof(n)) != (ssize_t)sizeof(n) ||
	    read(ans_fd[0], &ms, sizeof(ms)) != (ssize_t)sizeof(ms)) {
		fprintf(stderr, "spawn-bench: fork+exec helper failed\n");
		exit(1);
	}
	return ms;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = { { "counts", required_argument, 0, 'c' },
					    { "rounds", required_argument, 0, 'r' },
					    { "out", required_argument, 0, 'o' },
					    { "backends", required_argument, 0, 'b' },
					    { "help", no_argument, 0, 'h' },
					    { 0, 0, 0, 0 } };
	int counts[MAX_COUNTS] = { 1, 16, 64, 256 }, nc = 4, rounds = 7, c, i, r, maxn = 0;
	double *tp[MAX_BACKENDS][MAX_COUNTS], *tf[MAX_COUNTS], tcreate[MAX_BACKENDS];
	struct bench_stats sp[MAX_BACKENDS][MAX_COUNTS], sf[MAX_COUNTS];
	enum pvas_backend_kind kinds[MAX_BACKENDS] = { PVAS_BACKEND_AUTO };
	const char *out = NULL, *names[MAX_BACKENDS];
	pvas_group_t *g[MAX_BACKENDS];
	int nb = 1, b;
	struct pvas_group_attr a;
	struct pvas_info in;
	FILE *f;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		char *s, *tok;

		switch (c) {
		case 'c':
			nc = 0;
			s = strdup(optarg);
			for (tok = strtok(s, ","); tok && nc < MAX_COUNTS; tok = strtok(NULL, ","))
				counts[nc++] = atoi(tok);
			free(s);
			break;
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'b':
			nb = 0;
			s = strdup(optarg);
			for (tok = strtok(s, ","); tok && nb < MAX_BACKENDS; tok = strtok(NULL, ",")) {
				if (strcmp(tok, "user") && strcmp(tok, "kmod")) {
					fprintf(stderr, "spawn-bench: bad backend '%s'\n", tok);
					return 1;
				}
				kinds[nb++] = !strcmp(tok, "user") ? PVAS_BACKEND_USER : PVAS_BACKEND_KMOD;
			}
			free(s);
			unsetenv(PVAS_ENV_BACKEND); /* the list, not the environment */
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 1;
		}
	}
	if (optind != argc - 1 || rounds < 1 || nc < 1) {
		fputs(usage, stderr);
		return 1;
	}
	for (i = 0; i < nc; i++) {
		if (counts[i] < 1 || counts[i] > (int)PVAS_MAX_PARTITION_COUNT) {
			fprintf(stderr, "spawn-bench: bad count %d\n", counts[i]);
			return 1;
		}
		if (counts[i] > maxn)
			maxn = counts[i];
		for (b = 0; b < MAX_BACKENDS; b++)
			tp[b][i] = calloc((size_t)rounds, sizeof(double));
		tf[i] = calloc((size_t)rounds, sizeof(double));
	}
	start_forker(argv[optind]);
	for (b = 0; b < nb; b++) {
		pvas_group_attr_init(&a);
		a.partition_count = (unsigned)maxn;
		a.backend = kinds[b];
		tcreate[b] = now_ms();
		if (pvas_create(&a, &g[b])) {
			fprintf(stderr, "spawn-bench: %s\n", pvas_errmsg());
			return 1;
		}
		tcreate[b] = now_ms() - tcreate[b];
		pvas_self(&in); /* the group created last */
		names[b] = in.backend;
		run_pvas(g[b], argv[optind], 1); /* warm the page cache */
	}
	forker(1);
	for (r = 0; r < rounds; r++) {
		fprintf(stderr, "spawn-bench: round %d/%d\n", r + 1, rounds);
		for (i = 0; i < nc; i++) {
			/* Rotate the order of the methods from round to round. */
			for (int k = 0; k <= nb; k++) {
				int m = (k + r) % (nb + 1);

				if (m == nb)
					tf[i][r] = forker(counts[i]);
				else
					tp[m][i][r] = run_pvas(g[m], argv[optind], counts[i]);
			}
		}
	}
	f = out ? fopen(out, "w") : NULL;
	if (out && !f) {
		fprintf(stderr, "spawn-bench: open %s: %s\n", out, strerror(errno));
		return 1;
	}
	for (i = 0; i < nc; i++) {
		for (b = 0; b < nb; b++)
			bench_stats(tp[b][i], (size_t)rounds, &sp[b][i]);
		bench_stats(tf[i], (size_t)rounds, &sf[i]);
	}
	for (int pass = 0; pass < (f ? 2 : 1); pass++) {
		FILE *o = pass ? f : stdout;

		fprintf(o, "# Spawn and reap N tasks: pvas_spawn vs fork+execve\n\n");
		print_machine(o);
		fprintf(o, "Program: `%s`; %d rounds, the methods' order rotating every round; "
			   "medians in ms, [min-max] over rounds.\n",
			argv[optind], rounds);
		for (b = 0; b < nb; b++)
			fprintf(o, "Group on the %s backend created once: %.3f ms, %d partitions.\n",
				names[b], tcreate[b], maxn);
		fprintf(o, "\n| N |");
		for (b = 0; b < nb; b++)
			fprintf(o, " pvas %s | %s/fork |", names[b], names[b]);
		fprintf(o, " fork+exec |\n|---|");
		for (b = 0; b < nb; b++)
			fprintf(o, "---|---|");
		fprintf(o, "---|\n");
		for (i = 0; i < nc; i++) {
			fprintf(o, "| %d |", counts[i]);
			for (b = 0; b < nb; b++)
				fprintf(o, " %.2f [%.2f-%.2f] | %.2f |", sp[b][i].median,
					sp[b][i].min, sp[b][i].max, sp[b][i].median / sf[i].median);
			fprintf(o, " %.2f [%.2f-%.2f] |\n", sf[i].median, sf[i].min, sf[i].max);
		}
	}
	if (f)
		fclose(f);
	close(cmd_fd[1]);
	wait(NULL);
	for (b = 0; b < nb; b++)
		pvas_destroy(g[b], 0);
	return 0;
}
