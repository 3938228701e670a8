// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libpvas test suite (kselftest harness, TAP output).  The harness forks
 * each TEST, so each test's process is the root of its own groups.  The
 * task programs are in the same directory as this binary; pvasrun is found
 * through $PVASRUN.  Built twice: plain, and with ASan+UBSan (the root side
 * is then instrumented; tasks never are, see tests/libpvas/README.md).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "pvas.h"

static char bindir[PATH_MAX];

static const char *bin(const char *name)
{
	static char path[4][2 * PATH_MAX];
	static int i;

	if (!bindir[0]) {
		ssize_t n = readlink("/proc/self/exe", bindir, sizeof(bindir) - 1);

		bindir[n > 0 ? n : 0] = 0;
		*strrchr(bindir, '/') = 0;
	}
	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", bindir, name);
	return path[i];
}

static pvas_group_t *group(unsigned count)
{
	struct pvas_group_attr a;
	pvas_group_t *g = NULL;

	pvas_group_attr_init(&a);
	a.partition_count = count;
	a.partition_size = 1UL << 30;
	if (pvas_create(&a, &g))
		fprintf(stderr, "# %s\n", pvas_errmsg());
	return g;
}

/* Spawn n copies of prog with PVAS_RANK/PVAS_SIZE; 0 if all exit 0. */
static int run_tasks(pvas_group_t *g, const char *prog, int n)
{
	char rank[32], size[32], *argv[] = { (char *)prog, NULL };
	char *envp[] = { rank, size, "PATH=/usr/bin:/bin", NULL };
	int i, st, bad = 0, id;

	snprintf(size, sizeof(size), "PVAS_SIZE=%d", n);
	for (i = 0; i < n; i++) {
		snprintf(rank, sizeof(rank), "PVAS_RANK=%d", i);
		if (pvas_spawn(g, prog, argv, envp, NULL, NULL, &id)) {
			fprintf(stderr, "# spawn %d: %s\n", i, pvas_errmsg());
			return -1;
		}
		if (id != i)
			return -1;
	}
	for (i = 0; i < n; i++) {
		if (pvas_wait(g, -1, &st, 0) < 0)
			return -1;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	return bad;
}

/* Run a shell command line, capturing stdout+stderr into *out (malloc'ed). */
static int sh(const char *cmd, char **out)
{
	FILE *f = popen(cmd, "r");
	size_t cap = 1 << 16, len = 0, n;
	int st;

	*out = malloc(cap);
	while ((n = fread(*out + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 4096)
			*out = realloc(*out, cap *= 2);
	}
	(*out)[len] = 0;
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* pvasrun: $PVASRUN, else the build's (the sanitizer build's for the
 * sanitizer variant of this suite). */
#ifndef PVASRUN_REL
#define PVASRUN_REL "../../bin/pvasrun"
#endif
static const char *pvasrun(void)
{
	const char *p = getenv("PVASRUN");

	return p ? p : bin(PVASRUN_REL);
}

/* A group of `partitions`, n tasks of prog that must all exit 0, no leftovers. */
static void expect_tasks_ok(struct __test_metadata *_metadata, unsigned partitions,
			    const char *prog, int n)
{
	pvas_group_t *g = group(partitions);

	ASSERT_NE(NULL, g);
	EXPECT_EQ(0, run_tasks(g, bin(prog), n));
	EXPECT_EQ(0, pvas_group_ntasks(g));
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

/* Capacity tests, not timed tests: generous limits for loaded CI machines. */
FIXTURE(big)
{
	int unused;
};
FIXTURE_SETUP(big)
{
	self->unused = 0;
}
FIXTURE_TEARDOWN(big)
{
	(void)self;
}

TEST(identity_globals_tls_errno_8_tasks)
{
	expect_tasks_ok(_metadata, 16, "t_identity", 8);
}

TEST(export_pointer_write_visible)
{
	expect_tasks_ok(_metadata, 4, "t_export", 2);
}

TEST(pthreads_inside_tasks)
{
	expect_tasks_ok(_metadata, 4, "t_threads", 4);
}

TEST_F_TIMEOUT(big, malloc_free_64_tasks, 300)
{
	expect_tasks_ok(_metadata, 64, "t_malloc", 64);
}

TEST(fork_exec_inside_task)
{
	expect_tasks_ok(_metadata, 2, "t_forkexec", 1);
}

TEST_F_TIMEOUT(big, pvasrun_256_tasks_one_address_space, 300)
{
	char cmd[4 * PATH_MAX], *out, *line;
	int n = 0, pids[256], i, j, rc;

	snprintf(cmd, sizeof(cmd), "%s -n 256 %s 2>&1", pvasrun(), bin("t_identity"));
	rc = sh(cmd, &out);
	EXPECT_EQ(0, rc);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		int r, t, p, s;

		if (sscanf(line, "rank %d task %d pid %d same_vm_root %d ok", &r, &t, &p, &s) != 4) {
			fprintf(stderr, "# unexpected: %s\n", line);
			continue;
		}
		EXPECT_EQ(1, s);
		EXPECT_EQ(r, t);
		if (n < 256)
			pids[n++] = p;
	}
	ASSERT_EQ(256, n);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			ASSERT_NE(pids[i], pids[j]);
	free(out);
}

TEST(sigsegv_task_reported_others_continue)
{
	char cmd[4 * PATH_MAX], *out;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s -n 4 %s 2>&1", pvasrun(), bin("t_segv"));
	rc = sh(cmd, &out);
	EXPECT_EQ(128 + SIGSEGV, rc);
	EXPECT_NE(NULL, strstr(out, "rank 1 (task 1) killed by signal 11"));
	EXPECT_NE(NULL, strstr(out, "rank 0 done after rank 1 died"));
	EXPECT_NE(NULL, strstr(out, "rank 2 done after rank 1 died"));
	EXPECT_NE(NULL, strstr(out, "rank 3 done after rank 1 died"));
	if (_metadata->passed == 0)
		fprintf(stderr, "# output:\n%s", out);
	free(out);
}

TEST(pvasrun_forwards_sigterm)
{
	char cmd[2 * PATH_MAX], buf[4096];
	int fds[2], st, ready = 0;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		snprintf(cmd, sizeof(cmd), "%s", pvasrun());
		execl(cmd, "pvasrun", "-n", "2", bin("t_signal"), (char *)NULL);
		_exit(99);
	}
	close(fds[1]);
	while (ready < 2 && (n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		buf[len] = 0;
		ready = (strstr(buf, "rank 0 ready") != NULL) + (strstr(buf, "rank 1 ready") != NULL);
	}
	ASSERT_EQ(2, ready);
	kill(pid, SIGTERM);
	while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = 0;
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_NE(NULL, strstr(buf, "rank 0 got SIGTERM"));
	EXPECT_NE(NULL, strstr(buf, "rank 1 got SIGTERM"));
}

/* 1 once pid is asleep in futex(2) (/proc/PID/syscall), 0 after 10 s. */
static int asleep_in_futex(pid_t pid)
{
	struct timespec nap = { 0, 1000000 };
	char path[64], buf[64];
	int i;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	for (i = 0; i < 10000; i++) {
		FILE *f = fopen(path, "r");
		int nr = -1;

		if (f && fgets(buf, sizeof(buf), f))
			nr = atoi(buf);
		if (f)
			fclose(f);
		if (nr == SYS_futex)
			return 1;
		nanosleep(&nap, NULL);
	}
	return 0;
}

/* A task waiting for the export of a task that dies gets ESRCH, no hang. */
TEST(import_from_task_that_dies)
{
	pvas_group_t *g = group(2);
	char *argv0[] = { "t_signal", NULL }, *argv1[] = { "t_import", NULL };
	char *envp[] = { "PVAS_RANK=0", NULL };
	pid_t waiter;
	int st, id;

	ASSERT_NE(NULL, g);
	ASSERT_EQ(0, pvas_spawn(g, bin("t_signal"), argv0, envp, NULL, NULL, &id));
	ASSERT_EQ(0, id);
	ASSERT_EQ(0, pvas_spawn(g, bin("t_import"), argv1, envp, NULL, &waiter, &id));
	ASSERT_EQ(1, id);
	/* Task 0 must end while task 1 waits, not before it looked. */
	EXPECT_EQ(1, asleep_in_futex(waiter));
	EXPECT_EQ(0, pvas_kill(g, 0, SIGKILL));
	EXPECT_EQ(0, pvas_wait(g, 0, &st, 0));
	EXPECT_TRUE(WIFSIGNALED(st));
	EXPECT_EQ(1, pvas_wait(g, 1, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

TEST(stdin_stdout_redirection)
{
	char in[] = "/tmp/pvas-test-in-XXXXXX", out[] = "/tmp/pvas-test-out-XXXXXX", buf[64];
	int ifd = mkstemp(in), ofd = mkstemp(out), st;
	struct pvas_spawn_attr a;
	pvas_group_t *g = group(2);
	char *argv[] = { "t_stdio", NULL };
	ssize_t n;

	ASSERT_NE(NULL, g);
	ASSERT_GE(ifd, 0);
	ASSERT_GE(ofd, 0);
	ASSERT_EQ(12, write(ifd, "hello\nworld\n", 12));
	lseek(ifd, 0, SEEK_SET);
	pvas_spawn_attr_init(&a);
	a.fd_stdin = ifd;
	a.fd_stdout = ofd;
	ASSERT_EQ(0, pvas_spawn(g, bin("t_stdio"), argv, NULL, &a, NULL, NULL));
	ASSERT_EQ(0, pvas_wait(g, -1, &st, 0));
	EXPECT_EQ(0, st);
	n = pread(ofd, buf, sizeof(buf) - 1, 0);
	ASSERT_EQ(12, n);
	buf[n] = 0;
	EXPECT_STREQ("HELLO\nWORLD\n", buf);
	unlink(in);
	unlink(out);
	close(ifd);
	close(ofd);
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

/* Partition reuse: the slot's memory is reclaimed between tasks. */
TEST(partition_reuse_20_times)
{
	pvas_group_t *g = group(1);
	struct pvas_info in;
	char line[512];
	int i;

	ASSERT_NE(NULL, g);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, run_tasks(g, bin("t_threads"), 1));
	ASSERT_EQ(0, pvas_self(&in));
	/* Nothing but the PROT_NONE reservation is left in the partition. */
	FILE *f = fopen("/proc/self/maps", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		if (lo >= in.base && lo < in.base + in.partition_size)
			EXPECT_STREQ("---p", perms);
	}
	fclose(f);
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

TEST(root_identity_and_owner)
{
	pvas_group_t *g = group(2);
	struct pvas_info in;
	int local;

	ASSERT_NE(NULL, g);
	ASSERT_EQ(0, pvas_self(&in));
	EXPECT_EQ(-1, in.task_id);
	EXPECT_EQ(2U, in.partition_count);
	EXPECT_EQ(-1, pvas_owner(&local));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, pvas_owner((void *)(in.base + in.partition_size + 4096)));
	EXPECT_EQ(1, pvas_same_vm(getpid()));
	EXPECT_EQ(0, pvas_same_vm(getppid()));
	EXPECT_EQ(-1, pvas_export(&local));
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

/* ---- error cases: each names the object and the errno, root survives */

static void expect_spawn_error(struct __test_metadata *_metadata, const char *path,
			       char *const argv[], char *const envp[], int want_errno,
			       const char *want_text)
{
	pvas_group_t *g = group(2);

	ASSERT_NE(NULL, g);
	EXPECT_EQ(-1, pvas_spawn(g, path, argv, envp, NULL, NULL, NULL));
	EXPECT_EQ(want_errno, errno);
	EXPECT_NE(NULL, strstr(pvas_errmsg(), want_text))
	{
		fprintf(stderr, "# message: %s\n", pvas_errmsg());
	}
	EXPECT_NE(NULL, strstr(pvas_errmsg(), strerror(want_errno)));
	EXPECT_EQ(0, pvas_group_ntasks(g));
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

static const char *write_file(const char *name, const void *data, size_t len)
{
	static char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/tmp/pvas-test-%d-%s", (int)getpid(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		return NULL;
	close(fd);
	return path;
}

TEST(error_not_pie)
{
	expect_spawn_error(_metadata, bin("t_nopie"), NULL, NULL, ENOEXEC, "not a PIE");
	/* the message says how to fix it */
	expect_spawn_error(_metadata, bin("t_nopie"), NULL, NULL, ENOEXEC,
			   "rebuild with -fPIE -pie, or -static-pie");
}

TEST(error_asan_program)
{
	expect_spawn_error(_metadata, bin("t_asan"), NULL, NULL, ENOEXEC,
			   "built with AddressSanitizer, whose shadow memory is one per address "
			   "space; rebuild without -fsanitize=address");
}

TEST(error_missing_file)
{
	expect_spawn_error(_metadata, "/nonexistent/prog", NULL, NULL, ENOENT,
			   "open: /nonexistent/prog");
}

TEST(error_missing_interpreter)
{
	expect_spawn_error(_metadata, bin("t_badinterp"), NULL, NULL, ENOENT,
			   "open interpreter: /nonexistent/ld-linux-x86-64.so.2");
}

TEST(error_bad_elf_text)
{
	static const char script[] = "#!/bin/sh\n# a script, longer than an ELF header, is not ELF\n"
				     "echo hello from a shell script\nexit 0\n";
	const char *p = write_file("text", script, sizeof(script) - 1);

	ASSERT_NE(NULL, p);
	expect_spawn_error(_metadata, p, NULL, NULL, ENOEXEC, "no ELF magic");
	p = write_file("short", script, 20);
	expect_spawn_error(_metadata, p, NULL, NULL, ENOEXEC, "too short");
	unlink(p);
}

TEST(error_bad_elf_truncated)
{
	Elf64_Ehdr eh;
	const char *p;
	int fd = open(bin("t_stdio"), O_RDONLY);

	ASSERT_EQ((ssize_t)sizeof(eh), read(fd, &eh, sizeof(eh)));
	close(fd);
	p = write_file("trunc", &eh, 40);
	expect_spawn_error(_metadata, p, NULL, NULL, ENOEXEC, "too short");
	p = write_file("nophdr", &eh, sizeof(eh)); /* header only: phdrs missing */
	expect_spawn_error(_metadata, p, NULL, NULL, ENOEXEC, "truncated program headers");
	eh.e_phnum = 0;
	p = write_file("phnum0", &eh, sizeof(eh));
	expect_spawn_error(_metadata, p, NULL, NULL, ENOEXEC, "bad program header table");
	eh.e_phnum = 5;
	eh.e_machine = EM_AARCH64;
	p = write_file("arm", &eh, sizeof(eh));
	expect_spawn_error(_metadata, p, NULL, NULL, ENOEXEC, "not an x86-64");
	unlink(p);
}

TEST(error_argv_too_large)
{
	size_t n = 4UL << 20;
	char *big = malloc(n + 1), *argv[] = { "x", big, NULL }, *envp[] = { big, NULL };

	ASSERT_NE(NULL, big);
	memset(big, 'a', n);
	big[n] = 0;
	expect_spawn_error(_metadata, bin("t_stdio"), argv, NULL, E2BIG, "argv + envp");
	big[1] = '=';
	expect_spawn_error(_metadata, bin("t_stdio"), NULL, envp, E2BIG, "argv + envp");
	free(big);
}

TEST(error_partitions_exhausted)
{
	pvas_group_t *g = group(2);
	char *argv[] = { "t_signal", NULL }, *envp[] = { "PVAS_RANK=0", NULL };
	int st;

	ASSERT_NE(NULL, g);
	ASSERT_EQ(0, pvas_spawn(g, bin("t_signal"), argv, envp, NULL, NULL, NULL));
	ASSERT_EQ(0, pvas_spawn(g, bin("t_signal"), argv, envp, NULL, NULL, NULL));
	EXPECT_EQ(-1, pvas_spawn(g, bin("t_signal"), argv, envp, NULL, NULL, NULL));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_NE(NULL, strstr(pvas_errmsg(), "partitions exhausted"));
	EXPECT_EQ(-1, pvas_destroy(g, 0));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(0, pvas_kill(g, -1, SIGTERM));
	EXPECT_GE(pvas_wait(g, -1, &st, 0), 0);
	EXPECT_GE(pvas_wait(g, -1, &st, 0), 0);
	EXPECT_EQ(-1, pvas_wait(g, -1, &st, 0));
	EXPECT_EQ(ECHILD, errno);
	EXPECT_EQ(0, pvas_destroy(g, 0));
}

TEST(error_bad_group_attributes)
{
	struct pvas_group_attr a;
	pvas_group_t *g;

	pvas_group_attr_init(&a);
	a.partition_size = 3UL << 30;
	EXPECT_EQ(-1, pvas_create(&a, &g));
	EXPECT_EQ(EINVAL, errno);
	a.partition_size = 1UL << 30;
	a.partition_count = 100000;
	EXPECT_EQ(-1, pvas_create(&a, &g));
	EXPECT_EQ(EINVAL, errno);
	setenv(PVAS_ENV_BACKEND, "bogus", 1);
	a.partition_count = 2;
	EXPECT_EQ(-1, pvas_create(&a, &g));
	EXPECT_EQ(EINVAL, errno);
	unsetenv(PVAS_ENV_BACKEND);
}

TEST_HARNESS_MAIN
