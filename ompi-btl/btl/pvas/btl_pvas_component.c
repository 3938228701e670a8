/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas component: MCA parameters, open/close, init (identity check,
 * mailbox, modex).
 */
#include "opal_config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opal/mca/pmix/pmix.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"

#include <pvas.h>

#include "btl_pvas.h"
#include "btl_pvas_frag.h"

static int pvas_component_register(void);
static int pvas_component_open(void);
static int pvas_component_close(void);
static mca_btl_base_module_t **pvas_component_init(int *num_btls, bool enable_progress_threads,
                                                   bool enable_mpi_threads);

/* clang-format off */
mca_btl_pvas_component_t mca_btl_pvas_component = {
    .super = {
        .btl_version = {
            MCA_BTL_DEFAULT_VERSION("pvas"),
            .mca_open_component = pvas_component_open,
            .mca_close_component = pvas_component_close,
            .mca_register_component_params = pvas_component_register,
        },
        .btl_data = {
            .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT,
        },
        .btl_init = pvas_component_init,
        .btl_progress = mca_btl_pvas_component_progress,
    },
};
/* clang-format on */

/* Above btl/vader (MCA_BTL_EXCLUSIVITY_HIGH) so that a peer reachable both
 * ways goes through this BTL; below nothing that matters on a node. */
#define MCA_BTL_PVAS_EXCLUSIVITY (MCA_BTL_EXCLUSIVITY_HIGH + 1024)

static void pvas_register_int(const char *name, const char *help, int level, int *storage)
{
    (void) mca_base_component_var_register(
        &mca_btl_pvas_component.super.btl_version, name, help, MCA_BASE_VAR_TYPE_INT, NULL, 0,
        MCA_BASE_VAR_FLAG_SETTABLE, level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static void pvas_register_uint(const char *name, const char *help, int level, unsigned int *storage)
{
    (void) mca_base_component_var_register(
        &mca_btl_pvas_component.super.btl_version, name, help, MCA_BASE_VAR_TYPE_UNSIGNED_INT, NULL,
        0, MCA_BASE_VAR_FLAG_SETTABLE, level, MCA_BASE_VAR_SCOPE_LOCAL, storage);
}

static int pvas_component_register(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    mca_btl_base_module_t *m = &mca_btl_pvas.super;

    (void) mca_base_var_group_component_register(&c->super.btl_version,
                                                 "PVAS byte transfer layer: ranks of one PVAS "
                                                 "group (one shared virtual address space)");

    c->free_list_num = 16;
    pvas_register_int("free_list_num",
                      "Initial fragments in each free list (inline, eager, max-send)",
                      OPAL_INFO_LVL_9, &c->free_list_num);
    c->free_list_max = 1024;
    pvas_register_int("free_list_max",
                      "Maximum fragments per free list (0: unlimited)", OPAL_INFO_LVL_9,
                      &c->free_list_max);
    c->free_list_inc = 64;
    pvas_register_int("free_list_inc", "Fragments added each time a free list grows",
                      OPAL_INFO_LVL_9, &c->free_list_inc);
    c->max_inline_send = 512;
    pvas_register_uint("max_inline_send",
                       "Data capacity (bytes) of the small fragments: sendi, control messages, "
                       "headers of in-place sends",
                       OPAL_INFO_LVL_5, &c->max_inline_send);
    c->inplace_min_send = 256;
    pvas_register_uint("inplace_min_send",
                       "Contiguous messages larger than this and than fbox_max_inplace (bytes, "
                       "PML header included) are sent in place: the receiver copies from the "
                       "sender's buffer",
                       OPAL_INFO_LVL_5, &c->inplace_min_send);
    c->inplace = true;
    (void) mca_base_component_var_register(
        &c->super.btl_version, "inplace",
        "Send contiguous data above inplace_min_send in place (false: copy it into a fragment)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, MCA_BASE_VAR_FLAG_SETTABLE, OPAL_INFO_LVL_5,
        MCA_BASE_VAR_SCOPE_LOCAL, &c->inplace);
    c->fbox_size = 16384;
    pvas_register_uint("fbox_size",
                       "Bytes of a fast box, a per-sender ring in the receiver's memory for "
                       "small messages (power of two, >= 256; 0: none)",
                       OPAL_INFO_LVL_5, &c->fbox_size);
    c->fbox_max_send = 2048;
    pvas_register_uint("fbox_max_send",
                       "Largest message (bytes, PML header included) sent through a fast box",
                       OPAL_INFO_LVL_5, &c->fbox_max_send);
    c->fbox_max_inplace = 1024;
    pvas_register_uint("fbox_max_inplace",
                       "Largest contiguous message (bytes, PML header included) copied into a "
                       "fast box rather than sent in place",
                       OPAL_INFO_LVL_5, &c->fbox_max_inplace);
    c->fbox_max = 32;
    pvas_register_uint("fbox_max", "Most fast boxes a rank receives from", OPAL_INFO_LVL_5,
                       &c->fbox_max);
    c->fbox_threshold = 16;
    pvas_register_uint("fbox_threshold",
                       "Messages a rank sends to a peer before it asks that peer for a fast box",
                       OPAL_INFO_LVL_5, &c->fbox_threshold);
    c->poll_limit = 32;
    pvas_register_uint("poll_limit", "Most mailbox entries handled per progress call",
                       OPAL_INFO_LVL_9, &c->poll_limit);

    m->btl_exclusivity = MCA_BTL_PVAS_EXCLUSIVITY;
    /* contiguous eager sends are single-copy (in place), so a large eager
     * limit costs only unexpected-message buffering in the PML */
    m->btl_eager_limit = 32 * 1024;
    m->btl_rndv_eager_limit = 32 * 1024;
    m->btl_max_send_size = 64 * 1024;
    m->btl_rdma_pipeline_send_length = 64 * 1024;
    m->btl_rdma_pipeline_frag_size = 4 * 1024 * 1024;
    m->btl_min_rdma_pipeline_size = INT_MAX;
    m->btl_put_limit = SIZE_MAX;
    m->btl_get_limit = SIZE_MAX;
    m->btl_put_alignment = 0;
    m->btl_get_alignment = 0;
    m->btl_flags = MCA_BTL_FLAGS_SEND | MCA_BTL_FLAGS_SEND_INPLACE | MCA_BTL_FLAGS_PUT |
                   MCA_BTL_FLAGS_GET | MCA_BTL_FLAGS_SHARED_ADDR_SPACE;
    m->btl_bandwidth = 80000; /* Mb/s */
    m->btl_latency = 0;       /* us */

    return mca_btl_base_param_register(&c->super.btl_version, m);
}

static int pvas_component_open(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;

    OBJ_CONSTRUCT(&c->frags_inline, opal_free_list_t);
    OBJ_CONSTRUCT(&c->frags_eager, opal_free_list_t);
    OBJ_CONSTRUCT(&c->frags_max, opal_free_list_t);
    c->lists_ready = false;
    c->enabled = false;
    pvas_lock_init(&c->progress_lock);
    pvas_lock_init(&c->lazy_lock);
    return OPAL_SUCCESS;
}

static int pvas_component_close(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;

    OBJ_DESTRUCT(&c->frags_inline);
    OBJ_DESTRUCT(&c->frags_eager);
    OBJ_DESTRUCT(&c->frags_max);
    c->lists_ready = false;
    /* c->mailbox stays allocated (see pvas_finalize) */
    return OPAL_SUCCESS;
}

static int pvas_modex_send(void)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    mca_btl_pvas_modex_t modex;
    int rc;

    memset(&modex, 0, sizeof(modex));
    modex.magic = MCA_BTL_PVAS_MODEX_MAGIC;
    modex.group_id = c->group_id;
    modex.mailbox = (uint64_t) (uintptr_t) c->mailbox;
    modex.pid = (int32_t) getpid();
    modex.task_id = c->task_id;
    modex.fbox_table = (uint64_t) (uintptr_t) c->fbox_table;
    OPAL_MODEX_SEND(rc, OPAL_PMIX_LOCAL, &c->super.btl_version, &modex, sizeof(modex));
    return rc;
}

static mca_btl_base_module_t **pvas_component_init(int *num_btls, bool enable_progress_threads,
                                                   bool enable_mpi_threads)
{
    mca_btl_pvas_component_t *c = &mca_btl_pvas_component;
    mca_btl_base_module_t **btls;
    struct pvas_info info;
    void *mem = NULL;

    (void) enable_progress_threads;
    (void) enable_mpi_threads;
    *num_btls = 0;

    if (0 != pvas_self(&info)) {
        PVAS_VERBOSE(10, "not a PVAS task (%s): disabled", pvas_errmsg());
        return NULL;
    }
    if (0 == opal_process_info.num_local_peers) {
        PVAS_VERBOSE(10, "no local peers: disabled");
        return NULL;
    }
    if (c->max_inline_send < 64) {
        c->max_inline_send = 64;
    }
    if (mca_btl_pvas.super.btl_eager_limit < c->max_inline_send) {
        mca_btl_pvas.super.btl_eager_limit = c->max_inline_send;
    }
    if (mca_btl_pvas.super.btl_max_send_size < mca_btl_pvas.super.btl_eager_limit) {
        mca_btl_pvas.super.btl_max_send_size = mca_btl_pvas.super.btl_eager_limit;
    }
    if (c->inplace_min_send > mca_btl_pvas.super.btl_max_send_size) {
        /* a copied message must fit in one fragment */
        c->inplace_min_send = (unsigned int) mca_btl_pvas.super.btl_max_send_size;
    }
    if (0 == c->poll_limit) {
        c->poll_limit = 1;
    }
    if (0 != c->fbox_size && (c->fbox_size < 256 || 0 != (c->fbox_size & (c->fbox_size - 1)))) {
        opal_output(0,
                    "btl:pvas: btl_pvas_fbox_size %u is not a power of two >= 256: fast boxes "
                    "off",
                    c->fbox_size);
        c->fbox_size = 0;
    }
    if (0 != c->fbox_size && 0 != c->fbox_max && NULL == c->fbox_table) {
        /* never freed, like the mailbox: peers may hold its address */
        c->fbox_table = calloc(MCA_BTL_PVAS_FBOX_SLOTS, sizeof(*c->fbox_table));
        c->fbox_in = calloc(c->fbox_max, sizeof(*c->fbox_in));
        if (NULL == c->fbox_table || NULL == c->fbox_in) {
            free((void *) c->fbox_table);
            free(c->fbox_in);
            c->fbox_table = NULL;
            c->fbox_in = NULL;
        }
    }

    if (NULL == c->mailbox) {
        /* [0]: the mailbox proper, [1]: lazy returns of sendi fragments */
        if (0 != posix_memalign(&mem, PVAS_QUEUE_CACHE_LINE, 2 * sizeof(pvas_queue_t))) {
            return NULL;
        }
        c->mailbox = (pvas_queue_t *) mem;
        c->lazy_returns = c->mailbox + 1;
        pvas_queue_init(c->mailbox);
        pvas_queue_init(c->lazy_returns);
    }
    c->group_id = info.group_id;
    c->task_id = info.task_id;

    btls = (mca_btl_base_module_t **) calloc(1, sizeof(*btls));
    if (NULL == btls) {
        return NULL;
    }
    if (OPAL_SUCCESS != pvas_modex_send()) {
        PVAS_VERBOSE(10, "modex send failed: disabled");
        free(btls);
        return NULL;
    }
    c->enabled = true;
    PVAS_VERBOSE(10, "enabled: group %#" PRIx64 ", task %d, backend %s, mailbox %p", info.group_id,
                 info.task_id, info.backend, (void *) c->mailbox);
    btls[0] = &mca_btl_pvas.super;
    *num_btls = 1;
    return btls;
}
