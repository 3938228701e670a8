/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas fragments.
 *
 * A fragment is owned by its sender and lives in the sender's memory (an
 * opal_free_list of malloc'ed elements).  Sending pushes &frag->hdr.item
 * onto the receiver's mailbox; the receiver runs the active-message
 * callback straight out of the fragment (and, for an in-place send, out of
 * the sender's user buffer), sets MCA_BTL_PVAS_FLAG_COMPLETE and pushes the
 * header back onto hdr.owner, the sender's mailbox.  The sender's progress
 * then fires the send-completion callback and recycles the fragment.
 */
#ifndef MCA_BTL_PVAS_FRAG_H
#define MCA_BTL_PVAS_FRAG_H

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"

enum {
    MCA_BTL_PVAS_FLAG_COMPLETE = 0x1, /* returned to its owner */
    MCA_BTL_PVAS_FLAG_INPLACE = 0x2,  /* second segment: sender's user buffer */
};

/* The part of a fragment the receiver reads (and links). */
typedef struct mca_btl_pvas_hdr_t {
    pvas_qitem_t item;                /* must be first */
    pvas_queue_t *owner;              /* sender's mailbox: where to return it */
    struct mca_btl_pvas_frag_t *frag; /* back pointer */
    void *sc_addr;                    /* in-place data (FLAG_INPLACE) */
    size_t sc_len;
    uint32_t len; /* bytes in data[] */
    mca_btl_base_tag_t tag;
    _Atomic uint8_t flags;
} mca_btl_pvas_hdr_t;

typedef struct mca_btl_pvas_frag_t {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segments[2];
    struct mca_btl_base_endpoint_t *endpoint;
    opal_free_list_t *my_list;
    size_t capacity; /* bytes of data[] */
    uint64_t post;   /* posts of this fragment so far (endpoint->last_post) */
    /* the header on its own cache line: the receiver links and flags it */
    _Alignas(PVAS_QUEUE_CACHE_LINE) mca_btl_pvas_hdr_t hdr;
    _Alignas(16) unsigned char data[];
} mca_btl_pvas_frag_t;

OBJ_CLASS_DECLARATION(mca_btl_pvas_frag_t);

/* free-list item initialiser: ctx is the list (its capacity is derived) */
int mca_btl_pvas_frag_init(opal_free_list_item_t *item, void *ctx);

static inline mca_btl_pvas_frag_t *mca_btl_pvas_frag_get(opal_free_list_t *list,
                                                         struct mca_btl_base_endpoint_t *endpoint)
{
    mca_btl_pvas_frag_t *frag = (mca_btl_pvas_frag_t *) opal_free_list_get(list);

    if (OPAL_UNLIKELY(NULL == frag) && mca_btl_pvas_drain_lazy_returns() > 0) {
        /* the list ran dry while sendi fragments waited on the lazy queue */
        frag = (mca_btl_pvas_frag_t *) opal_free_list_get(list);
    }
    if (OPAL_LIKELY(NULL != frag)) {
        frag->endpoint = endpoint;
        frag->segments[0].seg_addr.pval = frag->data;
        frag->segments[0].seg_len = 0;
        frag->base.des_segments = frag->segments;
        frag->base.des_segment_count = 1;
    }
    return frag;
}

static inline void mca_btl_pvas_frag_return(mca_btl_pvas_frag_t *frag)
{
    opal_free_list_return(frag->my_list, (opal_free_list_item_t *) frag);
}

/* The fragment came back from the receiver (sender's progress). */
static inline void mca_btl_pvas_frag_complete(mca_btl_pvas_frag_t *frag)
{
    /* the callback may free the descriptor: read the flags first */
    int des_flags = frag->base.des_flags;

    if ((des_flags & MCA_BTL_DES_SEND_ALWAYS_CALLBACK) && NULL != frag->base.des_cbfunc) {
        frag->base.des_cbfunc(&mca_btl_pvas.super, frag->endpoint, &frag->base, OPAL_SUCCESS);
    }
    if (des_flags & MCA_BTL_DES_FLAGS_BTL_OWNERSHIP) {
        mca_btl_pvas_frag_return(frag);
    }
}

#endif /* MCA_BTL_PVAS_FRAG_H */
