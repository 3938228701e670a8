/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas progress: drain this rank's mailbox.  An item is either a peer's
 * fragment (run the active-message callback, then return the fragment to
 * its owner) or one of ours coming back (complete the send).  Never spins:
 * an empty or not-yet-linked mailbox returns at once.
 */
#include "opal_config.h"

#include "opal/runtime/opal_progress.h"
#include "opal/sys/atomic.h"

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"
#include "btl_pvas_frag.h"

static inline void pvas_handle_incoming(mca_btl_pvas_hdr_t *hdr)
{
    mca_btl_base_segment_t segments[2];
    mca_btl_base_descriptor_t des = {.des_segments = segments, .des_segment_count = 1};
    const mca_btl_active_message_callback_t *reg;
    uint8_t flags = atomic_load_explicit(&hdr->flags, memory_order_relaxed);
    pvas_queue_t *owner = hdr->owner;

    segments[0].seg_addr.pval = hdr->frag->data;
    segments[0].seg_len = hdr->len;
    if (flags & MCA_BTL_PVAS_FLAG_INPLACE) {
        segments[1].seg_addr.pval = hdr->sc_addr;
        segments[1].seg_len = hdr->sc_len;
        des.des_segment_count = 2;
    }
    reg = mca_btl_base_active_message_trigger + hdr->tag;
    reg->cbfunc(&mca_btl_pvas.super, hdr->tag, &des, reg->cbdata);

    /* done with the sender's memory: give the fragment back */
    atomic_store_explicit(&hdr->flags, flags | MCA_BTL_PVAS_FLAG_COMPLETE, memory_order_relaxed);
    pvas_queue_push(owner, &hdr->item);
}

static inline bool pvas_progress_trylock(mca_btl_pvas_component_t *c)
{
    return !opal_using_threads() || 0 == opal_atomic_swap_32(&c->progress_lock, 1);
}

static inline void pvas_progress_unlock(mca_btl_pvas_component_t *c)
{
    if (opal_using_threads()) {
        opal_atomic_wmb();
        c->progress_lock = 0;
    }
}

/* Recycle the sendi fragments the receivers gave back (caller holds the
 * progress lock: one consumer per queue). */
static inline int pvas_drain_lazy_locked(mca_btl_pvas_component_t *c)
{
    int count = 0;
    pvas_qitem_t *item;

    while (NULL != (item = pvas_queue_pop(c->lazy_returns))) {
        mca_btl_pvas_frag_complete(((mca_btl_pvas_hdr_t *) item)->frag);
        ++count;
    }
    return count;
}

int mca_btl_pvas_drain_lazy_returns(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    int count;

    if (NULL == c->lazy_returns || !pvas_queue_maybe_nonempty(c->lazy_returns) ||
        !pvas_progress_trylock(c)) {
        return 0;
    }
    count = pvas_drain_lazy_locked(c);
    pvas_progress_unlock(c);
    return count;
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
    if (!pvas_queue_maybe_nonempty(q) && !(lazy && pvas_queue_maybe_nonempty(c->lazy_returns))) {
        return 0;
    }
    /* one consumer per mailbox */
    if (!pvas_progress_trylock(c)) {
        return 0;
    }
    if (lazy) {
        (void) pvas_drain_lazy_locked(c);
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
    pvas_progress_unlock(c);
    return count;
}
