/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas progress: poll the fast boxes, then drain this rank's mailbox.
 * A fast-box entry is a peer's small message (run the active-message
 * callback on it in place, then free its space).  A mailbox item is either
 * a peer's fragment (run the callback, then return the fragment to its
 * owner) or one of ours coming back (complete the send).  Never spins: an
 * empty or not-yet-linked mailbox returns at once.
 */
#include "opal_config.h"

#include <stdlib.h>
#include <string.h>

#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"
#include "btl_pvas_frag.h"

/* A peer (task task_id) asks for a fast box: make the ring, publish it in
 * the table (the peer polls its entry), poll it from now on.  Caller holds
 * the progress lock. */
void mca_btl_pvas_fbox_setup(int task_id)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    pvas_fbox_t *box = MCA_BTL_PVAS_FBOX_REFUSED;
    void *mem = NULL;

    if (NULL == c->fbox_table || task_id < 0 || task_id >= MCA_BTL_PVAS_FBOX_SLOTS ||
        NULL != atomic_load_explicit(&c->fbox_table[task_id], memory_order_relaxed)) {
        return; /* none configured, a bad id, or asked twice */
    }
    if (c->fbox_in_count < c->fbox_max &&
        0 == posix_memalign(&mem, PVAS_FBOX_LINE, pvas_fbox_bytes(c->fbox_size))) {
        /* never freed, like the mailbox: the peer writes into it until it ends */
        box = (pvas_fbox_t *) mem;
        pvas_fbox_init(box, c->fbox_size);
        c->fbox_in[c->fbox_in_count].box = box;
        c->fbox_in[c->fbox_in_count].read = 0;
        c->fbox_in_count++;
        PVAS_VERBOSE(20, "fast box for task %d (%u bytes, %u in use)", task_id, c->fbox_size,
                     c->fbox_in_count);
    } else {
        PVAS_VERBOSE(20, "no fast box for task %d (%u in use, fbox_max %u)", task_id,
                     c->fbox_in_count, c->fbox_max);
    }
    atomic_store_explicit(&c->fbox_table[task_id], box, memory_order_release);
}

/* Run the active-message callback of tag on des. */
static inline void pvas_dispatch(mca_btl_base_tag_t tag, mca_btl_base_descriptor_t *des)
{
    const mca_btl_active_message_callback_t *reg = mca_btl_base_active_message_trigger + tag;

    reg->cbfunc(&mca_btl_pvas.super, tag, des, reg->cbdata);
}

/* Run the callbacks of up to poll_limit fast-box entries (progress lock
 * held). */
static inline int pvas_poll_fboxes(mca_btl_pvas_component_t *c)
{
    int count = 0;

    for (unsigned int i = 0; i < c->fbox_in_count; ++i) {
        pvas_fbox_reader_t *r = &c->fbox_in[i];
        unsigned char *data;
        uint64_t len;
        uint8_t tag;

        for (unsigned int n = 0;
             n < c->poll_limit && NULL != (data = pvas_fbox_peek(r, &len, &tag)); ++n) {
            mca_btl_base_segment_t segment = {.seg_addr.pval = data, .seg_len = (size_t) len};
            mca_btl_base_descriptor_t des = {.des_segments = &segment, .des_segment_count = 1};

            pvas_dispatch(tag, &des);
            pvas_fbox_consume(r, len);
            ++count;
        }
    }
    c->fbox_received += (uint64_t) count;
    return count;
}

static inline void pvas_handle_incoming(mca_btl_pvas_hdr_t *hdr)
{
    mca_btl_base_segment_t segments[2];
    mca_btl_base_descriptor_t des = {.des_segments = segments, .des_segment_count = 1};
    uint8_t flags = atomic_load_explicit(&hdr->flags, memory_order_relaxed);
    pvas_queue_t *owner = hdr->owner;

    segments[0].seg_addr.pval = hdr->frag->data;
    segments[0].seg_len = hdr->len;
    if (flags & MCA_BTL_PVAS_FLAG_INPLACE) {
        segments[1].seg_addr.pval = hdr->sc_addr;
        segments[1].seg_len = hdr->sc_len;
        des.des_segment_count = 2;
    }
    if (OPAL_UNLIKELY(MCA_BTL_TAG_PVAS == hdr->tag)) {
        int32_t task_id = -1;

        if (hdr->len >= sizeof(task_id)) {
            memcpy(&task_id, hdr->frag->data, sizeof(task_id));
        }
        mca_btl_pvas_fbox_setup(task_id);
    } else {
        pvas_dispatch(hdr->tag, &des);
    }

    /* done with the sender's memory: give the fragment back */
    atomic_store_explicit(&hdr->flags, flags | MCA_BTL_PVAS_FLAG_COMPLETE, memory_order_relaxed);
    pvas_queue_push(owner, &hdr->item);
}

/* Recycle the sendi fragments the receivers gave back.  The lazy queue has
 * its own consumer lock, held only here: popping the queue and returning
 * fragments to their free lists runs no callback (sendi fragments have
 * none) and takes no other lock, so a thread may wait for it.  The progress
 * loop only tries (wait false); an allocation that found its list empty
 * waits (wait true), so that it gets the fragments back even when another
 * thread, or its own progress loop further up the stack (ob1 sending an
 * ACK from a match callback), is in the progress loop: ob1 retries an ACK
 * or FIN that found no fragment only from completion callbacks, and these
 * fragments make none. */
static int pvas_drain_lazy(mca_btl_pvas_component_t *c, bool wait)
{
    int count = 0;
    pvas_qitem_t *item;

    if (NULL == c->lazy_returns || !pvas_queue_maybe_nonempty(c->lazy_returns)) {
        return 0;
    }
    if (wait) {
        pvas_lock(&c->lazy_lock); /* a short wait: the holder only pops the queue */
    } else if (!pvas_lock_try(&c->lazy_lock)) {
        return 0;
    }
    while (NULL != (item = pvas_queue_pop(c->lazy_returns))) {
        mca_btl_pvas_frag_complete(((mca_btl_pvas_hdr_t *) item)->frag);
        ++count;
    }
    pvas_unlock(&c->lazy_lock);
    return count;
}

int mca_btl_pvas_drain_lazy_returns(void)
{
    return pvas_drain_lazy(&mca_btl_pvas_component, true);
}

int mca_btl_pvas_component_progress(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    pvas_queue_t *q = c->mailbox;
    bool lazy = 0 == (++c->progress_calls & 15);
    int count = 0;

    if (OPAL_UNLIKELY(NULL == q)) {
        return 0;
    }
    if (0 == c->fbox_in_count && !pvas_queue_maybe_nonempty(q) &&
        !(lazy && pvas_queue_maybe_nonempty(c->lazy_returns))) {
        return 0;
    }
    /* one consumer per mailbox and per fast box */
    if (!pvas_lock_try(&c->progress_lock)) {
        return 0;
    }
    count = pvas_poll_fboxes(c);
    if (lazy) {
        (void) pvas_drain_lazy(c, false);
    }
    for (unsigned int n = 0; n < c->poll_limit; ++n) {
        pvas_qitem_t *item = pvas_queue_pop(q);
        mca_btl_pvas_hdr_t *hdr;

        if (NULL == item) {
            break;
        }
        hdr = (mca_btl_pvas_hdr_t *) item;
        if (atomic_load_explicit(&hdr->flags, memory_order_relaxed) & MCA_BTL_PVAS_FLAG_COMPLETE) {
            mca_btl_pvas_frag_complete(hdr->frag);
        } else {
            pvas_handle_incoming(hdr);
        }
        ++count;
    }
    pvas_unlock(&c->progress_lock);
    return count;
}
