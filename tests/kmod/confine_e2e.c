// SPDX-License-Identifier: GPL-2.0
/*
 * End to end through libpvas on the kmod backend (run in the guest by
 * tests/kmod/run-guest): tasks check their own confinement (t_confine),
 * and a killed task's partition is reclaimed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvas.h"
#include "kselftest_harness.h"

static char *bin(const char *name)
{
	static char path[4200];
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = 0;
	*(strrchr(self, '/') ? strrchr(self, '/') : self) = 0;
	snprintf(path, sizeof(path), "%s/%s", self, name);
	return path;
}

static pvas_group_t *kmod_group(unsigned int n)
{
	struct pvas_group_attr a;
	pvas_group_t *g = NULL;

	pvas_group_attr_init(&a);
	a.partition_size = 1UL << 30;
	a.partition_count = n;
	a.backend = PVAS_BACKEND_KMOD;
	if (pvas_create(&a, &g))
		fprintf(stderr, "# %s\n", pvas_errmsg());
	return g;
}

TEST(tasks_confined_mmap_threads_dlopen_mremap)
{
	enum { N = 8 };
	char *argv[] = { "t_confine", NULL };
	pvas_group_t *g = kmod_group(N);
	int i, st, id;

	ASSERT_NE(NULL, g);
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, pvas_spawn(g, bin("t_confine"), argv, NULL, NULL, NULL, &id));
	for (i = 0; i < N; i++) {
		ASSERT_LE(0, pvas_wait(g, -1, &st, 0));
		EXPECT_TRUE(WIFEXITED(st));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
	ASSERT_EQ(0, pvas_destroy(g, 0));
}

TEST(killed_task_reclaimed_and_slot_reused)
{
	char *argv[] = { "sleep", "1000", NULL };
	pvas_group_t *g = kmod_group(2);
	int i, st, id;
	pid_t pid;

	ASSERT_NE(NULL, g);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, pvas_spawn(g, bin("t_sleep"), argv, NULL, NULL, &pid, &id));
		EXPECT_EQ(0, id);
		usleep(100000);
		ASSERT_EQ(0, pvas_kill(g, id, SIGKILL));
		ASSERT_EQ(id, pvas_wait(g, id, &st, 0));
		EXPECT_TRUE(WIFSIGNALED(st));
	}
	ASSERT_EQ(0, pvas_destroy(g, 0));
}

TEST_HARNESS_MAIN
