// SPDX-License-Identifier: GPL-2.0
/*
 * A PVAS task (spawned by tests/kmod/confine_e2e on the kmod backend):
 * checks that what the kernel places for it -- mmap, malloc, pthread
 * stacks and their malloc arenas, a dlopen()ed library, an mremap that
 * moves -- lies in its own partition, and that MAP_FIXED into the next
 * partition is refused.  Exit 0 if so.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pvas.h"

static struct pvas_info me;
static int bad;

static void check(const char *what, const void *p)
{
	uintptr_t a = (uintptr_t)p;

	if (a < me.part_lo || a >= me.part_hi) {
		fprintf(stderr, "task %d: %s at %p outside [%#lx, %#lx)\n", me.task_id, what, p,
			(unsigned long)me.part_lo, (unsigned long)me.part_hi);
		bad++;
	}
}

static void *thread_main(void *arg)
{
	int local = 0;
	void *m = malloc(200000), *s = malloc(64);

	(void)arg;
	check("thread stack", &local);
	check("thread malloc (large)", m);
	check("thread malloc (arena)", s);
	free(m);
	free(s);
	return NULL;
}

int main(void)
{
	pthread_t t[4];
	char line[512], *p;
	void *h, *sym, *q;
	Dl_info di;
	FILE *f;
	int i, found = 0;

	if (pvas_self(&me) || me.task_id < 0) {
		fprintf(stderr, "not a task: %s\n", pvas_errmsg());
		return 2;
	}
	check("main stack", &found);
	check("malloc", p = malloc(1 << 20));
	check("mmap", q = mmap(NULL, 3 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
	check("mmap shared", mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	mmap((char *)q + (1 << 20), 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	check("mremap", mremap(q, 1 << 20, 64 << 20, MREMAP_MAYMOVE));
	for (i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, thread_main, NULL))
			return 3;
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
	if (!h || !(sym = dlsym(h, "cos")) || !dladdr(sym, &di)) {
		fprintf(stderr, "dlopen libm: %s\n", dlerror());
		return 4;
	}
	check("dlopen libm", di.dli_fbase);
	if (me.task_id + 1 < (int)me.partition_count &&
	    mmap((void *)(me.part_hi + (1 << 20)), 4096, PROT_READ,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
		fprintf(stderr, "MAP_FIXED into the next partition succeeded\n");
		bad++;
	}
	/* /proc/self/maps: libm is mapped in our partition. */
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (strstr(line, "libm.so") && sscanf(line, "%lx-%lx", &s, &e) == 2 &&
		    s >= me.part_lo && e <= me.part_hi)
			found++;
	}
	if (f)
		fclose(f);
	if (!found) {
		fprintf(stderr, "no libm mapping in own partition in /proc/self/maps\n");
		bad++;
	}
	free(p);
	return bad ? 1 : 0;
}
