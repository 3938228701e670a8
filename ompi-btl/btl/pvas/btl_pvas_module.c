/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas module: reachability (add_procs), endpoints, fragment lists.
 */
#include "opal_config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opal/class/opal_bitmap.h"
#include "opal/mca/pmix/pmix.h"
#include "opal/util/proc.h"

#include <pvas.h>

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"
#include "btl_pvas_frag.h"

static int pvas_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          opal_bitmap_t *reachability);
static int pvas_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers);
static int pvas_finalize(struct mca_btl_base_module_t *btl);
static int pvas_register_error_cb(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_module_error_cb_fn_t cbfunc);
static int pvas_ft_event(int state);

/* clang-format off */
mca_btl_pvas_module_t mca_btl_pvas = {
    .super = {
        .btl_component = &mca_btl_pvas_component.super,
        .btl_add_procs = pvas_add_procs,
        .btl_del_procs = pvas_del_procs,
        .btl_finalize = pvas_finalize,
        .btl_alloc = mca_btl_pvas_alloc,
        .btl_free = mca_btl_pvas_free,
        .btl_prepare_src = mca_btl_pvas_prepare_src,
        .btl_send = mca_btl_pvas_send,
        .btl_sendi = mca_btl_pvas_sendi,
        .btl_put = mca_btl_pvas_put,
        .btl_get = mca_btl_pvas_get,
        /* no registration: every address is valid in every rank */
        .btl_register_mem = NULL,
        .btl_deregister_mem = NULL,
        .btl_registration_handle_size = 0,
        .btl_dump = mca_btl_base_dump,
        .btl_register_error = pvas_register_error_cb,
        .btl_ft_event = pvas_ft_event,
    },
};
/* clang-format on */

/* Fragment free lists, created on the first add_procs that finds a peer. */
int mca_btl_pvas_module_lists_init(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    size_t align = opal_cache_line_size > PVAS_QUEUE_CACHE_LINE ? (size_t) opal_cache_line_size
                                                                : PVAS_QUEUE_CACHE_LINE;
    struct {
        opal_free_list_t *list;
        size_t capacity;
    } lists[] = {
        {&c->frags_inline, c->max_inline_send},
        {&c->frags_eager, mca_btl_pvas.super.btl_eager_limit},
        {&c->frags_max, mca_btl_pvas.super.btl_max_send_size},
    };
    int rc;

    if (c->lists_ready) {
        return OPAL_SUCCESS;
    }
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); ++i) {
        rc = opal_free_list_init(
            lists[i].list, offsetof(mca_btl_pvas_frag_t, data) + lists[i].capacity, align,
            OBJ_CLASS(mca_btl_pvas_frag_t), 0, 0, c->free_list_num, c->free_list_max,
            c->free_list_inc, NULL, 0, NULL, mca_btl_pvas_frag_init, lists[i].list);
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
    }
    c->lists_ready = true;
    return OPAL_SUCCESS;
}

/* Is proc a rank of my PVAS group?  On success fill *ep. */
static bool pvas_peer_reachable(struct opal_proc_t *proc, mca_btl_pvas_endpoint_t *ep)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    mca_btl_pvas_modex_t *modex = NULL;
    size_t size = 0;
    int rc, same;

    if (!OPAL_PROC_ON_LOCAL_NODE(proc->proc_flags)) {
        return false;
    }
    OPAL_MODEX_RECV(rc, &c->super.btl_version, &proc->proc_name, (void **) &modex, &size);
    if (OPAL_SUCCESS != rc || NULL == modex) {
        PVAS_VERBOSE(10, "%s: no modex data (peer is not a PVAS task)",
                     OPAL_NAME_PRINT(proc->proc_name));
        return false;
    }
    if (size != sizeof(*modex) || MCA_BTL_PVAS_MODEX_MAGIC != modex->magic) {
        PVAS_VERBOSE(10, "%s: unexpected modex data (%zu bytes)", OPAL_NAME_PRINT(proc->proc_name),
                     size);
        free(modex);
        return false;
    }
    if (modex->group_id != c->group_id) {
        PVAS_VERBOSE(10, "%s: group %#" PRIx64 " is not mine (%#" PRIx64 ")",
                     OPAL_NAME_PRINT(proc->proc_name), modex->group_id, c->group_id);
        free(modex);
        return false;
    }
    same = pvas_same_vm((pid_t) modex->pid);
    if (1 != same) {
        PVAS_VERBOSE(10, "%s: pid %d does not share my address space (%s)",
                     OPAL_NAME_PRINT(proc->proc_name), (int) modex->pid,
                     same < 0 ? pvas_errmsg() : "kcmp differs");
        free(modex);
        return false;
    }
    ep->mailbox = (pvas_queue_t *) (uintptr_t) modex->mailbox;
    if (0 != modex->fbox_table && c->task_id >= 0 && c->task_id < MCA_BTL_PVAS_FBOX_SLOTS) {
        ep->fbox_slot = (_Atomic(pvas_fbox_t *) *) (uintptr_t) modex->fbox_table + c->task_id;
    }
    ep->pid = (pid_t) modex->pid;
    ep->task_id = modex->task_id;
    ep->proc = proc;
    free(modex);
    return true;
}

static int pvas_add_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers,
                          opal_bitmap_t *reachability)
{
    const opal_proc_t *my_proc = opal_proc_local_get();
    mca_btl_pvas_endpoint_t ep;
    int rc;

    (void) btl;
    if (NULL == my_proc) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    for (size_t i = 0; i < nprocs; ++i) {
        peers[i] = NULL;
        if (procs[i] == my_proc ||
            0 == opal_compare_proc(procs[i]->proc_name, my_proc->proc_name)) {
            continue; /* btl/self */
        }
        memset(&ep, 0, sizeof(ep));
        pvas_lock_init(&ep.fbox_lock);
        if (!pvas_peer_reachable(procs[i], &ep)) {
            continue;
        }
        rc = mca_btl_pvas_module_lists_init();
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        peers[i] = malloc(sizeof(ep));
        if (NULL == peers[i]) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        ep.next = mca_btl_pvas_component.endpoints;
        *peers[i] = ep;
        mca_btl_pvas_component.endpoints = peers[i];
        if (NULL != reachability) {
            rc = opal_bitmap_set_bit(reachability, (int) i);
            if (OPAL_SUCCESS != rc) {
                return rc;
            }
        }
        PVAS_VERBOSE(20, "%s reachable: task %d, pid %d, mailbox %p",
                     OPAL_NAME_PRINT(procs[i]->proc_name), ep.task_id, (int) ep.pid,
                     (void *) ep.mailbox);
    }
    return OPAL_SUCCESS;
}

static int pvas_del_procs(struct mca_btl_base_module_t *btl, size_t nprocs,
                          struct opal_proc_t **procs, struct mca_btl_base_endpoint_t **peers)
{
    (void) btl;
    (void) procs;
    (void) nprocs;
    (void) peers;
    /* bml/r2 may pass the same endpoint twice (send and rdma arrays): the
     * endpoints are freed once, at finalize */
    return OPAL_SUCCESS;
}

static int pvas_finalize(struct mca_btl_base_module_t *btl)
{
    struct mca_btl_base_endpoint_t *ep, *next;
    uint64_t fbox_sent = 0;

    (void) btl;
    for (ep = mca_btl_pvas_component.endpoints; NULL != ep; ep = next) {
        next = ep->next;
        fbox_sent += ep->fbox_sent;
        free(ep);
    }
    PVAS_VERBOSE(20, "fast boxes: %" PRIu64 " messages sent, %" PRIu64 " received", fbox_sent,
                 mca_btl_pvas_component.fbox_received);
    mca_btl_pvas_component.endpoints = NULL;
    /* The fragment lists are destructed at component close.  The mailbox is
     * deliberately never freed: a peer may still be returning one of our
     * fragments into it while we finalize, and its memory is gone with the
     * process anyway. */
    return OPAL_SUCCESS;
}

static int pvas_register_error_cb(struct mca_btl_base_module_t *btl,
                                  mca_btl_base_module_error_cb_fn_t cbfunc)
{
    ((mca_btl_pvas_module_t *) btl)->error_cb = cbfunc;
    return OPAL_SUCCESS;
}

static int pvas_ft_event(int state)
{
    (void) state;
    return OPAL_SUCCESS;
}

mca_btl_base_descriptor_t *mca_btl_pvas_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              uint8_t order, size_t size, uint32_t flags)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    mca_btl_pvas_frag_t *frag;

    if (size <= c->max_inline_send) {
        frag = mca_btl_pvas_frag_get(&c->frags_inline, endpoint);
    } else if (size <= btl->btl_eager_limit) {
        frag = mca_btl_pvas_frag_get(&c->frags_eager, endpoint);
    } else if (size <= btl->btl_max_send_size) {
        frag = mca_btl_pvas_frag_get(&c->frags_max, endpoint);
    } else {
        return NULL;
    }
    if (OPAL_UNLIKELY(NULL == frag)) {
        return NULL;
    }
    frag->segments[0].seg_len = size;
    frag->base.des_flags = flags;
    frag->base.order = order;
    return &frag->base;
}

int mca_btl_pvas_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des)
{
    (void) btl;
    mca_btl_pvas_frag_return((mca_btl_pvas_frag_t *) des);
    return OPAL_SUCCESS;
}
