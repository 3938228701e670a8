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

#define MAX_COUNTS 16

static const char usage[] =
	"Usage: spawn-bench [--counts 1,16,64,256] [--rounds R] [--out FILE] PROGRAM\n"
	"Times starting and reaping N copies of PROGRAM (a PIE) with pvas_spawn and\n"
	"with fork+execve, alternating the two in every round; prints medians.\n"
	"The backend is libpvas's default ($PVAS_BACKEND forces one).\n";

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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
					    { "help", no_argument, 0, 'h' },
					    { 0, 0, 0, 0 } };
	int counts[MAX_COUNTS] = { 1, 16, 64, 256 }, nc = 4, rounds = 7, c, i, r, maxn = 0;
	double *tp[MAX_COUNTS], *tf[MAX_COUNTS];
	const char *out = NULL;
	struct pvas_group_attr a;
	struct pvas_info in;
	pvas_group_t *g;
	double tcreate;
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
		tp[i] = calloc((size_t)rounds, sizeof(double));
		tf[i] = calloc((size_t)rounds, sizeof(double));
	}
	start_forker(argv[optind]);
	pvas_group_attr_init(&a);
	a.partition_count = (unsigned)maxn;
	tcreate = now_ms();
	if (pvas_create(&a, &g)) {
		fprintf(stderr, "spawn-bench: %s\n", pvas_errmsg());
		return 1;
	}
	tcreate = now_ms() - tcreate;
	pvas_self(&in);
	run_pvas(g, argv[optind], 1); /* warm the page cache */
	forker(1);
	for (r = 0; r < rounds; r++) {
		fprintf(stderr, "spawn-bench: round %d/%d\n", r + 1, rounds);
		for (i = 0; i < nc; i++) {
			if (r % 2) {
				tf[i][r] = forker(counts[i]);
				tp[i][r] = run_pvas(g, argv[optind], counts[i]);
			} else {
				tp[i][r] = run_pvas(g, argv[optind], counts[i]);
				tf[i][r] = forker(counts[i]);
			}
		}
	}
	f = out ? fopen(out, "w") : NULL;
	if (out && !f) {
		fprintf(stderr, "spawn-bench: open %s: %s\n", out, strerror(errno));
		return 1;
	}
	for (int pass = 0; pass < (f ? 2 : 1); pass++) {
		FILE *o = pass ? f : stdout;

		fprintf(o, "# Spawn and reap N tasks: pvas_spawn (%s backend) vs fork+execve\n\n",
			in.backend);
		fprintf(o, "Program: `%s`; %d rounds, the two methods alternating; group created "
			   "once (%.3f ms, %u partitions).\n\n",
			argv[optind], rounds, tcreate, in.partition_count);
		fprintf(o, "| N | pvas median ms | pvas min-max | fork+exec median ms | "
			   "fork+exec min-max | pvas/fork | pvas us/task |\n");
		fprintf(o, "|---|---|---|---|---|---|---|\n");
		for (i = 0; i < nc; i++) {
			double mp, mf;

			qsort(tp[i], (size_t)rounds, sizeof(double), cmp);
			qsort(tf[i], (size_t)rounds, sizeof(double), cmp);
			mp = tp[i][rounds / 2];
			mf = tf[i][rounds / 2];
			fprintf(o, "| %d | %.2f | %.2f-%.2f | %.2f | %.2f-%.2f | %.2f | %.0f |\n",
				counts[i], mp, tp[i][0], tp[i][rounds - 1], mf, tf[i][0],
				tf[i][rounds - 1], mp / mf, mp * 1e3 / counts[i]);
		}
	}
	if (f)
		fclose(f);
	close(cmd_fd[1]);
	wait(NULL);
	pvas_destroy(g, 0);
	return 0;
}
