/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas send path: prepare_src (in place for contiguous data), send,
 * sendi.
 */
#include "opal_config.h"

#include <string.h>

#include "opal/datatype/opal_convertor.h"

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
    /* the push is a release: everything above is visible to the receiver */
    pvas_queue_push(ep->mailbox, &hdr->item);
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
        if (total <= c->max_inline_send || 0 == *size ||
            (!c->inplace && total <= btl->btl_max_send_size)) {
            /* small: one contiguous copy is cheaper than a second segment
             * (or in-place sends are disabled) */
            frag = frag_for_size(c, btl, endpoint, total);
            if (OPAL_UNLIKELY(NULL == frag)) {
                return NULL;
            }
            if (*size) {
                memcpy(frag->data + reserve, data_ptr, *size);
            }
            frag->segments[0].seg_len = total;
        } else {
            /* in place: the receiver copies straight out of the user's
             * buffer; the send completes when the fragment comes back */
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

int mca_btl_pvas_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag)
{
    mca_btl_pvas_frag_t *frag = (mca_btl_pvas_frag_t *) descriptor;

    (void) btl;
    /* Completion is always reported when the fragment comes back: it may
     * point into the user's buffer (in place), and ob1 needs the callback
     * anyway (the same work-around as btl/vader, ompi#3845). */
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
    mca_btl_pvas_frag_t *frag;

    /* the caller considers the data sent on return: always copy */
    flags = (flags & ~MCA_BTL_DES_SEND_ALWAYS_CALLBACK) | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP;
    frag = (mca_btl_pvas_frag_t *) mca_btl_pvas_alloc(btl, endpoint, order, length, flags);
    if (OPAL_UNLIKELY(NULL == frag) && mca_btl_pvas_drain_lazy_returns() > 0) {
        frag = (mca_btl_pvas_frag_t *) mca_btl_pvas_alloc(btl, endpoint, order, length, flags);
    }
    if (OPAL_UNLIKELY(NULL == frag)) {
        if (NULL != descriptor) {
            *descriptor = NULL;
        }
        return OPAL_ERR_OUT_OF_RESOURCE;
    }

    memcpy(frag->data, header, header_size);
    if (payload_size) {
        if (!opal_convertor_need_buffers(convertor)) {
            void *data_ptr = NULL;

            opal_convertor_get_current_pointer(convertor, &data_ptr);
            memcpy(frag->data + header_size, data_ptr, payload_size);
        } else {
            struct iovec iov = {.iov_base = (IOVBASE_TYPE *) (frag->data + header_size),
                                .iov_len = payload_size};
            uint32_t iov_count = 1;
            size_t max_data = payload_size;

            (void) opal_convertor_pack(convertor, &iov, &iov_count, &max_data);
            assert(max_data == payload_size);
        }
    }
    frag->segments[0].seg_len = length;
    /* nobody waits for this fragment: it comes back to the lazy queue,
     * drained every few progress calls or when the free list runs dry,
     * which keeps its return off the critical path */
    pvas_frag_post(frag, endpoint, tag, mca_btl_pvas_component.lazy_returns);
    return OPAL_SUCCESS;
}
