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
 * shapes s and r (opal_datatype_direct_layout_shape):
 *
 *   blocks_D(x) = run_direct * runs(x) + sum_c n_c(x) * block_direct[c]
 *   blocks_P(x) = sum_c n_c(x) * block_pack[c]
 *
 *   direct = o_direct + (blocks_D(s) + blocks_D(r)) / 2 + B * g2 / 2
 *            (both sides copy; one side alone, B * g1 and no halving, when
 *            the message is one chunk)
 *   cico   = o_cico + F * frag + max(P, U) + min(P, U) / F
 *            with P = blocks_P(s) + B * g1, U = blocks_P(r) + B * g1,
 *            F = ceil(B / fragment size): pack and unpack pipelined
 *
 * All costs are nanoseconds.
 *
 * The online correction keeps a record per pair of layout shapes (bytes,
 * runs and blocks per class of both layouts, each rounded to half an
 * octave, so that a datatype built anew for every exchange keeps its
 * record): the last MODEL_RING measured times of each path (receiver:
 * match to completion), after its first MODEL_WARMUP ones (first use of a
 * path pays for fragments, pages and caches).  A path is measured once it
 * has MODEL_SAMPLES of them.  A pair's first messages take the model's
 * path.  When that path's cost (the least of its kept samples) is
 * above `explore` times its prediction, or above the other path's
 * prediction, the model is suspect and the next messages measure the other
 * path.  Once both are measured, the cheaper path wins (the model's path
 * unless the other is cheaper by more than MODEL_MARGIN).  The path not
 * taken is measured again after `recheck` messages, then after twice as
 * many each time the choice holds (at most MODEL_RECHECK_MAX).
 */

#include "ompi_config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#define MODEL_PAIRS 256          /* learning records (a direct-mapped table) */
#define MODEL_WARMUP 3           /* first measurements of a path not kept */
#define MODEL_SAMPLES 3          /* measurements a path needs before it is compared */
#define MODEL_RING 8             /* measurements kept per path of a pair */
#define MODEL_KNOWN (MODEL_WARMUP + MODEL_SAMPLES)
#define MODEL_MARGIN 0.03        /* the other path must be this much faster */
#define MODEL_RECHECK_MAX 4096u  /* longest interval between re-checks */

static const char *const path_name[MCA_PML_OB1_DIRECT_PATHS] = {"direct", "cico"};

/* ---- parameters ------------------------------------------------------------ */

static struct {
    int mode;
    double o_direct, o_cico; /* per message */
    double g1, g2;           /* per byte: one agent; each of two agents at once */
    double frag;             /* per fragment of copy-in/copy-out */
    double run_direct;       /* per run of blocks the engine starts */
    char *block_direct_str, *block_pack_str;
    double block_direct[OPAL_DATATYPE_DIRECT_CLASSES], block_pack[OPAL_DATATYPE_DIRECT_CLASSES];
    bool learn;
    double explore;   /* measured / predicted that makes the model suspect */
    unsigned recheck;
} model = {
    /* Conservative: the direct path unless the layouts are such that
     * packing is clearly cheaper.  pvas-calibrate measures the machine. */
    .mode = MODEL_MODE_MODEL,
    .o_direct = 1500.0,
    .o_cico = 3000.0,
    .g1 = 0.1,
    .g2 = 0.12,
    .frag = 300.0,
    .run_direct = 2.0,
    .block_direct_str = NULL,
    .block_pack_str = NULL,
    .learn = true,
    .explore = 1.5,
    .recheck = 64,
};

static const char *const default_block_direct = "1.5,2,4,12,60,300";
static const char *const default_block_pack = "4,5,8,16,60,300";

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

void mca_pml_ob1_direct_model_register(const mca_base_component_t *comp)
{
    static const mca_base_var_enum_value_t modes[] = {
        {MODEL_MODE_MODEL, "model"}, {MODEL_MODE_DIRECT, "direct"}, {MODEL_MODE_CICO, "cico"},
        {0, NULL}};
    mca_base_var_enum_t *mode_enum = NULL;

    (void) mca_base_var_enum_create("pml_ob1_direct_model_modes", modes, &mode_enum);
    (void) mca_base_component_var_register(comp, "direct_model",
                                           "Who chooses the path of a direct rendezvous: the cost "
                                           "model, or always direct, or always copy-in/copy-out",
                                           MCA_BASE_VAR_TYPE_INT, mode_enum, 0, 0, OPAL_INFO_LVL_4,
                                           MCA_BASE_VAR_SCOPE_READONLY, &model.mode);
    OBJ_RELEASE(mode_enum);
    model_register_double(comp, "direct_model_o_direct",
                          "Model: ns per message of the direct path", &model.o_direct);
    model_register_double(comp, "direct_model_o_cico",
                          "Model: ns per message of the copy-in/copy-out path", &model.o_cico);
    model_register_double(comp, "direct_model_g1", "Model: ns per byte streamed by one agent",
                          &model.g1);
    model_register_double(comp, "direct_model_g2",
                          "Model: ns per byte of each agent when two stream at once", &model.g2);
    model_register_double(comp, "direct_model_frag",
                          "Model: ns per fragment of the copy-in/copy-out path", &model.frag);
    model_register_double(comp, "direct_model_run_direct",
                          "Model: ns per run of blocks the direct engine starts", &model.run_direct);
    model.block_direct_str = (char *) default_block_direct;
    mca_pml_ob1_direct_register_var(comp, "direct_model_block_direct",
                                    "Model: direct engine ns per block, by block size "
                                    "<=8,<=32,<=128,<=512,<=4096,larger (one side)",
                                    MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
                                    &model.block_direct_str);
    model.block_pack_str = (char *) default_block_pack;
    mca_pml_ob1_direct_register_var(comp, "direct_model_block_pack",
                                    "Model: pack (or unpack) ns per block, by the same "
                                    "block-size classes",
                                    MCA_BASE_VAR_TYPE_STRING, OPAL_INFO_LVL_5,
                                    &model.block_pack_str);
    mca_pml_ob1_direct_register_var(comp, "direct_model_learn",
                                    "Measure both paths of each layout pair and take the faster",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &model.learn);
    model_register_double(comp, "direct_model_explore",
                          "Measured / predicted time of the model's path above which the other "
                          "path is measured too (0: always)",
                          &model.explore);
    mca_pml_ob1_direct_register_var(comp, "direct_model_recheck",
                                    "Messages of a layout pair before the path not taken is "
                                    "measured again; doubles while the choice holds (0: never)",
                                    MCA_BASE_VAR_TYPE_UNSIGNED_INT, OPAL_INFO_LVL_5, &model.recheck);
}

/* ---- state ----------------------------------------------------------------- */

/* What one pair of layout shapes has cost so far. */
struct mca_pml_ob1_direct_pair_t {
    uint64_t sig; /* model_signature(); 0: free */
    double sample[MCA_PML_OB1_DIRECT_PATHS][MODEL_RING]; /* the last ones, a ring */
    unsigned n[MCA_PML_OB1_DIRECT_PATHS];                   /* samples taken */
    int best;                                               /* -1: still measuring */
    unsigned interval, until_check;                         /* re-check schedule */
};

static struct {
    opal_mutex_t lock;
    struct mca_pml_ob1_direct_pair_t pairs[MODEL_PAIRS];
    uint64_t count[MCA_PML_OB1_DIRECT_PATHS];
    double predicted[MCA_PML_OB1_DIRECT_PATHS], measured[MCA_PML_OB1_DIRECT_PATHS];
    uint64_t switches;
} state;

void mca_pml_ob1_direct_model_init(void)
{
    model_classes("pml_ob1_direct_model_block_direct", model.block_direct_str,
                  default_block_direct, model.block_direct);
    model_classes("pml_ob1_direct_model_block_pack", model.block_pack_str, default_block_pack,
                  model.block_pack);
    memset(state.pairs, 0, sizeof(state.pairs));
    memset(state.count, 0, sizeof(state.count));
    memset(state.predicted, 0, sizeof(state.predicted));
    memset(state.measured, 0, sizeof(state.measured));
    state.switches = 0;
    OBJ_CONSTRUCT(&state.lock, opal_mutex_t);
}

void mca_pml_ob1_direct_model_fini(bool print, unsigned rank)
{
    for (int p = 0; print && p < MCA_PML_OB1_DIRECT_PATHS; p++) {
        double n = state.count[p] ? (double) state.count[p] : 1.0;
        fprintf(stderr,
                "[pml_ob1 direct model] rank %u: %s count %" PRIu64
                " predicted %.3f us measured %.3f us (means)\n",
                rank, path_name[p], state.count[p], state.predicted[p] / n / 1000.0,
                state.measured[p] / n / 1000.0);
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

static double model_blocks(const opal_datatype_direct_shape_t *s, const double *per_block,
                           double per_run)
{
    double t = per_run * (double) s->runs;

    for (int c = 0; c < OPAL_DATATYPE_DIRECT_CLASSES; c++) {
        t += per_block[c] * (double) s->blocks_by_class[c];
    }
    return t;
}

static void model_predict_shapes(const opal_datatype_direct_shape_t *s,
                                 const opal_datatype_direct_shape_t *r, size_t frag_bytes,
                                 double ns[MCA_PML_OB1_DIRECT_PATHS])
{
    double bytes, work, pack, unpack, frags, hi, lo;

    bytes = (double) s->bytes;

    work = model_blocks(s, model.block_direct, model.run_direct)
           + model_blocks(r, model.block_direct, model.run_direct);
    if (mca_pml_ob1_direct_chunk_count(s->bytes) > 1) {
        ns[MCA_PML_OB1_DIRECT_PATH_DIRECT] = model.o_direct + work / 2 + bytes * model.g2 / 2;
    } else {
        ns[MCA_PML_OB1_DIRECT_PATH_DIRECT] = model.o_direct + work + bytes * model.g1;
    }

    pack = model_blocks(s, model.block_pack, 0) + bytes * model.g1;
    unpack = model_blocks(r, model.block_pack, 0) + bytes * model.g1;
    frags = (double) ((s->bytes + frag_bytes - 1) / (frag_bytes ? frag_bytes : 1));
    frags = frags < 1 ? 1 : frags;
    hi = pack > unpack ? pack : unpack;
    lo = pack > unpack ? unpack : pack;
    ns[MCA_PML_OB1_DIRECT_PATH_CICO] = model.o_cico + frags * model.frag + hi + lo / frags;
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

/* A pair of shapes as one nonzero number (FNV-1a over the buckets). */
static uint64_t model_signature(const opal_datatype_direct_shape_t *s,
                                const opal_datatype_direct_shape_t *r)
{
    const opal_datatype_direct_shape_t *x[2] = {s, r};
    uint64_t h = 14695981039346656037ull;

    for (int i = 0; i < 2; i++) {
        h = (h ^ model_bucket(x[i]->bytes)) * 1099511628211ull;
        h = (h ^ model_bucket(x[i]->runs)) * 1099511628211ull;
        for (int c = 0; c < OPAL_DATATYPE_DIRECT_CLASSES; c++) {
            h = (h ^ model_bucket(x[i]->blocks_by_class[c])) * 1099511628211ull;
        }
    }
    return h ? h : 1;
}

static struct mca_pml_ob1_direct_pair_t *model_pair(uint64_t sig)
{
    struct mca_pml_ob1_direct_pair_t *p = &state.pairs[(sig ^ (sig >> 29)) % MODEL_PAIRS];

    if (p->sig != sig) {
        memset(p, 0, sizeof(*p)); /* a new pair takes the slot */
        p->sig = sig;
        p->best = -1;
    }
    return p;
}

/* A path's cost: the least of its kept samples (noise only ever adds time:
 * a preemption, the peer's cache misses after it changed path). */
static double model_cost(const struct mca_pml_ob1_direct_pair_t *p, int path)
{
    unsigned n = p->n[path] - MODEL_WARMUP;
    double m = p->sample[path][0];

    n = n < MODEL_RING ? n : MODEL_RING;
    for (unsigned i = 1; i < n; i++) {
        m = p->sample[path][i] < m ? p->sample[path][i] : m;
    }
    return m;
}

/* The path for the next message of pair p, the model's being `path`.
 * Under state.lock. */
static int model_learned_path(struct mca_pml_ob1_direct_pair_t *p, int path, const double *ns)
{
    int other = 1 - path, best;

    if (p->n[path] < MODEL_KNOWN) {
        return path;
    }
    if (p->n[other] < MODEL_KNOWN) {
        /* explore only when the model looks wrong about this pair */
        double m = model_cost(p, path);
        return (m > model.explore * ns[path] || ns[other] < m) ? other : path;
    }
    best = model_cost(p, other) < (1.0 - MODEL_MARGIN) * model_cost(p, path)
               ? other
               : path;
    if (best != p->best) {
        state.switches += (p->best >= 0 || best != path);
        p->best = best;
        p->interval = p->until_check = model.recheck;
    }
    if (0 != model.recheck && 0 == --p->until_check) {
        p->interval = p->interval < MODEL_RECHECK_MAX / 2 ? 2 * p->interval : MODEL_RECHECK_MAX;
        p->until_check = p->interval;
        return 1 - best; /* measure the path not taken again */
    }
    return best;
}

int mca_pml_ob1_direct_model_choose(const opal_datatype_direct_layout_t *sl,
                                    const opal_datatype_direct_layout_t *rl, size_t frag_bytes,
                                    mca_pml_ob1_direct_choice_t *choice)
{
    opal_datatype_direct_shape_t s, r;
    double ns[MCA_PML_OB1_DIRECT_PATHS];
    int path;

    if (MODEL_MODE_MODEL != model.mode && !mca_pml_ob1_direct_params.stats) {
        /* a forced path with nothing to report: no work at match */
        choice->pair = NULL;
        choice->path = MODEL_MODE_CICO == model.mode ? MCA_PML_OB1_DIRECT_PATH_CICO
                                                     : MCA_PML_OB1_DIRECT_PATH_DIRECT;
        choice->predicted_ns = 0;
        choice->start_ns = 0; /* not measured */
        return choice->path;
    }
    opal_datatype_direct_layout_shape(sl, &s);
    opal_datatype_direct_layout_shape(rl, &r);
    model_predict_shapes(&s, &r, frag_bytes, ns);
    path = ns[MCA_PML_OB1_DIRECT_PATH_CICO] < ns[MCA_PML_OB1_DIRECT_PATH_DIRECT]
               ? MCA_PML_OB1_DIRECT_PATH_CICO
               : MCA_PML_OB1_DIRECT_PATH_DIRECT;
    choice->pair = NULL;
    if (MODEL_MODE_DIRECT == model.mode) {
        path = MCA_PML_OB1_DIRECT_PATH_DIRECT;
    } else if (MODEL_MODE_CICO == model.mode) {
        path = MCA_PML_OB1_DIRECT_PATH_CICO;
    } else if (model.learn) {
        choice->sig = model_signature(&s, &r);
        OPAL_THREAD_LOCK(&state.lock);
        choice->pair = model_pair(choice->sig);
        path = model_learned_path(choice->pair, path, ns);
        OPAL_THREAD_UNLOCK(&state.lock);
    }
    choice->path = path;
    choice->predicted_ns = ns[path];
    choice->start_ns = mca_pml_ob1_direct_model_now();
    return path;
}

void mca_pml_ob1_direct_model_done(mca_pml_ob1_direct_choice_t *choice)
{
    double t = (double) (mca_pml_ob1_direct_model_now() - choice->start_ns);
    int path = choice->path;

    OPAL_THREAD_LOCK(&state.lock);
    state.count[path]++;
    state.predicted[path] += choice->predicted_ns;
    state.measured[path] += t;
    if (NULL != choice->pair && choice->pair->sig == choice->sig) {
        struct mca_pml_ob1_direct_pair_t *p = choice->pair;

        if (p->n[path] >= MODEL_WARMUP) {
            p->sample[path][(p->n[path] - MODEL_WARMUP) % MODEL_RING] = t;
        }
        p->n[path] = p->n[path] < UINT_MAX ? p->n[path] + 1 : MODEL_WARMUP + MODEL_RING;
    }
    OPAL_THREAD_UNLOCK(&state.lock);
    choice->start_ns = 0;
    choice->pair = NULL;
}
