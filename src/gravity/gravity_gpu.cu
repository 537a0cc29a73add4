/* SPDX-License-Identifier: MIT */
/* The gravity application on the GPU: its descriptor as a type, and the glue that
 * uploads its context's buffers (canopy/traverse_cuda.cuh runs the rest). */
#include "gravity/gravity.h"

#include "apps/common.h"
#include "canopy/traverse_cuda.cuh"

CANOPY_GPU_APP_UNGUIDED(gravity, gravity_ctx, gravity_state)

extern "C" canopy_status canopy_gpu_gravity(const void *vctx, const canopy_tree_view *tree,
                                            const int64_t *order, int64_t nq, canopy_variant v,
                                            const canopy_profile_plan *plan,
                                            canopy_gpu_report *rep) {
    const gravity_ctx *h = (const gravity_ctx *)vctx;
    return canopy_gpu_run_app<gravity_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, gravity_ctx &d, canopy_gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.bodies, h->bodies, "gravity bodies");
            if (!s)
                s = canopy_gpu_add_output(B, &d.acc, h->acc, (size_t)nq * 3 * sizeof(float),
                                          "accelerations", o, n);
            return s;
        });
}
