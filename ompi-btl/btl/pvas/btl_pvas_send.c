/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas send path: prepare_src (in place for larger contiguous data),
 * send and sendi (through the peer's fast box when the message fits one).
 */
#include "opal_config.h"

#include <string.h>

#include "opal/datatype/opal_convertor.h"
#include "opal/datatype/opal_datatype_direct.h"

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"
#include "btl_pvas_frag.h"

/* Hand a filled fragment to the peer: one push onto its mailbox. */
static inline void pvas_frag_post(mca_btl_pvas_frag_t *frag, struct mca_btl_base_endpoint_t *ep,
                                  mca_btl_base_tag_t tag, pvas_queue_t *owner)
{
    mca_btl_pvas_hdr_t *hdr = &frag->hdr;
    uint8_t flags = 0;

    hdr->owner = owner;
    hdr->tag = tag;
    hdr->len = (uint32_t) frag->segments[0].seg_len;
    if (2 == frag->base.des_segment_count) {
        flags = MCA_BTL_PVAS_FLAG_INPLACE;
        hdr->sc_addr = frag->segments[1].seg_addr.pval;
        hdr->sc_len = frag->segments[1].seg_len;
    }
    atomic_store_explicit(&hdr->flags, flags, memory_order_relaxed);
    ep->last_posted = frag;
    ep->last_post = ++frag->post;
    /* the push is a release: everything above is visible to the receiver */
    pvas_queue_push(ep->mailbox, &hdr->item);
}

/* Has the peer handled every fragment this rank posted to its mailbox?
 * The mailbox is a FIFO and the peer flags a fragment complete after its
 * callback, so the last one posted tells; a fragment posted again since
 * (post numbers differ) had come back.  Fragments stay in their free lists'
 * memory, so reading a recycled one is safe. */
static inline bool pvas_mailbox_handled(const struct mca_btl_base_endpoint_t *ep)
{
    const mca_btl_pvas_frag_t *last = ep->last_posted;

    return NULL == last || last->post != ep->last_post ||
           (atomic_load_explicit(&last->hdr.flags, memory_order_acquire) &
            MCA_BTL_PVAS_FLAG_COMPLETE);
}

/* The smallest fragment class that holds total bytes. */
static inline mca_btl_pvas_frag_t *frag_for_size(mca_btl_pvas_component_t *c,
                                                 struct mca_btl_base_module_t *btl,
                                                 struct mca_btl_base_endpoint_t *endpoint,
                                                 size_t total)
{
    if (total <= c->max_inline_send) {
        return mca_btl_pvas_frag_get(&c->frags_inline, endpoint);
    }
    if (total <= btl->btl_eager_limit) {
        return mca_btl_pvas_frag_get(&c->frags_eager, endpoint);
    }
    return mca_btl_pvas_frag_get(&c->frags_max, endpoint);
}

struct mca_btl_base_descriptor_t *mca_btl_pvas_prepare_src(struct mca_btl_base_module_t *btl,
                                                           struct mca_btl_base_endpoint_t *endpoint,
                                                           struct opal_convertor_t *convertor,
                                                           uint8_t order, size_t reserve,
                                                           size_t *size, uint32_t flags)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    mca_btl_pvas_frag_t *frag;
    size_t total = reserve + *size;

    if (OPAL_LIKELY(!opal_convertor_need_buffers(convertor))) {
        void *data_ptr = NULL;

        opal_convertor_get_current_pointer(convertor, &data_ptr);
        if (total <= c->inplace_min_send || 0 == *size ||
            (!c->inplace && total <= btl->btl_max_send_size)) {
            /* small: one contiguous copy is cheaper than a second segment
             * (or in-place sends are disabled) */
            frag = frag_for_size(c, btl, endpoint, total);
            if (OPAL_UNLIKELY(NULL == frag)) {
                return NULL;
            }
            if (*size) {
                opal_datatype_direct_memcpy(frag->data + reserve, data_ptr, *size);
            }
            frag->segments[0].seg_len = total;
        } else {
            /* in place: the receiver copies straight out of the user's
             * buffer, and the send completes when the fragment comes back;
             * or mca_btl_pvas_send copies the data from there into the
             * peer's fast box */
            if (OPAL_LIKELY(reserve <= c->max_inline_send)) {
                frag = mca_btl_pvas_frag_get(&c->frags_inline, endpoint);
            } else {
                frag = mca_btl_pvas_frag_get(&c->frags_eager, endpoint);
            }
            if (OPAL_UNLIKELY(NULL == frag)) {
                return NULL;
            }
            frag->segments[0].seg_len = reserve;
            frag->segments[1].seg_addr.pval = data_ptr;
            frag->segments[1].seg_len = *size;
            frag->base.des_segment_count = 2;
        }
    } else {
        /* non-contiguous: pack into the fragment */
        struct iovec iov;
        uint32_t iov_count = 1;
        int rc;

        frag = frag_for_size(c, btl, endpoint, total);
        if (OPAL_UNLIKELY(NULL == frag)) {
            return NULL;
        }
        if (*size > frag->capacity - reserve) {
            *size = frag->capacity - reserve;
        }
        iov.iov_base = (IOVBASE_TYPE *) (frag->data + reserve);
        iov.iov_len = *size;
        rc = opal_convertor_pack(convertor, &iov, &iov_count, size);
        if (OPAL_UNLIKELY(rc < 0)) {
            mca_btl_pvas_frag_return(frag);
            return NULL;
        }
        frag->segments[0].seg_len = reserve + *size;
    }

    frag->base.order = order;
    frag->base.des_flags = flags;
    return &frag->base;
}

/* Copy header + payload (packed if need be) to dst. */
static inline void pvas_sendi_fill(unsigned char *dst, struct opal_convertor_t *convertor,
                                   const void *header, size_t header_size, size_t payload_size)
{
    memcpy(dst, header, header_size);
    if (0 == payload_size) {
        return;
    }
    if (!opal_convertor_need_buffers(convertor)) {
        void *data_ptr = NULL;

        opal_convertor_get_current_pointer(convertor, &data_ptr);
        opal_datatype_direct_memcpy(dst + header_size, data_ptr, payload_size);
    } else {
        struct iovec iov = {.iov_base = (IOVBASE_TYPE *) (dst + header_size),
                            .iov_len = payload_size};
        uint32_t iov_count = 1;
        size_t max_data = payload_size;

        (void) opal_convertor_pack(convertor, &iov, &iov_count, &max_data);
        assert(max_data == payload_size);
    }
}

/* Ask the peer for a fast box: a control message (MCA_BTL_TAG_PVAS)
 * carrying this rank's task id.  Best effort: without a fragment, ask at a
 * later send. */
static void pvas_fbox_request(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *ep)
{
    mca_btl_pvas_frag_t *frag = (mca_btl_pvas_frag_t *) mca_btl_pvas_alloc(
        btl, ep, MCA_BTL_NO_ORDER, sizeof(int32_t), MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    int32_t task_id = mca_btl_pvas_component.task_id;

    if (NULL == frag) {
        return;
    }
    memcpy(frag->data, &task_id, sizeof(task_id));
    ep->fbox_requested = true;
    pvas_frag_post(frag, ep, MCA_BTL_TAG_PVAS, mca_btl_pvas_component.lazy_returns);
}

/* The peer's fast box for this rank, or NULL (none yet, refused, or none
 * configured).  Asks for one after fbox_threshold sends. */
static inline pvas_fbox_writer_t *pvas_fbox_of(struct mca_btl_base_module_t *btl,
                                               struct mca_btl_base_endpoint_t *ep)
{
    pvas_fbox_t *box;

    if (OPAL_LIKELY(NULL != ep->fbox.box)) {
        return ep->fbox.box == MCA_BTL_PVAS_FBOX_REFUSED ? NULL : &ep->fbox;
    }
    if (NULL == ep->fbox_slot || 0 == mca_btl_pvas_component.fbox_size) {
        return NULL;
    }
    if (!ep->fbox_requested) {
        if (++ep->fbox_sends >= mca_btl_pvas_component.fbox_threshold) {
            pvas_fbox_request(btl, ep);
        }
        return NULL;
    }
    box = atomic_load_explicit(ep->fbox_slot, memory_order_acquire);
    if (NULL == box) {
        return NULL; /* not made yet */
    }
    ep->fbox.write = ep->fbox.read_cache = 0;
    ep->fbox.box = box;
    return box == MCA_BTL_PVAS_FBOX_REFUSED ? NULL : &ep->fbox;
}

/* Room for length bytes (at most max) in the peer's fast box: where to
 * write them, with the ring's lock held until pvas_fbox_publish; NULL (no
 * lock held): use the mailbox. */
static inline unsigned char *pvas_fbox_begin(struct mca_btl_base_module_t *btl,
                                             struct mca_btl_base_endpoint_t *ep, size_t length,
                                             size_t max)
{
    pvas_fbox_writer_t *w;
    unsigned char *dst;

    if (length > max) {
        return NULL;
    }
    if (!pvas_lock_try(&ep->fbox_lock)) {
        return NULL; /* another thread writes this ring: take the mailbox */
    }
    if (NULL != (w = pvas_fbox_of(btl, ep)) && NULL != (dst = pvas_fbox_reserve(w, length))) {
        return dst;
    }
    pvas_unlock(&ep->fbox_lock);
    return NULL;
}

/* Publish the entry pvas_fbox_begin reserved and release the ring. */
static inline void pvas_fbox_publish(struct mca_btl_base_endpoint_t *ep, size_t length,
                                     mca_btl_base_tag_t tag)
{
    pvas_fbox_commit(&ep->fbox, length, tag);
    ep->fbox_sent++;
    pvas_unlock(&ep->fbox_lock);
}

/* A fragment that fits the peer's fast box is copied into it: its header
 * segment and, for one prepared in place, the user's data straight from
 * their buffer (up to fbox_max_inplace bytes: above that the receiver's
 * one copy from there costs less).  No cache line of the fragment crosses
 * to the peer. */
static inline bool pvas_fbox_send(struct mca_btl_base_module_t *btl,
                                  struct mca_btl_base_endpoint_t *ep, mca_btl_pvas_frag_t *frag,
                                  mca_btl_base_tag_t tag)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    size_t head = frag->segments[0].seg_len, length = head, max = c->fbox_max_send;
    unsigned char *dst;

    if (2 == frag->base.des_segment_count) {
        length += frag->segments[1].seg_len;
        max = c->fbox_max_inplace;
    }
    if (NULL == (dst = pvas_fbox_begin(btl, ep, length, max))) {
        return false;
    }
    memcpy(dst, frag->segments[0].seg_addr.pval, head);
    if (length > head) {
        opal_datatype_direct_memcpy(dst + head, frag->segments[1].seg_addr.pval, length - head);
    }
    pvas_fbox_publish(ep, length, tag);
    return true;
}

int mca_btl_pvas_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_pvas_frag_t *frag = (mca_btl_pvas_frag_t *) descriptor;
    int des_flags = frag->base.des_flags;

    /* through the fast box only when that keeps this rank's sends to the
     * peer in order, as through btl/vader's FIFO: a long message's short
     * last fragment must not arrive before the others (with threads, the
     * last-posted record is not kept consistently: the mailbox then) */
    if (!opal_using_threads() && pvas_mailbox_handled(endpoint) &&
        pvas_fbox_send(btl, endpoint, frag, tag)) {
        if (!(des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK)) {
            /* the data left with the copy: done now, as btl/self's send
             * (1: no callback; ob1 completes the request itself) */
            if (des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
                mca_btl_pvas_frag_return(frag);
            }
            return 1;
        }
        /* the callback at this rank's next progress call, as for a
         * fragment the peer gave back */
        atomic_store_explicit(&frag->hdr.flags, MCA_BTL_PVAS_FLAG_COMPLETE, memory_order_relaxed);
        pvas_queue_push(mca_btl_pvas_component.mailbox, &frag->hdr.item);
        return OPAL_SUCCESS;
    }
    /* Completion is reported when the fragment comes back: it may point
     * into the user's buffer (in place), and ob1 needs the callback anyway
     * (the same work-around as btl/vader, ompi#3845). */
    frag->base.des_flags |= MCA_BTL_DES_SEND_ALWAYS_CALLBACK;
    pvas_frag_post(frag, endpoint, tag, mca_btl_pvas_component.mailbox);
    return OPAL_SUCCESS;
}

int mca_btl_pvas_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       struct opal_convertor_t *convertor, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                       mca_btl_base_descriptor_t **descriptor)
{
    size_t length = header_size + payload_size;
    unsigned char *dst =
        pvas_fbox_begin(btl, endpoint, length, mca_btl_pvas_component.fbox_max_send);
    mca_btl_pvas_frag_t *frag;

    if (NULL != dst) {
        /* sendi through the fast box */
        pvas_sendi_fill(dst, convertor, header, header_size, payload_size);
        pvas_fbox_publish(endpoint, length, tag);
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_SUCCESS;
    }
    /* the caller considers the data sent on return: always copy */
    flags = (flags & ~MCA_BTL_DES_SEND_ALWAYS_CALLBACK) | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    frag = (mca_btl_pvas_frag_t *) mca_btl_pvas_alloc(btl, endpoint, order, length, flags);
    if (OPAL_UNLIKELY(NULL == frag)) {
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }

    pvas_sendi_fill(frag->data, convertor, header, header_size, payload_size);
    frag->segments[0].seg_len = length;
    /* nobody waits for this fragment: it comes back to the lazy queue,
     * drained every few progress calls or when the free list runs dry,
     * which keeps its return off the critical path */
    pvas_frag_post(frag, endpoint, tag, mca_btl_pvas_component.lazy_returns);
    return OPAL_SUCCESS;
}
