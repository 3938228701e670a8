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
 * Direct two-layout copy (see opal_datatype_direct.h).
 *
 * 1. Compile: a datatype description (opt_desc, else desc: OPAL_LOOP /
 *    OPAL_END_LOOP / basic elements) times count is turned into a pre-order
 *    array of nodes:
 *      leaf  {disp, blen, stride, count}: count blocks of blen bytes, block j
 *            at disp + j*stride (disp relative to the user buffer, for
 *            iteration 0 of every enclosing loop);
 *      loop  {count, stride, items}: count iterations of the next `items`
 *            nodes, iteration i shifted by i*stride;
 *      index {blen, count, first}: count blocks of blen bytes, block j at
 *            dv[first + j] (the layout's displacement array).
 *    While compiling, runs are simplified bottom-up: zero-size nodes go,
 *    loops of one iteration are spliced, a loop around a single leaf
 *    becomes a longer leaf when the strides line up, adjacent leaves with
 *    the same block length and a common stride (or contiguous single
 *    blocks) merge, and a leaf whose stride equals its block length becomes
 *    one block.  A datatype with no gaps thus becomes one leaf of one block.
 *    Sibling leaves of at most DDC_INDEX_FOLD_MAX blocks that no common
 *    stride describes, with the same block length (an index list: opal
 *    gives one element per one or two blocks), fold into one index leaf:
 *    8 bytes of displacement per block instead of a 56-byte node, a tight
 *    loop instead of a node step per block, and O(1) seeks inside it.
 *
 * 2. Copy: one cursor per side walks its layout (a stack of loop frames and
 *    the current leaf: block address, offset in the block, blocks left).
 *    Both cursors are first positioned at `from` (O(depth + siblings)),
 *    then the two block streams are merged:
 *      - same block length on both sides, both at a block start: a tight
 *        loop over min(blocks left) blocks with a fixed-size copy (4, 8,
 *        16, 32 bytes) or a small inline copy (up to DDC_INLINE_MAX bytes),
 *        or memcpy for large blocks;
 *      - one side's block spans several of the other's blocks: a tight
 *        scatter (or gather) loop between the contiguous part and the
 *        strided blocks (plain unpack / pack of that range);
 *      - in both of these, an index leaf's blocks come from its
 *        displacements (ddc_copy_run) instead of a stride;
 *      - otherwise memcpy of min(rest of the two blocks).
 *    The range end may fall anywhere: the tight loops stop at whole blocks
 *    and the rest goes through the generic step.
 *    Identical layouts (same datatype, or equal descriptions) walk one
 *    cursor and copy each run at the same offset.
 */

#include "opal_config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "opal/constants.h"
#include "opal/datatype/opal_convertor.h"
#include "opal/datatype/opal_datatype.h"
#include "opal/datatype/opal_datatype_direct.h"
#include "opal/datatype/opal_datatype_internal.h"
#include "opal/sys/atomic.h"

#define DDC_LEAF 0u
#define DDC_LOOP 1u
#define DDC_INDEX 2u
#define DDC_ROOT UINT32_MAX

/* A leaf is count blocks of blen bytes, stride apart; an index leaf is
 * count blocks of blen bytes at the displacements dv[stride .. stride +
 * count) of its layout (runs of single blocks that no stride describes, as
 * indexed types of small blocks give: one 8-byte displacement per block
 * instead of one node). */
struct ddc_node {
    uint32_t kind;    /* DDC_LEAF, DDC_LOOP or DDC_INDEX */
    uint32_t items;   /* loop: nodes in its body (all levels) */
    size_t count;     /* leaf: blocks; loop: iterations */
    ptrdiff_t stride; /* leaf: block to block; loop: iteration to iteration;
                         index: its first entry in dv[] */
    ptrdiff_t disp;   /* leaf: first block, relative to the buffer */
    size_t blen;      /* leaf: bytes per block; loop: packed bytes per iteration */
    size_t size;      /* packed bytes of the whole node */
};

struct opal_datatype_direct_layout_t {
    size_t size;         /* packed bytes */
    int64_t serial;      /* opal_datatype_direct_layout_serial() */
    uint32_t nnodes;     /* nodes[] entries */
    uint32_t depth;      /* deepest loop nesting */
    size_t ndv;          /* dv[] entries */
    const ptrdiff_t *dv; /* block displacements of the index leaves */
    struct ddc_node nodes[];
};

/* ---------------------------------------------------------------------- */
/* compile                                                                 */

struct ddc_level {
    uint32_t loop; /* node index of the open loop (DDC_ROOT: top level) */
    int64_t last;  /* last sibling appended at this level, -1 if none */
    int64_t prev;  /* the parent's last sibling before this loop */
};

struct ddc_builder {
    struct ddc_node *n;
    uint32_t used, cap;
    int heap; /* n was malloc'ed (else caller's storage) */
    struct ddc_level *lv;
    uint32_t nlv, cap_lv;
    uint32_t depth, max_depth;
    ptrdiff_t *dv; /* index leaves' displacements */
    size_t ndv, cap_dv;
    struct ddc_level lv_inline[16];
};

static void ddc_builder_init(struct ddc_builder *b, struct ddc_node *storage, uint32_t cap)
{
    b->n = storage;
    b->cap = storage ? cap : 0;
    b->used = 0;
    b->heap = 0;
    b->lv = b->lv_inline;
    b->cap_lv = 16;
    b->nlv = 1;
    b->lv[0].loop = DDC_ROOT;
    b->lv[0].last = -1;
    b->lv[0].prev = -1;
    b->depth = b->max_depth = 0;
    b->dv = NULL;
    b->ndv = b->cap_dv = 0;
}

static void ddc_builder_fini(struct ddc_builder *b)
{
    if (b->heap) {
        free(b->n);
    }
    if (b->lv != b->lv_inline) {
        free(b->lv);
    }
    free(b->dv);
}

static int ddc_dv_push(struct ddc_builder *b, ptrdiff_t disp)
{
    if (b->ndv == b->cap_dv) {
        size_t cap = b->cap_dv ? 2 * b->cap_dv : 64;
        ptrdiff_t *dv = realloc(b->dv, cap * sizeof(*dv));
        if (NULL == dv) {
            return 0;
        }
        b->dv = dv;
        b->cap_dv = cap;
    }
    b->dv[b->ndv++] = disp;
    return 1;
}

/* Leaves of at most this many blocks fold into index leaves.  (opal's
 * optimizer turns an index list into pairs of blocks: count 2, any
 * stride.) */
#define DDC_INDEX_FOLD_MAX 4

static int ddc_dv_push_leaf(struct ddc_builder *b, const struct ddc_node *l)
{
    for (size_t k = 0; k < l->count; k++) {
        if (!ddc_dv_push(b, l->disp + (ptrdiff_t) k * l->stride)) {
            return 0;
        }
    }
    return 1;
}

/* Fold the short leaf c into the sibling p just before it, if both have
 * the same block length: p becomes (or stays) an index leaf.  Only when p's
 * entries are the last ones of dv[], so that an index leaf's entries stay
 * one run.  Returns 1 if folded. */
static int ddc_index_fold(struct ddc_builder *b, struct ddc_node *p, const struct ddc_node *c)
{
    size_t first = b->ndv;

    if (DDC_LEAF != c->kind || c->count > DDC_INDEX_FOLD_MAX || p->blen != c->blen) {
        return 0;
    }
    if (DDC_INDEX == p->kind && (size_t) p->stride + p->count == b->ndv) {
        if (!ddc_dv_push_leaf(b, c)) {
            b->ndv = first;
            return 0;
        }
    } else if (DDC_LEAF == p->kind && p->count <= DDC_INDEX_FOLD_MAX) {
        if (!ddc_dv_push_leaf(b, p) || !ddc_dv_push_leaf(b, c)) {
            b->ndv = first;
            return 0;
        }
        p->kind = DDC_INDEX;
        p->stride = (ptrdiff_t) first;
        p->disp = 0;
    } else {
        return 0;
    }
    p->count = b->ndv - (size_t) p->stride;
    p->size = p->count * p->blen;
    return 1;
}

static struct ddc_node *ddc_append(struct ddc_builder *b)
{
    if (b->used == b->cap) {
        uint32_t cap = b->cap ? 2 * b->cap : 32;
        struct ddc_node *n;
        if (b->heap) {
            n = realloc(b->n, cap * sizeof(*n));
        } else {
            n = malloc(cap * sizeof(*n));
            if (n && b->used) {
                memcpy(n, b->n, b->used * sizeof(*n));
            }
        }
        if (NULL == n) {
            return NULL;
        }
        b->n = n;
        b->cap = cap;
        b->heap = 1;
    }
    return &b->n[b->used++];
}

static inline void ddc_leaf_normalize(struct ddc_node *l)
{
    if (l->count > 1 && l->stride == (ptrdiff_t) l->blen) {
        l->blen *= l->count;
        l->count = 1;
    }
    if (1 == l->count) {
        l->stride = (ptrdiff_t) l->blen;
    }
    l->size = l->blen * l->count;
}

/* Merge leaf c into the leaf p before it in the packed order, if the two
 * form one run.  Returns 1 if merged. */
static int ddc_leaf_merge(struct ddc_node *p, const struct ddc_node *c)
{
    if (DDC_LEAF != p->kind || DDC_LEAF != c->kind) {
        return 0;
    }
    if (p->blen == c->blen) {
        ptrdiff_t s = p->count > 1 ? p->stride : (c->count > 1 ? c->stride : c->disp - p->disp);
        if ((1 == p->count || p->stride == s) && (1 == c->count || c->stride == s)
            && c->disp == p->disp + (ptrdiff_t) p->count * s) {
            p->stride = s;
            p->count += c->count;
            ddc_leaf_normalize(p);
            return 1;
        }
    }
    if (1 == p->count && 1 == c->count && c->disp == p->disp + (ptrdiff_t) p->blen) {
        p->blen += c->blen;
        ddc_leaf_normalize(p);
        return 1;
    }
    return 0;
}

/* The node at index i was just completed (it is the last node) at the
 * current level: merge it into the previous sibling or record it. */
static void ddc_sibling_done(struct ddc_builder *b, uint32_t i)
{
    struct ddc_level *lv = &b->lv[b->nlv - 1];
    if (lv->last >= 0 && i == b->used - 1
        && (ddc_leaf_merge(&b->n[lv->last], &b->n[i])
            || (lv->last + 1 == (int64_t) i && ddc_index_fold(b, &b->n[lv->last], &b->n[i])))) {
        b->used--;
        return;
    }
    lv->last = i;
}

static int ddc_add_leaf(struct ddc_builder *b, ptrdiff_t disp, size_t blen, ptrdiff_t stride,
                        size_t count)
{
    struct ddc_node *l;
    if (0 == blen || 0 == count) {
        return OPAL_SUCCESS;
    }
    if (NULL == (l = ddc_append(b))) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    l->kind = DDC_LEAF;
    l->items = 0;
    l->count = count;
    l->stride = stride;
    l->disp = disp;
    l->blen = blen;
    ddc_leaf_normalize(l);
    ddc_sibling_done(b, b->used - 1);
    return OPAL_SUCCESS;
}

static int ddc_open_loop(struct ddc_builder *b, size_t count, ptrdiff_t extent)
{
    struct ddc_node *l;
    struct ddc_level *lv;
    if (b->nlv == b->cap_lv) {
        uint32_t cap = 2 * b->cap_lv;
        struct ddc_level *n = malloc(cap * sizeof(*n));
        if (NULL == n) {
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
        memcpy(n, b->lv, b->nlv * sizeof(*n));
        if (b->lv != b->lv_inline) {
            free(b->lv);
        }
        b->lv = n;
        b->cap_lv = cap;
    }
    if (NULL == (l = ddc_append(b))) {
        return OPAL_ERR_OUT_OF_RESOURCE;
    }
    l->kind = DDC_LOOP;
    l->items = 0;
    l->count = count;
    l->stride = extent;
    l->disp = 0;
    l->blen = 0;
    l->size = 0;
    lv = &b->lv[b->nlv++];
    lv->loop = b->used - 1;
    lv->last = -1;
    lv->prev = b->lv[b->nlv - 2].last;
    return OPAL_SUCCESS;
}

static int ddc_close_loop(struct ddc_builder *b)
{
    struct ddc_level lv;
    struct ddc_node *L;
    uint32_t Li, j, end;
    size_t body = 0;

    if (b->nlv < 2) {
        return OPAL_ERR_NOT_SUPPORTED; /* END_LOOP without LOOP */
    }
    lv = b->lv[--b->nlv];
    Li = lv.loop;
    L = &b->n[Li];
    end = b->used;
    for (j = Li + 1; j < end; j += 1 + b->n[j].items) {
        body += b->n[j].size;
    }
    if (0 == body || 0 == L->count) {
        b->used = Li; /* nothing in it */
        return OPAL_SUCCESS;
    }
    L->items = end - Li - 1;
    L->blen = body;
    L->size = body * L->count;
    if (1 == L->count) {
        /* splice the body into the parent level */
        memmove(L, L + 1, (size_t) L->items * sizeof(*L));
        b->used--;
        if (1 == b->used - Li) {
            ddc_sibling_done(b, Li);
        } else {
            b->lv[b->nlv - 1].last = lv.last - 1;
        }
        return OPAL_SUCCESS;
    }
    if (1 == L->items && DDC_LEAF == L[1].kind) {
        struct ddc_node *c = L + 1;
        if (1 == c->count || L->stride == (ptrdiff_t) c->count * c->stride) {
            struct ddc_node leaf = *c;
            leaf.stride = 1 == c->count ? L->stride : c->stride;
            leaf.count = c->count * L->count;
            ddc_leaf_normalize(&leaf);
            *L = leaf;
            b->used = Li + 1;
            ddc_sibling_done(b, Li);
            return OPAL_SUCCESS;
        }
    }
    b->lv[b->nlv - 1].last = Li;
    return OPAL_SUCCESS;
}

static const dt_type_desc_t *ddc_desc(const opal_datatype_t *dt)
{
    if (dt->opt_desc.used > 0 && NULL != dt->opt_desc.desc) {
        return &dt->opt_desc;
    }
    return &dt->desc;
}

static int ddc_compile(struct ddc_builder *b, const opal_datatype_t *dt, size_t count)
{
    const dt_type_desc_t *d;
    size_t i, total = 0;
    uint32_t j;
    int rc, depth = 0;

    if (0 == count || 0 == dt->size) {
        return OPAL_SUCCESS;
    }
    /* Contiguous datatypes: count * size bytes from true_lb, exactly as the
     * convertor (opal_convertor_prepare) treats them -- for NO_GAPS it does
     * so whatever the count, even when explicit bounds made the extent
     * differ from the size. */
    if ((dt->flags & OPAL_DATATYPE_FLAG_NO_GAPS)
        || ((dt->flags & OPAL_DATATYPE_FLAG_CONTIGUOUS) && 1 == count)) {
        rc = ddc_add_leaf(b, dt->true_lb, dt->size * count, 0, 1);
        b->max_depth = 0;
        return rc;
    }
    d = ddc_desc(dt);
    if (NULL == d->desc) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    if (OPAL_SUCCESS != (rc = ddc_open_loop(b, count, dt->ub - dt->lb))) {
        return rc;
    }
    for (i = 0; i < d->used; i++) {
        const dt_elem_desc_t *e = &d->desc[i]; /* read only: may be the peer's */
        uint16_t type = e->elem.common.type;
        if (OPAL_DATATYPE_LOOP == type) {
            rc = ddc_open_loop(b, e->loop.loops, e->loop.extent);
            depth++;
        } else if (OPAL_DATATYPE_END_LOOP == type) {
            rc = ddc_close_loop(b);
            depth--;
        } else if (e->elem.common.flags & OPAL_DATATYPE_FLAG_DATA) {
            if (type >= OPAL_DATATYPE_MAX_PREDEFINED || NULL == opal_datatype_basicDatatypes[type]
                || 0 == opal_datatype_basicDatatypes[type]->size) {
                return OPAL_ERR_NOT_SUPPORTED;
            }
            rc = ddc_add_leaf(b, e->elem.disp, e->elem.blocklen * opal_datatype_basicDatatypes[type]->size,
                              e->elem.extent, e->elem.count);
        } else {
            rc = OPAL_SUCCESS; /* LB / UB markers */
        }
        if (OPAL_SUCCESS != rc) {
            return rc;
        }
        if (depth < 0) {
            return OPAL_ERR_NOT_SUPPORTED;
        }
    }
    if (0 != depth || OPAL_SUCCESS != (rc = ddc_close_loop(b))) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    /* sanity: the packed size and the loop depth */
    for (j = 0; j < b->used; j += (DDC_LOOP == b->n[j].kind) ? 1 + b->n[j].items : 1) {
        total += b->n[j].size;
    }
    if (total != dt->size * count) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    {
        /* depth: count open loops along the pre-order */
        uint32_t stack_end[256], sp = 0, maxd = 0;
        for (j = 0; j < b->used; j++) {
            while (sp && j >= stack_end[sp - 1]) {
                sp--;
            }
            if (DDC_LOOP == b->n[j].kind) {
                if (sp == 256) {
                    return OPAL_ERR_NOT_SUPPORTED;
                }
                stack_end[sp++] = j + 1 + b->n[j].items;
                if (sp > maxd) {
                    maxd = sp;
                }
            }
        }
        b->max_depth = maxd;
    }
    return OPAL_SUCCESS;
}

/* Serial numbers of the layouts this process creates. */
static volatile int64_t ddc_serials;

static opal_datatype_direct_layout_t *ddc_layout_from(const struct ddc_builder *b, size_t size)
{
    opal_datatype_direct_layout_t *l = malloc(sizeof(*l) + b->used * sizeof(struct ddc_node)
                                              + b->ndv * sizeof(ptrdiff_t));
    if (NULL == l) {
        return NULL;
    }
    l->size = size;
    l->serial = opal_atomic_add_fetch_64(&ddc_serials, 1);
    l->nnodes = b->used;
    l->depth = b->max_depth;
    if (b->used) {
        memcpy(l->nodes, b->n, b->used * sizeof(struct ddc_node));
    }
    l->ndv = b->ndv;
    l->dv = (const ptrdiff_t *) &l->nodes[b->used];
    if (b->ndv) {
        memcpy(&l->nodes[b->used], b->dv, b->ndv * sizeof(ptrdiff_t));
    }
    return l;
}

int opal_datatype_direct_layout_create(const opal_datatype_t *dt, size_t count,
                                       opal_datatype_direct_layout_t **layout)
{
    struct ddc_builder b;
    int rc;

    *layout = NULL;
    ddc_builder_init(&b, NULL, 0);
    rc = ddc_compile(&b, dt, count);
    if (OPAL_SUCCESS == rc) {
        *layout = ddc_layout_from(&b, dt->size * count);
        if (NULL == *layout) {
            rc = OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    ddc_builder_fini(&b);
    return rc;
}

void opal_datatype_direct_layout_release(opal_datatype_direct_layout_t *layout)
{
    free(layout);
}

size_t opal_datatype_direct_layout_size(const opal_datatype_direct_layout_t *layout)
{
    return layout->size;
}

uint64_t opal_datatype_direct_layout_serial(const opal_datatype_direct_layout_t *layout)
{
    return (uint64_t) layout->serial;
}

static unsigned ddc_shape_class(size_t blen)
{
    static const size_t limit[OPAL_DATATYPE_DIRECT_CLASSES - 1] = {8, 32, 128, 512, 2048, 4096};
    unsigned c = 0;

    while (c < OPAL_DATATYPE_DIRECT_CLASSES - 1 && blen > limit[c]) {
        c++;
    }
    return c;
}

/* Sparse cache lines of one visit of leaf n: a block under 64 bytes with
 * a line or more of gap before the next (or at a displacement of an index
 * leaf) is a line of its own, touched for a few bytes; denser or larger
 * blocks touch every line of their span in order, a stream. */
static size_t ddc_shape_sparse_lines(const struct ddc_node *n)
{
    size_t step = (size_t) (n->stride < 0 ? -n->stride : n->stride);

    if (n->blen >= 64 || (DDC_INDEX != n->kind && n->count > 1 && step < n->blen + 64)) {
        return 0;
    }
    return n->count;
}

/* Unit (1 << shift bytes) of byte address a, rounded down (negative too). */
static inline ptrdiff_t ddc_unit(ptrdiff_t a, unsigned shift)
{
    return a >= 0 ? a >> shift : -((-a + ((ptrdiff_t) 1 << shift) - 1) >> shift);
}

/* Units (cache lines or pages: 1 << shift bytes) of index leaf n's blocks,
 * at their displacements (absolute under MPI_BOTTOM; else relative to the
 * buffer, as if it were aligned).  With split = 0: returns the distinct
 * units of all blocks.  Else returns those of blocks [0, split), and sets
 * *shared to how many of them blocks [split, count) touch too.  One bitmap
 * over the units of the list's span, a power of two of them; a span wider
 * than DDC_UNITS_MAX units folds onto it (a list over arrays far apart then
 * counts a unit twice only where two arrays land on the same bits).
 * Returns 0 when the bitmap cannot be allocated: only a cost model's
 * estimate is lost. */
#define DDC_UNITS_MAX ((size_t) 1 << 18)

static size_t ddc_shape_units(const opal_datatype_direct_layout_t *l, const struct ddc_node *n,
                              unsigned shift, size_t split, size_t *shared)
{
    const ptrdiff_t *dp = l->dv + n->stride;
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN, last = (ptrdiff_t) n->blen - 1;
    size_t span, nbits, count = 0, first = 0 == split || split > n->count ? n->count : split;
    uint64_t *bits;

    *shared = 0;
    if (0 == n->count) {
        return 0;
    }
    for (size_t k = 0; k < n->count; k++) {
        lo = dp[k] < lo ? dp[k] : lo;
        hi = dp[k] > hi ? dp[k] : hi;
    }
    lo = ddc_unit(lo, shift);
    span = (size_t) (ddc_unit(hi + last, shift) - lo) + 1;
    for (nbits = 64; nbits < span && nbits < DDC_UNITS_MAX; nbits *= 2) {
    }
    bits = calloc(nbits / 64, sizeof(uint64_t));
    if (NULL == bits) {
        return 0;
    }
    for (size_t k = 0; k < first; k++) {
        for (ptrdiff_t u = ddc_unit(dp[k], shift), e = ddc_unit(dp[k] + last, shift); u <= e; u++) {
            size_t bit = (size_t) (u - lo) & (nbits - 1);

            count += !((bits[bit / 64] >> (bit % 64)) & 1);
            bits[bit / 64] |= (uint64_t) 1 << (bit % 64);
        }
    }
    for (size_t k = first; k < n->count; k++) {
        for (ptrdiff_t u = ddc_unit(dp[k], shift), e = ddc_unit(dp[k] + last, shift); u <= e; u++) {
            size_t bit = (size_t) (u - lo) & (nbits - 1);

            /* a unit of the first part found: count it, clear it (once) */
            *shared += (bits[bit / 64] >> (bit % 64)) & 1;
            bits[bit / 64] &= ~((uint64_t) 1 << (bit % 64));
        }
    }
    free(bits);
    return count;
}

/* Pages (4 KiB) that index leaf n's blocks touch. */
static size_t ddc_shape_index_pages(const opal_datatype_direct_layout_t *l,
                                    const struct ddc_node *n)
{
    size_t none;

    return ddc_shape_units(l, n, 12, 0, &none);
}

/* Pages of a strided leaf's blocks: its span's, at most one per block. */
static size_t ddc_shape_stride_pages(const struct ddc_node *n)
{
    size_t step = (size_t) (n->stride < 0 ? -n->stride : n->stride);
    size_t pages = ((n->count - 1) * step + n->blen) / 4096 + 1;

    return pages < n->count ? pages : n->count;
}

/* Nodes [i, end) of l, each visited mult times. */
static void ddc_shape_walk(const opal_datatype_direct_layout_t *l, uint32_t i, uint32_t end,
                           size_t mult, opal_datatype_direct_shape_t *shape)
{
    while (i < end) {
        const struct ddc_node *n = &l->nodes[i];
        size_t sparse, pages;
        unsigned c;

        if (DDC_LOOP == n->kind) {
            ddc_shape_walk(l, i + 1, i + 1 + n->items, mult * n->count, shape);
            i += 1 + n->items;
            continue;
        }
        shape->runs += mult;
        shape->blocks += mult * n->count;
        c = ddc_shape_class(n->blen);
        shape->blocks_by_class[c] += mult * n->count;
        shape->bytes_by_class[c] += mult * n->count * n->blen;
        sparse = ddc_shape_sparse_lines(n);
        shape->sparse_lines += mult * sparse;
        if (DDC_INDEX == n->kind) {
            pages = ddc_shape_index_pages(l, n);
            shape->index_blocks += mult * n->count;
            shape->index_pages += mult * pages;
        } else {
            pages = sparse ? ddc_shape_stride_pages(n) : 0;
        }
        shape->sparse_pages += sparse ? mult * pages : 0;
        i++;
    }
}

/* ---------------------------------------------------------------------- */
/* copy                                                                    */

struct ddc_frame {
    uint32_t node; /* loop node, or DDC_ROOT */
    size_t iter;
    intptr_t base; /* buffer + sum of the enclosing iterations' shifts */
};

struct ddc_cursor {
    const struct ddc_node *n;
    const ptrdiff_t *dv; /* the layout's dv[] */
    uint32_t nnodes;
    uint32_t leaf;     /* current leaf node */
    uint32_t sp;       /* frames in use */
    struct ddc_frame *fr;
    intptr_t blk;      /* start of the current block */
    size_t off;        /* offset in the current block */
    size_t left;       /* blocks left in the leaf, the current one included */
    size_t blen;
    ptrdiff_t stride;
    const ptrdiff_t *dp; /* index leaf: the current block's dv[] entry, else NULL */
    intptr_t ibase;      /* index leaf: what dv[] entries are relative to */
};

/* The cursor's blocks as a run: block k at base + k * stride, or at
 * base + dp[k] for an index leaf. */
#define DDC_RUN(c) ((c)->dp ? (c)->ibase : (c)->blk), (c)->stride, (c)->dp

/* Skip n blocks of the current leaf (n < left). */
static inline void ddc_advance(struct ddc_cursor *c, size_t n)
{
    if (c->dp) {
        c->dp += n;
        c->blk = c->ibase + *c->dp;
    } else {
        c->blk += (ptrdiff_t) n * c->stride;
    }
}

static inline uint32_t ddc_body_end(const struct ddc_cursor *c, const struct ddc_frame *f)
{
    return DDC_ROOT == f->node ? c->nnodes : f->node + 1 + c->n[f->node].items;
}

static inline void ddc_enter_leaf(struct ddc_cursor *c, uint32_t i, intptr_t base)
{
    while (DDC_LOOP == c->n[i].kind) {
        struct ddc_frame *f = &c->fr[c->sp++];
        f->node = i;
        f->iter = 0;
        f->base = base;
        i++;
    }
    c->leaf = i;
    c->off = 0;
    c->left = c->n[i].count;
    c->blen = c->n[i].blen;
    if (DDC_INDEX == c->n[i].kind) {
        c->dp = c->dv + c->n[i].stride;
        c->ibase = base;
        c->blk = base + *c->dp;
        c->stride = 0;
    } else {
        c->dp = NULL;
        c->blk = base + c->n[i].disp;
        c->stride = c->n[i].stride;
    }
}

/* Move to the first block of the next leaf; 0 at the end of the layout. */
static int ddc_next_leaf(struct ddc_cursor *c)
{
    uint32_t i = c->leaf + 1;
    for (;;) {
        struct ddc_frame *f = &c->fr[c->sp - 1];
        if (i < ddc_body_end(c, f)) {
            ddc_enter_leaf(c, i, f->base);
            return 1;
        }
        if (DDC_ROOT == f->node) {
            c->left = 0;
            return 0;
        }
        if (++f->iter < c->n[f->node].count) {
            f->base += c->n[f->node].stride;
            i = f->node + 1;
        } else {
            i = f->node + 1 + c->n[f->node].items;
            c->sp--;
        }
    }
}

static inline void ddc_next_block(struct ddc_cursor *c)
{
    c->off = 0;
    if (--c->left) {
        ddc_advance(c, 1);
    } else {
        ddc_next_leaf(c);
    }
}

/* Position at packed offset pos (< layout size). */
static void ddc_seek(struct ddc_cursor *c, const opal_datatype_direct_layout_t *l,
                     struct ddc_frame *frames, const void *buf, size_t pos)
{
    uint32_t i = 0, end = l->nnodes;
    intptr_t base = (intptr_t) buf;

    c->n = l->nodes;
    c->dv = l->dv;
    c->dp = NULL;
    c->nnodes = l->nnodes;
    c->fr = frames;
    c->sp = 1;
    frames[0].node = DDC_ROOT;
    frames[0].iter = 0;
    frames[0].base = base;
    while (i < end) {
        const struct ddc_node *n = &l->nodes[i];
        if (pos >= n->size) {
            pos -= n->size;
            i += DDC_LOOP == n->kind ? 1 + n->items : 1;
            continue;
        }
        if (DDC_LOOP == n->kind) {
            size_t it = pos / n->blen;
            struct ddc_frame *f = &frames[c->sp++];
            pos -= it * n->blen;
            base += (ptrdiff_t) it * n->stride;
            f->node = i;
            f->iter = it;
            f->base = base;
            end = i + 1 + n->items;
            i++;
            continue;
        }
        {
            size_t j = pos / n->blen;
            c->leaf = i;
            c->blen = n->blen;
            c->stride = n->stride;
            c->left = n->count - j;
            c->off = pos - j * n->blen;
            if (DDC_INDEX == n->kind) {
                c->dp = l->dv + n->stride + j;
                c->ibase = base;
                c->blk = base + *c->dp;
                c->stride = 0;
            } else {
                c->blk = base + n->disp + (ptrdiff_t) j * n->stride;
            }
            return;
        }
    }
    c->left = 0; /* pos beyond the end: not reached by the callers */
}

/* Lines holding bytes of both halves of the packed stream, in the index
 * leaf where its half falls (0 when a strided leaf holds the half: its
 * halves share at most a line).  The copy's two agents each take about a
 * half: both write those lines. */
static size_t ddc_shape_shared_lines(const opal_datatype_direct_layout_t *l)
{
    struct ddc_frame f_inline[16], *fr = f_inline;
    struct ddc_cursor c;
    size_t shared = 0;

    if (0 == l->size) {
        return 0;
    }
    if (l->depth + 1 > 16 && NULL == (fr = malloc((l->depth + 1) * sizeof(*fr)))) {
        return 0; /* only a cost model's estimate is lost */
    }
    ddc_seek(&c, l, fr, NULL, l->size / 2);
    if (NULL != c.dp) {
        const struct ddc_node *n = &l->nodes[c.leaf];

        /* the block at the half belongs to the first half when it starts before it */
        (void) ddc_shape_units(l, n, 6, n->count - c.left + (0 != c.off), &shared);
    }
    if (fr != f_inline) {
        free(fr);
    }
    return shared;
}

void opal_datatype_direct_layout_shape(const opal_datatype_direct_layout_t *layout,
                                       opal_datatype_direct_shape_t *shape)
{
    memset(shape, 0, sizeof(*shape));
    shape->bytes = layout->size;
    ddc_shape_walk(layout, 0, layout->nnodes, 1, shape);
    shape->index_shared_lines = ddc_shape_shared_lines(layout);
}

/* ---------------------------------------------------------------------- */
/* long blocks                                                             */

/* glibc copies 2113 bytes up to about the L2's size with `rep movsb` (its
 * rep_movsb_threshold with FSRM, and rep_movsb_stop_threshold).  On AMD
 * Zen 3 that runs 10-14 times slower when the destination lies 1 to 31
 * bytes after the source modulo 4 KiB (glibc BZ 30994): 0.45-0.55 ns per
 * byte instead of 0.04.  Layouts hit it often: NAS_MG_y's face is one row
 * (D1 * 8 bytes, 16 modulo 4 KiB) from its ghost.  Such copies go as
 * memcpy calls of DDC_ALIAS_PIECE bytes, which glibc does with vector
 * moves, where a probe at the first one finds the window slow. */
#define DDC_ALIAS_PIECE 2048
#define DDC_ALIAS_WINDOW 32

static volatile int ddc_alias_split = -1; /* -1: not probed yet */
static size_t ddc_alias_max;              /* longer copies: memcpy's own loop */

static inline int ddc_aliased(uintptr_t d, uintptr_t s, size_t n)
{
    return n > DDC_ALIAS_PIECE && ((d - s) & 4095) - 1 < DDC_ALIAS_WINDOW - 1;
}

static double ddc_probe_ns(char *d, const char *s, size_t n)
{
    struct timespec t0, t1;
    double best = 1e30;

    for (int i = 0; i < 8; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t0);
        memcpy(d, s, n);
        __asm__ __volatile__("" : : "r"(d) : "memory");
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ns = (double) (t1.tv_sec - t0.tv_sec) * 1e9 + (double) (t1.tv_nsec - t0.tv_nsec);
        best = ns < best ? ns : best;
    }
    return best;
}

/* Whether memcpy is more than 3 times slower in the window than outside
 * it, on this CPU (8 KiB copies, best of 8: about 20 us once). */
static int ddc_alias_probe(void)
{
    enum { N = 8192 };
    char *buf = malloc(3 * N + 2 * 4096);
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    int split = 0;

    if (NULL != buf) {
        char *s = (char *) (((uintptr_t) buf + 4095) & ~(uintptr_t) 4095), *d = s + N + 4096;

        memset(buf, 1, 3 * N + 2 * 4096);
        split = ddc_probe_ns(d + 16, s, N) > 3 * ddc_probe_ns(d + 256, s, N);
        free(buf);
    }
    ddc_alias_max = l2 > 0 ? (size_t) l2 : (size_t) 512 << 10;
    return split;
}

static void ddc_copy_aliased(void *d, const void *s, size_t n)
{
    char *dp = d;
    const char *sp = s;

    if (ddc_alias_split < 0) {
        ddc_alias_split = ddc_alias_probe();
    }
    if (!ddc_alias_split || n >= ddc_alias_max) {
        memcpy(d, s, n);
        return;
    }
    for (; n > DDC_ALIAS_PIECE; n -= DDC_ALIAS_PIECE) {
        memcpy(dp, sp, DDC_ALIAS_PIECE);
        dp += DDC_ALIAS_PIECE;
        sp += DDC_ALIAS_PIECE;
    }
    memcpy(dp, sp, n);
}

/* memcpy of a block of any length. */
static inline void ddc_memcpy(void *d, const void *s, size_t n)
{
    if (ddc_aliased((uintptr_t) d, (uintptr_t) s, n)) {
        ddc_copy_aliased(d, s, n);
    } else {
        memcpy(d, s, n);
    }
}

void opal_datatype_direct_memcpy(void *dst, const void *src, size_t n)
{
    ddc_memcpy(dst, src, n);
}

/* Copy n blocks of bl bytes: dst += ds, src += ss after each. */
#define DDC_BLOCKS(BL)                                                   \
    for (size_t k = 0; k < n; k++) {                                     \
        memcpy((void *) d, (const void *) s, BL);                        \
        d += ds;                                                         \
        s += ss;                                                         \
    }

/* Largest block copied inline instead of by a memcpy call: below this,
 * libc's call and size dispatch cost more than the moves themselves. */
#define DDC_INLINE_MAX 160

/* One block of 16 < bl <= DDC_INLINE_MAX bytes: 32-byte steps, then the
 * tail as one or two 16-byte moves, the last ending at the block's end
 * (it may copy again bytes already copied; the blocks do not overlap). */
static inline void ddc_copy_mid(intptr_t d, intptr_t s, size_t bl)
{
    size_t o = 0;

    for (; o + 32 <= bl; o += 32) {
        memcpy((void *) (d + o), (const void *) (s + o), 16);
        memcpy((void *) (d + o + 16), (const void *) (s + o + 16), 16);
    }
    if (bl - o > 16) {
        memcpy((void *) (d + o), (const void *) (s + o), 16);
    }
    if (o < bl) {
        memcpy((void *) (d + bl - 16), (const void *) (s + bl - 16), 16);
    }
}

static void ddc_copy_blocks(intptr_t d, ptrdiff_t ds, intptr_t s, ptrdiff_t ss, size_t bl,
                            size_t n)
{
    switch (bl) {
    case 1: DDC_BLOCKS(1); return;
    case 2: DDC_BLOCKS(2); return;
    case 4: DDC_BLOCKS(4); return;
    case 8: DDC_BLOCKS(8); return;
    case 12: DDC_BLOCKS(12); return;
    case 16: DDC_BLOCKS(16); return;
    case 24: DDC_BLOCKS(24); return;
    case 32: DDC_BLOCKS(32); return;
    default:
        break;
    }
    if (bl > 16 && bl <= DDC_INLINE_MAX) {
        for (size_t k = 0; k < n; k++) {
            ddc_copy_mid(d, s, bl);
            d += ds;
            s += ss;
        }
        return;
    }
    if (bl < 16) {
        for (size_t k = 0; k < n; k++) {
            size_t r = bl;
            intptr_t dd = d, sd = s;
            if (r >= 8) {
                memcpy((void *) dd, (const void *) sd, 8);
                dd += 8, sd += 8, r -= 8;
            }
            if (r >= 4) {
                memcpy((void *) dd, (const void *) sd, 4);
                dd += 4, sd += 4, r -= 4;
            }
            while (r) {
                *(char *) dd++ = *(const char *) sd++;
                r--;
            }
            d += ds;
            s += ss;
        }
        return;
    }
    for (size_t k = 0; k < n; k++) {
        ddc_memcpy((void *) d, (const void *) s, bl);
        d += ds;
        s += ss;
    }
}

/* n blocks of bl bytes between two runs of which at least one is an index
 * leaf's (DDC_RUN): destination block k at d + dd[k] or d + k * ds, source
 * block k at s + sd[k] or s + k * ss. */
#define DDC_IDX(BL, DK, SK)                                              \
    for (size_t k = 0; k < n; k++) {                                     \
        memcpy((void *) (DK), (const void *) (SK), BL);                  \
    }
#define DDC_IDX_SIZES(DK, SK)                                            \
    switch (bl) {                                                        \
    case 4: DDC_IDX(4, DK, SK); return;                                  \
    case 8: DDC_IDX(8, DK, SK); return;                                  \
    case 12: DDC_IDX(12, DK, SK); return;                                \
    case 16: DDC_IDX(16, DK, SK); return;                                \
    case 24: DDC_IDX(24, DK, SK); return;                                \
    case 32: DDC_IDX(32, DK, SK); return;                                \
    default: break;                                                      \
    }                                                                    \
    if (bl > 16 && bl <= DDC_INLINE_MAX) {                               \
        for (size_t k = 0; k < n; k++) {                                 \
            ddc_copy_mid((DK), (SK), bl);                                \
        }                                                                \
        return;                                                          \
    }                                                                    \
    for (size_t k = 0; k < n; k++) {                                     \
        ddc_memcpy((void *) (DK), (const void *) (SK), bl);              \
    }                                                                    \
    return;

static void ddc_copy_run(intptr_t d, ptrdiff_t ds, const ptrdiff_t *dd, intptr_t s, ptrdiff_t ss,
                         const ptrdiff_t *sd, size_t bl, size_t n)
{
    if (NULL == dd && NULL == sd) {
        ddc_copy_blocks(d, ds, s, ss, bl, n);
    } else if (NULL != dd && NULL != sd) {
        DDC_IDX_SIZES(d + dd[k], s + sd[k]);
    } else if (NULL != dd) {
        DDC_IDX_SIZES(d + dd[k], s + (ptrdiff_t) k * ss);
    } else {
        DDC_IDX_SIZES(d + (ptrdiff_t) k * ds, s + sd[k]);
    }
}

static inline size_t ddc_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Identical layouts: one cursor, the receive address is the send address
 * shifted by rbuf - sbuf. */
static void ddc_copy_same(struct ddc_cursor *c, intptr_t delta, size_t rem)
{
    while (rem) {
        if (0 == c->off && rem >= c->blen) {
            size_t n = ddc_min(c->left, rem / c->blen);
            if (c->dp) {
                ddc_copy_run(c->ibase + delta, 0, c->dp, c->ibase, 0, c->dp, c->blen, n);
            } else {
                ddc_copy_blocks(c->blk + delta, c->stride, c->blk, c->stride, c->blen, n);
            }
            rem -= n * c->blen;
            c->left -= n;
            if (c->left) {
                ddc_advance(c, n);
            } else if (rem) {
                ddc_next_leaf(c);
            }
        } else {
            size_t k = ddc_min(c->blen - c->off, rem);
            ddc_memcpy((void *) (c->blk + c->off + delta), (const void *) (c->blk + c->off), k);
            rem -= k;
            c->off += k;
            if (c->off == c->blen && rem) {
                ddc_next_block(c);
            }
        }
    }
}

/* Transpose tile.  The "column" cursor c is at the start of a leaf that is
 * the only child of a loop (one column: count blocks of blen bytes), and
 * the "row" cursor w is at the start of a block holding exactly one column's
 * bytes (blen x count) with more such blocks following (rows).  Instead of
 * one column after the other (the packed order: one block per row of the
 * column side, every block on another cache line), copy T columns together,
 * row by row of the column side: T adjacent blocks per row, which fill
 * whole cache lines when the columns are adjacent.  The order of the copies
 * changes, not their pairs of addresses: the receive typemap does not
 * overlap (MPI), so the result is the same.  Returns the bytes copied, 0 if
 * the shape does not apply. */
#define DDC_TILE_MAX 8

static size_t ddc_tile(struct ddc_cursor *c, struct ddc_cursor *w, size_t rem, int c_is_recv)
{
    const struct ddc_node *leaf = &c->n[c->leaf], *L;
    struct ddc_frame *f = &c->fr[c->sp - 1];
    size_t body, T, itl, cnt = leaf->count, bl = leaf->blen;
    ptrdiff_t cs = leaf->stride, ls, ws;
    intptr_t cb, wb;

    if (c->dp || w->dp || c->off || c->left != cnt || cnt < 2 || bl > 32 || DDC_ROOT == f->node) {
        return 0;
    }
    L = &c->n[f->node];
    body = bl * cnt;
    if (1 != L->items || w->off || w->blen != body || w->left < 2 || rem < 2 * body) {
        return 0;
    }
    itl = L->count - f->iter;
    T = ddc_min(ddc_min(itl, w->left), ddc_min(rem / body, DDC_TILE_MAX));
    if (T < 2) {
        return 0;
    }
    ls = L->stride;
    ws = w->stride;
    cb = c->blk;
    wb = w->blk;
    for (size_t i = 0; i < cnt; i++) {
        intptr_t cp = cb + (ptrdiff_t) i * cs, wp = wb + (ptrdiff_t) (i * bl);
        if (c_is_recv) {
            size_t n = T;
            intptr_t d = cp, s = wp;
            ptrdiff_t ds = ls, ss = ws;
            switch (bl) {
            case 8: DDC_BLOCKS(8); break;
            case 16: DDC_BLOCKS(16); break;
            default: ddc_copy_blocks(d, ds, s, ss, bl, n); break;
            }
        } else {
            size_t n = T;
            intptr_t d = wp, s = cp;
            ptrdiff_t ds = ws, ss = ls;
            switch (bl) {
            case 8: DDC_BLOCKS(8); break;
            case 16: DDC_BLOCKS(16); break;
            default: ddc_copy_blocks(d, ds, s, ss, bl, n); break;
            }
        }
    }
    /* w: T whole blocks consumed */
    w->left -= T;
    if (w->left) {
        w->blk += (ptrdiff_t) T * ws;
    } else if (rem > T * body) {
        ddc_next_leaf(w);
    }
    /* c: T iterations of L consumed; ddc_next_leaf does the last step */
    f->iter += T - 1;
    f->base += (ptrdiff_t) (T - 1) * ls;
    c->left = 0;
    if (rem > T * body) {
        ddc_next_leaf(c);
    }
    return T * body;
}

static void ddc_copy_merge(struct ddc_cursor *s, struct ddc_cursor *r, size_t rem)
{
    while (rem) {
        size_t n;
        if (0 == r->off && r->left > 1 && r->blen < s->blen && (n = ddc_tile(r, s, rem, 1))) {
            rem -= n;
            continue;
        }
        if (0 == s->off && s->left > 1 && s->blen < r->blen && (n = ddc_tile(s, r, rem, 0))) {
            rem -= n;
            continue;
        }
        if (0 == s->off && 0 == r->off && s->blen == r->blen) {
            n = ddc_min(ddc_min(s->left, r->left), rem / s->blen);
            if (n) {
                ddc_copy_run(DDC_RUN(r), DDC_RUN(s), s->blen, n);
                rem -= n * s->blen;
                if ((s->left -= n)) {
                    ddc_advance(s, n);
                } else if (rem) {
                    ddc_next_leaf(s);
                }
                if ((r->left -= n)) {
                    ddc_advance(r, n);
                } else if (rem) {
                    ddc_next_leaf(r);
                }
                continue;
            }
        }
        if (0 == r->off && r->blen < s->blen - s->off
            && (n = ddc_min(ddc_min((s->blen - s->off) / r->blen, r->left), rem / r->blen)) > 0) {
            /* scatter a contiguous piece of the send block into n receive blocks */
            ddc_copy_run(DDC_RUN(r), s->blk + (ptrdiff_t) s->off, (ptrdiff_t) r->blen, NULL, r->blen,
                         n);
            rem -= n * r->blen;
            s->off += n * r->blen;
            if (s->off == s->blen && rem) {
                ddc_next_block(s);
            }
            if ((r->left -= n)) {
                ddc_advance(r, n);
            } else if (rem) {
                ddc_next_leaf(r);
            }
            continue;
        }
        if (0 == s->off && s->blen < r->blen - r->off
            && (n = ddc_min(ddc_min((r->blen - r->off) / s->blen, s->left), rem / s->blen)) > 0) {
            /* gather n send blocks into a contiguous piece of the receive block */
            ddc_copy_run(r->blk + (ptrdiff_t) r->off, (ptrdiff_t) s->blen, NULL, DDC_RUN(s), s->blen,
                         n);
            rem -= n * s->blen;
            r->off += n * s->blen;
            if (r->off == r->blen && rem) {
                ddc_next_block(r);
            }
            if ((s->left -= n)) {
                ddc_advance(s, n);
            } else if (rem) {
                ddc_next_leaf(s);
            }
            continue;
        }
        n = ddc_min(ddc_min(s->blen - s->off, r->blen - r->off), rem);
        ddc_memcpy((void *) (r->blk + r->off), (const void *) (s->blk + s->off), n);
        rem -= n;
        s->off += n;
        r->off += n;
        if (rem) {
            if (s->off == s->blen) {
                ddc_next_block(s);
            }
            if (r->off == r->blen) {
                ddc_next_block(r);
            }
        }
    }
}

static int ddc_same_layout(const opal_datatype_direct_layout_t *a,
                           const opal_datatype_direct_layout_t *b)
{
    return a == b
           || (a->nnodes == b->nnodes && a->size == b->size && a->ndv == b->ndv
               && 0 == memcmp(a->nodes, b->nodes, a->nnodes * sizeof(struct ddc_node))
               && (0 == a->ndv || 0 == memcmp(a->dv, b->dv, a->ndv * sizeof(ptrdiff_t))));
}

int opal_datatype_direct_layout_copy(const opal_datatype_direct_layout_t *sl, const void *sbuf,
                                     const opal_datatype_direct_layout_t *rl, void *rbuf,
                                     size_t from, size_t to)
{
    struct ddc_frame sf_inline[16], rf_inline[16], *sf = sf_inline, *rf = rf_inline;
    struct ddc_cursor s, r;

    if (from > to || to > sl->size || to > rl->size) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (from == to) {
        return OPAL_SUCCESS;
    }
    /* both contiguous: one memcpy */
    if (1 == sl->nnodes && 1 == rl->nnodes && DDC_LEAF == sl->nodes[0].kind
        && DDC_LEAF == rl->nodes[0].kind && 1 == sl->nodes[0].count && 1 == rl->nodes[0].count) {
        ddc_memcpy((char *) ((intptr_t) rbuf + rl->nodes[0].disp) + from,
               (const char *) ((intptr_t) sbuf + sl->nodes[0].disp) + from, to - from);
        return OPAL_SUCCESS;
    }
    if (sl->depth + 1 > 16 || rl->depth + 1 > 16) {
        sf = malloc((sl->depth + 1) * sizeof(*sf));
        rf = malloc((rl->depth + 1) * sizeof(*rf));
        if (NULL == sf || NULL == rf) {
            free(sf);
            free(rf);
            return OPAL_ERR_OUT_OF_RESOURCE;
        }
    }
    ddc_seek(&s, sl, sf, sbuf, from);
    if (ddc_same_layout(sl, rl)) {
        ddc_copy_same(&s, (intptr_t) rbuf - (intptr_t) sbuf, to - from);
    } else {
        ddc_seek(&r, rl, rf, rbuf, from);
        ddc_copy_merge(&s, &r, to - from);
    }
    if (sf != sf_inline) {
        free(sf);
        free(rf);
    }
    return OPAL_SUCCESS;
}

/* A contiguous layout of size bytes, on the caller's stack. */
union ddc_contig {
    struct ddc_node align_;
    char bytes[sizeof(opal_datatype_direct_layout_t) + sizeof(struct ddc_node)];
};

static const opal_datatype_direct_layout_t *ddc_contig_layout(union ddc_contig *u, size_t size)
{
    opal_datatype_direct_layout_t *l = (opal_datatype_direct_layout_t *) u->bytes;

    l->size = size;
    l->nnodes = 1;
    l->depth = 0;
    l->ndv = 0;
    l->dv = NULL;
    l->nodes[0] = (struct ddc_node){.kind = DDC_LEAF, .items = 0, .count = 1,
                                    .stride = (ptrdiff_t) size, .disp = 0, .blen = size,
                                    .size = size};
    return l;
}

int opal_datatype_direct_layout_pack(const opal_datatype_direct_layout_t *layout,
                                     const void *buf, size_t from, size_t to, void *dst)
{
    union ddc_contig u;

    /* dst holds the range only: the contiguous side's buffer starts `from`
     * bytes before it (never dereferenced there) */
    return opal_datatype_direct_layout_copy(layout, buf, ddc_contig_layout(&u, layout->size),
                                            (void *) ((intptr_t) dst - (intptr_t) from), from,
                                            to);
}

int opal_datatype_direct_layout_unpack(const opal_datatype_direct_layout_t *layout, void *buf,
                                       size_t from, size_t to, const void *src)
{
    union ddc_contig u;

    return opal_datatype_direct_layout_copy(ddc_contig_layout(&u, layout->size),
                                            (const void *) ((intptr_t) src - (intptr_t) from),
                                            layout, buf, from, to);
}

/* One-shot: compile on the stack when small. */
#define DDC_INLINE_NODES 64

struct ddc_oneshot {
    struct ddc_builder b;
    opal_datatype_direct_layout_t *l;
    union {
        struct ddc_node align_;
        char bytes[sizeof(opal_datatype_direct_layout_t) + DDC_INLINE_NODES * sizeof(struct ddc_node)];
    } u;
};

static int ddc_oneshot_compile(struct ddc_oneshot *o, const opal_datatype_t *dt, size_t count)
{
    opal_datatype_direct_layout_t *inl = (opal_datatype_direct_layout_t *) o->u.bytes;
    int rc;
    o->l = NULL;
    /* build straight into the inline layout's nodes */
    ddc_builder_init(&o->b, inl->nodes, DDC_INLINE_NODES);
    rc = ddc_compile(&o->b, dt, count);
    if (OPAL_SUCCESS != rc) {
        return rc;
    }
    if (!o->b.heap) {
        o->l = inl;
        o->l->size = dt->size * count;
        o->l->nnodes = o->b.used;
        o->l->depth = o->b.max_depth;
        o->l->ndv = o->b.ndv;
        o->l->dv = o->b.dv; /* the builder's: freed by ddc_oneshot_fini */
        return OPAL_SUCCESS;
    }
    o->l = ddc_layout_from(&o->b, dt->size * count);
    return NULL == o->l ? OPAL_ERR_OUT_OF_RESOURCE : OPAL_SUCCESS;
}

static void ddc_oneshot_fini(struct ddc_oneshot *o)
{
    if (o->l && o->l != (opal_datatype_direct_layout_t *) o->u.bytes) {
        free(o->l);
    }
    ddc_builder_fini(&o->b);
}

int opal_datatype_copy_direct(const opal_datatype_t *sdt, size_t scount, const void *sbuf,
                              const opal_datatype_t *rdt, size_t rcount, void *rbuf, size_t from,
                              size_t to)
{
    struct ddc_oneshot s, r;
    int rc;

    if (from > to || to > sdt->size * scount || to > rdt->size * rcount) {
        return OPAL_ERR_BAD_PARAM;
    }
    if (from == to) {
        return OPAL_SUCCESS;
    }
    rc = ddc_oneshot_compile(&s, sdt, scount);
    if (OPAL_SUCCESS == rc) {
        if (sdt == rdt && scount == rcount) {
            rc = opal_datatype_direct_layout_copy(s.l, sbuf, s.l, rbuf, from, to);
        } else {
            rc = ddc_oneshot_compile(&r, rdt, rcount);
            if (OPAL_SUCCESS == rc) {
                rc = opal_datatype_direct_layout_copy(s.l, sbuf, r.l, rbuf, from, to);
            }
            ddc_oneshot_fini(&r);
        }
    }
    ddc_oneshot_fini(&s);
    return rc;
}

/* Compiling a layout is worth it for a local copy unless the description
 * has many elements of few bytes each (up to 64 elements compile on the
 * stack; more must carry at least 64 packed bytes each). */
static bool ddc_local_copy_worth(const opal_datatype_t *dt)
{
    size_t elements = dt->opt_desc.used ? dt->opt_desc.used : dt->desc.used;

    return (dt->flags & OPAL_DATATYPE_FLAG_NO_GAPS) || elements <= 64 || dt->size >= 64 * elements;
}

int opal_datatype_copy_direct_local(const opal_datatype_t *sdt, size_t scount, const void *sbuf,
                                    const opal_datatype_t *rdt, size_t rcount, void *rbuf)
{
    size_t ssize = sdt->size * scount, rsize = rdt->size * rcount;

    if (!ddc_local_copy_worth(sdt) || !ddc_local_copy_worth(rdt)) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return opal_datatype_copy_direct(sdt, scount, sbuf, rdt, rcount, rbuf, 0,
                                     ssize < rsize ? ssize : rsize);
}

int opal_convertor_copy_direct(const struct opal_convertor_t *send,
                               const struct opal_convertor_t *recv, size_t from, size_t to)
{
    const uint32_t bad = CONVERTOR_WITH_CHECKSUM | CONVERTOR_CUDA | CONVERTOR_CUDA_UNIFIED;
    /* (CONVERTOR_HOMOGENEOUS is not set on convertors of empty messages) */
    if (((send->flags | recv->flags) & bad) || send->remoteArch != opal_local_arch
        || recv->remoteArch != opal_local_arch) {
        return OPAL_ERR_NOT_SUPPORTED;
    }
    return opal_datatype_copy_direct(send->pDesc, send->count, send->pBaseBuf, recv->pDesc,
                                     recv->count, recv->pBaseBuf, from, to);
}
