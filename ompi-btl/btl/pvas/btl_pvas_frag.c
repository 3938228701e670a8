/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/* btl/pvas fragments: class and free-list initialiser. */
#include "opal_config.h"

#include "btl_pvas.h"
#include "btl_pvas_frag.h"

static void mca_btl_pvas_frag_construct(opal_object_t *obj)
{
    mca_btl_pvas_frag_t *frag = (mca_btl_pvas_frag_t *) obj;

    frag->hdr.frag = frag;
    atomic_init(&frag->hdr.item.next, NULL);
    atomic_init(&frag->hdr.flags, 0);
    frag->segments[0].seg_addr.pval = frag->data;
    frag->segments[0].seg_len = 0;
    frag->base.des_segments = frag->segments;
    frag->base.des_segment_count = 1;
    frag->base.des_flags = 0;
    frag->my_list = NULL;
    frag->capacity = 0;
}

OBJ_CLASS_INSTANCE(mca_btl_pvas_frag_t, mca_btl_base_descriptor_t, mca_btl_pvas_frag_construct,
                   NULL);

int mca_btl_pvas_frag_init(opal_free_list_item_t *item, void *ctx)
{
    mca_btl_pvas_frag_t *frag = (mca_btl_pvas_frag_t *) item;
    opal_free_list_t *list = (opal_free_list_t *) ctx;

    frag->my_list = list;
    frag->post = 0;
    /* elements are fl_frag_size bytes: the struct, then data[] */
    frag->capacity = list->fl_frag_size - offsetof(mca_btl_pvas_frag_t, data);
    return OPAL_SUCCESS;
}
