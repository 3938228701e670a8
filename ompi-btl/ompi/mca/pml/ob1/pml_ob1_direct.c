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
 * Direct Rendezvous (see pml_ob1_direct.h for the protocol).
 *
 * Lifetimes:
 *  - the descriptor is the sender's; it is freed when both the sender's
 *    poll entry and the receiver (descriptor->recv_done, or its normal ACK
 *    when it declines) have let go of it (refs);
 *  - the send layout is released when the sender completes (every byte is
 *    copied, so no chunk can be claimed any more) or when the receiver
 *    declines; the receive layout when the receiver completes;
 *  - the sender completes when its poll sees descriptor->copied reach the
 *    length (send_state CAS against a decline); the receiver completes when
 *    it sees the same, right after setting recv_done.  No FIN message.
 * Neither side ever calls a function pointer of the other's memory: the
 * peer's layout is plain data (opal_datatype_direct.h).
 */

#include "ompi_config.h"

#include "opal/prefetch.h"
#include "opal/runtime/opal_progress.h"
#include "opal/util/output.h"
#include "ompi/attribute/attribute.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/rte/rte.h"
#include "ompi/runtime/ompi_spc.h"

#include "pml_ob1.h"
#include "pml_ob1_direct.h"
#include "pml_ob1_recvreq.h"
#include "pml_ob1_sendreq.h"

static void direct_desc_construct(mca_pml_ob1_direct_desc_t *desc)
{
    desc->send_layout = NULL;
    desc->recv_layout = NULL;
    desc->stage = NULL;
    desc->stage_ring = NULL;
}

OBJ_CLASS_INSTANCE(mca_pml_ob1_direct_desc_t, opal_free_list_item_t, direct_desc_construct, NULL);

/* ---- MCA parameters ------------------------------------------------------ */

mca_pml_ob1_direct_params_t mca_pml_ob1_direct_params = {
    .enable = true,
    .min_size = 1024,
    .contig_min_size = 262144,
    .min_bytes_per_element = 0,
    .chunk_size = 65536,
    .chunks = 16,
    .stage_chunk_size = 16384,
    .chunk_affinity = true,
    .eager_engine = true,
    .stats = false,
};

void mca_pml_ob1_direct_register_var(const mca_base_component_t *comp, const char *name,
                                     const char *help, mca_base_var_type_t type, int level,
                                     void *storage)
{
    (void) mca_base_component_var_register(comp, name, help, type, NULL, 0, 0, level,
                                           MCA_BASE_VAR_SCOPE_READONLY, storage);
}

void mca_pml_ob1_direct_register(const mca_base_component_t *comp)
{
    mca_pml_ob1_direct_params_t *p = &mca_pml_ob1_direct_params;

    mca_pml_ob1_direct_register_var(comp, "direct_enable",
                                    "Copy messages to peers in this address space (BTL flag "
                                    "shared-addr-space) layout to layout, sender and receiver "
                                    "in parallel",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_4, &p->enable);
    mca_pml_ob1_direct_register_var(comp, "direct_min_size",
                                    "Smallest non-contiguous message (packed bytes) that may go "
                                    "direct",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_4, &p->min_size);
    mca_pml_ob1_direct_register_var(comp, "direct_contig_min_size",
                                    "Smallest message with a contiguous send buffer that may go "
                                    "direct",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_4,
                                    &p->contig_min_size);
    mca_pml_ob1_direct_register_var(comp, "direct_min_bytes_per_element",
                                    "Go direct only for datatypes with at least this many bytes "
                                    "per description element (0: every datatype the engine "
                                    "compiles)",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5,
                                    &p->min_bytes_per_element);
    mca_pml_ob1_direct_register_var(comp, "direct_chunk_size",
                                    "Largest chunk (bytes) that sender and receiver claim from "
                                    "the message's two ends",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_4, &p->chunk_size);
    mca_pml_ob1_direct_register_var(comp, "direct_chunks",
                                    "Chunks a message is cut into when that gives chunks of "
                                    "4 KiB up to pml_ob1_direct_chunk_size",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5, &p->chunks);
    mca_pml_ob1_direct_register_var(comp, "direct_stage_chunk_size",
                                    "Largest chunk (bytes) of the staged path's ring (16 slots "
                                    "in the sender's memory; 0: no staged path)",
                                    MCA_BASE_VAR_TYPE_SIZE_T, OPAL_INFO_LVL_5,
                                    &p->stage_chunk_size);
    mca_pml_ob1_direct_register_var(comp, "direct_chunk_affinity",
                                    "The lower-ranked process of a pair copies a message's front "
                                    "chunks whichever way it goes (0: the sender does)",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &p->chunk_affinity);
    mca_pml_ob1_direct_register_var(comp, "direct_eager_engine",
                                    "Pack and unpack eager messages between peers in this "
                                    "address space with the engine's compiled layouts",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &p->eager_engine);
    mca_pml_ob1_direct_model_register(comp);
    mca_pml_ob1_direct_register_var(comp, "direct_stats",
                                    "Print one line of direct-rendezvous statistics per process "
                                    "at MPI_Finalize",
                                    MCA_BASE_VAR_TYPE_BOOL, OPAL_INFO_LVL_5, &p->stats);
}

/* ---- state of this process -------------------------------------------- */

enum direct_kind { DIRECT_SEND, DIRECT_RECV };

/* A layout cached on a datatype (attribute of an internal keyval): compiled
 * once, used by every message of that datatype and count until the datatype
 * is destroyed (the attribute's delete callback releases it; requests hold a
 * reference on their datatype, so no transfer can still be using it). */
struct direct_cached {
    struct direct_cached *prev, *next; /* every live entry, for finalize */
    ompi_datatype_t *dt;
    size_t count;
    opal_datatype_direct_layout_t *layout;
    mca_pml_ob1_direct_send_model_t send; /* the model's predictions for its sends */
    uint64_t shape_key; /* the model's key of its shape: 0 not computed yet */
};

struct direct_entry {
    enum direct_kind kind;
    void *ptr; /* mca_pml_ob1_direct_desc_t (send) or recv request (recv) */
};

#define DIRECT_RECENT 16 /* slots of direct.recent */

static struct {
    bool initialized;
    opal_free_list_t descs;
    opal_free_list_t rings;     /* staging rings, at most MCA_PML_OB1_DIRECT_STAGE_RINGS */
    opal_mutex_t lock;          /* entries, n, cap */
    struct direct_entry *entries;
    size_t n, cap;
    volatile int32_t polling;   /* one poller at a time */
    bool progress_registered;
    int keyval;                   /* datatype attribute of the layout cache, -1: none */
    struct direct_cached *cached; /* list of live cache entries */
    /* the entries last found, by datatype address (without threads only) */
    struct direct_cached *recent[DIRECT_RECENT];
    /* statistics (pml_ob1_direct_stats) */
    uint64_t sent, received, fallback, copied_self, bytes_total, model_declined, staged, eager;
    uint64_t own; /* messages the model left to ob1's own eager send */
    uint64_t eager_packed, eager_unpacked; /* eager messages the engine packed, unpacked */
} direct;

/* ---- layout cache --------------------------------------------------------- */

/* direct.recent's slot of a datatype: its address over the allocator's
 * 16-byte granule. */
static inline size_t direct_recent_slot(const ompi_datatype_t *dt)
{
    return ((uintptr_t) dt >> 4) % DIRECT_RECENT;
}

static int direct_attr_copy(MPI_Datatype oldtype, int keyval, void *extra, void *in, void *out,
                            int *flag, MPI_Datatype newtype)
{
    (void) oldtype, (void) keyval, (void) extra, (void) in, (void) out, (void) newtype;
    *flag = 0; /* MPI_Type_dup: the new datatype compiles its own */
    return MPI_SUCCESS;
}

static int direct_attr_delete(MPI_Datatype dt, int keyval, void *value, void *extra)
{
    struct direct_cached *c = (struct direct_cached *) value;

    (void) dt, (void) keyval, (void) extra;
    OPAL_THREAD_LOCK(&direct.lock);
    if (direct.recent[direct_recent_slot(c->dt)] == c) {
        direct.recent[direct_recent_slot(c->dt)] = NULL;
    }
    if (c->prev) {
        c->prev->next = c->next;
    } else {
        direct.cached = c->next;
    }
    if (c->next) {
        c->next->prev = c->prev;
    }
    OPAL_THREAD_UNLOCK(&direct.lock);
    opal_datatype_direct_layout_release(c->layout);
    free(c);
    return MPI_SUCCESS;
}

static void direct_cache_init(void)
{
    ompi_attribute_fn_ptr_union_t copy_fn, del_fn;

    copy_fn.attr_datatype_copy_fn = direct_attr_copy;
    del_fn.attr_datatype_delete_fn = direct_attr_delete;
    direct.cached = NULL;
    if (OMPI_SUCCESS != ompi_attr_create_keyval(TYPE_ATTR, copy_fn, del_fn, &direct.keyval, NULL,
                                                OMPI_KEYVAL_PREDEFINED, NULL)) {
        direct.keyval = -1; /* no cache: every message compiles its layouts */
    }
}

/* Drop the attribute from every datatype still alive, while this
 * component's delete callback is still loaded, then the keyval. */
static void direct_cache_fini(void)
{
    if (direct.keyval < 0) {
        return;
    }
    while (NULL != direct.cached) {
        struct direct_cached *c = direct.cached;
        if (OMPI_SUCCESS != ompi_attr_delete(TYPE_ATTR, c->dt, c->dt->d_keyhash, direct.keyval,
                                             true) &&
            c == direct.cached) {
            (void) direct_attr_delete(c->dt, direct.keyval, c, NULL);
        }
    }
    (void) ompi_attr_free_keyval(TYPE_ATTR, &direct.keyval, true);
    direct.keyval = -1;
}

/* Receiver: the most description elements of a datatype whose layout an
 * eager message compiles when none is cached (compiling walks the
 * description as one unpack does: for an index list built for one message
 * the convertor is cheaper). */
#define DIRECT_EAGER_COMPILE_ELEMENTS 64

/* Worth the direct path?  pml_ob1_direct_min_bytes_per_element (default 0:
 * always) can keep datatypes of many tiny elements on the pack/unpack path.
 * Index lists of tiny blocks (SPECFEM3D, LAMMPS) used to need that (2.3-2.9x
 * slower direct); since the engine compiles them into index leaves they are
 * 3-16x faster direct than pack/unpack over vader (PVAS
 * docs/ddt-direct-rendezvous.md). */
static bool direct_datatype_light(const opal_datatype_t *dt)
{
    size_t elements = dt->opt_desc.used ? dt->opt_desc.used : dt->desc.used;
    if (dt->flags & OPAL_DATATYPE_FLAG_NO_GAPS) {
        return true; /* one block, whatever the count */
    }
    return dt->size >= mca_pml_ob1_direct_params.min_bytes_per_element * (elements ? elements : 1);
}

static struct direct_cached *direct_cache_put(ompi_datatype_t *dt, size_t count,
                                              opal_datatype_direct_layout_t *layout)
{
    struct direct_cached *c = malloc(sizeof(*c));

    if (NULL == c) {
        return NULL;
    }
    c->dt = dt;
    c->count = count;
    c->layout = layout;
    c->send.sig = 0;
    c->shape_key = 0;
    c->prev = NULL;
    OPAL_THREAD_LOCK(&direct.lock);
    c->next = direct.cached;
    if (c->next) {
        c->next->prev = c;
    }
    direct.cached = c;
    OPAL_THREAD_UNLOCK(&direct.lock);
    if (OMPI_SUCCESS != ompi_attr_set_c(TYPE_ATTR, dt, &dt->d_keyhash, direct.keyval, c, true)) {
        c->layout = NULL; /* the caller keeps the layout */
        (void) direct_attr_delete(dt, direct.keyval, c, NULL);
        return NULL;
    }
    return c;
}

/* The cache entry of count x dt, or NULL; *taken: dt caches a layout
 * (of this count or another). */
static struct direct_cached *direct_layout_cached(ompi_datatype_t *dt, size_t count, bool *taken)
{
    size_t slot = direct_recent_slot(dt);
    struct direct_cached *c = NULL;
    int flag = 0;

    /* a datatype's attribute costs a hash lookup on every small message;
     * the entry last found for its address is a compare (the attribute's
     * delete callback clears it) */
    if (!opal_using_threads()) {
        c = direct.recent[slot];
        if (NULL != c && c->dt == dt && c->count == count) {
            *taken = true;
            return c;
        }
    }
    *taken = direct.keyval >= 0 && NULL != dt->d_keyhash &&
             OMPI_SUCCESS == ompi_attr_get_c(dt->d_keyhash, direct.keyval, (void **) &c, &flag) &&
             flag;
    if (!*taken || c->count != count) {
        return NULL;
    }
    if (!opal_using_threads()) {
        direct.recent[slot] = c;
    }
    return c;
}

/* The layout of count x dt for one message.  *release is what the caller
 * must release when the transfer is over: NULL when the layout is borrowed
 * from the datatype's cache.  *cached (when not NULL) is the cache entry,
 * NULL for a layout of this message's own.  NULL: take the normal path (a
 * datatype of tiny blocks, or one the engine does not support). */
static opal_datatype_direct_layout_t *direct_layout_get(ompi_datatype_t *dt, size_t count,
                                                        opal_datatype_direct_layout_t **release,
                                                        struct direct_cached **cached)
{
    const opal_datatype_t *odt = &dt->super;
    bool cacheable = direct.keyval >= 0 && !(odt->flags & OPAL_DATATYPE_FLAG_PREDEFINED);
    bool taken = false;
    struct direct_cached *c = NULL;
    opal_datatype_direct_layout_t *layout;

    *release = NULL;
    if (NULL != cached) {
        *cached = NULL;
    }
    if (!direct_datatype_light(odt)) {
        return NULL;
    }
    if (cacheable && NULL != (c = direct_layout_cached(dt, count, &taken))) {
        if (NULL != cached) {
            *cached = c;
        }
        return c->layout;
    }
    if (OPAL_SUCCESS != opal_datatype_direct_layout_create(odt, count, &layout)) {
        return NULL;
    }
    if (!cacheable || taken || NULL == (c = direct_cache_put(dt, count, layout))) {
        *release = layout; /* this message's own */
    } else if (NULL != cached) {
        *cached = c;
    }
    return layout;
}

/* pml_ob1_direct_stage_chunk_size in whole cache lines (0: no staged path). */
static uint64_t direct_stage_chunk_max(void)
{
    return mca_pml_ob1_direct_params.stage_chunk_size & ~(uint64_t) 63;
}

int mca_pml_ob1_direct_init(void)
{
    int rc;

    if (direct.initialized) {
        return OMPI_SUCCESS;
    }
    OBJ_CONSTRUCT(&direct.descs, opal_free_list_t);
    rc = opal_free_list_init(&direct.descs, sizeof(mca_pml_ob1_direct_desc_t),
                             opal_cache_line_size, OBJ_CLASS(mca_pml_ob1_direct_desc_t), 0,
                             opal_cache_line_size, 4, -1, 16, NULL, 0, NULL, NULL, NULL);
    if (OMPI_SUCCESS != rc) {
        opal_output_verbose(1, mca_pml_ob1_output,
                            "pml_ob1 direct: opal_free_list_init of descriptors failed (%d): "
                            "direct rendezvous disabled", rc);
        OBJ_DESTRUCT(&direct.descs);
        mca_pml_ob1_direct_params.enable = false;
        return rc;
    }
    OBJ_CONSTRUCT(&direct.rings, opal_free_list_t);
    if (0 != mca_pml_ob1_direct_params.stage_chunk_size &&
        OMPI_SUCCESS != opal_free_list_init(&direct.rings, sizeof(opal_free_list_item_t),
                                            opal_cache_line_size, OBJ_CLASS(opal_free_list_item_t),
                                            MCA_PML_OB1_DIRECT_STAGE_SLOTS *
                                                direct_stage_chunk_max(),
                                            opal_cache_line_size, 0,
                                            MCA_PML_OB1_DIRECT_STAGE_RINGS, 1, NULL, 0, NULL,
                                            NULL, NULL)) {
        mca_pml_ob1_direct_params.stage_chunk_size = 0; /* no staged path */
    }
    OBJ_CONSTRUCT(&direct.lock, opal_mutex_t);
    direct_cache_init();
    mca_pml_ob1_direct_model_init();
    direct.initialized = true;
    return OMPI_SUCCESS;
}

void mca_pml_ob1_direct_fini(void)
{
    if (!direct.initialized) {
        return;
    }
    if (mca_pml_ob1_direct_params.stats) {
        fprintf(stderr,
                "[pml_ob1 direct] rank %u: sent %" PRIu64 " received %" PRIu64
                " fallback %" PRIu64 " copied %" PRIu64 " of %" PRIu64 " bytes"
                " model-cico %" PRIu64 " staged %" PRIu64 " model-eager %" PRIu64
                " engine-packed %" PRIu64 " engine-unpacked %" PRIu64 " model-own %" PRIu64
                "\n",
                (unsigned) OMPI_PROC_MY_NAME->vpid, direct.sent, direct.received,
                direct.fallback, direct.copied_self, direct.bytes_total, direct.model_declined,
                direct.staged, direct.eager, direct.eager_packed, direct.eager_unpacked,
                direct.own);
        fflush(stderr);
    }
    mca_pml_ob1_direct_model_fini(mca_pml_ob1_direct_params.stats,
                                  (unsigned) OMPI_PROC_MY_NAME->vpid);
    direct_cache_fini();
    if (direct.progress_registered) {
        opal_progress_unregister(mca_pml_ob1_direct_progress);
        direct.progress_registered = false;
    }
    if (0 != direct.n) {
        opal_output_verbose(1, mca_pml_ob1_output,
                            "pml_ob1 direct: %zu transfers still active at finalize", direct.n);
    }
    free(direct.entries);
    direct.entries = NULL;
    direct.n = direct.cap = 0;
    OBJ_DESTRUCT(&direct.lock);
    OBJ_DESTRUCT(&direct.descs);
    OBJ_DESTRUCT(&direct.rings);
    direct.initialized = false;
}

static int direct_track(enum direct_kind kind, void *ptr)
{
    int rc = OMPI_SUCCESS;

    OPAL_THREAD_LOCK(&direct.lock);
    if (direct.n == direct.cap) {
        size_t cap = direct.cap ? 2 * direct.cap : 16;
        struct direct_entry *e = realloc(direct.entries, cap * sizeof(*e));
        if (NULL == e) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
        } else {
            direct.entries = e;
            direct.cap = cap;
        }
    }
    if (OMPI_SUCCESS == rc) {
        direct.entries[direct.n].kind = kind;
        direct.entries[direct.n].ptr = ptr;
        direct.n++;
        if (!direct.progress_registered) {
            direct.progress_registered = true;
            opal_progress_register(mca_pml_ob1_direct_progress);
        }
    }
    OPAL_THREAD_UNLOCK(&direct.lock);
    return rc;
}

/* ---- chunks ------------------------------------------------------------ */

/* Claim the next chunk from the front or the back; -1 when none is left. */
static inline int64_t direct_claim(mca_pml_ob1_direct_desc_t *desc, bool from_back)
{
    int64_t old = desc->claims, update, front, back;

    do {
        front = old & 0xffffffff;
        back = (int64_t) ((uint64_t) old >> 32);
        if (front + back >= desc->nchunks) {
            return -1;
        }
        update = from_back ? (int64_t) ((uint64_t) old + ((uint64_t) 1 << 32)) : old + 1;
    } while (!opal_atomic_compare_exchange_strong_64(&desc->claims, &old, update));

    return from_back ? desc->nchunks - 1 - back : front;
}

/* Copy packed bytes [from, to) from the send layout to the receive layout. */
static void direct_copy_range(const mca_pml_ob1_direct_desc_t *desc, uint64_t from, uint64_t to)
{
    int rc = opal_datatype_direct_layout_copy(desc->send_layout, desc->send_buf,
                                              desc->recv_layout, desc->recv_buf, from, to);

    if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
        /* Both layouts were checked against the length: a bug. */
        opal_output(0, "pml_ob1 direct: copy of bytes [%" PRIu64 ", %" PRIu64
                    ") of a %" PRIu64 "-byte message failed (%d)",
                    from, to, desc->length, rc);
        ompi_rte_abort(rc, "pml_ob1 direct: copy failed");
    }
}

/* Copy chunks until none is left to claim; add this side's bytes to
 * desc->copied.  The caller has seen recv_ready (read barrier done). */
static void direct_copy_chunks(mca_pml_ob1_direct_desc_t *desc, bool from_back)
{
    uint64_t mine = 0;
    int64_t chunk;

    while (0 <= (chunk = direct_claim(desc, from_back))) {
        uint64_t from = (uint64_t) chunk * desc->chunk_size;
        uint64_t to = from + desc->chunk_size < desc->length ? from + desc->chunk_size
                                                             : desc->length;

        direct_copy_range(desc, from, to);
        mine += to - from;
    }
    if (0 != mine) {
        opal_atomic_add_fetch_64(&desc->copied, (int64_t) mine);
        direct.copied_self += mine;
    }
}

static inline bool direct_all_copied(const mca_pml_ob1_direct_desc_t *desc)
{
    bool done = (uint64_t) desc->copied == desc->length;
    if (done) {
        opal_atomic_rmb(); /* the data before the counter */
    }
    return done;
}

/* ---- staged path ---------------------------------------------------------- */


/* Chunk k of a staged transfer: its packed range [*from, *to) and its
 * slot of the ring. */
static char *direct_stage_chunk(const mca_pml_ob1_direct_desc_t *desc, int64_t k,
                                uint64_t *from, uint64_t *to)
{
    *from = (uint64_t) k * desc->stage_chunk;
    *to = *from + desc->stage_chunk < desc->length ? *from + desc->stage_chunk : desc->length;
    return desc->stage + (k % MCA_PML_OB1_DIRECT_STAGE_SLOTS) * desc->stage_chunk;
}

/* Sender: pack the next chunks into free slots of the ring. */
static void direct_stage_pack(mca_pml_ob1_direct_desc_t *desc)
{
    int64_t k = desc->packed; /* only the sender writes it */

    while (k < desc->stage_nchunks && k - desc->unpacked < MCA_PML_OB1_DIRECT_STAGE_SLOTS) {
        uint64_t from, to;
        char *slot = direct_stage_chunk(desc, k, &from, &to);
        int rc;

        opal_atomic_mb(); /* the receiver's reads of this slot before our writes */
        rc = opal_datatype_direct_layout_pack(desc->send_layout, desc->send_buf, from, to, slot);
        if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
            opal_output(0, "pml_ob1 direct: pack of bytes [%" PRIu64 ", %" PRIu64
                        ") of a %" PRIu64 "-byte message failed (%d)", from, to, desc->length,
                        rc);
            ompi_rte_abort(rc, "pml_ob1 direct: pack failed");
        }
        opal_atomic_wmb(); /* the chunk before the counter */
        desc->packed = ++k;
    }
}

/* Receiver: unpack every chunk packed so far; when the last one is in,
 * count the message as copied. */
static void direct_stage_unpack(mca_pml_ob1_direct_desc_t *desc)
{
    int64_t k = desc->unpacked; /* only the receiver writes it */
    int64_t ready;

    while (k < (ready = desc->packed)) {
        opal_atomic_rmb(); /* the chunks before the counter */
        for (; k < ready; k++) {
            uint64_t from, to;
            const char *slot = direct_stage_chunk(desc, k, &from, &to);
            int rc = opal_datatype_direct_layout_unpack(desc->recv_layout, desc->recv_buf, from,
                                                        to, slot);
            if (OPAL_UNLIKELY(OPAL_SUCCESS != rc)) {
                opal_output(0, "pml_ob1 direct: unpack of bytes [%" PRIu64 ", %" PRIu64
                            ") of a %" PRIu64 "-byte message failed (%d)", from, to,
                            desc->length, rc);
                ompi_rte_abort(rc, "pml_ob1 direct: unpack failed");
            }
            opal_atomic_mb(); /* our reads of the slot before it is free again */
            desc->unpacked = k + 1;
        }
    }
    if (k == desc->stage_nchunks && (uint64_t) desc->copied != desc->length) {
        opal_atomic_add_fetch_64(&desc->copied, (int64_t) desc->length);
        direct.copied_self += desc->length;
    }
}

/* The staged path's chunk for a message of length bytes: about 16 chunks,
 * whole cache lines, 1 KiB to pml_ob1_direct_stage_chunk_size; 0: no staged
 * path. */
static uint64_t direct_stage_chunk_size(uint64_t length)
{
    uint64_t max = direct_stage_chunk_max();
    uint64_t chunk = (length / 16 + 63) & ~(uint64_t) 63;

    if (0 == max) {
        return 0;
    }
    chunk = chunk < 1024 ? 1024 : chunk;
    return chunk > max ? max : chunk;
}

uint64_t mca_pml_ob1_direct_stage_chunk_count(uint64_t length)
{
    uint64_t chunk = direct_stage_chunk_size(length);

    return chunk ? (length + chunk - 1) / chunk : 0;
}

/* Sender: a ring from the pool for the staged path; none (no staged path
 * for this message) when the pool is empty. */
static void direct_stage_prepare(mca_pml_ob1_direct_desc_t *desc, uint64_t length)
{
    uint64_t chunk = direct_stage_chunk_size(length);

    desc->stage_chunk = 0;
    desc->stage_nchunks = 0;
    desc->stage_ring = 0 != chunk ? opal_free_list_get(&direct.rings) : NULL;
    desc->stage = NULL != desc->stage_ring ? (char *) desc->stage_ring->ptr : NULL;
    if (NULL != desc->stage) {
        desc->stage_chunk = chunk;
        desc->stage_nchunks = (int64_t) ((length + chunk - 1) / chunk);
    }
}

/* The descriptor and its ring go back to their pools. */
static void direct_desc_free(mca_pml_ob1_direct_desc_t *desc)
{
    if (NULL != desc->stage_ring) {
        opal_free_list_return(&direct.rings, desc->stage_ring);
        desc->stage_ring = NULL;
        desc->stage = NULL;
    }
    opal_free_list_return(&direct.descs, &desc->super);
}

static void direct_desc_unref(mca_pml_ob1_direct_desc_t *desc)
{
    if (0 == OPAL_THREAD_ADD_FETCH32(&desc->refs, -1)) {
        direct_desc_free(desc);
    }
}

/* ---- sender ------------------------------------------------------------- */

static bool direct_convertor_ok(const opal_convertor_t *conv)
{
    return (conv->flags & CONVERTOR_HOMOGENEOUS) &&
           !(conv->flags & (CONVERTOR_CUDA | CONVERTOR_WITH_CHECKSUM));
}

/* Send the RNDV header (flag DIRECT, no data) through btl_sendi (btl/pvas:
 * its fast box): nothing comes back, so the request waits only for the copy
 * (req_state 1).  Its hdr_src_req is the descriptor, not the request: the
 * receiver reads the descriptor at match without first loading the
 * request's line from this core (mca_pml_ob1_direct_recv_start). */
static int direct_send_rndv(mca_pml_ob1_send_request_t *sendreq, mca_bml_base_btl_t *bml_btl,
                            mca_pml_ob1_direct_desc_t *desc)
{
    mca_pml_base_send_request_t *base = &sendreq->req_send;
    mca_btl_base_descriptor_t *des = NULL;
    mca_pml_ob1_rendezvous_hdr_t hdr;
    int rc;

    mca_pml_ob1_rendezvous_hdr_prepare(&hdr, MCA_PML_OB1_HDR_TYPE_RNDV,
                                       MCA_PML_OB1_HDR_FLAGS_DIRECT | MCA_PML_OB1_HDR_FLAGS_SIGNAL,
                                       base->req_base.req_comm->c_contextid,
                                       base->req_base.req_comm->c_my_rank, base->req_base.req_tag,
                                       (uint16_t) base->req_base.req_sequence,
                                       base->req_bytes_packed, desc);
    ob1_hdr_hton((mca_pml_ob1_hdr_t *) &hdr, MCA_PML_OB1_HDR_TYPE_RNDV, base->req_base.req_proc);
    sendreq->req_state = 1; /* the copy: no RNDV descriptor to wait for */
    rc = mca_bml_base_sendi(bml_btl, &base->req_base.req_convertor, &hdr, sizeof(hdr), 0,
                            MCA_BTL_NO_ORDER,
                            MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP,
                            MCA_PML_OB1_HDR_TYPE_RNDV, &des);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        if (NULL != des) {
            mca_bml_base_free(bml_btl, des);
        }
        return OMPI_ERR_OUT_OF_RESOURCE; /* ob1 starts the request again later */
    }
    return OMPI_SUCCESS;
}

/* About pml_ob1_direct_chunks chunks (both sides busy to the end), at
 * least 4 KiB, at most pml_ob1_direct_chunk_size. */
static uint64_t direct_chunk_size(uint64_t length)
{
    uint64_t chunk = mca_pml_ob1_direct_params.chunks ? mca_pml_ob1_direct_params.chunks : 1;

    chunk = (length + chunk - 1) / chunk;
    chunk = chunk < 4096 ? 4096 : chunk;
    if (chunk > mca_pml_ob1_direct_params.chunk_size) {
        chunk = mca_pml_ob1_direct_params.chunk_size < 64 ? 64 : mca_pml_ob1_direct_params.chunk_size;
    }
    if ((length + chunk - 1) / chunk >= ((uint64_t) 1 << 31)) {
        chunk = length / ((uint64_t) 1 << 30) + 1; /* keep the counters 32-bit */
    }
    return chunk;
}

uint64_t mca_pml_ob1_direct_chunk_count(uint64_t length)
{
    uint64_t chunk = direct_chunk_size(length);

    return (length + chunk - 1) / chunk;
}

/* Is this process's name lower than peer's?  That process leads the pair:
 * it chooses the path of both ways (pml_ob1_direct_model.h). */
static bool direct_lower(const opal_process_name_t *peer)
{
    return 0 > ompi_rte_compare_name_fields(OMPI_RTE_CMP_ALL, OMPI_PROC_MY_NAME, peer);
}

/* The fragment of an eager message the engine packed came back (the
 * request completed when it left: the data was in the fragment). */
static void direct_eager_returned(struct mca_btl_base_module_t *btl,
                                  struct mca_btl_base_endpoint_t *ep,
                                  struct mca_btl_base_descriptor_t *des, int status)
{
    mca_bml_base_btl_t *bml_btl = (mca_bml_base_btl_t *) des->des_context;

    (void) btl;
    (void) ep;
    if (OPAL_UNLIKELY(OMPI_SUCCESS != status)) {
        opal_output(0, "pml_ob1 direct: eager fragment of %zu bytes failed (%d)",
                    des->des_segments->seg_len, status);
        ompi_rte_abort(-1, NULL);
    }
    MCA_PML_OB1_PROGRESS_PENDING(bml_btl);
}

/* An eager send (ob1's mca_pml_ob1_send_request_start_copy) whose data the
 * engine packs from the compiled send layout: a per-block loop instead of
 * the convertor's walk of the description.  The request completes once the
 * fragment is posted, as after a btl_sendi: waiting for the fragment to
 * come back would put the receiver's progress on the sender's path.
 * OMPI_ERR_NOT_SUPPORTED: no fragment now, ob1's own eager path takes the
 * message (and queues it when the BTL has no resources). */
static int direct_send_eager(mca_pml_ob1_send_request_t *sendreq, mca_bml_base_btl_t *bml_btl,
                             const opal_datatype_direct_layout_t *layout, size_t length)
{
    mca_pml_base_send_request_t *base = &sendreq->req_send;
    mca_btl_base_descriptor_t *des = NULL;
    mca_btl_base_segment_t *segment;
    mca_pml_ob1_hdr_t *hdr;
    int rc;

    mca_bml_base_alloc(bml_btl, &des, MCA_BTL_NO_ORDER, OMPI_PML_OB1_MATCH_HDR_LEN + length,
                       MCA_BTL_DES_FLAGS_PRIORITY | MCA_BTL_DES_FLAGS_BTL_OWNERSHIP);
    if (OPAL_UNLIKELY(NULL == des)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    segment = des->des_segments;
    if (OPAL_UNLIKELY(OPAL_SUCCESS !=
                      opal_datatype_direct_layout_pack(layout, base->req_base.req_addr, 0, length,
                                                       (unsigned char *) segment->seg_addr.pval +
                                                           OMPI_PML_OB1_MATCH_HDR_LEN))) {
        mca_bml_base_free(bml_btl, des);
        return OMPI_ERR_NOT_SUPPORTED;
    }
    hdr = (mca_pml_ob1_hdr_t *) segment->seg_addr.pval;
    mca_pml_ob1_match_hdr_prepare(&hdr->hdr_match, MCA_PML_OB1_HDR_TYPE_MATCH, 0,
                                  base->req_base.req_comm->c_contextid,
                                  base->req_base.req_comm->c_my_rank, base->req_base.req_tag,
                                  (uint16_t) base->req_base.req_sequence);
    ob1_hdr_hton(hdr, MCA_PML_OB1_HDR_TYPE_MATCH, base->req_base.req_proc);
    segment->seg_len = OMPI_PML_OB1_MATCH_HDR_LEN + length;
    des->des_cbdata = NULL;
    des->des_cbfunc = direct_eager_returned;
    rc = mca_bml_base_send_status(bml_btl, des, MCA_PML_OB1_HDR_TYPE_MATCH);
    if (OPAL_UNLIKELY(rc < OPAL_SUCCESS)) {
        mca_bml_base_free(bml_btl, des);
        return OMPI_ERR_NOT_SUPPORTED;
    }
    SPC_USER_OR_MPI(base->req_base.req_ompi.req_status.MPI_TAG, (ompi_spc_value_t) length,
                    OMPI_SPC_BYTES_SENT_USER, OMPI_SPC_BYTES_SENT_MPI);
    direct.eager_packed++;
    send_request_pml_complete(sendreq);
    return OMPI_SUCCESS;
}

/* The engine's unpack of an eager message's iov into recvreq's buffer:
 * false when the convertor must do it (see mca_pml_ob1_direct_unpack).
 * Below pml_ob1_direct_min_size the convertor unpacks, as the sender's
 * convertor packed: for a few short blocks it costs less than finding
 * the datatype's layout and starting the engine. */
static bool direct_engine_unpack(mca_pml_ob1_recv_request_t *recvreq,
                                 const mca_btl_base_module_t *btl, const struct iovec *iov,
                                 uint32_t iov_count, size_t bytes)
{
    mca_pml_base_recv_request_t *base = &recvreq->req_recv;
    const opal_datatype_t *odt = &base->req_base.req_datatype->super;
    opal_datatype_direct_layout_t *layout, *release = NULL;
    size_t from = 0, elements;

    if (!(btl->btl_flags & MCA_BTL_FLAGS_SHARED_ADDR_SPACE) || !direct.initialized ||
        !mca_pml_ob1_direct_params.eager_engine || bytes < mca_pml_ob1_direct_params.min_size ||
        !opal_convertor_need_buffers(&base->req_base.req_convertor) ||
        !direct_convertor_ok(&base->req_base.req_convertor) ||
        0 != base->req_base.req_convertor.bConverted) {
        return false;
    }
    elements = odt->opt_desc.used ? odt->opt_desc.used : odt->desc.used;
    if (elements > DIRECT_EAGER_COMPILE_ELEMENTS) {
        bool taken;
        struct direct_cached *c = direct_layout_cached(base->req_base.req_datatype,
                                                       base->req_base.req_count, &taken);
        layout = NULL != c ? c->layout : NULL;
    } else {
        layout = direct_layout_get(base->req_base.req_datatype, base->req_base.req_count,
                                   &release, NULL);
    }
    if (NULL == layout) {
        return false;
    }
    if (bytes > opal_datatype_direct_layout_size(layout)) {
        opal_datatype_direct_layout_release(release); /* truncated: the convertor's rules */
        return false;
    }
    for (uint32_t i = 0; i < iov_count && from < bytes; i++) {
        size_t len = iov[i].iov_len < bytes - from ? iov[i].iov_len : bytes - from;

        if (OPAL_UNLIKELY(OPAL_SUCCESS !=
                          opal_datatype_direct_layout_unpack(layout, base->req_base.req_addr, from,
                                                             from + len, iov[i].iov_base))) {
            opal_datatype_direct_layout_release(release); /* the convertor unpacks it all */
            return false;
        }
        from += len;
    }
    opal_datatype_direct_layout_release(release);
    direct.eager_unpacked++;
    return true;
}

void mca_pml_ob1_direct_unpack(mca_pml_ob1_recv_request_t *recvreq,
                               const mca_btl_base_module_t *btl, struct iovec *iov,
                               uint32_t iov_count, size_t *bytes)
{
    if (!direct_engine_unpack(recvreq, btl, iov, iov_count, *bytes)) {
        opal_convertor_unpack(&recvreq->req_recv.req_base.req_convertor, iov, &iov_count, bytes);
    }
}

/* The leader's learned eager decision: its receiver measured the staged
 * path cheapest for messages of this shape from the peer.  Eager does the
 * staged path's work (the sender packs with the engine, the receiver
 * unpacks) without its handshake; of one or two staged chunks the
 * pipelining saves at most half of one side (NAS_MG_x 2048 B, Intel Xeon:
 * eager 4.4-6.0 us round trip against staged 5.1-6.7).  The peer's
 * messages keep the rendezvous, so the leader goes on measuring. */
static bool direct_eager_learned(int hint, uint64_t length)
{
    return MCA_PML_OB1_DIRECT_PATH_STAGED == hint && mca_pml_ob1_direct_stage_chunk_count(length) <= 2;
}

int mca_pml_ob1_direct_send_start(mca_pml_ob1_send_request_t *sendreq,
                                  mca_bml_base_btl_t *bml_btl)
{
    mca_pml_base_send_request_t *base = &sendreq->req_send;
    opal_datatype_direct_layout_t *layout, *release;
    mca_pml_ob1_direct_desc_t *desc;
    struct direct_cached *cached;
    uint64_t length = base->req_bytes_packed, chunk, shape_key = 0, *key, peer_key = 0, start = 0;
    const opal_process_name_t *peer = &base->req_base.req_proc->super.proc_name;
    mca_pml_ob1_direct_send_choice_t choice = {.start_ns = 0};
    int rc, order, hint = -1, how = MCA_PML_OB1_DIRECT_SEND_RNDV;
    bool eager, eager_fits, engine_ok, timed = false, hint_trial = false;

    if (!direct.initialized || NULL == bml_btl->btl->btl_sendi ||
        !direct_convertor_ok(&base->req_base.req_convertor)) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (!opal_convertor_need_buffers(&base->req_base.req_convertor) &&
        length < mca_pml_ob1_direct_params.contig_min_size) {
        return OMPI_ERR_NOT_SUPPORTED; /* in-place eager or get: one copy already */
    }
    layout = direct_layout_get(base->req_base.req_datatype, base->req_base.req_count, &release,
                               &cached);
    if (NULL == layout) {
        direct.fallback++;
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (opal_datatype_direct_layout_size(layout) != length) {
        opal_datatype_direct_layout_release(release);
        direct.fallback++;
        return OMPI_ERR_NOT_SUPPORTED;
    }
    eager_fits = length + sizeof(mca_pml_ob1_hdr_t) <= bml_btl->btl->btl_eager_limit;
    engine_ok = mca_pml_ob1_direct_params.eager_engine &&
                (MCA_PML_BASE_SEND_STANDARD == base->req_send_mode ||
                 MCA_PML_BASE_SEND_READY == base->req_send_mode);
    peer_key = mca_pml_ob1_direct_name_key(peer);
    if (eager_fits) {
        how = mca_pml_ob1_direct_model_send(peer_key, layout, cached ? &cached->send : NULL,
                                            engine_ok, &choice);
    }
    if (MCA_PML_OB1_DIRECT_SEND_OWN == how) {
        /* ob1's own eager send, the convertor packing, is cheaper */
        opal_datatype_direct_layout_release(release);
        direct.own++;
        return OMPI_ERR_NOT_SUPPORTED;
    }
    key = cached ? &cached->shape_key : &shape_key;
    order = ompi_rte_compare_name_fields(OMPI_RTE_CMP_ALL, OMPI_PROC_MY_NAME, peer);
    eager = MCA_PML_OB1_DIRECT_SEND_EAGER == how;
    if (!eager && 0 > order) {
        /* this process leads the pair (direct_lower): the path it last took
         * from the peer into a layout of this shape, -1: none */
        hint = mca_pml_ob1_direct_model_hint(peer_key, layout, key, &timed, &hint_trial);
        start = timed ? mca_pml_ob1_direct_model_now() : 0;
        eager = eager_fits && engine_ok && direct_eager_learned(hint, length);
        if (eager) {
            mca_pml_ob1_direct_model_send_untimed(&choice); /* not the rendezvous it chose */
        }
    }
    if (eager) {
        /* an eager send (pack, one fragment, unpack) is cheaper */
        rc = engine_ok ? direct_send_eager(sendreq, bml_btl, layout, length)
                       : OMPI_ERR_NOT_SUPPORTED;
        if (0 != start && OMPI_SUCCESS == rc) {
            mca_pml_ob1_direct_model_sent(peer_key, *key, hint, layout, true,
                                          mca_pml_ob1_direct_model_now() - start);
        }
        opal_datatype_direct_layout_release(release);
        direct.eager++;
        return rc;
    }
    desc = (mca_pml_ob1_direct_desc_t *) opal_free_list_get(&direct.descs);
    if (NULL == desc) {
        opal_datatype_direct_layout_release(release);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    chunk = direct_chunk_size(length);
    desc->send_layout = layout;
    desc->send_layout_release = release;
    desc->send_buf = base->req_base.req_addr;
    desc->length = length;
    desc->chunk_size = chunk;
    desc->nchunks = (int64_t) ((length + chunk - 1) / chunk);
    /* Each process of a pair keeps to one end of every message between
     * them, so in an exchange both ways each core copies the half of a
     * buffer that it wrote or read last, and those lines stay in its cache. */
    desc->sender_from_back = mca_pml_ob1_direct_params.chunk_affinity && 0 < order;
    desc->path_hint = hint;
    desc->path_hint_trial = hint_trial;
    desc->recv_trial = 0;
    desc->send_choice = choice;
    desc->send_start_ns = start;
    if (0 != start) { /* a leader's timed send */
        desc->send_peer = peer_key;
        desc->send_key = *key;
    }
    direct_stage_prepare(desc, length);
    desc->recv_layout = NULL;
    desc->recv_buf = NULL;
    desc->path = MCA_PML_OB1_DIRECT_PATH_DIRECT;
    desc->recv_ready = 0;
    desc->recv_done = 0;
    desc->claims = 0;
    desc->copied = 0;
    desc->packed = 0;
    desc->unpacked = 0;
    desc->sendreq = sendreq;
    desc->send_state = MCA_PML_OB1_DIRECT_ACTIVE;
    desc->refs = 2;
    opal_atomic_wmb();
    sendreq->req_direct = desc;

    /* The poll entry first: once the header is out, only this side's poll
     * completes the send (there is no FIN), so it must exist.  Without one,
     * nothing was sent: ob1 retries the request from its pending list. */
    if (OMPI_SUCCESS != direct_track(DIRECT_SEND, desc)) {
        sendreq->req_direct = NULL;
        opal_datatype_direct_layout_release(release);
        direct_desc_free(desc);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = direct_send_rndv(sendreq, bml_btl, desc);
    if (OPAL_UNLIKELY(OMPI_SUCCESS != rc)) {
        /* The header did not leave: only the poll entry holds the
         * descriptor, and lets go of it when it sees the state. */
        sendreq->req_direct = NULL;
        opal_datatype_direct_layout_release(release);
        desc->send_layout_release = NULL;
        desc->refs = 1;
        opal_atomic_wmb();
        desc->send_state = MCA_PML_OB1_DIRECT_DECLINED;
        return rc;
    }
    direct.sent++;
    direct.bytes_total += length;
    return OMPI_SUCCESS;
}

/* Complete the sender's side (every byte copied), from its poll.  Releases
 * the send layout (no chunk can be claimed any more). */
static void direct_send_complete(mca_pml_ob1_direct_desc_t *desc)
{
    int32_t active = MCA_PML_OB1_DIRECT_ACTIVE;
    mca_pml_ob1_send_request_t *sendreq;

    if (!opal_atomic_compare_exchange_strong_32(&desc->send_state, &active,
                                                MCA_PML_OB1_DIRECT_DONE)) {
        return;
    }
    if (0 != desc->send_start_ns) {
        mca_pml_ob1_direct_model_sent(desc->send_peer, desc->send_key, desc->path_hint, NULL,
                                      false, mca_pml_ob1_direct_model_now() - desc->send_start_ns);
    }
    sendreq = desc->sendreq;
    sendreq->req_direct = NULL;
    opal_datatype_direct_layout_release(desc->send_layout_release);
    desc->send_layout_release = NULL;
    OPAL_THREAD_ADD_FETCH_SIZE_T(&sendreq->req_bytes_delivered,
                                 sendreq->req_send.req_bytes_packed);
    /* this stands for the ACK of the normal rendezvous (req_state 2: the
     * RNDV descriptor's completion and the ACK) */
    OPAL_THREAD_ADD_FETCH32(&sendreq->req_state, -1);
    send_request_pml_complete_check(sendreq);
}

/* Poll one send; true when its poll entry can go: the send is complete
 * (or declined) and the receiver no longer reads the descriptor. */
static bool direct_send_poll(mca_pml_ob1_direct_desc_t *desc)
{
    if (MCA_PML_OB1_DIRECT_ACTIVE == desc->send_state) {
        if (!desc->recv_ready) {
            return false;
        }
        opal_atomic_rmb(); /* the receiver's layout, buffer and path before the flag */
        if (MCA_PML_OB1_DIRECT_PATH_STAGED == desc->path) {
            direct_stage_pack(desc);
        } else {
            direct_copy_chunks(desc, desc->sender_from_back);
        }
        if (!direct_all_copied(desc)) {
            return false;
        }
        direct_send_complete(desc);
    }
    if (MCA_PML_OB1_DIRECT_DONE == desc->send_state) {
        if (!desc->recv_done) {
            return false;
        }
        if (0 != desc->recv_trial) {
            mca_pml_ob1_direct_model_send_tried(&desc->send_choice);
        }
        direct_desc_unref(desc); /* the receiver's reference */
    } /* DECLINED: its ACK gave the receiver's reference back (or the
       * header never left) */
    direct_desc_unref(desc);     /* the poll entry's */
    return true;
}

void mca_pml_ob1_direct_send_declined(mca_pml_ob1_send_request_t *sendreq)
{
    mca_pml_ob1_direct_desc_t *desc = sendreq->req_direct;
    int32_t active = MCA_PML_OB1_DIRECT_ACTIVE;

    if (NULL == desc || !opal_atomic_compare_exchange_strong_32(&desc->send_state, &active,
                                                                MCA_PML_OB1_DIRECT_DECLINED)) {
        return;
    }
    sendreq->req_direct = NULL;
    opal_datatype_direct_layout_release(desc->send_layout_release);
    desc->send_layout_release = NULL;
    if (0 != desc->recv_trial) {
        mca_pml_ob1_direct_model_send_tried(&desc->send_choice);
    }
    direct.sent--;
    direct.bytes_total -= desc->length;
    direct.fallback++;
    direct_desc_unref(desc); /* the receiver's reference: it sent this ACK */
}

/* ---- receiver ------------------------------------------------------------ */

/* The receive is done and the descriptor let go of: complete the request. */
static void direct_recv_complete(mca_pml_ob1_recv_request_t *recvreq)
{
    opal_datatype_direct_layout_release(recvreq->req_direct_layout);
    recvreq->req_direct_layout = NULL;
    OPAL_THREAD_ADD_FETCH_SIZE_T(&recvreq->req_bytes_received,
                                 recvreq->req_recv.req_bytes_packed);
    recv_request_pml_complete_check(recvreq);
}

/* Complete the receive when every byte is copied; tell the sender, in the
 * descriptor, that this side is done with it. */
static bool direct_recv_try_finish(mca_pml_ob1_recv_request_t *recvreq)
{
    mca_pml_ob1_direct_desc_t *desc = recvreq->req_direct;

    if (MCA_PML_OB1_DIRECT_PATH_STAGED == desc->path) {
        direct_stage_unpack(desc);
    }
    if (!direct_all_copied(desc)) {
        return false;
    }
    recvreq->req_direct = NULL;
    opal_atomic_mb(); /* every access to the descriptor before the flag */
    desc->recv_done = 1;
    /* the descriptor may be gone from here on */
    direct_recv_complete(recvreq);
    return true;
}

/* A one-chunk message on the direct path: the receiver copies it alone
 * before it publishes anything, then marks it claimed, copied, ready and
 * done with plain stores.  The sender's poll finds nothing to claim and
 * completes; no atomic and one line of the descriptor change hands,
 * instead of a claim, a count and a flag that the polling sender keeps
 * pulling back. */
static void direct_recv_whole(mca_pml_ob1_recv_request_t *recvreq,
                              mca_pml_ob1_direct_desc_t *desc)
{
    direct_copy_range(desc, 0, desc->length);
    direct.copied_self += desc->length;
    desc->claims = (int64_t) ((uint64_t) 1 << 32);
    desc->copied = (int64_t) desc->length;
    recvreq->req_direct = NULL;
    /* a release fence: the data, the claim, the count and every read of
     * the descriptor before the flags */
    opal_atomic_wmb();
    desc->recv_ready = 1;
    desc->recv_done = 1;
    /* the descriptor may be gone from here on */
    direct_recv_complete(recvreq);
}

int mca_pml_ob1_direct_recv_start(mca_pml_ob1_recv_request_t *recvreq,
                                  mca_btl_base_module_t *btl,
                                  mca_pml_ob1_rendezvous_hdr_t *hdr)
{
    mca_pml_base_recv_request_t *base = &recvreq->req_recv;
    /* A DIRECT header comes only through a BTL that shares this address
     * space, from the same ob1 build (PVAS tasks of one job load the same
     * mca_pml_ob1.so): hdr_src_req is the sender's descriptor, which lives
     * until this side lets go of it (recv_done, or the ACK below). */
    mca_pml_ob1_direct_desc_t *desc = (mca_pml_ob1_direct_desc_t *) hdr->hdr_src_req.pval;
    const opal_datatype_direct_layout_t *send_layout = desc->send_layout;
    opal_datatype_direct_layout_t *layout, *release;
    int path = MCA_PML_OB1_DIRECT_PATH_DIRECT;

    /* its first line on its way while this side finds its own layout */
    OPAL_PREFETCH(send_layout, 0, 3);
    if (!direct.initialized || !mca_pml_ob1_direct_params.enable ||
        hdr->hdr_msg_length > recvreq->req_bytes_expected ||
        !direct_convertor_ok(&base->req_base.req_convertor)) {
        goto decline;
    }
    layout = direct_layout_get(base->req_base.req_datatype, base->req_base.req_count, &release,
                               NULL);
    if (NULL == layout) {
        goto decline;
    }
    /* the sender's layout holds desc->length bytes (send_start) */
    if (opal_datatype_direct_layout_size(layout) < desc->length) {
        opal_datatype_direct_layout_release(release);
        goto decline;
    }
    if (opal_datatype_direct_layout_size(layout) == desc->length) {
        const ompi_proc_t *proc = ompi_comm_peer_lookup(base->req_base.req_comm,
                                                        hdr->hdr_match.hdr_src);
        const opal_process_name_t *name = &proc->super.proc_name;
        mca_pml_ob1_direct_peer_t peer = {.name = mca_pml_ob1_direct_name_key(name),
                                          .lead = direct_lower(name),
                                          .hint = desc->path_hint,
                                          .hint_trial = 0 != desc->path_hint_trial};

        path = mca_pml_ob1_direct_model_choose(send_layout, layout, btl->btl_max_send_size,
                                               0 != desc->stage_nchunks, &peer,
                                               &recvreq->req_direct_choice);
        desc->recv_trial = recvreq->req_direct_choice.trial;
    }
    if (MCA_PML_OB1_DIRECT_PATH_CICO == path) {
        /* the model (or its correction) says copy-in/copy-out: the
         * completion of the normal path measures it */
        opal_datatype_direct_layout_release(release);
        direct.model_declined++;
        goto ack;
    }

    base->req_bytes_packed = hdr->hdr_msg_length;
    recvreq->remote_req_send = hdr->hdr_src_req;
    recvreq->req_direct = desc;
    recvreq->req_direct_layout = release; /* NULL: borrowed from the cache */
    MCA_PML_OB1_RECV_REQUEST_MATCHED(recvreq, &hdr->hdr_match);
    direct.received++;
    direct.bytes_total += desc->length;

    desc->recv_layout = layout;
    desc->recv_buf = base->req_base.req_addr;
    desc->path = path;
    if (MCA_PML_OB1_DIRECT_PATH_DIRECT == path && 1 == desc->nchunks) {
        direct_recv_whole(recvreq, desc);
        return OMPI_SUCCESS;
    }
    /* publish, then copy from the end the sender leaves (direct), or
     * unpack what the sender packs (staged) */
    opal_atomic_wmb();
    desc->recv_ready = 1;
    if (MCA_PML_OB1_DIRECT_PATH_STAGED == path) {
        direct.staged++;
    } else {
        direct_copy_chunks(desc, !desc->sender_from_back);
    }

    if (!direct_recv_try_finish(recvreq) &&
        OMPI_SUCCESS != direct_track(DIRECT_RECV, recvreq)) {
        /* cannot poll it later: wait here (the sender copies, or has) */
        while (!direct_recv_try_finish(recvreq)) {
            opal_progress();
        }
    }
    return OMPI_SUCCESS;

decline:
    direct.fallback++;
ack:
    /* ob1's normal ACK answers: it carries the sender's request, which
     * falls back to the normal path (mca_pml_ob1_direct_send_declined) */
    hdr->hdr_src_req.pval = desc->sendreq;
    return OMPI_ERR_NOT_SUPPORTED;
}

/* ---- progress ------------------------------------------------------------ */

int mca_pml_ob1_direct_progress(void)
{
    int32_t idle = 0;
    int completed = 0;
    size_t i = 0;

    if (0 == direct.n ||
        !opal_atomic_compare_exchange_strong_32(&direct.polling, &idle, 1)) {
        return 0;
    }
    for (;;) {
        struct direct_entry e;
        bool finished;

        OPAL_THREAD_LOCK(&direct.lock);
        if (i >= direct.n) {
            OPAL_THREAD_UNLOCK(&direct.lock);
            break;
        }
        e = direct.entries[i];
        OPAL_THREAD_UNLOCK(&direct.lock);

        if (DIRECT_SEND == e.kind) {
            finished = direct_send_poll((mca_pml_ob1_direct_desc_t *) e.ptr);
        } else {
            finished = direct_recv_try_finish((mca_pml_ob1_recv_request_t *) e.ptr);
        }
        if (finished) {
            /* only this loop removes entries; others only append */
            OPAL_THREAD_LOCK(&direct.lock);
            direct.entries[i] = direct.entries[--direct.n];
            OPAL_THREAD_UNLOCK(&direct.lock);
            completed++;
        } else {
            i++;
        }
    }
    direct.polling = 0;
    return completed;
}
