/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas: the per-process mailbox, a lock-free multi-producer
 * single-consumer queue of fragment headers.
 *
 * Every rank of a PVAS group shares one virtual address space, so the queue
 * holds plain pointers: the mailbox lives in the receiver's malloc'ed memory,
 * the items (fragment headers) in their sender's.  No shared-memory segment
 * and no offset translation.
 *
 * Producers (any thread of any rank): one atomic exchange on the tail, then
 * one store that links the previous tail (or sets the head when the queue
 * was empty).  The consumer (the owner, serialised by the progress lock)
 * never spins: when the item at the head has no successor yet but is no
 * longer the tail, a producer is between its exchange and its link; pop
 * returns NULL and the next progress call picks the item up.  A producer
 * that dies in that window therefore stalls only this queue, never a thread.
 *
 * This header depends on C11 <stdatomic.h> only (no Open MPI header), so it
 * is unit-tested stand-alone (tests/mpi/queue_test.c).
 */
#ifndef MCA_BTL_PVAS_QUEUE_H
#define MCA_BTL_PVAS_QUEUE_H

#include <stdatomic.h>
#include <stddef.h>

#define PVAS_QUEUE_CACHE_LINE 64

typedef struct pvas_qitem {
    _Atomic(struct pvas_qitem *) next;
} pvas_qitem_t;

typedef struct pvas_queue {
    /* Head and tail share one line: a push onto an empty queue writes both
     * and the pop of its only item writes both, so one line moves between
     * producer and consumer per message instead of two. */
    _Alignas(PVAS_QUEUE_CACHE_LINE) _Atomic(pvas_qitem_t *) head;
    _Atomic(pvas_qitem_t *) tail;
    char pad[PVAS_QUEUE_CACHE_LINE - 2 * sizeof(void *)];
} pvas_queue_t;

static inline void pvas_queue_init(pvas_queue_t *q)
{
    atomic_init(&q->head, NULL);
    atomic_init(&q->tail, NULL);
}

/* Any thread, any process of the group.  Everything the caller wrote into
 * the item before the push is visible to the consumer after its pop. */
static inline void pvas_queue_push(pvas_queue_t *q, pvas_qitem_t *item)
{
    pvas_qitem_t *prev;

    atomic_store_explicit(&item->next, NULL, memory_order_relaxed);
    prev = atomic_exchange_explicit(&q->tail, item, memory_order_acq_rel);
    if (NULL == prev) {
        atomic_store_explicit(&q->head, item, memory_order_release);
    } else {
        atomic_store_explicit(&prev->next, item, memory_order_release);
    }
}

/* Cheap emptiness hint for the progress loop (may be stale). */
static inline int pvas_queue_maybe_nonempty(pvas_queue_t *q)
{
    return NULL != atomic_load_explicit(&q->head, memory_order_relaxed);
}

/* Single consumer.  Returns the oldest item, or NULL when the queue is empty
 * or its head is not linked yet (try again later). */
static inline pvas_qitem_t *pvas_queue_pop(pvas_queue_t *q)
{
    pvas_qitem_t *item, *next, *expected;

    item = atomic_load_explicit(&q->head, memory_order_acquire);
    if (NULL == item) {
        return NULL;
    }

    next = atomic_load_explicit(&item->next, memory_order_acquire);
    if (NULL != next) {
        /* nobody else writes head while item is queued and not the tail */
        atomic_store_explicit(&q->head, next, memory_order_relaxed);
        return item;
    }

    /* item looks like the last one: clear head, then take item out by
     * resetting the tail.  While the tail is not NULL no producer writes
     * head (they link prev->next instead), so clearing it first is safe;
     * once the tail is NULL the next producer sets head itself. */
    atomic_store_explicit(&q->head, NULL, memory_order_relaxed);
    expected = item;
    if (atomic_compare_exchange_strong_explicit(&q->tail, &expected, NULL, memory_order_acq_rel,
                                                memory_order_acquire)) {
        return item;
    }
    /* A producer swapped the tail (its prev is item) and is about to link
     * item->next: item stays at the head. */
    next = atomic_load_explicit(&item->next, memory_order_acquire);
    atomic_store_explicit(&q->head, NULL != next ? next : item, memory_order_relaxed);
    return NULL != next ? item : NULL;
}

#endif /* MCA_BTL_PVAS_QUEUE_H */
