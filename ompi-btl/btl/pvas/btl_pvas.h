/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas: byte transfer layer between the ranks of one PVAS group.
 *
 * The ranks of a node are tasks of one PVAS group: real processes sharing
 * ONE virtual address space.  A pointer is valid, and names the same memory,
 * in every rank, so this BTL needs no shared-memory segment: fragments live
 * in the sender's own (malloc'ed) memory, every rank has a mailbox (an MPSC
 * queue of fragment pointers, btl_pvas_queue.h) whose address it publishes
 * through the modex, and put/get are plain memcpy.
 */
#ifndef MCA_BTL_PVAS_H
#define MCA_BTL_PVAS_H

#include "opal_config.h"

#include <stdint.h>
#include <sys/types.h>

#include "opal/class/opal_free_list.h"
#include "opal/mca/btl/btl.h"
#include "opal/mca/btl/base/base.h"

#include "btl_pvas_fbox.h"
#include "btl_pvas_lock.h"
#include "btl_pvas_queue.h"

BEGIN_C_DECLS

/* What each rank publishes in the modex (OPAL_PMIX_LOCAL scope). */
#define MCA_BTL_PVAS_MODEX_MAGIC 0x5056415342544c32ull /* "PVASBTL2" */

/* BTL-internal active-message tag: a peer asks for a fast box */
#define MCA_BTL_TAG_PVAS (MCA_BTL_TAG_BTL + 9)

/* fast-box table: one entry per PVAS task id (pvas.h: task ids are below
 * the partition count) */
#define MCA_BTL_PVAS_FBOX_SLOTS 4096
/* a table entry that says "no ring for you" (this rank has fbox_max) */
#define MCA_BTL_PVAS_FBOX_REFUSED ((pvas_fbox_t *) (uintptr_t) 1)

typedef struct mca_btl_pvas_modex_t {
    uint64_t magic;
    uint64_t group_id;   /* pvas_info.group_id */
    uint64_t mailbox;    /* address of the rank's pvas_queue_t */
    uint64_t fbox_table; /* address of its fast-box table (0: none) */
    int32_t pid;
    int32_t task_id;
} mca_btl_pvas_modex_t;

typedef struct mca_btl_pvas_component_t {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters */
    int free_list_num;
    int free_list_max;
    int free_list_inc;
    unsigned int max_inline_send;  /* payload capacity of the small fragments */
    unsigned int poll_limit;       /* fragments handled per progress call */
    bool inplace;                  /* send contiguous data in place */
    unsigned int inplace_min_send; /* larger contiguous messages go in place */
    unsigned int fbox_size;        /* bytes of one fast box (power of 2); 0: none */
    unsigned int fbox_max_send;    /* largest message (PML header included) sent through it */
    unsigned int fbox_max_inplace; /* the same for contiguous data, else sent in place */
    unsigned int fbox_max;         /* fast boxes this rank polls at most */
    unsigned int fbox_threshold;   /* sends to a peer before asking it for one */

    /* state */
    bool enabled; /* pvas_self() succeeded at init */
    uint64_t group_id;
    int task_id;
    pvas_queue_t *mailbox;      /* this rank's mailbox (never freed, see module.c) */
    pvas_queue_t *lazy_returns; /* sendi fragments coming back (drained lazily) */
    unsigned int progress_calls;
    opal_free_list_t frags_inline; /* headers + in-place sends, control, sendi */
    opal_free_list_t frags_eager;  /* copy-in eager sends (non-contiguous) */
    opal_free_list_t frags_max;    /* copy-in up to btl_max_send_size */
    bool lists_ready;
    struct mca_btl_base_endpoint_t *endpoints; /* list of every endpoint made */
    opal_atomic_lock_t progress_lock; /* one consumer of mailbox and fast boxes */
    opal_atomic_lock_t lazy_lock;     /* consumer of lazy_returns (btl_pvas_progress.c) */
    /* fast boxes this rank receives from: [sender's task id] -> ring (in
     * this rank's memory, never freed, like the mailbox), and the list it
     * polls (touched by the progress-lock holder only) */
    _Atomic(pvas_fbox_t *) *fbox_table;
    pvas_fbox_reader_t *fbox_in;
    unsigned int fbox_in_count;
    uint64_t fbox_received; /* fast-box entries handled (progress-lock holder) */
} mca_btl_pvas_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_pvas_component_t mca_btl_pvas_component;

typedef struct mca_btl_pvas_module_t {
    mca_btl_base_module_t super;
    mca_btl_base_module_error_cb_fn_t error_cb;
} mca_btl_pvas_module_t;

extern mca_btl_pvas_module_t mca_btl_pvas;

/* module.c */
mca_btl_base_descriptor_t *mca_btl_pvas_alloc(struct mca_btl_base_module_t *btl,
                                              struct mca_btl_base_endpoint_t *endpoint,
                                              uint8_t order, size_t size, uint32_t flags);
int mca_btl_pvas_free(struct mca_btl_base_module_t *btl, mca_btl_base_descriptor_t *des);
int mca_btl_pvas_module_lists_init(void);

/* send.c */
int mca_btl_pvas_send(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                      struct mca_btl_base_descriptor_t *descriptor, mca_btl_base_tag_t tag);
int mca_btl_pvas_sendi(struct mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                       struct opal_convertor_t *convertor, void *header, size_t header_size,
                       size_t payload_size, uint8_t order, uint32_t flags, mca_btl_base_tag_t tag,
                       mca_btl_base_descriptor_t **descriptor);
struct mca_btl_base_descriptor_t *mca_btl_pvas_prepare_src(struct mca_btl_base_module_t *btl,
                                                           struct mca_btl_base_endpoint_t *endpoint,
                                                           struct opal_convertor_t *convertor,
                                                           uint8_t order, size_t reserve,
                                                           size_t *size, uint32_t flags);

/* rdma.c */
int mca_btl_pvas_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                     int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata);
int mca_btl_pvas_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                     int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata);

/* progress.c */
int mca_btl_pvas_component_progress(void);
void mca_btl_pvas_fbox_setup(int task_id);
int mca_btl_pvas_drain_lazy_returns(void);

/* Verbose output through the btl framework's stream (btl_base_verbose). */
#define PVAS_VERBOSE(level, ...)                                                                   \
    opal_output_verbose((level), opal_btl_base_framework.framework_output, "btl:pvas: " __VA_ARGS__)

END_C_DECLS

#endif /* MCA_BTL_PVAS_H */
