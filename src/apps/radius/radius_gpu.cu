/* SPDX-License-Identifier: MIT */
/* The radius application on the GPU: its descriptor as a type, and the glue that
 * uploads its context's buffers (canopy/traverse_cuda.cuh runs the rest). */
#include "apps/kd_walk_gpu.cuh"
#include "apps/radius/radius.h"

#include "apps/common.h"
#include "canopy/traverse_cuda.cuh"

CANOPY_GPU_APP_UNGUIDED(radius, radius_ctx, radius_state)

/* On kd trees (dr, dr_l) the specialised walk of kd_walk_gpu.cu. */
struct radius_kd_gpu : radius_gpu {
    static canopy_status own_kernel(canopy_variant v, const canopy_gpu_launch &L, const Ctx &c,
                                    bool *taken) {
        *taken = kd_walk_applies(&L.tree, v);
        return *taken ? kd_walk_radius(v, L, c) : CANOPY_OK;
    }
};

extern "C" canopy_status canopy_gpu_radius(const void *vctx, const canopy_tree_view *tree,
                                           const int64_t *order, int64_t nq, canopy_variant v,
                                           const canopy_profile_plan *plan,
                                           canopy_gpu_report *rep) {
    const radius_ctx *h = (const radius_ctx *)vctx;
    return canopy_gpu_run_app<radius_kd_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, radius_ctx &d, canopy_gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "radius queries");
            if (!s)
                s = canopy_gpu_add_output(B, &d.counts, h->counts, (size_t)nq * sizeof(int64_t),
                                          "radius counts", o, n);
            return s;
        });
}
