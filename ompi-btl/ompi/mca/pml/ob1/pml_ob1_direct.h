/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * Copyright (c) 2026      PVAS.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/**
 * @file
 *
 * Direct Rendezvous for BTLs whose peers share this process's virtual
 * address space (MCA_BTL_FLAGS_SHARED_ADDR_SPACE, e.g. btl/pvas).
 *
 * The sender publishes a descriptor (its datatype layout, buffer, message
 * length, chunk size and two shared counters) and sends a RNDV header with
 * MCA_PML_OB1_HDR_FLAGS_DIRECT, no data and the descriptor as hdr_src_req
 * (through btl_sendi, so that nothing comes back).  The receiver, on match, adds
 * its own layout and buffer to the descriptor and starts copying chunks of
 * the packed byte range straight from the send buffer to the receive buffer
 * (opal_datatype_direct_layout_copy, no packed intermediate); the sender,
 * polling, joins in.  Each claims chunks from its own end of the message:
 * the process with the lower name takes the front, whichever way the
 * message goes (sender_from_back).
 * For layouts whose cache lines would cross between the two cores block by
 * block, the receiver may choose the staged path instead: the sender packs
 * the message chunk by chunk into a small ring in its own memory, the
 * receiver unpacks each chunk as soon as it is packed, both with the same
 * engine (each side touches only its own buffer and the ring).
 * Each side completes when every byte is copied.  The receiver then sets
 * the descriptor's recv_done, after which it never touches the descriptor
 * again; the sender's poll sees it and frees the descriptor (no FIN
 * message).  A receiver that cannot take
 * this path (truncation, direct path disabled, a datatype the engine does
 * not support) answers with a normal ACK and the message goes the normal
 * copy-in/copy-out way.  See docs/ddt-direct-rendezvous.md in PVAS.
 */

#ifndef MCA_PML_OB1_DIRECT_H
#define MCA_PML_OB1_DIRECT_H

#include "ompi_config.h"

#include "opal/class/opal_free_list.h"
#include "opal/datatype/opal_datatype_direct.h"
#include "opal/mca/base/mca_base_var.h"
#include "ompi/mca/bml/bml.h"
#include "ompi/mca/pml/pml.h"

#include "pml_ob1_direct_model.h"
#include "pml_ob1_hdr.h"

BEGIN_C_DECLS

struct mca_pml_ob1_send_request_t;
struct mca_pml_ob1_recv_request_t;

/** Shared state of one direct transfer; lives in the sender's memory. */
struct mca_pml_ob1_direct_desc_t {
    opal_free_list_item_t super;

    /* Written by the sender before the RNDV header leaves, then constant. */
    const opal_datatype_direct_layout_t *send_layout;
    const void *send_buf;
    uint64_t length;     /**< packed bytes to copy */
    uint64_t chunk_size; /**< bytes per claimed chunk */
    int64_t nchunks;
    /** the sender claims from the back: its process name is the higher of
     *  the two (the lower one always takes the front, either way) */
    int32_t sender_from_back;
    /** the sender leads (pml_ob1_direct_model.h): the path it last took
     *  into send_layout from the receiver, -1: none */
    int32_t path_hint;
    /** path_hint is a path the sender tries, not its settled choice */
    int32_t path_hint_trial;

    /** the staging ring (MCA_PML_OB1_DIRECT_STAGE_SLOTS chunks of
     *  stage_chunk bytes), NULL when there is none, and its pool item */
    char *stage;
    opal_free_list_item_t *stage_ring;
    uint64_t stage_chunk;
    int64_t stage_nchunks;

    /* Written once by the receiver before it sets recv_ready. */
    const opal_datatype_direct_layout_t *recv_layout;
    void *recv_buf;
    int32_t path; /**< MCA_PML_OB1_DIRECT_PATH_DIRECT or _STAGED */
    /** the receiver's path (or its ACK) is one it tries, not its settled
     *  choice: the sender's time of it is no sample (written before
     *  recv_ready, recv_done or the ACK) */
    int32_t recv_trial;

    /* Shared, each on its own cache line. */
    volatile int32_t recv_ready __opal_attribute_aligned__(64);
    /** the receiver's last access: it never touches the descriptor again
     *  (it replaces a FIN message) */
    volatile int32_t recv_done;
    /** chunks claimed: low 32 bits from the front, high 32 bits from the
     *  back (see sender_from_back) */
    volatile int64_t claims __opal_attribute_aligned__(64);
    /** bytes copied by either side (each adds its share when it runs out
     *  of chunks) */
    volatile int64_t copied __opal_attribute_aligned__(64);
    /** staged path: chunks the sender has packed into the ring */
    volatile int64_t packed __opal_attribute_aligned__(64);
    /** staged path: chunks the receiver has unpacked (their slots are free) */
    volatile int64_t unpacked __opal_attribute_aligned__(64);

    /* Sender-private, but for sendreq (written before the RNDV header
     * leaves, then constant), which a declining receiver puts back into
     * the header for ob1's ACK. */
    struct mca_pml_ob1_send_request_t *sendreq __opal_attribute_aligned__(64);
    /** the send layout when this transfer owns it, NULL when it is borrowed
     *  from the datatype's layout cache */
    opal_datatype_direct_layout_t *send_layout_release;
    /** a leader's timed send (mca_pml_ob1_direct_model_sent): its start,
     *  0 when not timed, the peer's name and the send layout's shape key */
    uint64_t send_start_ns, send_peer, send_key;
    /** the sender's choice of a rendezvous for what fits an eager
     *  fragment (its cycle timed when send_choice.start_ns != 0) */
    mca_pml_ob1_direct_send_choice_t send_choice;
    volatile int32_t send_state; /**< MCA_PML_OB1_DIRECT_{ACTIVE,DONE,DECLINED} */
    volatile int32_t refs;       /**< sender's poll entry + receiver (until recv_done or its ACK) */
};
typedef struct mca_pml_ob1_direct_desc_t mca_pml_ob1_direct_desc_t;
OBJ_CLASS_DECLARATION(mca_pml_ob1_direct_desc_t);

/** Slots of a staging ring, and the most rings a process keeps (a transfer
 *  that finds none left takes the other paths). */
#define MCA_PML_OB1_DIRECT_STAGE_SLOTS 16
#define MCA_PML_OB1_DIRECT_STAGE_RINGS 16

#define MCA_PML_OB1_DIRECT_ACTIVE 0
#define MCA_PML_OB1_DIRECT_DONE 1
#define MCA_PML_OB1_DIRECT_DECLINED 2

/**
 * Sender: start sendreq on bml_btl with the direct protocol.
 * @return OMPI_SUCCESS, OMPI_ERR_OUT_OF_RESOURCE (retry later, as for any
 *         start), or OMPI_ERR_NOT_SUPPORTED: not for this message, take the
 *         normal path.
 */
int mca_pml_ob1_direct_send_start(struct mca_pml_ob1_send_request_t *sendreq,
                                  mca_bml_base_btl_t *bml_btl);

/**
 * Receiver: a RNDV header with MCA_PML_OB1_HDR_FLAGS_DIRECT matched recvreq.
 * @return OMPI_SUCCESS (the request is taken care of), or
 *         OMPI_ERR_NOT_SUPPORTED: the caller must answer with the normal ACK
 *         (with no data received) so that the sender falls back; hdr's
 *         hdr_src_req, the descriptor on arrival, is then the sender's request.
 */
int mca_pml_ob1_direct_recv_start(struct mca_pml_ob1_recv_request_t *recvreq,
                                  mca_btl_base_module_t *btl,
                                  mca_pml_ob1_rendezvous_hdr_t *hdr);

/**
 * Receiver: unpack the iov of an eager message that matched recvreq on
 * arrival (*bytes of data, unpacked on return) as opal_convertor_unpack
 * would, with the engine's compiled layout of the receive datatype when
 * the BTL shares this address space (else, or for a contiguous,
 * heterogeneous or truncated receive, with the convertor).
 */
void mca_pml_ob1_direct_unpack(struct mca_pml_ob1_recv_request_t *recvreq,
                               const mca_btl_base_module_t *btl, struct iovec *iov,
                               uint32_t iov_count, size_t *bytes);

/** Sender: a normal ACK answered a direct RNDV: drop the direct state. */
void mca_pml_ob1_direct_send_declined(struct mca_pml_ob1_send_request_t *sendreq);

/** Polls the direct transfers of this process (an opal progress callback). */
int mca_pml_ob1_direct_progress(void);

/** The MCA parameters pml_ob1_direct_* (registered by mca_pml_ob1_direct_register). */
typedef struct mca_pml_ob1_direct_params_t {
    bool enable;
    size_t min_size;
    size_t contig_min_size;
    size_t min_bytes_per_element;
    size_t chunk_size;
    size_t chunks;
    size_t stage_chunk_size;
    bool chunk_affinity;
    bool eager_engine;
    bool stats;
} mca_pml_ob1_direct_params_t;
extern mca_pml_ob1_direct_params_t mca_pml_ob1_direct_params;

/** Registers pml_ob1_direct_* for ob1's component. */
void mca_pml_ob1_direct_register(const mca_base_component_t *comp);

/** Register one read-only pml_ob1_<name> parameter (no enumerator). */
void mca_pml_ob1_direct_register_var(const mca_base_component_t *comp, const char *name,
                                     const char *help, mca_base_var_type_t type, int level,
                                     void *storage);

/** Sender: may a message of size bytes (send mode send_mode) try the direct
 *  rendezvous?  A cheap gate; mca_pml_ob1_direct_send_start decides. */
static inline bool mca_pml_ob1_direct_wanted(int send_mode, size_t size)
{
    return mca_pml_ob1_direct_params.enable && 0 != size &&
           size >= mca_pml_ob1_direct_params.min_size && MCA_PML_BASE_SEND_BUFFERED != send_mode;
}

/** A process name as the model's key of a peer. */
static inline uint64_t mca_pml_ob1_direct_name_key(const opal_process_name_t *name)
{
    return ((uint64_t) name->jobid << 32) | name->vpid;
}

/** Chunks a direct transfer of length packed bytes is cut into. */
uint64_t mca_pml_ob1_direct_chunk_count(uint64_t length);

/** Chunks a staged transfer of length packed bytes is cut into (0: none). */
uint64_t mca_pml_ob1_direct_stage_chunk_count(uint64_t length);

/** Set-up at ob1 enable, tear-down (and the statistics line) at finalize. */
int mca_pml_ob1_direct_init(void);
void mca_pml_ob1_direct_fini(void);

END_C_DECLS

#endif /* MCA_PML_OB1_DIRECT_H */
