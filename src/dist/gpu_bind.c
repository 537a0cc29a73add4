// SPDX-License-Identifier: MIT
/* One GPU per rank (dist/gpu_bind.h). */
#include "dist/gpu_bind.h"

#include "core/device.h"
#include "gravity/let_gpu.h"

#include <stdio.h>

static dist_gpu_binding bound = {-1, 0, 1, 0};
static int tried;

canopy_status dist_gpu_bind(MPI_Comm comm, dist_gpu_binding *b) {
    canopy_status s = CANOPY_OK;
    if (!tried) {
        MPI_Comm node;
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, canopy_dist_rank(comm), MPI_INFO_NULL,
                            &node);
        MPI_Comm_rank(node, &bound.local_rank);
        MPI_Comm_size(node, &bound.local_size);
        MPI_Comm_free(&node);
        bound.n_devices = canopy_gpu_device_count();
        tried = 1;
        if (bound.n_devices > 0) {
            int device = bound.local_rank % bound.n_devices;
            s = canopy_gpu_bind_device(device);
            if (!s) bound.device = device;
        }
    }
    if (!s && bound.device < 0)
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED, "no usable GPU on rank %d: %s",
                        canopy_dist_rank(comm), canopy_gpu_why_not());
    if (b) *b = bound;
    return s;
}

dist_gpu_binding dist_gpu_bound(void) {
    return bound;
}

canopy_status dist_gpu_choose(MPI_Comm comm, canopy_backend backend, int64_t n_all,
                              int64_t min_auto, const char *app, int *use_gpu) {
    *use_gpu = 0;
    if (backend == CANOPY_BACKEND_CPU) return CANOPY_OK;
    if (backend == CANOPY_BACKEND_AUTO && n_all < min_auto) return CANOPY_OK;
    canopy_status s = dist_gpu_bind(comm, NULL);
    int mine = s == CANOPY_OK, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm);
    if (backend == CANOPY_BACKEND_GPU) {
        if (s) { /* the message is formatted from a copy: canopy_fail writes the buffer */
            char why[512];
            snprintf(why, sizeof why, "%s", canopy_last_error());
            s = canopy_fail(s, "%s: backend gpu: %s", app, why);
        }
        s = canopy_dist_agree(comm, s);
        *use_gpu = !s;
        return s;
    }
    *use_gpu = all; /* auto: the GPU only when every rank has one */
    return CANOPY_OK;
}
