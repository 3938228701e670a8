/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas: one endpoint per reachable peer (a rank of the same PVAS group).
 */
#ifndef MCA_BTL_PVAS_ENDPOINT_H
#define MCA_BTL_PVAS_ENDPOINT_H

#include "btl_pvas.h"

struct opal_proc_t;

typedef struct mca_btl_base_endpoint_t {
    pvas_queue_t *mailbox; /* the peer's mailbox, in the peer's memory */
    struct opal_proc_t *proc;
    pid_t pid;
    int task_id;
    /* fast box to this peer: the peer's table entry for this rank (NULL: the
     * peer has no table), the ring once the peer made it, sends counted
     * until asking for it, and a lock for concurrent sendi */
    _Atomic(pvas_fbox_t *) *fbox_slot;
    pvas_fbox_writer_t fbox;
    uint32_t fbox_sends;
    uint64_t fbox_sent; /* messages written into the peer's fast box */
    /* the fragment last posted to the peer's mailbox and its post number:
     * until the peer has handled it, send keeps out of the fast box */
    struct mca_btl_pvas_frag_t *last_posted;
    uint64_t last_post;
    bool fbox_requested;
    opal_atomic_lock_t fbox_lock;
    struct mca_btl_base_endpoint_t *next; /* all endpoints, freed at finalize */
} mca_btl_pvas_endpoint_t;

#endif /* MCA_BTL_PVAS_ENDPOINT_H */
