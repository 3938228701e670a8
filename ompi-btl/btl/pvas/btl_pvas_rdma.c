/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas put and get: the peer's buffer is addressable here, so an RDMA
 * operation is one copy, complete on return.  No registration (the
 * module's btl_register_mem is NULL, btl_registration_handle_size 0).
 */
#include "opal_config.h"

#include <string.h>

#include "opal/datatype/opal_datatype_direct.h"

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"

/* Copy size bytes from src to dst and complete at once; local_address is
 * what the completion callback reports. */
static int pvas_rdma_copy(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                          void *dst, const void *src, void *local_address,
                          mca_btl_base_registration_handle_t *local_handle, size_t size,
                          mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext, void *cbdata)
{
    opal_datatype_direct_memcpy(dst, src, size); /* memcpy, minus slow rep movsb cases */
    cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

int mca_btl_pvas_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                     int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata)
{
    void *dst = (void *) (uintptr_t) remote_address; /* the peer's buffer */

    (void) remote_handle, (void) flags, (void) order;
    return pvas_rdma_copy(btl, endpoint, dst, local_address, local_address, local_handle, size,
                          cbfunc, cbcontext, cbdata);
}

int mca_btl_pvas_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                     int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata)
{
    const void *src = (const void *) (uintptr_t) remote_address; /* the peer's buffer */

    (void) remote_handle, (void) flags, (void) order;
    return pvas_rdma_copy(btl, endpoint, local_address, src, local_address, local_handle, size,
                          cbfunc, cbcontext, cbdata);
}
