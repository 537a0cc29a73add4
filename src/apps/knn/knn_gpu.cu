/* SPDX-License-Identifier: MIT */
/* The knn application on the GPU: its descriptor as a type (the heap in the output
 * row for large k, the register list of knn_gpu.cuh for k <= KNN_REG_MAX_K), and
 * the glue that uploads its context's buffers (canopy/traverse_cuda.cuh runs the
 * rest). */
#include "apps/knn/knn_gpu.cuh"

#include "apps/common.h"

CANOPY_GPU_APP_GUIDED(knn, knn_ctx, knn_state, true)

template <class App>
static canopy_status knn_run_app(const knn_ctx *h, const canopy_tree_view *tree,
                                 const int64_t *order, int64_t nq, canopy_variant v,
                                 const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    size_t cells = (size_t)nq * h->k;
    return canopy_gpu_run_app<App>(
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

extern "C" canopy_status canopy_gpu_knn(const void *vctx, const canopy_tree_view *tree,
                                        const int64_t *order, int64_t nq, canopy_variant v,
                                        const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    const knn_ctx *h = (const knn_ctx *)vctx;
    if (h->k > KNN_REG_MAX_K) return knn_run_app<knn_gpu>(h, tree, order, nq, v, plan, rep);
    return knn_reg_dispatch(h->k, [&](auto app) {
        return knn_run_app<decltype(app)>(h, tree, order, nq, v, plan, rep);
    });
}

canopy_status canopy_gpu_knn_pooled(const knn_ctx *dctx, const canopy_tree_view *dtree,
                                    const int64_t *order, const int32_t *bucket, int64_t nq,
                                    canopy_variant v, const canopy_gpu_pooled &P,
                                    canopy_gpu_report *rep) {
    if (dctx->k > KNN_REG_MAX_K)
        return canopy_gpu_run_pooled<knn_gpu>(*dctx, dtree, order, bucket, nq, v, P, rep);
    return knn_reg_dispatch(dctx->k, [&](auto app) {
        return canopy_gpu_run_pooled<decltype(app)>(*dctx, dtree, order, bucket, nq, v, P, rep);
    });
}

canopy_status canopy_gpu_knn_kd_bare(const knn_ctx *dctx, const canopy_tree_view *dtree,
                                     const int64_t *order, const int32_t *bucket, int64_t nq,
                                     canopy_variant v, int sms, cudaStream_t stream,
                                     unsigned long long *counters, bool *taken) {
    *taken = knn_kd_kernel_applies(dtree, dctx->k, v);
    if (!*taken || nq <= 0) return CANOPY_OK;
    return knn_reg_dispatch(dctx->k, [&](auto app) {
        typedef decltype(app) App;
        canopy_gpu_launch L;
        canopy_status s = canopy_gpu_launch_init<App>(L, dtree, nq, v, sms);
        if (s) return s;
        L.order = order;
        L.bucket = bucket;
        L.stream = stream;
        L.counters = counters;
        bool ran = false;
        return App::own_kernel(v, L, *dctx, &ran);
    });
}
