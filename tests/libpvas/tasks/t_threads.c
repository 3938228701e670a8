// SPDX-License-Identifier: LGPL-2.1-or-later
/* pthreads inside a task: TLS per thread, a shared counter, join. */
#include <pthread.h>

#include "task_util.h"

#define NTHREADS 8
static __thread long tls_sum;
static _Atomic long total;

static void *work(void *arg)
{
	long id = (long)arg, i;
	char *p;

	for (i = 0; i < 100000; i++)
		tls_sum += id;
	p = malloc(1 << 20); /* thread arenas use mmap, not brk */
	if (!p)
		return (void *)1;
	memset(p, (int)id, 1 << 20);
	free(p);
	atomic_fetch_add(&total, tls_sum);
	return tls_sum == id * 100000 ? NULL : (void *)1;
}

int main(void)
{
	pthread_t th[NTHREADS];
	long i, want = 0;
	void *ret;

	for (i = 0; i < NTHREADS; i++)
		CHECK(pthread_create(&th[i], NULL, work, (void *)i) == 0);
	for (i = 0; i < NTHREADS; i++) {
		CHECK(pthread_join(th[i], &ret) == 0);
		CHECK(ret == NULL);
		want += i * 100000;
	}
	CHECK(atomic_load(&total) == want && tls_sum == 0);
	return 0;
}
