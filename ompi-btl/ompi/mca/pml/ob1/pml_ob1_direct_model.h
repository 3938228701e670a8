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
 * Cost model of the direct rendezvous's paths (pml_ob1_direct.h: direct,
 * staged) against copy-in/copy-out and, for the sender, an eager send, in
 * the LogGP style: per-message overheads, per-byte stream costs for one
 * agent and for two agents at once, per-block costs by block-size class for
 * the direct engine and for the convertor's pack/unpack, and the cost of a
 * cache line that crosses between the two cores on the direct path.  The
 * parameters are MCA variables (pml_ob1_direct_model_*),
 * written by pvas-calibrate into an MCA parameter file; built-in defaults
 * are conservative.  The receiver decides at match time from the two
 * layouts' shapes; an online correction, per pair of layout shapes,
 * measures what each path really costs, takes the faster, and measures the
 * other path again now and then.
 */

#ifndef MCA_PML_OB1_DIRECT_MODEL_H
#define MCA_PML_OB1_DIRECT_MODEL_H

#include "ompi_config.h"

#include "opal/datatype/opal_datatype_direct.h"
#include "opal/mca/mca.h"

BEGIN_C_DECLS

/** The two ways a direct RNDV can go. */
enum mca_pml_ob1_direct_path {
    MCA_PML_OB1_DIRECT_PATH_DIRECT = 0, /**< layout to layout, both sides */
    MCA_PML_OB1_DIRECT_PATH_CICO = 1,   /**< normal ACK: pack, fragments, unpack */
    MCA_PML_OB1_DIRECT_PATH_STAGED = 2, /**< sender packs into a ring, receiver unpacks */
    MCA_PML_OB1_DIRECT_PATHS = 3
};

/** A decision for one message; the receiver keeps it until completion. */
typedef struct mca_pml_ob1_direct_choice_t {
    struct mca_pml_ob1_direct_pair_t *pair; /**< learning record, NULL: none */
    uint64_t sig;                           /**< the pair's key when pair is set */
    int path;                               /**< enum mca_pml_ob1_direct_path */
    uint64_t start_ns;                      /**< when the receiver matched; 0: not timed */
    bool trial; /**< a path tried or re-checked, not the settled choice */
} mca_pml_ob1_direct_choice_t;

/** Registers pml_ob1_direct_model_* (from mca_pml_ob1_direct_register). */
void mca_pml_ob1_direct_model_register(const mca_base_component_t *comp);

/** Set-up and tear-down (prints the per-path statistics when asked to). */
void mca_pml_ob1_direct_model_init(void);
void mca_pml_ob1_direct_model_fini(bool print, unsigned rank);

/** The sender of a message, as its receiver's choice sees it.  Of two
 *  processes, the one with the lower name leads: it chooses the path of its
 *  receives, and tells the other (hint) which path it last took into the
 *  layout it now sends from; the other takes that path too, so that an
 *  exchange both ways (one buffer sent and received into) uses one path. */
typedef struct mca_pml_ob1_direct_peer_t {
    uint64_t name; /**< the sender's process name (jobid, vpid) */
    bool lead;     /**< the receiver's name is the lower one */
    int hint;      /**< the sender's path into its send layout, -1: none */
    bool hint_trial; /**< hint is a path the sender tries, not its settled one */
} mca_pml_ob1_direct_peer_t;

/** Receiver, at match: choose the path (staged only when staged_ok).
 *  Fills *choice and returns its path. */
int mca_pml_ob1_direct_model_choose(const opal_datatype_direct_layout_t *sl,
                                    const opal_datatype_direct_layout_t *rl, size_t frag_bytes,
                                    bool staged_ok, const mca_pml_ob1_direct_peer_t *peer,
                                    mca_pml_ob1_direct_choice_t *choice);

/** Sender that leads (its name is the lower): the path it last chose for a
 *  message from peer into a layout of l's shape, -1 when none (or nothing
 *  to follow).  *key caches l's shape key (0: not computed yet).  *timed:
 *  report this send's time with mca_pml_ob1_direct_model_sent.  *trial:
 *  that path was one tried, not the settled choice. */
int mca_pml_ob1_direct_model_hint(uint64_t peer, const opal_datatype_direct_layout_t *l,
                                  uint64_t *key, bool *timed, bool *trial);

/** Sender that leads, after a timed send of layout l (shape key `key`) to
 *  peer under the hint `path`: it took ns from its start to the sender's
 *  completion (eager: to the fragment's post; the model adds its
 *  prediction of the receiver's unpack).  The leader's choice of a path
 *  counts what the path costs its own sends too. */
void mca_pml_ob1_direct_model_sent(uint64_t peer, uint64_t key, int path,
                                   const opal_datatype_direct_layout_t *l, bool eager,
                                   uint64_t ns);

/** What the sender does with a message that fits an eager fragment. */
enum {
    MCA_PML_OB1_DIRECT_SEND_RNDV = 0,  /**< the direct rendezvous (a path at match) */
    MCA_PML_OB1_DIRECT_SEND_EAGER = 1, /**< an eager send the engine packs */
    MCA_PML_OB1_DIRECT_SEND_OWN = 2,   /**< ob1's own eager send (the convertor packs) */
    MCA_PML_OB1_DIRECT_SENDS = 3
};

/** What the model predicts for the sends of one layout that fits an eager
 *  fragment, kept with the layout (mca_pml_ob1_direct_model_send fills it
 *  on first use: sig 0). */
typedef struct mca_pml_ob1_direct_send_model_t {
    uint64_t sig;                              /**< the learning record's key, 0: not yet */
    double ns[MCA_PML_OB1_DIRECT_SENDS];       /**< per MCA_PML_OB1_DIRECT_SEND_*, HUGE_VAL: none */
    double lo[MCA_PML_OB1_DIRECT_SENDS];       /**< their optimistic bounds */
    int how;                                   /**< the model's choice */
    bool countdown;                            /**< a re-check is scheduled */
} mca_pml_ob1_direct_send_model_t;

/** A sender's choice for one message, kept until its time is known. */
typedef struct mca_pml_ob1_direct_send_choice_t {
    struct mca_pml_ob1_direct_pair_t *pair; /**< learning record, NULL: none */
    uint64_t sig;                           /**< the pair's key when pair is set */
    uint64_t peer;                          /**< the receiver's name */
    int how;                                /**< MCA_PML_OB1_DIRECT_SEND_* */
    uint64_t start_ns;                      /**< when the send started; 0: not timed */
} mca_pml_ob1_direct_send_choice_t;

/** Sender, for a message of layout sl that fits an eager fragment: an
 *  eager send (pack, fragment, unpack), by the engine or by ob1's
 *  convertor, or the direct rendezvous (MCA_PML_OB1_DIRECT_SEND_*).  The
 *  receive layout is not known: the send layout stands for both.  Always
 *  the rendezvous when a path is forced.  With learn (an engine eager send
 *  is possible and nothing forces a choice), the online correction picks
 *  among the three what each costs the sender's cycle: the time from a
 *  send's start to the start of the next send of a layout of that shape
 *  to peer.  *choice says whether this send's cycle is timed (start_ns);
 *  a rendezvous hands it to mca_pml_ob1_direct_model_send_tried.  m
 *  caches the predictions (NULL: computed for this message alone). */
int mca_pml_ob1_direct_model_send(uint64_t peer, const opal_datatype_direct_layout_t *sl,
                                  mca_pml_ob1_direct_send_model_t *m, bool learn,
                                  mca_pml_ob1_direct_send_choice_t *choice);

/** Sender, when the receiver of a rendezvous took a path it tries, not
 *  its settled choice (or declined on one): if that send's cycle is timed
 *  (choice->start_ns != 0) it is no sample. */
void mca_pml_ob1_direct_model_send_tried(const mca_pml_ob1_direct_send_choice_t *choice);

/** Sender, when the message of choice does not go the way chosen (a
 *  leader's learned eager send instead of the rendezvous): its cycle, if
 *  timed, is dropped with no sample. */
void mca_pml_ob1_direct_model_send_untimed(const mca_pml_ob1_direct_send_choice_t *choice);

/** Receiver, at completion of a message whose path was chosen and timed
 *  (choice->start_ns != 0): record its measured time (statistics and
 *  online correction). */
void mca_pml_ob1_direct_model_done(mca_pml_ob1_direct_choice_t *choice);

/** Monotonic nanoseconds. */
uint64_t mca_pml_ob1_direct_model_now(void);

END_C_DECLS

#endif /* MCA_PML_OB1_DIRECT_MODEL_H */
