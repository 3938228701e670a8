/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of btl/pvas's fast boxes (ompi-btl/btl/pvas/btl_pvas_fbox.h),
 * no MPI: one producer thread writes messages of random length (0 to the
 * largest an entry holds) into one ring while a consumer thread reads them;
 * every message must arrive once, in order, with its tag and bytes intact.
 * Run on a 64-byte ring (every entry wraps or skips, the ring is always
 * full) and on a 4 KiB ring.  Prints TAP.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "btl_pvas_fbox.h"

#define MESSAGES 300000

struct run {
	pvas_fbox_t *box;
	uint64_t size;
	long bad;
	long skips_seen;
};

static uint64_t len_of(long i, uint64_t size)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull;
	return (x >> 40) % (pvas_fbox_max_data(size) + 1);
}

static unsigned char byte_of(long i, uint64_t k)
{
	return (unsigned char)(i * 131 + (long)k * 7 + 1);
}

static void *producer(void *arg)
{
	struct run *r = arg;
	pvas_fbox_writer_t w = {.box = r->box, .write = 0, .read_cache = 0};

	for (long i = 0; i < MESSAGES; i++) {
		uint64_t len = len_of(i, r->size);
		unsigned char *p;

		while (NULL == (p = pvas_fbox_reserve(&w, len)))
			; /* full: the consumer makes room */
		for (uint64_t k = 0; k < len; k++)
			p[k] = byte_of(i, k);
		pvas_fbox_commit(&w, len, (uint8_t)(i & 0xff));
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct run *r = arg;
	pvas_fbox_reader_t rd = {.box = r->box, .read = 0};

	for (long i = 0; i < MESSAGES; i++) {
		uint64_t len, before = rd.read;
		uint8_t tag;
		unsigned char *p;

		while (NULL == (p = pvas_fbox_peek(&rd, &len, &tag)))
			;
		if ((rd.read & ~(r->size - 1)) != (before & ~(r->size - 1)))
			r->skips_seen++;
		if (len != len_of(i, r->size) || tag != (uint8_t)(i & 0xff)) {
			r->bad++;
		} else {
			for (uint64_t k = 0; k < len; k++)
				if (p[k] != byte_of(i, k)) {
					r->bad++;
					break;
				}
		}
		pvas_fbox_consume(&rd, len);
	}
	return NULL;
}

static int run_ring(int n, uint64_t size)
{
	struct run r = {.size = size};
	pthread_t t[2];
	void *mem = NULL;

	if (posix_memalign(&mem, PVAS_FBOX_LINE, pvas_fbox_bytes(size))) {
		printf("not ok %d - fast box of %llu bytes: out of memory\n", n,
		       (unsigned long long)size);
		return 1;
	}
	r.box = mem;
	pvas_fbox_init(r.box, size);
	pthread_create(&t[0], NULL, consumer, &r);
	pthread_create(&t[1], NULL, producer, &r);
	pthread_join(t[1], NULL);
	pthread_join(t[0], NULL);
	/* nothing left, and a reservation beyond the largest entry fails */
	pvas_fbox_reader_t rd = {.box = r.box, .read = atomic_load(&r.box->read)};
	pvas_fbox_writer_t w = {.box = r.box, .write = rd.read, .read_cache = rd.read};
	uint64_t len;
	uint8_t tag;
	int leftover = NULL != pvas_fbox_peek(&rd, &len, &tag);
	int oversize = NULL != pvas_fbox_reserve(&w, pvas_fbox_max_data(size) + 1);

	printf(
	    "%s %d - fast box of %llu bytes: %d messages, %ld bad, %ld lap changes, leftover %d, "
	    "oversize accepted %d\n",
	    r.bad || leftover || oversize || !r.skips_seen ? "not ok" : "ok", n,
	    (unsigned long long)size, MESSAGES, r.bad, r.skips_seen, leftover, oversize);
	free(mem);
	return r.bad || leftover || oversize || !r.skips_seen;
}

int main(void)
{
	int bad = 0;

	alarm(30); /* a lost entry would hang both threads: fail instead */
	printf("1..2\n");
	bad |= run_ring(1, 64);
	bad |= run_ring(2, 4096);
	return bad;
}
