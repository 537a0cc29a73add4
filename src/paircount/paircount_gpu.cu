/* SPDX-License-Identifier: MIT */
/* canopy_paircount on the GPU: the descriptor of paircount.h as a GPU type, and the
 * glue that uploads its context (queries, weights, prefix sums, edges) and the
 * running histogram, which each pass adds to and the host gets back. */
#include "paircount/paircount.h"

#include "canopy/traverse_cuda.cuh"

CANOPY_GPU_APP_UNGUIDED(pc, pc_ctx, pc_state)

extern "C" canopy_status canopy_gpu_paircount(const void *vctx, const canopy_tree_view *tree,
                                              const int64_t *order, int64_t nq, canopy_variant v,
                                              const canopy_profile_plan *plan,
                                              canopy_gpu_report *rep) {
    const pc_ctx *h = (const pc_ctx *)vctx;
    return canopy_gpu_run_app<pc_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, pc_ctx &d, canopy_gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "paircount queries");
            if (!s && h->qw) s = B.upload(&d.qw, h->qw, h->query.n, "paircount weights");
            if (!s && h->wprefix)
                s = B.upload(&d.wprefix, h->wprefix, tree->n + 1, "paircount weight sums");
            if (!s) s = B.upload(&d.e2, h->e2, (int64_t)h->nbins + 1, "paircount bin edges");
            if (!s) s = B.upload(&d.counts, h->counts, h->nbins, "paircount histogram");
            if (!s) o[n++] = canopy_gpu_output{h->counts, d.counts, sizeof(double) * h->nbins};
            return s;
        });
}
