/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * tests/ddt-copy/ddc_dump.c: development helper, not built by build.mk.
 * Compiles the engine (opal_datatype_direct.c of a patched Open MPI tree)
 * into the fuzzer together with ddc_dump(), which prints a datatype's opal
 * description and the engine's compiled layout; ddt_fuzz -v calls it (weak
 * symbol) for every case it runs:
 *
 *   P=$(scripts/build-ompi --print-prefix); T=<patched tree>/opal/datatype
 *   $P/bin/mpicc -O0 -g -I$T -I$P/include/openmpi -I$P/include \
 *       -o /tmp/ddt_fuzz_dump tests/ddt-copy/ddt_fuzz.c tests/ddt-copy/ddc_dump.c -lopen-pal
 *   /tmp/ddt_fuzz_dump --seed S --family F --case K -v
 */
#include <stdio.h>

#include "opal_datatype_direct.c"
void ddc_dump(const opal_datatype_t *dt, size_t count);
void ddc_dump(const opal_datatype_t *dt, size_t count)
{
    opal_datatype_direct_layout_t *l;
    int rc = opal_datatype_direct_layout_create(dt, count, &l);
    const dt_type_desc_t *d = ddc_desc(dt);
    fprintf(stderr, "desc: used %zu size %zu lb %ld ub %ld true_lb %ld true_ub %ld\n", d->used, dt->size, (long)dt->lb, (long)dt->ub, (long)dt->true_lb, (long)dt->true_ub);
    for (size_t i = 0; i < d->used; i++) {
        const dt_elem_desc_t *e = &d->desc[i];
        if (e->elem.common.type == OPAL_DATATYPE_LOOP) fprintf(stderr, "  LOOP loops %u items %u ext %ld\n", e->loop.loops, e->loop.items, (long)e->loop.extent);
        else if (e->elem.common.type == OPAL_DATATYPE_END_LOOP) fprintf(stderr, "  END items %u size %zu\n", e->end_loop.items, e->end_loop.size);
        else fprintf(stderr, "  ELEM type %u flags %x count %u blocklen %zu ext %ld disp %ld\n", e->elem.common.type, e->elem.common.flags, e->elem.count, e->elem.blocklen, (long)e->elem.extent, (long)e->elem.disp);
    }
    if (rc) { fprintf(stderr, "compile rc %d\n", rc); return; }
    fprintf(stderr, "layout: size %zu nodes %u depth %u\n", l->size, l->nnodes, l->depth);
    for (uint32_t i = 0; i < l->nnodes; i++) {
        const struct ddc_node *n = &l->nodes[i];
        if (n->kind == DDC_LOOP) fprintf(stderr, "  [%u] loop count %zu stride %ld items %u body %zu\n", i, n->count, (long)n->stride, n->items, n->blen);
        else fprintf(stderr, "  [%u] leaf disp %ld blen %zu stride %ld count %zu\n", i, (long)n->disp, n->blen, (long)n->stride, n->count);
    }
    free(l);
}
