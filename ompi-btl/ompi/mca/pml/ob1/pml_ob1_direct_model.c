/* -*- Mode: C; c-basic-offset:4 ; indent-tabs-mode:nil -*- */
/*
 * Copyright (c) 2026      PVAS.  All rights reserved.
 * $COPYRIGHT$
 *
 * Additional copyrights may follow
 *
 * $HEADER$
 */

/*
 * Cost model of the direct rendezvous (see pml_ob1_direct_model.h).
 *
 * For a message of B packed bytes whose send and receive layouts have
 * shapes s and r (opal_datatype_direct_layout_shape), L(x) the distinct
 * sparse cache lines of layout x (blocks under a line, a line or more
 * apart; an index list's blocks counted at most 64 per page they touch):
 *
 * M(x) = L(x) when x's lines do not fit in `cache` bytes (64 L(x) > cache:
 * then they miss in every path, whoever copies), else 0; I(x) the blocks
 * of x's index lists (no stride describes them); P(x, W) the page walks
 * of an agent whose copy of x lies among W pages of sparse lines: the
 * pages of x's strided runs when x's sparse lines lie on more than `tlb`
 * bytes of pages (each walked once, in order: lines that share a page
 * share its walk), plus I(x) * (1 - tlb / 4096 W) when W pages are more
 * than `tlb` bytes (an index list's blocks come in random order, and a
 * block misses as often as its page is not among those the TLB holds);
 * Q(x) the pages of x's strided sparse runs and index lists; P(x) =
 * P(x, Q(x)):
 *
 *   blocks_D(x) = run_direct * runs(x) + sum_c n_c(x) * block_direct[c]
 *                 + far * M(x) + walk * P(x)
 *   blocks_P(x) = sum_c n_c(x) * block_pack[c] + index_pack * I(x)
 *                 + far * M(x) + walk * P(x)
 *
 *   pair_D      = pair * max(walk_D(s), walk_D(r))
 *                 + far * (M(s) + M(r)) + walk * (P(s, W) + P(r, W)),
 *                 W = Q(s) + Q(r)
 *                 (walk_D(x): blocks_D(x) without the far and walk terms)
 *   direct = o_direct + C * chunk + pair_D / 2 + B * g2 / 2
 *            + line * (L(s) + L(r)) / 2 + index_shared * X(r)
 *            (C chunks; both sides copy, each half of the lines of the peer's buffer;
 *            the engine copies from one layout into the other piece by piece,
 *            as many pieces as the finer layout has blocks when the block
 *            boundaries match, so a pair costs `pair` times its finer side
 *            (block_direct is measured from a vector into a contiguous
 *            buffer; 2: both sides' costs on equal layouts), while the lines
 *            beyond the cache or the TLB miss on both sides, each agent
 *            walking both layouts;
 *            X(r): lines of r's index list that hold bytes of both halves,
 *            which both agents write; one side alone when the
 *            message is one chunk: the receiver, pair_D + B * g1
 *            + line * L(s) + index_direct * I(r),
 *            every block of a receive index list a line the peer last held).
 *   staged = o_staged + S * stage + max(Ps, Us) + min(Ps, Us) / S + B * cross
 *            with Ps = blocks_D(s) + B * g1 + h(s), Us likewise of r,
 *            S = staged chunks: each side on its own buffer, pipelined
 *   cico   = o_cico + F * frag + max(P, U) + min(P, U) / F + B * cross
 *            with P = blocks_P(s) + B * g1 + h(s), U likewise of r,
 *            F = ceil(B / fragment size): pack and unpack pipelined
 *   eager  = o_eager + 2 * (blocks_D(s) + B * g1 + h(s))
 *            + B * (cross + eager_byte)
 *            (sender: s for both; the engine packs and unpacks, or with
 *            pml_ob1_direct_eager_engine 0 the convertor: blocks_P(s);
 *            eager_byte: the receiver unpacks the whole fragment after
 *            the sender has packed it, with nothing to overlap the crossing)
 *   own    = o_own + blocks_P(s) + B * g1 + h(s)
 *            + the receiver's side of eager + B * (cross + eager_byte)
 *            (ob1's own eager send: the convertor packs, the receiver
 *            unpacks as from an eager send; not weighed while o_own is 0)
 *
 * cross: per byte that one core writes into a ring or fragment and the
 * other reads, a cache line moved between the cores every 64 bytes.
 * h(x) = sum_c cross_class[c] * bytes_c(x): per byte, besides, of x's
 * blocks of class c that a side copies into or out of the fragment or
 * ring.  A fitted term: in the ping-pongs a copy of short blocks costs
 * more per byte than one of long blocks (glibc's memcpy moves blocks of
 * up to 2112 bytes with vector loops and longer ones with `rep movsb` on
 * CPUs with FSRM), while the crossing alone (bench/frag-cross) costs about
 * as much per line for every block size.
 *
 * All costs are nanoseconds.
 *
 * The online correction keeps a record per pair of layout shapes that the
 * model cannot tell apart (the bytes and the predictions, each rounded to
 * half an octave, so that a datatype built anew for every exchange, with a
 * few blocks more or less, keeps its record): the last MODEL_RING measured
 * times of each path (receiver: match to completion).  The first
 * MODEL_WARMUP messages of a path in this process are not kept (first use
 * of a path pays for rings, fragments and pages).  A path is measured once
 * it has MODEL_SAMPLES of them.  A pair's first messages take the model's
 * path.  Then each path whose optimistic prediction (lo) is below
 * `explore` times the model's prediction for its own path, or below the
 * cheapest cost measured so far (a path's cost: the least of its kept
 * samples), is measured too, the lowest prediction first (how much a cache
 * line costs between the cores depends on what the application writes,
 * which no layout tells); a path whose samples are already above `explore`
 * times the cheapest cost gets no more messages until it is the runner-up.
 * Among the measured paths the cheapest wins (the model's path unless
 * another is cheaper by more than MODEL_MARGIN; the path in force is
 * measured once more before a path first measured after its latest
 * sample replaces it).  The runner-up, the cheapest other measured path
 * on its receives, is measured again after `recheck` messages times its
 * cost over the winner's (rounded up), then after twice as many each time
 * the choice holds (at most MODEL_RECHECK_MAX), so that re-checks cost a
 * pair at most about 1/`recheck` of its time.  A path replaces the one in
 * force only when it is cheaper by MODEL_MARGIN too.  Between re-checks a
 * newly settled pair times one message in MODEL_MEASURE_EVERY (a sender's
 * record, MODEL_SEND_EVERY: a small message's clock reads and record cost
 * more than its choice saves), and once its choice has held at a re-check
 * (or for an interval, with nothing to re-check), one in 1/MODEL_RING of
 * the doubled interval, so that the best path's ring spans about one
 * interval (model_choice_held).  A pair of layouts' predictions are
 * computed at its first match and kept
 * (model_predictions), and so is a settled pair's choice until a sample
 * comes in (model_settled): on a small message the model's work at match
 * is on the critical path.
 *
 * Of two processes, only the one with the lower name learns (`follow`):
 * with each message it sends it names the path it last took from that
 * peer into a layout of the send layout's shape (model_lead), and the
 * other takes that path.  Two receivers deciding alone can settle on
 * different paths for the two ways of an exchange, and then the lines of
 * a buffer sent and received into change cores on every message.  The
 * leader also times its own sends of that shape under each path (a
 * rendezvous to the sender's completion; an eager send, which it makes on
 * the staged path, to its fragment's post plus the predicted unpack), and
 * a path's cost is its receive cost plus its send cost once every measured
 * path has both: the window at the receiver does not see what a path does
 * to the other way of the exchange.
 *
 * Every sender corrects its own choice for what fits an eager fragment
 * (the rendezvous, the engine's eager send, ob1's own) with the same
 * rules, in records of the same table keyed by the send layout's
 * predictions (model_send_predict).  A send costs its cycle (model_cycle):
 * the time from its start to the start of the next send of that record
 * to the same peer.  That holds all it costs the sender's loop, whoever
 * does the work: the receiver's unpack or copy, the handshake, the
 * sender's wait for the receiver's completion, a reply that comes in
 * before the sender has posted its receive.  A cycle in which this
 * process took a path it tries on a receive, or in which the receiver of
 * its rendezvous did, is no sample: it would carry the trial's cost.
 */

#include "ompi_config.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/mca/base/mca_base_var.h"
#include "opal/mca/base/mca_base_var_enum.h"
#include "opal/threads/mutex.h"
#include "opal/util/argv.h"
#include "opal/util/output.h"

#include "pml_ob1.h"
#include "pml_ob1_direct.h"
#include "pml_ob1_direct_model.h"

#define MODEL_MODE_MODEL 0
#define MODEL_MODE_DIRECT 1
#define MODEL_MODE_CICO 2
#define MODEL_MODE_STAGED 3
#define MODEL_MODE_EAGER 4
#define MODEL_MODE_OWN 5

#define MODEL_PAIRS 256          /* learning records (a direct-mapped table) */
#define MODEL_PREDICTIONS 64     /* predictions kept per pair of layouts (direct-mapped) */
#define MODEL_LEADS 64           /* a leader's last paths per peer and layout (direct-mapped) */
#define MODEL_WARMUP 1           /* first measurements of a path (per process) not kept */
#define MODEL_SAMPLES 3          /* measurements a path needs before it is compared */
#define MODEL_RING 8             /* measurements kept per path of a pair */
#define MODEL_MARGIN 0.03        /* the other path must be this much faster */
#define MODEL_RECHECK_MAX 4096u  /* longest interval between re-checks */
#define MODEL_MEASURE_EVERY 8u   /* a newly settled pair times one message in this many */
#define MODEL_SEND_EVERY 32u     /* and a sender's record (its messages are the smallest) */
#define MODEL_LOST_MAX 16u       /* timed messages of a path with no sample before it is left */
#define MODEL_TRIED_MAX 32u      /* send cycles with a path tried not kept, at most in a row */
#define MODEL_CYCLES 64          /* a sender's timed cycles, one per peer (direct-mapped) */
#define MODEL_CYCLE_WAIT 64u     /* sends to a peer before a cycle that never closed is given up */
#define MODEL_SEND_SIG 0x73656e64u /* mixed into a sender's record key ("send") */

static const char *const path_name[MCA_PML_OB1_DIRECT_PATHS] = {"direct", "cico", "staged"};
static const char *const send_name[MCA_PML_OB1_DIRECT_SENDS] = {"rndv", "eager", "own"};

/* ---- parameters ------------------------------------------------------------ */

static struct {
    int mode;
    double o_direct, o_cico, o_staged, o_eager; /* per message */
    double o_own;      /* per message of ob1's own eager send; 0: not weighed */
    double g1, g2;     /* per byte: one agent; each of two agents at once */
    double cross;      /* per byte through a ring or fragment between the cores */
    double eager_byte; /* per byte of an eager send, besides cross */
    double frag;       /* per fragment of copy-in/copy-out */
    double stage;      /* per chunk of the staged path */
    double chunk;      /* per chunk of the direct path */
    double run_direct; /* per run of blocks the engine starts */
    double line;       /* per cache line crossing between the cores (direct) */
    double index_direct; /* per block of a receive index list (direct, one agent) */
    double index_shared; /* per line of a receive index list both agents write (direct) */
    double pair;       /* direct path: factor on the finer layout's block costs */
    double far;        /* per sparse line that does not fit in `cache` (every path) */
    double walk;       /* per page walk beyond what `tlb` covers (every path) */
    size_t cache;      /* bytes of lines that stay cached */
    size_t tlb;        /* bytes of pages the TLB covers */
    double index_pack; /* per block of an index list, pack or unpack */
    char *block_direct_str, *block_pack_str, *cross_class_str;
    double block_direct[OPAL_DATATYPE_DIRECT_CLASSES], block_pack[OPAL_DATATYPE_DIRECT_CLASSES];
    /* per byte of a class's blocks a side copies into or out of a fragment or the ring */
    double cross_class[OPAL_DATATYPE_DIRECT_CLASSES];
    bool learn, follow;
    double explore;   /* paths predicted below this times the cheapest measured cost are tried */
    unsigned recheck;
} model = {
    /* pvas-calibrate's measurements on an Intel Xeon (L2 2 MiB per core;
     * see docs/cost-model.md); `make calibrate` measures the node. */
    .mode = MODEL_MODE_MODEL,
    .o_direct = 1400.0,
    .o_cico = 3500.0,
    .o_staged = 1700.0,
    .o_eager = 2040.0,
    .o_own = 0.0, /* not measured on the Intel Xeon: `make calibrate` fits it */
    .g1 = 0.027,
    .g2 = 0.018,
    .cross = 0.065,
    .eager_byte = 0.0,  /* not measured on the Intel Xeon: `make calibrate` fits it */
    .frag = 120.0,
    .stage = 230.0,
    .chunk = 0.0, /* not measured on the Intel Xeon: `make calibrate` fits it */
    .run_direct = 2.0,
    .line = 0.72,
    .index_direct = 8.7,
    .index_shared = 27.0,
    .pair = 2.0, /* fitted as both sides' block costs on equal layouts */
    .far = 6.9,
    .walk = 6.9, /* not measured on the Intel Xeon: its `far` (NAS_MG_x: a line per page) */
    .cache = 0, /* set at registration: this core's L2 */
    .tlb = (size_t) 8 << 20, /* 2048 4-KiB pages: the Intel Xeon's second-level TLB */
    .index_pack = 2.9,
    .block_direct_str = NULL,
    .block_pack_str = NULL,
    .cross_class_str = NULL,
    .learn = true,
    .follow = true,
    .explore = 2.0,
    .recheck = 64,
};

/* The Intel Xeon's class of 513-4096 bytes (31 and 29 ns) split in
 * proportion to the classes' mean bytes (1.5 and 3.5 KiB); cross_class was
 * not measured there: `make calibrate` fits it. */
static const char *const default_block_direct = "0.7,0.9,3.1,10,20,47,73";
static const char *const default_block_pack = "3.1,4.2,3.3,7.9,19,44,62";
static const char *const default_cross_class = "0,0,0,0,0,0,0";

static int model_parse_classes(const char *name, const char *str, double *out)
{
    char **v = opal_argv_split(str, ',');
    int n = opal_argv_count(v), rc = OMPI_SUCCESS;

    if (OPAL_DATATYPE_DIRECT_CLASSES != n) {
        opal_output(0, "pml_ob1 direct model: %s = \"%s\": expected %d comma-separated costs; "
                    "using the built-in ones", name, str, OPAL_DATATYPE_DIRECT_CLASSES);
        rc = OMPI_ERR_BAD_PARAM;
    }
    for (int i = 0; OMPI_SUCCESS == rc && i < n; i++) {
        char *end;
        out[i] = strtod(v[i], &end);
        if (end == v[i] || '\0' != *end || out[i] < 0) {
            opal_output(0, "pml_ob1 direct model: %s = \"%s\": \"%s\" is not a cost in ns; "
                        "using the built-in ones", name, str, v[i]);
            rc = OMPI_ERR_BAD_PARAM;
        }
    }
    opal_argv_free(v);
    return rc;
}

/* Per-class costs from the parameter, or the built-in ones. */
static void model_classes(const char *name, const char *str, const char *builtin, double *out)
{
    if (OMPI_SUCCESS != model_parse_classes(name, str, out)) {
        (void) model_parse_classes("built-in", builtin, out);
    }
}

static void model_register_double(const mca_base_component_t *comp, const char *name,
                                  const char *help, double *storage)
{
    mca_pml_ob1_direct_register_var(comp, name, help, MCA_BASE_VAR_TYPE_DOUBLE, OPAL_INFO_LVL_5,
                                    storage);
}

/* This core's L2 size (glibc's sysconf), 1 MiB when it does not say. */
static size_t model_l2_bytes(void)
{
    long l2 = -1;

#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? (size_t) l2 : (size_t) 1 << 20;
}

void mca_pml_ob1_direct_model_register(const mca_base_component_t *comp)
{
    static const mca_base_var_enum_value_t modes[] = {
        {MODEL_MODE_MODEL, "model"}, {MODEL_MODE_DIRECT, "direct"}, {MODEL_MODE_CICO, "cico"},
        {MODEL_MODE_STAGED, "staged"}, {MODEL_MODE_EAGER, "eager"}, {MODEL_MODE_OWN, "own"},
        {0, NULL}};
    mca_base_var_enum_t *mode_enum = NULL;

    (void) mca_base_var_enum_create("pml_ob1_direct_model_modes", modes, &mode_enum);
    (void) mca_base_component_var_register(comp, "direct_model",
                                           "Who chooses the path of a direct rendezvous: the cost "
                                           "model, or always direct, copy-in/copy-out, staged, "
                                           "or for what fits eager (the engine packs) or own "
                                           "(ob1's convertor packs) else direct",
                                           MCA_BASE_VAR_TYPE_INT, mode_enum, 0,
                                           MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_4,
                                           MCA_BASE_VAR_SCOPE_LOCAL, &model.mode);
    OBJ_RELEASE(mode_enum);
    model_register_double(comp, "direct_model_o_direct",
                          "Model: ns per message of the direct path", &model.o_direct);
    model_register_double(comp, "direct_model_o_cico",
                          "Model: ns per message of the copy-in/copy-out path", &model.o_cico);
    model_register_double(comp, "direct_model_o_staged",
                          "Model: ns per message of the staged path", &model.o_staged);
    model_register_double(comp, "direct_model_o_eager",
                          "Model: ns per message of an eager send", &model.o_eager);
    model_register_double(comp, "direct_model_o_own",
                          "Model: ns per message of ob1's own eager send (the convertor packs); "
                          "0: the model does not weigh it", &model.o_own);
    model_register_double(comp, "direct_model_g1", "Model: ns per byte streamed by one agent",
                          &model.g1);
    model_register_double(comp, "direct_model_g2",
                          "Model: ns per byte of each agent when two stream at once", &model.g2);
    model_register_double(comp, "direct_model_cross",
                          "Model: ns per byte that crosses between the cores through a fragment "
                          "or the staging ring (copy-in/copy-out, staged, eager)", &model.cross);
    model_register_double(comp, "direct_model_eager_byte",
                          "Model: ns per byte of an eager send, besides cross (the receiver "
                          "unpacks the fragment only once the sender has packed all of it)",
                          &model.eager_byte);
    model_register_double(comp, "direct_model_frag",
                          "Model: ns per fragment of the copy-in/copy-out path", &model.frag);
    model_register_double(comp, "direct_model_stage",
                          "Model: ns per chunk of the staged path", &model.stage);
    model_register_double(comp, "direct_model_chunk",
                          "Model: ns per chunk of the direct path (claim and seek)",
                          &model.chunk);
    model_register_double(comp, "direct_model_line",
                          "Model: ns per cache line the direct path moves between the cores",
                          &model.line);
    model_register_double(comp, "direct_model_index_direct",
                          "Model: direct path ns per block of an index list in the receive "
                          "layout when the receiver copies alone, besides its block-size class",
                          &model.index_direct);
    model_register_double(comp, "direct_model_index_shared",
                          "Model: direct path ns per cache line of a receive index list that "
                          "both agents write (it holds bytes of both halves)",
                          &model.index_shared);
    model_register_double(comp, "direct_model_pair",
                          "Model: direct path's factor on the block costs of the finer of "
                          "the two layouts (2: both sides' costs on equal layouts)", &model.pair);
    model_register_double(comp, "direct_model_far",
                          "Model: ns per sparse cache line, on every path, of a layout whose "
                          "lines exceed pml_ob1_direct_model_cache", &model.far);
    model.cache = model_l2_bytes();
    mca_pml_ob1_direct_register_var(comp, "direct_model_cache",
                                    "Model: bytes of cache lines that stay cached between "
                                    "messages (default: this core's L2)",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &model.cache);
    model_register_double(comp, "direct_model_walk",
                          "Model: ns per page walk beyond what pml_ob1_direct_model_tlb covers "
                          "(a strided run's page, an index list's block), on every path",
                          &model.walk);
    mca_pml_ob1_direct_register_var(comp, "direct_model_tlb",
                                    "Model: bytes of pages the TLB covers (see "
                                    "pml_ob1_direct_model_walk)",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &model.tlb);
    model_register_double(comp, "direct_model_index_pack",
                          "Model: pack (or unpack) ns per block of an index list, besides its "
                          "block-size class", &model.index_pack);
    model_register_double(comp, "direct_model_run_direct",
                          "Model: ns per run of blocks the direct engine starts", &model.run_direct);
    model.block_direct_str = (char *) default_block_direct;
    mca_pml_ob1_direct_register_var(comp, "direct_model_block_direct",
                                    "Model: direct engine ns per block, by block size "
                                    "<=8,<=32,<=128,<=512,<=2048,<=4096,larger (one side)",
                                    MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
                                    &model.block_direct_str);
    model.block_pack_str = (char *) default_block_pack;
    mca_pml_ob1_direct_register_var(comp, "direct_model_block_pack",
                                    "Model: pack (or unpack) ns per block, by the same "
                                    "block-size classes",
                                    MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
                                    &model.block_pack_str);
    model.cross_class_str = (char *) default_cross_class;
    mca_pml_ob1_direct_register_var(comp, "direct_model_cross_class",
                                    "Model: ns per byte, besides cross, of the blocks a side "
                                    "copies into or out of a fragment or the ring, by the "
                                    "block-size classes",
                                    MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
                                    &model.cross_class_str);
    mca_pml_ob1_direct_register_var(comp, "direct_model_learn",
                                    "Measure the paths of each layout pair and take the fastest",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &model.learn);
    mca_pml_ob1_direct_register_var(comp, "direct_model_follow",
                                    "The higher-named process of a pair takes the path the lower "
                                    "one last chose for the layout it sends from",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &model.follow);
    model_register_double(comp, "direct_model_explore",
                          "Paths predicted below this times the model's choice, or below the "
                          "cheapest measured cost, are measured too (0: every path)",
                          &model.explore);
    mca_pml_ob1_direct_register_var(comp, "direct_model_recheck",
                                    "Messages of a layout pair before the runner-up path is "
                                    "measured again; doubles while the choice holds (0: never)",
                                    MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &model.recheck);
}

/* ---- state ----------------------------------------------------------------- */

/* What one pair of layout shapes has cost so far. */
struct mca_pml_ob1_direct_pair_t {
    /* what a settled pair reads and writes at every message: its first
     * cache line */
    uint64_t sig;                           /* model_signature(); 0: free */
    uint64_t msgs;                          /* messages it chose a path for */
    int best;                               /* -1: still measuring */
    unsigned interval, until_check;         /* re-check schedule */
    unsigned settled;                       /* messages on best since */
    unsigned every;                         /* times one in this many */
    unsigned every_min;                     /* every, newly settled */
    unsigned n[MCA_PML_OB1_DIRECT_PATHS];   /* samples kept */
    double least[MCA_PML_OB1_DIRECT_PATHS]; /* each path's cost: its least sample */
    uint64_t first[MCA_PML_OB1_DIRECT_PATHS];               /* msgs at a path's first sample */
    uint64_t last[MCA_PML_OB1_DIRECT_PATHS];                /* and at its latest one */
    unsigned lost[MCA_PML_OB1_DIRECT_PATHS];                /* timed messages with no sample */
    unsigned tried[MCA_PML_OB1_DIRECT_PATHS]; /* sends on a receiver's trial, in a row */
    double sample[MCA_PML_OB1_DIRECT_PATHS][MODEL_RING]; /* the last ones, a ring */
} __opal_attribute_aligned__(64);

/* The predictions for one pair of layouts (the send layout may be a
 * peer's): computed at the pair's first match, then looked up. */
struct model_prediction {
    /* the key, then a settled pair's choice, while no sample has come in
     * since it was made (state.samples == samples): the next messages take
     * it without comparing again (model_settled).  These two cache lines
     * are all that a settled match reads of the record. */
    const opal_datatype_direct_layout_t *sl, *rl; /* NULL: free */
    uint64_t sserial, rserial;                    /* opal_datatype_direct_layout_serial() */
    size_t frag_bytes;
    bool staged_ok;
    bool countdown;                         /* a re-check is scheduled */
    struct mca_pml_ob1_direct_pair_t *pair; /* NULL: none */
    uint64_t peer;                          /* the sender it was made for */
    struct model_lead *lead;                /* the leader's record it set, NULL: none */
    uint64_t samples;
    uint64_t sig;                           /* model_signature() */
    uint64_t rkey;                          /* model_shape_key() of rl */
    int path;                               /* the model's cheapest */
    double ns[MCA_PML_OB1_DIRECT_PATHS], lo[MCA_PML_OB1_DIRECT_PATHS];
} __opal_attribute_aligned__(64);

/* The path a leader last took from one peer into a layout of one shape
 * (the datatype may be built anew for every exchange). */
struct model_lead {
    /* what every message reads: the first cache line */
    uint64_t peer;   /* the sender's name */
    uint64_t key;    /* model_shape_key() of the receive layout; 0: free */
    int path;
    bool trial;      /* path was tried, not settled on */
    bool compare;    /* the receives tried more than one path: time the sends */
    unsigned sends;  /* sends that looked the record up (one in MODEL_MEASURE_EVERY is timed) */
    unsigned send_n[MCA_PML_OB1_DIRECT_PATHS];
    double unpack;   /* predicted unpack of an eager send at the peer, < 0: not yet */
    /* the leader's own sends of a layout of this shape to peer: the last
     * MODEL_RING times under each path (model_sent) */
    double send[MCA_PML_OB1_DIRECT_PATHS][MODEL_RING];
    double send_least[MCA_PML_OB1_DIRECT_PATHS]; /* the least of each ring */
} __opal_attribute_aligned__(64);

/* A sender's timed cycle to one peer: the send that opened it, until the
 * next send of its record to that peer closes it. */
struct model_cycle {
    uint64_t peer;   /* 0: free */
    mca_pml_ob1_direct_send_choice_t choice; /* start_ns 0: none open */
    int32_t trials;  /* state.trials when it opened */
    bool tried;      /* the receiver of its rendezvous took a path it tries */
    unsigned waited; /* sends to peer of other records since */
};

static struct {
    opal_mutex_t lock;
    uint64_t samples; /* samples kept so far, of receives and of a leader's sends */
    struct mca_pml_ob1_direct_pair_t pairs[MODEL_PAIRS];
    struct model_prediction predictions[MODEL_PREDICTIONS];
    struct model_lead leads[MODEL_LEADS];
    uint64_t count[MCA_PML_OB1_DIRECT_PATHS], timed[MCA_PML_OB1_DIRECT_PATHS];
    uint64_t chosen[MCA_PML_OB1_DIRECT_PATHS]; /* of count: the model's (or leader's) choice */
    double predicted[MCA_PML_OB1_DIRECT_PATHS], measured[MCA_PML_OB1_DIRECT_PATHS];
    uint64_t sends[MCA_PML_OB1_DIRECT_PATHS]; /* a leader's timed sends, per hint */
    double sent[MCA_PML_OB1_DIRECT_PATHS];    /* and their times (model_sent) */
    uint64_t switches;
    /* a sender's choices for what fits an eager fragment (statistics) */
    uint64_t send_count[MCA_PML_OB1_DIRECT_SENDS], send_chosen[MCA_PML_OB1_DIRECT_SENDS];
    uint64_t send_timed[MCA_PML_OB1_DIRECT_SENDS], send_lost[MCA_PML_OB1_DIRECT_SENDS];
    uint64_t send_tried[MCA_PML_OB1_DIRECT_SENDS]; /* cycles not kept: a path was tried */
    double send_predicted[MCA_PML_OB1_DIRECT_SENDS], send_measured[MCA_PML_OB1_DIRECT_SENDS];
    struct model_cycle cycles[MODEL_CYCLES];
    volatile int32_t trials; /* receives on a path tried (this process's or its leader's) */
} state;

void mca_pml_ob1_direct_model_init(void)
{
    model_classes("pml_ob1_direct_model_block_direct", model.block_direct_str,
                  default_block_direct, model.block_direct);
    model_classes("pml_ob1_direct_model_block_pack", model.block_pack_str, default_block_pack,
                  model.block_pack);
    model_classes("pml_ob1_direct_model_cross_class", model.cross_class_str, default_cross_class,
                  model.cross_class);
    memset(&state, 0, sizeof(state));
    OBJ_CONSTRUCT(&state.lock, opal_mutex_t);
}

void mca_pml_ob1_direct_model_fini(bool print, unsigned rank)
{
    for (int p = 0; print && p < MCA_PML_OB1_DIRECT_PATHS; p++) {
        double n = state.count[p] ? (double) state.count[p] : 1.0;
        double m = state.timed[p] ? (double) state.timed[p] : 1.0;
        fprintf(stderr,
                "[pml_ob1 direct model] rank %u: %s count %" PRIu64
                " predicted %.3f us measured %.3f us (means; %" PRIu64 " timed; %" PRIu64
                " chosen by the model)\n",
                rank, path_name[p], state.count[p], state.predicted[p] / n / 1000.0,
                state.measured[p] / m / 1000.0, state.timed[p], state.chosen[p]);
    }
    for (int p = 0; print && p < MCA_PML_OB1_DIRECT_PATHS; p++) {
        double n = state.sends[p] ? (double) state.sends[p] : 1.0;
        fprintf(stderr,
                "[pml_ob1 direct model] rank %u: leader's sends on %s: %" PRIu64
                " timed, %.3f us (mean)\n",
                rank, path_name[p], state.sends[p], state.sent[p] / n / 1000.0);
    }
    for (int h = 0; print && h < MCA_PML_OB1_DIRECT_SENDS; h++) {
        double n = state.send_count[h] ? (double) state.send_count[h] : 1.0;
        double m = state.send_timed[h] ? (double) state.send_timed[h] : 1.0;
        fprintf(stderr,
                "[pml_ob1 direct model] rank %u: send %s count %" PRIu64
                " predicted %.3f us measured %.3f us (means; %" PRIu64 " timed, %" PRIu64
                " lost; %" PRIu64 " chosen by the model; %" PRIu64
                " not kept: a path was tried)\n",
                rank, send_name[h], state.send_count[h], state.send_predicted[h] / n / 1000.0,
                state.send_measured[h] / m / 1000.0, state.send_timed[h], state.send_lost[h],
                state.send_chosen[h], state.send_tried[h]);
    }
    if (print) {
        fprintf(stderr, "[pml_ob1 direct model] rank %u: switches %" PRIu64 "\n", rank,
                state.switches);
        fflush(stderr);
    }
    OBJ_DESTRUCT(&state.lock);
}

uint64_t mca_pml_ob1_direct_model_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* ---- prediction ------------------------------------------------------------- */

/* L(x): the distinct sparse lines of x.  The payload of a sparse block
 * lies in its line: it adds no footprint of its own.  The blocks of an
 * index list may share lines; they touch at most 64 lines per page
 * (index_pages). */
static size_t model_lines(const opal_datatype_direct_shape_t *s)
{
    size_t in_lists = s->index_blocks < s->sparse_lines ? s->index_blocks : s->sparse_lines;

    return s->sparse_lines - in_lists
           + (in_lists < 64 * s->index_pages ? in_lists : 64 * s->index_pages);
}

/* M(x): x's sparse lines when they do not fit in the cache. */
static double model_far_lines(const opal_datatype_direct_shape_t *s)
{
    size_t lines = model_lines(s);

    return 64 * lines > model.cache ? (double) lines : 0.0;
}

/* The pages of x's strided runs of sparse lines (its sparse pages less
 * its index lists'). */
static size_t model_strided_pages(const opal_datatype_direct_shape_t *x)
{
    return x->sparse_pages > x->index_pages ? x->sparse_pages - x->index_pages : 0;
}

/* Q(x): the pages of x's strided runs of sparse lines and of its index
 * lists. */
static double model_pages(const opal_datatype_direct_shape_t *x)
{
    return (double) (model_strided_pages(x) + x->index_pages);
}

/* P(x, W): the page walks of an agent that copies x among W pages of
 * sparse lines.  A strided run walks its pages in order, once each when
 * x's pages are more than the TLB covers: the lines of a page share its
 * walk (8-byte blocks 264 bytes apart, 15 to a page, took 1.3 ns a line
 * one way, blocks a page apart 4.6: forced direct, AMD EPYC family 25
 * model 1).  An index list's blocks come in random order: each misses
 * when its page is not among those the TLB holds.  The direct path's
 * agents walk both layouts (W their pages together): a list of 16384
 * 12-byte blocks on 2080 pages took 91 us one way forced direct, 48
 * staged, where a walk a page predicted 35 and 42. */
static double model_paged(const opal_datatype_direct_shape_t *x, double pages_walked)
{
    double tlb = (double) model.tlb, walks = 0.0;

    if ((double) x->sparse_pages * 4096.0 > tlb) {
        walks = (double) model_strided_pages(x);
    }
    if (pages_walked * 4096.0 > tlb) {
        walks += (double) x->index_blocks * (1.0 - tlb / (pages_walked * 4096.0));
    }
    return walks;
}

/* The sum over the block-size classes of per[c] * n[c]. */
static double model_by_class(const double *per, const size_t *n)
{
    double t = 0;

    for (int c = 0; c < OPAL_DATATYPE_DIRECT_CLASSES; c++) {
        t += per[c] * (double) n[c];
    }
    return t;
}

/* x's runs and blocks: blocks_D(x) (per_run = run_direct) or blocks_P(x)
 * without the lines beyond the cache and index_pack. */
static double model_block_walk(const opal_datatype_direct_shape_t *s, const double *per_block,
                               double per_run)
{
    return per_run * (double) s->runs + model_by_class(per_block, s->blocks_by_class);
}

/* blocks_D(x) (per_run = run_direct) or, without index_pack, blocks_P(x). */
static double model_blocks(const opal_datatype_direct_shape_t *s, const double *per_block,
                           double per_run)
{
    return model_block_walk(s, per_block, per_run) + model.far * model_far_lines(s)
           + model.walk * model_paged(s, model_pages(s));
}

/* pair_D above: the direct engine's copy from layout s into layout r. */
static double model_pair_blocks(const opal_datatype_direct_shape_t *s,
                                const opal_datatype_direct_shape_t *r)
{
    double ws = model_block_walk(s, model.block_direct, model.run_direct);
    double wr = model_block_walk(r, model.block_direct, model.run_direct);
    double pages = model_pages(s) + model_pages(r);

    return model.pair * (ws > wr ? ws : wr) + model.far * (model_far_lines(s) + model_far_lines(r))
           + model.walk * (model_paged(s, pages) + model_paged(r, pages));
}

/* What a side pays, besides its copy, for copying x into or out of a
 * fragment or the ring that the other core reads or wrote: h(x) above. */
static double model_fragment_side(const opal_datatype_direct_shape_t *x)
{
    return model_by_class(model.cross_class, x->bytes_by_class);
}

/* One side's pack or unpack by the convertor: blocks_P(x) + B * g1. */
static double model_pack(const opal_datatype_direct_shape_t *x)
{
    return model_blocks(x, model.block_pack, 0) + model.index_pack * (double) x->index_blocks
           + (double) x->bytes * model.g1;
}

/* One side of an eager send: the engine's pack (or unpack) of x when
 * pml_ob1_direct_eager_engine, else the convertor's, into or out of the
 * fragment. */
static double model_eager_side(const opal_datatype_direct_shape_t *x)
{
    if (mca_pml_ob1_direct_params.eager_engine) {
        return model_blocks(x, model.block_direct, model.run_direct) + (double) x->bytes * model.g1
               + model_fragment_side(x);
    }
    return model_pack(x) + model_fragment_side(x);
}

/* Two sides pipelined over n pieces: the slower side, plus the faster
 * side's first piece. */
static double model_pipeline(double a, double b, double n)
{
    return (a > b ? a : b) + (a > b ? b : a) / n;
}

/* The predictions ns[] and, in lo[], what they would be if no cache line
 * had to cross between the cores (data the peer only reads stays in both
 * caches): the model's uncertain term. */
static void model_predict_shapes(const opal_datatype_direct_shape_t *s,
                                 const opal_datatype_direct_shape_t *r, size_t frag_bytes,
                                 double ns[MCA_PML_OB1_DIRECT_PATHS],
                                 double lo[MCA_PML_OB1_DIRECT_PATHS])
{
    double bytes = (double) s->bytes, ds, dr, pair, frags, chunks, lines, index;

    ds = model_blocks(s, model.block_direct, model.run_direct);
    dr = model_blocks(r, model.block_direct, model.run_direct);
    pair = model_pair_blocks(s, r);
    if (mca_pml_ob1_direct_chunk_count(s->bytes) > 1) {
        lo[MCA_PML_OB1_DIRECT_PATH_DIRECT] = model.o_direct + pair / 2 + bytes * model.g2 / 2;
        lines = (double) (model_lines(s) + model_lines(r)) / 2;
        index = model.index_shared * (double) r->index_shared_lines;
    } else {
        lo[MCA_PML_OB1_DIRECT_PATH_DIRECT] = model.o_direct + pair + bytes * model.g1;
        lines = (double) model_lines(s);
        index = model.index_direct * (double) r->index_blocks;
    }
    lo[MCA_PML_OB1_DIRECT_PATH_DIRECT] += model.chunk
                                          * (double) mca_pml_ob1_direct_chunk_count(s->bytes);
    ns[MCA_PML_OB1_DIRECT_PATH_DIRECT] = lo[MCA_PML_OB1_DIRECT_PATH_DIRECT] + model.line * lines
                                         + index;

    chunks = (double) mca_pml_ob1_direct_stage_chunk_count(s->bytes);
    chunks = chunks < 1 ? 1 : chunks;
    ns[MCA_PML_OB1_DIRECT_PATH_STAGED] = model.o_staged + chunks * model.stage
                                         + model_pipeline(ds + bytes * model.g1
                                                              + model_fragment_side(s),
                                                          dr + bytes * model.g1
                                                              + model_fragment_side(r),
                                                          chunks)
                                         + bytes * model.cross;

    frags = frag_bytes ? (double) (s->bytes / frag_bytes + (0 != s->bytes % frag_bytes)) : 1;
    frags = frags < 1 ? 1 : frags;
    ns[MCA_PML_OB1_DIRECT_PATH_CICO] = model.o_cico + frags * model.frag
                                       + model_pipeline(model_pack(s) + model_fragment_side(s),
                                                        model_pack(r) + model_fragment_side(r),
                                                        frags)
                                       + bytes * model.cross;
    lo[MCA_PML_OB1_DIRECT_PATH_CICO] = ns[MCA_PML_OB1_DIRECT_PATH_CICO];
    lo[MCA_PML_OB1_DIRECT_PATH_STAGED] = ns[MCA_PML_OB1_DIRECT_PATH_STAGED];
}

/* ---- choice and online correction ------------------------------------------ */

/* x rounded to half an octave: 0, 1, then two steps per power of two. */
static uint64_t model_bucket(size_t x)
{
    uint64_t l = 0;

    if (0 == x) {
        return 0;
    }
    while ((x >> l) > 1) {
        l++;
    }
    return 1 + 2 * l + (l > 0 ? (x >> (l - 1)) & 1 : 0);
}

/* A pair of shapes as the model sees it, one nonzero number (FNV-1a over
 * the buckets of the bytes, the predictions and the direct path's
 * optimistic bound; an unavailable path counts as 0). */
#define MODEL_FNV_BASIS 14695981039346656037ull

/* One FNV-1a step: hash h extended by v. */
static inline uint64_t model_fnv(uint64_t h, uint64_t v)
{
    return (h ^ v) * 1099511628211ull;
}

static uint64_t model_signature(size_t bytes, const double *ns, const double *lo)
{
    uint64_t h = model_fnv(MODEL_FNV_BASIS, model_bucket(bytes));

    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        h = model_fnv(h, model_bucket(HUGE_VAL == ns[q] ? 0 : (size_t) ns[q]));
    }
    h = model_fnv(h, model_bucket((size_t) lo[MCA_PML_OB1_DIRECT_PATH_DIRECT]));
    return h ? h : 1;
}

/* A layout's shape as one nonzero number (FNV-1a over its counts). */
static uint64_t model_shape_key(const opal_datatype_direct_shape_t *x)
{
    size_t v[5 + OPAL_DATATYPE_DIRECT_CLASSES] = {x->bytes, x->blocks, x->runs, x->sparse_lines,
                                                  x->index_blocks};
    uint64_t h = MODEL_FNV_BASIS;

    memcpy(v + 5, x->blocks_by_class, sizeof(x->blocks_by_class));
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        h = model_fnv(h, (uint64_t) v[i]);
    }
    return h ? h : 1;
}

/* The record of sig; a new one times one message in every_min once settled. */
static struct mca_pml_ob1_direct_pair_t *model_pair(uint64_t sig, unsigned every_min)
{
    struct mca_pml_ob1_direct_pair_t *p = &state.pairs[(sig ^ (sig >> 29)) % MODEL_PAIRS];

    if (p->sig != sig) {
        memset(p, 0, sizeof(*p)); /* a new pair takes the slot */
        p->sig = sig;
        p->best = -1;
        p->every = p->every_min = every_min;
    }
    return p;
}

/* A path's cost: the least of its kept samples (noise only ever adds time:
 * a preemption, the peer's cache misses after it changed path). */
static double model_least(const double *sample, unsigned n)
{
    double m = sample[0];

    n = n < MODEL_RING ? n : MODEL_RING;
    for (unsigned i = 1; i < n; i++) {
        m = sample[i] < m ? sample[i] : m;
    }
    return m;
}

/* Keeps t in a ring of MODEL_RING samples holding n so far; returns the
 * least of them, which the choice at every match reads (computed once per
 * sample here, not at each match). */
static double model_ring_add(double *ring, unsigned *n, double t)
{
    ring[*n % MODEL_RING] = t;
    *n = *n < UINT_MAX ? *n + 1 : MODEL_RING;
    return model_least(ring, *n);
}

/* A path's receive cost (the pair's samples), plus, at a leader whose
 * sends of this shape were timed (send != NULL), what the path costs
 * those sends. */
static double model_cost(const struct mca_pml_ob1_direct_pair_t *p, int path, const double *send)
{
    return p->least[path] + (send ? send[path] : 0.0);
}

/* The leader's sends under each path (send[q], HUGE_VAL: not measured);
 * false when none of its sends of this shape was timed. */
static bool model_send_costs(const struct model_lead *ld, double send[MCA_PML_OB1_DIRECT_PATHS])
{
    bool any = false;

    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        send[q] = ld->send_n[q] >= MODEL_SAMPLES ? ld->send_least[q] : HUGE_VAL;
        any |= 0 != ld->send_n[q];
    }
    return any;
}

/* Is path q of pair p, with at least one sample, already more than
 * `explore` times `least`, the cheapest cost measured?  Such a path gets
 * no more messages: neither further samples nor its sends. */
static bool model_far_behind(const struct mca_pml_ob1_direct_pair_t *p, int q, double least)
{
    return 0 != model.explore && 0 != p->n[q] && model_cost(p, q, NULL) > model.explore * least;
}

/* Messages until the runner-up, costing `second` against the best path's
 * `best`, is measured again: the pair's interval times the cost ratio, so
 * that a re-check costs at most about 1/interval of the pair's time. */
static unsigned model_recheck_after(unsigned interval, double best, double second)
{
    double ratio = best > 0.0 && second < HUGE_VAL ? ceil(second / best) : 1.0;

    ratio = ratio < 1.0 ? 1.0 : ratio;
    return ratio * interval < MODEL_RECHECK_MAX ? (unsigned) (ratio * interval)
                                                  : MODEL_RECHECK_MAX;
}

/* Pair p's choice held for an interval: the next interval is twice as
 * long, and the best path's ring of samples spans about one interval. */
static void model_choice_held(struct mca_pml_ob1_direct_pair_t *p)
{
    p->interval = p->interval < MODEL_RECHECK_MAX / 2 ? 2 * p->interval : MODEL_RECHECK_MAX;
    p->every = p->interval / MODEL_RING > p->every_min ? p->interval / MODEL_RING
                                                       : p->every_min;
}

/* The path for the next message of pair p, the model's being `path`; ns
 * holds the predictions, HUGE_VAL for a path that is not available, lo
 * their optimistic bounds.  *timed: is this message's time needed (a
 * settled pair times one message in p->every: two clock reads
 * and a record on every small message cost more than the choice saves).
 * Under state.lock. */
static int model_learned_path(struct mca_pml_ob1_direct_pair_t *p, int path, const double *ns,
                              const double *lo, double *send, bool *timed, bool *settled,
                              bool *countdown)
{
    int best = path, second = -1, explore = -1;
    double m, best_cost, second_cost = HUGE_VAL, least;

    p->msgs++;
    if (p->n[path] < MODEL_SAMPLES) {
        return path;
    }
    least = model_cost(p, path, NULL);
    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        double c = q != path && p->n[q] >= MODEL_SAMPLES ? model_cost(p, q, NULL) : HUGE_VAL;
        least = c < least ? c : least;
    }
    /* a leader's path measured on its receives but not yet on its sends is
     * taken again (its sends follow it), for at most MODEL_RING messages;
     * after that the paths are compared on the receives alone.  A send
     * the peer declines (cico: ob1's own rendezvous) is not timed: it costs
     * what the receive costs plus the handshake that the direct path's
     * sends show beyond its receives.  A path far behind on its receives
     * keeps no send cost and so is out of the comparison. */
    for (int q = 0; NULL != send && q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        if (HUGE_VAL == ns[q] || p->n[q] < MODEL_SAMPLES || HUGE_VAL != send[q] ||
            model_far_behind(p, q, least)) {
            continue;
        }
        if (MCA_PML_OB1_DIRECT_PATH_CICO == q) {
            int d = MCA_PML_OB1_DIRECT_PATH_DIRECT;
            if (p->n[d] >= MODEL_SAMPLES && HUGE_VAL != send[d]) {
                send[q] = model_cost(p, q, NULL) + send[d] - model_cost(p, d, NULL);
                continue;
            }
        } else if (p->n[q] < MODEL_SAMPLES + MODEL_RING) {
            return q;
        }
        send = NULL;
    }
    m = best_cost = model_cost(p, path, send);
    /* explore the paths that might cost not far above the model's own
     * choice as predicted, or below the cheapest path as measured (the
     * model is wrong there), the most promising first; one whose first
     * samples are already far above the cheapest measured is dropped.  A
     * launch in a slow mode measures every path slower alike, so the
     * measured cost alone would send it down paths predicted 3 times
     * slower. */
    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        if (q != path && HUGE_VAL != ns[q] && p->n[q] < MODEL_SAMPLES &&
            p->lost[q] < MODEL_LOST_MAX && !model_far_behind(p, q, least) &&
            (0 == model.explore || lo[q] < model.explore * ns[path] || lo[q] < least) &&
            (explore < 0 || lo[q] < lo[explore])) {
            explore = q;
        }
    }
    if (explore >= 0) {
        return explore;
    }
    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        double c;
        if (q == path || HUGE_VAL == ns[q] || p->n[q] < MODEL_SAMPLES) {
            continue;
        }
        c = NULL == send && model_far_behind(p, q, least) ? HUGE_VAL : model_cost(p, q, send);
        if (c < best_cost && c < (1.0 - MODEL_MARGIN) * m) {
            best = q, best_cost = c;
        }
    }
    /* nor does a path replace the one in force unless it is cheaper by the
     * margin: two paths that cost the same would take turns on noise */
    if (best != p->best && p->best >= 0 && HUGE_VAL != ns[p->best] &&
        p->n[p->best] >= MODEL_SAMPLES &&
        best_cost > (1.0 - MODEL_MARGIN) * model_cost(p, p->best, send)) {
        best = p->best;
    }
    /* the runner-up: of the other measured paths, the cheapest on its
     * receives, however far behind (a path that was slow in a slow phase
     * of the run is measured again too, only less often) */
    best_cost = model_cost(p, best, NULL);
    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        double c = q != best && HUGE_VAL != ns[q] && p->n[q] >= MODEL_SAMPLES
                       ? model_cost(p, q, NULL)
                       : HUGE_VAL;
        if (c < second_cost) {
            second = q, second_cost = c;
        }
    }
    if (best != p->best) {
        int cur = p->best >= 0 ? p->best : path;
        /* a path is left for one measured later only after it is measured
         * again itself: whole phases of a run are slower (its first
         * messages, the host), and samples of two phases do not compare */
        if (best != cur && p->last[cur] < p->first[best]) {
            return cur;
        }
        state.switches += (p->best >= 0 || best != path);
        p->best = best;
        p->interval = model.recheck;
        p->until_check = model_recheck_after(p->interval, best_cost, second_cost);
        p->settled = 0;
        p->every = p->every_min;
    }
    *countdown = 0 != model.recheck && second >= 0;
    if (*countdown && 0 == --p->until_check) {
        model_choice_held(p);
        p->until_check = model_recheck_after(p->interval, best_cost, second_cost);
        return second; /* measure the runner-up again */
    }
    if (!*countdown && 0 != p->interval && p->settled >= p->interval) {
        /* nothing to re-check: the choice holds after each interval too */
        model_choice_held(p);
        p->settled = 0;
    }
    *timed = 0 == p->settled++ % p->every;
    *settled = true;
    return best;
}

/* The path of pair pr's next message when pr is settled and nothing
 * changed since its last choice: no sample came in, the message is not
 * one to time or a re-check (these take model_learned_path), and the
 * leader's record still holds the path.  Keeps the counts that
 * model_learned_path keeps for such a message.  -1: compare again.  Under
 * state.lock.  A small message's whole cost is a few hundred ns: this
 * reads three records' first lines and compares nothing. */
static int model_settled(const struct model_prediction *pr, uint64_t peer)
{
    struct mca_pml_ob1_direct_pair_t *p = pr->pair;
    const struct model_lead *ld = pr->lead;

    if (NULL == p || p->sig != pr->sig || pr->peer != peer || pr->samples != state.samples ||
        p->best < 0 || 0 == p->settled % p->every ||
        (pr->countdown && p->until_check <= 1) ||
        (NULL != ld && (ld->key != pr->rkey || ld->peer != peer || ld->path != p->best))) {
        return -1;
    }
    p->msgs++;
    p->settled++;
    p->until_check -= pr->countdown;
    return p->best;
}

/* Paths of pair p measured or about to be (path): with one alone, there
 * is nothing to compare and a leader does not time its sends. */
static int model_paths_tried(const struct mca_pml_ob1_direct_pair_t *p, int path)
{
    int n = 0;

    for (int q = 0; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        n += q == path || 0 != p->n[q];
    }
    return n;
}

/* The forced path of the mode, or -1 (the model chooses). */
static int model_forced_path(bool staged_ok)
{
    switch (model.mode) {
    case MODEL_MODE_DIRECT:
    case MODEL_MODE_EAGER:
    case MODEL_MODE_OWN:
        return MCA_PML_OB1_DIRECT_PATH_DIRECT;
    case MODEL_MODE_CICO:
        return MCA_PML_OB1_DIRECT_PATH_CICO;
    case MODEL_MODE_STAGED:
        return staged_ok ? MCA_PML_OB1_DIRECT_PATH_STAGED : MCA_PML_OB1_DIRECT_PATH_DIRECT;
    default:
        return -1;
    }
}

/* The predictions for layouts sl (sender) and rl (receiver), from the
 * table when this pair was seen before: a match then reads no shape and
 * computes nothing (a few hundred cycles saved on every small message).
 * Under state.lock; the entry stays valid until the lock is released. */
static struct model_prediction *model_predictions(const opal_datatype_direct_layout_t *sl,
                                                  const opal_datatype_direct_layout_t *rl,
                                                  size_t frag_bytes, bool staged_ok)
{
    uint64_t sserial = opal_datatype_direct_layout_serial(sl);
    uint64_t rserial = opal_datatype_direct_layout_serial(rl);
    uintptr_t h = ((uintptr_t) sl >> 4) ^ ((uintptr_t) rl >> 6)
                  ^ (uintptr_t) (sserial * 31 + rserial);
    struct model_prediction *pr = &state.predictions[h % MODEL_PREDICTIONS];
    opal_datatype_direct_shape_t s, r;

    if (pr->sl == sl && pr->rl == rl && pr->sserial == sserial && pr->rserial == rserial &&
        pr->frag_bytes == frag_bytes && pr->staged_ok == staged_ok) {
        return pr;
    }
    opal_datatype_direct_layout_shape(sl, &s);
    opal_datatype_direct_layout_shape(rl, &r);
    model_predict_shapes(&s, &r, frag_bytes, pr->ns, pr->lo);
    if (!staged_ok) {
        pr->ns[MCA_PML_OB1_DIRECT_PATH_STAGED] = HUGE_VAL;
    }
    pr->path = MCA_PML_OB1_DIRECT_PATH_DIRECT;
    for (int q = 1; q < MCA_PML_OB1_DIRECT_PATHS; q++) {
        pr->path = pr->ns[q] < pr->ns[pr->path] ? q : pr->path;
    }
    pr->sig = model_signature(s.bytes, pr->ns, pr->lo);
    pr->rkey = model_shape_key(&r);
    pr->sl = sl, pr->rl = rl;
    pr->sserial = sserial, pr->rserial = rserial;
    pr->frag_bytes = frag_bytes;
    pr->staged_ok = staged_ok;
    pr->pair = NULL;
    return pr;
}

/* The lead record of peer and shape key. */
static struct model_lead *model_lead(uint64_t peer, uint64_t key)
{
    uint64_t h = (peer * 0x9e3779b97f4a7c15ull) ^ key;

    return &state.leads[(h ^ (h >> 32)) % MODEL_LEADS];
}

/* The lead record of peer and shape key, taken over (emptied) when it
 * holds another's. */
static struct model_lead *model_lead_take(uint64_t peer, uint64_t key)
{
    struct model_lead *ld = model_lead(peer, key);

    if (ld->key != key || ld->peer != peer) {
        memset(ld, 0, sizeof(*ld));
        ld->peer = peer, ld->key = key;
        ld->unpack = -1.0;
    }
    return ld;
}

int mca_pml_ob1_direct_model_hint(uint64_t peer, const opal_datatype_direct_layout_t *l,
                                  uint64_t *key, bool *timed, bool *trial)
{
    struct model_lead *ld;
    int path = -1;

    *timed = false;
    *trial = false;
    if (MODEL_MODE_MODEL != model.mode || !model.follow) {
        return -1;
    }
    if (0 == *key) {
        opal_datatype_direct_shape_t x;
        opal_datatype_direct_layout_shape(l, &x);
        *key = model_shape_key(&x);
    }
    OPAL_THREAD_LOCK(&state.lock);
    ld = model_lead(peer, *key);
    if (ld->key == *key && ld->peer == peer) {
        path = ld->path;
        *trial = ld->trial;
        /* every send until the path has its samples, then one in so many */
        *timed = ld->compare && (ld->send_n[path] < MODEL_SAMPLES ||
                                 0 == ld->sends++ % MODEL_MEASURE_EVERY);
    }
    OPAL_THREAD_UNLOCK(&state.lock);
    return path;
}

void mca_pml_ob1_direct_model_sent(uint64_t peer, uint64_t key, int path,
                                   const opal_datatype_direct_layout_t *l, bool eager,
                                   uint64_t ns)
{
    struct model_lead *ld;
    double t = (double) ns;

    if (path < 0 || path >= MCA_PML_OB1_DIRECT_PATHS) {
        return;
    }
    OPAL_THREAD_LOCK(&state.lock);
    ld = model_lead(peer, key);
    if (ld->key == key && ld->peer == peer) {
        if (eager && NULL != l) {
            if (ld->unpack < 0) {
                opal_datatype_direct_shape_t x;
                opal_datatype_direct_layout_shape(l, &x);
                ld->unpack = model_eager_side(&x) + (double) x.bytes * model.eager_byte;
            }
            t += ld->unpack;
        }
        state.sends[path]++;
        state.sent[path] += t;
        ld->send_least[path] = model_ring_add(ld->send[path], &ld->send_n[path], t);
        state.samples++;
    }
    OPAL_THREAD_UNLOCK(&state.lock);
}

int mca_pml_ob1_direct_model_choose(const opal_datatype_direct_layout_t *sl,
                                    const opal_datatype_direct_layout_t *rl, size_t frag_bytes,
                                    bool staged_ok, const mca_pml_ob1_direct_peer_t *peer,
                                    mca_pml_ob1_direct_choice_t *choice)
{
    struct model_prediction *pr;
    int path = model_forced_path(staged_ok);
    bool timed = true, follow, forced = path >= 0;

    choice->pair = NULL;
    choice->trial = false;
    follow = path < 0 && model.follow && !peer->lead && peer->hint >= 0 &&
             peer->hint < MCA_PML_OB1_DIRECT_PATHS &&
             (MCA_PML_OB1_DIRECT_PATH_STAGED != peer->hint || staged_ok);
    if ((path >= 0 || follow) && !mca_pml_ob1_direct_params.stats) {
        /* a forced or followed path with nothing to report: no work at match */
        path = follow ? peer->hint : path;
        choice->path = path;
        choice->trial = follow && peer->hint_trial;
        choice->start_ns = 0; /* not measured */
        if (choice->trial) {
            (void) OPAL_THREAD_ADD_FETCH32(&state.trials, 1);
        }
        return path;
    }
    OPAL_THREAD_LOCK(&state.lock);
    pr = model_predictions(sl, rl, frag_bytes, staged_ok);
    if (follow) {
        path = peer->hint;
        choice->trial = peer->hint_trial;
    } else if (path < 0 && model.learn && (path = model_settled(pr, peer->name)) >= 0) {
        timed = false; /* the pair's choice holds: nothing to compare or record */
    } else if (path < 0) {
        struct model_lead *ld = peer->lead && model.follow ? model_lead_take(peer->name, pr->rkey)
                                                           : NULL;
        bool settled = false, countdown = false;
        path = pr->path;
        if (model.learn) {
            double send[MCA_PML_OB1_DIRECT_PATHS];
            bool sends = NULL != ld && model_send_costs(ld, send);
            choice->sig = pr->sig;
            choice->pair = model_pair(pr->sig, MODEL_MEASURE_EVERY);
            path = model_learned_path(choice->pair, path, pr->ns, pr->lo, sends ? send : NULL,
                                      &timed, &settled, &countdown);
            choice->trial = !settled;
        }
        if (NULL != ld) {
            ld->path = path;
            ld->trial = choice->trial;
            ld->compare = NULL != choice->pair && model_paths_tried(choice->pair, path) > 1;
        }
        pr->pair = settled ? choice->pair : NULL;
        pr->peer = peer->name;
        pr->lead = ld;
        pr->samples = state.samples;
        pr->countdown = countdown;
    }
    if (mca_pml_ob1_direct_params.stats) {
        state.count[path]++;
        state.chosen[path] += !forced;
        state.predicted[path] += pr->ns[path];
    }
    OPAL_THREAD_UNLOCK(&state.lock);
    choice->path = path;
    /* a time is needed by the pair's record, or by the statistics */
    timed = timed && (NULL != choice->pair || mca_pml_ob1_direct_params.stats);
    choice->start_ns = timed ? mca_pml_ob1_direct_model_now() : 0; /* 0: not timed */
    if (choice->trial) {
        (void) OPAL_THREAD_ADD_FETCH32(&state.trials, 1);
    }
    return path;
}

void mca_pml_ob1_direct_model_done(mca_pml_ob1_direct_choice_t *choice)
{
    double t = (double) (mca_pml_ob1_direct_model_now() - choice->start_ns);
    int path = choice->path;

    OPAL_THREAD_LOCK(&state.lock);
    state.timed[path]++;
    state.measured[path] += t;
    if (NULL != choice->pair && choice->pair->sig == choice->sig &&
        state.timed[path] > MODEL_WARMUP) {
        struct mca_pml_ob1_direct_pair_t *p = choice->pair;

        p->first[path] = 0 == p->n[path] ? p->msgs : p->first[path];
        p->last[path] = p->msgs;
        p->least[path] = model_ring_add(p->sample[path], &p->n[path], t);
        state.samples++;
    }
    OPAL_THREAD_UNLOCK(&state.lock);
    choice->start_ns = 0;
    choice->pair = NULL;
}

/* ---- a sender's eager or rendezvous -------------------------------------- */

/* The model's predictions for the sends of layout sl that fit an eager
 * fragment, into m: the rendezvous (its cheaper path, and the direct
 * path's optimistic bound), an eager send the engine packs, ob1's own.
 * The model's choice is an eager send only when the direct path loses
 * even if no cache line crosses between the cores. */
static void model_send_predict(const opal_datatype_direct_layout_t *sl,
                               mca_pml_ob1_direct_send_model_t *m)
{
    opal_datatype_direct_shape_t s;
    double ns[MCA_PML_OB1_DIRECT_PATHS], lo[MCA_PML_OB1_DIRECT_PATHS], crossing;
    const int d = MCA_PML_OB1_DIRECT_PATH_DIRECT, st = MCA_PML_OB1_DIRECT_PATH_STAGED;
    const int rndv = MCA_PML_OB1_DIRECT_SEND_RNDV, eager = MCA_PML_OB1_DIRECT_SEND_EAGER,
              own = MCA_PML_OB1_DIRECT_SEND_OWN;

    opal_datatype_direct_layout_shape(sl, &s);
    model_predict_shapes(&s, &s, SIZE_MAX, ns, lo);
    crossing = (double) s.bytes * (model.cross + model.eager_byte);
    m->ns[rndv] = ns[d] < ns[st] ? ns[d] : ns[st];
    m->lo[rndv] = lo[d] < ns[st] ? lo[d] : ns[st];
    m->ns[eager] = m->lo[eager] = model.o_eager + 2 * model_eager_side(&s) + crossing;
    m->ns[own] = m->lo[own] = model.o_own > 0 ? model.o_own + model_pack(&s)
                                                    + model_fragment_side(&s)
                                                    + model_eager_side(&s) + crossing
                                              : HUGE_VAL;
    m->how = rndv;
    if (m->ns[own] < m->lo[rndv] && m->ns[own] <= m->ns[eager]) {
        m->how = own;
    } else if (m->ns[eager] < m->lo[rndv]) {
        m->how = eager;
    }
    m->sig = model_fnv(model_signature(s.bytes, m->ns, m->lo), MODEL_SEND_SIG);
    m->sig = m->sig ? m->sig : 1;
    m->countdown = false;
}

/* A closed cycle's sample, under state.lock: the send in choice cost
 * end_ns - choice->start_ns (end_ns 0: the cycle never closed).  A cycle
 * in which a path was tried (trial) is no sample (the path in force is
 * measured again before it is left, and that re-measure must not land on
 * another path's trial), unless MODEL_TRIED_MAX in a row were not: a
 * leader whose peer sends eagerly gets few rendezvous of its own to settle
 * on, and its hint stays a trial. */
static void model_send_sample(const mca_pml_ob1_direct_send_choice_t *choice, uint64_t end_ns,
                              bool trial)
{
    struct mca_pml_ob1_direct_pair_t *p = choice->pair;
    int q = choice->how;
    double t;

    if (0 == choice->start_ns || q < 0 || q >= MCA_PML_OB1_DIRECT_SENDS) {
        return;
    }
    if (trial && NULL != p && p->sig == choice->sig && p->tried[q] < MODEL_TRIED_MAX) {
        p->tried[q]++;
        state.send_tried[q]++;
        return;
    }
    if (0 == end_ns || end_ns < choice->start_ns) {
        state.send_lost[q]++;
        if (NULL != p && p->sig == choice->sig) {
            p->lost[q] += p->lost[q] < UINT_MAX;
        }
        return;
    }
    t = (double) (end_ns - choice->start_ns);
    state.send_timed[q]++;
    state.send_measured[q] += t;
    if (NULL != p && p->sig == choice->sig && state.send_timed[q] > MODEL_WARMUP) {
        p->tried[q] = 0;
        p->first[q] = 0 == p->n[q] ? p->msgs : p->first[q];
        p->last[q] = p->msgs;
        p->least[q] = model_ring_add(p->sample[q], &p->n[q], t);
        state.samples++;
    }
}

/* The cycle slot of peer, NULL when another peer holds it. */
static struct model_cycle *model_cycle(uint64_t peer)
{
    struct model_cycle *c =
        &state.cycles[(unsigned) ((peer * 0x9e3779b97f4a7c15ull) >> 58) % MODEL_CYCLES];

    if (0 == c->peer) {
        c->peer = peer;
    }
    return c->peer == peer ? c : NULL;
}

/* Sender, under state.lock, at a send of record sig to the peer of cycle
 * c: closes c's open cycle when it is of that record (its sample ends
 * now), or gives it up after MODEL_CYCLE_WAIT sends of other records to
 * that peer (the layout is not sent again soon). */
static void model_cycle_close(struct model_cycle *c, uint64_t sig)
{
    if (0 == c->choice.start_ns) {
        return;
    }
    if (c->choice.sig == sig) {
        model_send_sample(&c->choice, mca_pml_ob1_direct_model_now(),
                          c->tried || c->trials != state.trials);
    } else if (++c->waited >= MODEL_CYCLE_WAIT) {
        model_send_sample(&c->choice, 0, false);
    } else {
        return;
    }
    c->choice.start_ns = 0;
}

int mca_pml_ob1_direct_model_send(uint64_t peer, const opal_datatype_direct_layout_t *sl,
                                  mca_pml_ob1_direct_send_model_t *m, bool learn,
                                  mca_pml_ob1_direct_send_choice_t *choice)
{
    mca_pml_ob1_direct_send_model_t local = {.sig = 0};
    struct mca_pml_ob1_direct_pair_t *p;
    struct model_cycle *c;
    bool timed = true, settled = false, countdown = false;
    int how;

    choice->pair = NULL;
    choice->start_ns = 0;
    choice->how = MCA_PML_OB1_DIRECT_SEND_RNDV;
    if (MODEL_MODE_EAGER == model.mode) {
        return choice->how = MCA_PML_OB1_DIRECT_SEND_EAGER;
    }
    if (MODEL_MODE_OWN == model.mode) {
        return choice->how = MCA_PML_OB1_DIRECT_SEND_OWN;
    }
    if (MODEL_MODE_MODEL != model.mode) {
        return choice->how;
    }
    m = NULL != m ? m : &local;
    if (0 == m->sig) {
        model_send_predict(sl, m);
    }
    if (!learn || !model.learn) {
        choice->how = m->how;
        if (mca_pml_ob1_direct_params.stats) {
            OPAL_THREAD_LOCK(&state.lock);
            state.send_count[m->how]++;
            state.send_chosen[m->how]++;
            state.send_predicted[m->how] += m->ns[m->how];
            OPAL_THREAD_UNLOCK(&state.lock);
        }
        return m->how;
    }
    OPAL_THREAD_LOCK(&state.lock);
    c = model_cycle(peer);
    if (NULL != c) {
        model_cycle_close(c, m->sig);
    }
    p = model_pair(m->sig, MODEL_SEND_EVERY);
    if (p->best >= 0 && 0 != p->settled % p->every &&
        !(m->countdown && p->until_check <= 1)) {
        /* a settled record between its timed messages */
        p->msgs++;
        p->settled++;
        p->until_check -= m->countdown;
        how = p->best;
        timed = false;
    } else {
        how = model_learned_path(p, m->how, m->ns, m->lo, NULL, &timed, &settled, &countdown);
        m->countdown = countdown;
    }
    if (mca_pml_ob1_direct_params.stats) {
        state.send_count[how]++;
        state.send_chosen[how]++;
        state.send_predicted[how] += m->ns[how];
    }
    choice->how = how;
    if (timed && NULL != c && 0 == c->choice.start_ns) {
        /* one cycle per peer is open at a time: another record's send to
         * the same peer may come between */
        choice->pair = p;
        choice->sig = m->sig;
        choice->peer = peer;
        choice->start_ns = mca_pml_ob1_direct_model_now();
        c->choice = *choice;
        c->trials = state.trials;
        c->tried = false;
        c->waited = 0;
    }
    OPAL_THREAD_UNLOCK(&state.lock);
    return how;
}

/* The open cycle that choice timed, NULL when it is closed, under
 * state.lock. */
static struct model_cycle *model_cycle_of(const mca_pml_ob1_direct_send_choice_t *choice)
{
    struct model_cycle *c = model_cycle(choice->peer);

    return NULL != c && c->choice.start_ns == choice->start_ns && c->choice.sig == choice->sig
               ? c
               : NULL;
}

void mca_pml_ob1_direct_model_send_tried(const mca_pml_ob1_direct_send_choice_t *choice)
{
    struct model_cycle *c;

    if (0 == choice->start_ns) {
        return;
    }
    OPAL_THREAD_LOCK(&state.lock);
    if (NULL != (c = model_cycle_of(choice))) {
        c->tried = true;
    }
    OPAL_THREAD_UNLOCK(&state.lock);
}

void mca_pml_ob1_direct_model_send_untimed(const mca_pml_ob1_direct_send_choice_t *choice)
{
    struct model_cycle *c;

    if (0 == choice->start_ns) {
        return;
    }
    OPAL_THREAD_LOCK(&state.lock);
    if (NULL != (c = model_cycle_of(choice))) {
        c->choice.start_ns = 0;
    }
    OPAL_THREAD_UNLOCK(&state.lock);
}
