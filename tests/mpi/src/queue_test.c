/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of btl/pvas's mailbox (ompi-btl/btl/pvas/btl_pvas_queue.h), no
 * MPI: 4 producer threads push 200,000 items each into one queue while a
 * consumer pops; every item must arrive exactly once and each producer's
 * items in order.  Then the fragment round trip: items go to a second
 * queue and come back ("returned fragments").  Prints TAP.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "btl_pvas_queue.h"

#define NPROD 4
#define PER_PROD 200000

struct item {
	pvas_qitem_t q; /* first */
	int producer;
	long seq;
};

static pvas_queue_t mailbox;
static struct item *items;

static void *producer(void *arg)
{
	int p = (int)(intptr_t)arg;

	for (long i = 0; i < PER_PROD; i++) {
		struct item *it = &items[(size_t)p * PER_PROD + (size_t)i];

		it->producer = p;
		it->seq = i;
		pvas_queue_push(&mailbox, &it->q);
	}
	return NULL;
}

static int test_mpsc(void)
{
	pthread_t th[NPROD];
	long next[NPROD] = {0}, got = 0, errors = 0, empty_polls = 0;

	items = calloc((size_t)NPROD * PER_PROD, sizeof(*items));
	if (!items)
		return 0;
	pvas_queue_init(&mailbox);
	for (int p = 0; p < NPROD; p++)
		pthread_create(&th[p], NULL, producer, (void *)(intptr_t)p);
	while (got < (long)NPROD * PER_PROD) {
		struct item *it = (struct item *)pvas_queue_pop(&mailbox);

		if (!it) {
			empty_polls++;
			continue;
		}
		if (it->producer < 0 || it->producer >= NPROD || it->seq != next[it->producer])
			errors++;
		else
			next[it->producer]++;
		got++;
	}
	for (int p = 0; p < NPROD; p++)
		pthread_join(th[p], NULL);
	if (pvas_queue_pop(&mailbox) != NULL)
		errors++;
	printf("# %ld items, %ld out of order, %ld empty polls\n", got, errors, empty_polls);
	free(items);
	return errors == 0;
}

/* Ping-pong of items between two queues, two threads (send and return). */
static pvas_queue_t q_a, q_b;
#define NFRAG 64
#define ROUNDS 200000

static void *returner(void *arg)
{
	long n = 0;

	(void)arg;
	while (n < ROUNDS) {
		pvas_qitem_t *it = pvas_queue_pop(&q_b);

		if (!it)
			continue;
		((struct item *)it)->seq++;
		pvas_queue_push(&q_a, it);
		n++;
	}
	return NULL;
}

static int test_roundtrip(void)
{
	struct item frags[NFRAG];
	pthread_t th;
	long sent = 0, back = 0, sum = 0;

	pvas_queue_init(&q_a);
	pvas_queue_init(&q_b);
	for (int i = 0; i < NFRAG; i++)
		frags[i].seq = 0;
	pthread_create(&th, NULL, returner, NULL);
	for (; sent < NFRAG; sent++)
		pvas_queue_push(&q_b, &frags[sent].q);
	while (back < ROUNDS) {
		pvas_qitem_t *it = pvas_queue_pop(&q_a);

		if (!it)
			continue;
		back++;
		if (sent < ROUNDS) {
			pvas_queue_push(&q_b, it);
			sent++;
		}
	}
	pthread_join(th, NULL);
	for (int i = 0; i < NFRAG; i++)
		sum += frags[i].seq;
	printf("# %ld round trips, %ld returns counted\n", back, sum);
	return sum == ROUNDS && pvas_queue_pop(&q_a) == NULL && pvas_queue_pop(&q_b) == NULL;
}

int main(void)
{
	printf("1..2\n");
	printf("%s 1 - mpsc queue: 4 producers x %d items, FIFO per producer\n",
	       test_mpsc() ? "ok" : "not ok", PER_PROD);
	printf("%s 2 - fragment round trip through two queues\n",
	       test_roundtrip() ? "ok" : "not ok");
	return 0;
}
