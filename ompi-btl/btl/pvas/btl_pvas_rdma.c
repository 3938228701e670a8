/* SPDX-License-Identifier: BSD-3-Clause-Open-MPI */
/*
 * btl/pvas put and get: the peer's buffer is addressable here, so an RDMA
 * operation is one memcpy, complete on return.  No registration (the
 * module's btl_register_mem is NULL, btl_registration_handle_size 0).
 */
#include "opal_config.h"

#include <string.h>

#include "btl_pvas.h"
#include "btl_pvas_endpoint.h"

int mca_btl_pvas_put(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                     int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata)
{
    (void) remote_handle;
    (void) flags;
    (void) order;
    memcpy((void *) (uintptr_t) remote_address, local_address, size);
    cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}

int mca_btl_pvas_get(mca_btl_base_module_t *btl, struct mca_btl_base_endpoint_t *endpoint,
                     void *local_address, uint64_t remote_address,
                     mca_btl_base_registration_handle_t *local_handle,
                     mca_btl_base_registration_handle_t *remote_handle, size_t size, int flags,
                     int order, mca_btl_base_rdma_completion_fn_t cbfunc, void *cbcontext,
                     void *cbdata)
{
    (void) remote_handle;
    (void) flags;
    (void) order;
    memcpy(local_address, (const void *) (uintptr_t) remote_address, size);
    cbfunc(btl, endpoint, local_address, local_handle, cbcontext, cbdata, OPAL_SUCCESS);
    return OPAL_SUCCESS;
}
