/* SPDX-License-Identifier: MIT */
/* The search application on the GPU: its descriptor as a type, and the glue that
 * uploads its context's buffers (canopy/traverse_cuda.cuh runs the rest). */
#include "apps/search/search.h"

#include "apps/common.h"
#include "canopy/traverse_cuda.cuh"

CANOPY_GPU_APP_UNGUIDED(search, search_ctx, search_state)

extern "C" canopy_status canopy_gpu_search(const void *vctx, const canopy_tree_view *tree,
                                           const int64_t *order, int64_t nq, canopy_variant v,
                                           const canopy_profile_plan *plan,
                                           canopy_gpu_report *rep) {
    const search_ctx *h = (const search_ctx *)vctx;
    return canopy_gpu_run_app<search_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, search_ctx &d, canopy_gpu_output *o, int &n) {
            void *pq;
            canopy_status s =
                B.upload_bytes(&pq, h->queries, (size_t)nq * sizeof(float), "search queries");
            d.queries = (const float *)pq;
            if (!s)
                s = canopy_gpu_add_output(B, &d.idx, h->idx, (size_t)nq * sizeof(int64_t),
                                          "search results", o, n);
            return s;
        });
}
