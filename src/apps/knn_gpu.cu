/* SPDX-License-Identifier: MIT */
/* The knn application on the GPU: its descriptor as a type, and the glue that
 * uploads its context's buffers (canopy/traverse_cuda.cuh runs the rest). */
#include "apps/knn.h"

#include "apps/common.h"
#include "canopy/traverse_cuda.cuh"

CANOPY_GPU_APP_GUIDED(knn, knn_ctx, knn_state, true)

extern "C" canopy_status canopy_gpu_knn(const void *vctx, const canopy_tree_view *tree,
                                        const int64_t *order, int64_t nq, canopy_variant v,
                                        const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    const knn_ctx *h = (const knn_ctx *)vctx;
    size_t cells = (size_t)nq * h->k;
    return canopy_gpu_run_app<knn_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, knn_ctx &d, canopy_gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "knn queries");
            if (!s)
                s = canopy_gpu_add_output(B, &d.idx, h->idx, cells * sizeof(int64_t), "knn indices",
                                          o, n);
            if (!s)
                s = canopy_gpu_add_output(B, &d.dist2, h->dist2, cells * sizeof(float),
                                          "knn distances", o, n);
            return s;
        });
}

/* kNN with everything already on the device (a resident index's tree, the caller's
 * queries and outputs): no copies; dist2 NULL gets a scratch buffer. */
extern "C" canopy_status canopy_gpu_knn_device(const knn_ctx *dctx, const canopy_tree_view *dtree,
                                               int64_t nq, canopy_variant v,
                                               canopy_gpu_report *rep) {
    canopy_trav_buffers B;
    knn_ctx d = *dctx;
    if (!d.dist2) {
        void *p;
        canopy_status s = B.alloc_bytes(&p, sizeof(float) * (size_t)(nq * d.k), "knn distances");
        if (s) return s;
        d.dist2 = (float *)p;
    }
    return canopy_gpu_run<knn_gpu>(B, d, dtree, NULL, nq, v, NULL, rep);
}
