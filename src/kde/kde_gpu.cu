/* SPDX-License-Identifier: MIT */
/* canopy_kde on the GPU: kde_pair.h's descriptor as a GPU type on canopy/pair_cuda.cuh's
 * walk (one warp per node pair), and the glue that uploads the lower bounds, runs the
 * walk (its first levels too: canopy_pair_frontier_device) and adds its node and query
 * sums to the caller's. */
#include "kde/kde_pair.h"

#include "canopy/pair_cuda.cuh"
#include "canopy/traverse_cuda.cuh"

/* The sums live in global memory (qnodes + nq doubles, too many for a block's shared
 * memory); an accepted pair adds to its query node, a leaf pair to each of its
 * queries, one atomic add per query: the warp's lanes take the queries of the leaf in
 * turn, each summing the kernel over every point of the data leaf (the same data
 * point for all lanes at once, one broadcast load). */
struct kde_gpu {
    typedef kde_ctx Ctx;
    static size_t shared_bytes(const Ctx &) { return 0; }
    __device__ static void block_begin(const Ctx &, void *) {}
    __device__ static int test(const Ctx &c, void *, const canopy_tree_view &ta, int32_t a,
                               const canopy_tree_view &tb, int32_t b, int) {
        double add;
        int r = kde_classify(&c, &ta, a, &tb, b, &add);
        if (add != 0.0) atomicAdd(c.node_sum + a, add);
        return r;
    }
    __device__ static void visit_leaves(const Ctx &c, void *, const canopy_tree_view &ta, int32_t a,
                                        const canopy_tree_view &tb, int32_t b, int, int lane) {
        const canopy_node *ha = canopy_tv_node(&ta, a), *hb = canopy_tv_node(&tb, b);
        for (int32_t i = ha->begin + lane; i < ha->end; i += 32) {
            const float *q = canopy_tv_point(&ta, i);
            double s = 0.0;
            for (int32_t j = hb->begin; j < hb->end; j++)
                s += kde_k(c.kernel, canopy_dist2(q, canopy_tv_point(&tb, j), ta.d), c.inv_h,
                           c.inv_h2);
            atomicAdd(c.point_sum + i, s);
        }
    }
    __device__ static void block_end(const Ctx &, void *) {}
};

extern "C" canopy_status canopy_gpu_kde_pairs(const void *vctx, const canopy_tree_view *ta,
                                              const canopy_tree_view *tb, int sym,
                                              canopy_pair_counters *cnt, canopy_gpu_report *rep) {
    const kde_ctx *h = (const kde_ctx *)vctx;
    const int64_t nacc = (int64_t)h->qnodes + h->nq;
    canopy_trav_buffers B;
    kde_ctx d = *h;
    d.leaf_sum = NULL;
    double *back = NULL, *d_sums = NULL;
    double t0 = canopy_now();
    /* the device's node and query sums, read back */
    canopy_status s = canopy_alloc((void **)&back, (size_t)nacc, sizeof *back);
    if (!s && h->lower) s = B.upload(&d.lower, h->lower, h->qnodes, "kde lower bounds");
    if (!s) s = B.alloc(&d_sums, nacc, "kde sums");
    if (!s) s = canopy_gpu_check(cudaMemset(d_sums, 0, sizeof *d_sums * (size_t)nacc), "kde sums");
    d.node_sum = d_sums;
    d.point_sum = d_sums + h->qnodes;
    rep->transfer_seconds += canopy_now() - t0;
    if (!s)
        s = canopy_pair_gpu_run<kde_gpu>(B, d, ta, tb, sym, cnt, rep, h->resident_a, h->resident_b);
    t0 = canopy_now();
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(back, d_sums, sizeof *back * (size_t)nacc, cudaMemcpyDeviceToHost),
            "kde sums");
    rep->transfer_seconds += canopy_now() - t0;
    for (int32_t k = 0; !s && k < h->qnodes; k++) h->node_sum[k] += back[k];
    for (int64_t i = 0; !s && i < h->nq; i++) h->point_sum[i] += back[h->qnodes + i];
    canopy_free(back);
    return s;
}
