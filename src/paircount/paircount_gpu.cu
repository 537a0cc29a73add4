/* SPDX-License-Identifier: MIT */
/* canopy_paircount on the GPU: the descriptor of paircount.h as a GPU type, and the
 * glue that uploads its context (queries, weights, prefix sums, edges) and the
 * running histogram, which each pass adds to and the host gets back. */
#include "paircount/pair_count.h"
#include "paircount/paircount.h"

#include "canopy/pair_cuda.cuh"
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

/* ---------------------------------------------------------- the pair walk -- */
/* Pair counts on canopy/pair_cuda.cuh: the descriptor of pair_count.h with its
 * histogram in the block's shared memory (up to PCP_GPU_SHARED_BINS bins, added to
 * the device histogram once per block at the end) or, for more bins, in global
 * memory directly. A warp's lanes take the points of a leaf pair's first leaf in
 * turn, each against every point of the second. */
enum { PCP_GPU_SHARED_BINS = 4096 };

struct pcp_gpu {
    typedef pcp_ctx Ctx;
    static size_t shared_bytes(const Ctx &c) {
        return c.nbins <= PCP_GPU_SHARED_BINS ? sizeof(double) * (size_t)c.nbins : 0;
    }
    __device__ static double *hist(const Ctx &c, void *smem) {
        return c.nbins <= PCP_GPU_SHARED_BINS ? (double *)smem : c.counts;
    }
    __device__ static void block_begin(const Ctx &c, void *smem) {
        if (c.nbins > PCP_GPU_SHARED_BINS) return;
        for (int32_t b = threadIdx.x; b < c.nbins; b += blockDim.x) ((double *)smem)[b] = 0.0;
    }
    __device__ static int test(const Ctx &c, void *smem, const canopy_tree_view &ta, int32_t a,
                               const canopy_tree_view &tb, int32_t b, int sym) {
        int32_t bin;
        double w;
        int r = pcp_classify(&c, &ta, a, &tb, b, sym, &bin, &w);
        if (r == PCP_ACCEPT) atomicAdd(hist(c, smem) + bin, w);
        return r == PCP_DESCEND ? CANOPY_PAIR_DESCEND : CANOPY_PAIR_DONE;
    }
    __device__ static void visit_leaves(const Ctx &c, void *smem, const canopy_tree_view &ta,
                                        int32_t a, const canopy_tree_view &tb, int32_t b, int sym,
                                        int lane) {
        const canopy_node *ha = canopy_tv_node(&ta, a), *hb = canopy_tv_node(&tb, b);
        const int diag = sym && a == b;
        const double mult = sym ? 2.0 : 1.0;
        double *h = hist(c, smem);
        for (int32_t i = ha->begin + lane; i < ha->end; i += 32) {
            const float *p = canopy_tv_point(&ta, i);
            const double wi = c.pa ? mult * (double)ta.weights[i] : mult;
            for (int32_t k = diag ? i + 1 : hb->begin; k < hb->end; k++) {
                float d2 = pc_dist2(p, canopy_tv_point(&tb, k), ta.d, c.box);
                if (d2 < c.lo2 || d2 >= c.hi2) continue;
                atomicAdd(h + pcp_bin(&c, d2), c.pa ? wi * (double)tb.weights[k] : wi);
            }
        }
    }
    __device__ static void block_end(const Ctx &c, void *smem) {
        if (c.nbins > PCP_GPU_SHARED_BINS) return;
        for (int32_t b = threadIdx.x; b < c.nbins; b += blockDim.x) {
            double v = ((double *)smem)[b];
            if (v != 0.0) atomicAdd(c.counts + b, v);
        }
    }
};

extern "C" canopy_status canopy_gpu_paircount_pairs(const void *vctx, const canopy_tree_view *ta,
                                                    const canopy_tree_view *tb, int sym,
                                                    canopy_pair_counters *cnt,
                                                    canopy_gpu_report *rep) {
    const pcp_ctx *h = (const pcp_ctx *)vctx;
    /* the frontier's tests run on the host, with the same descriptor */
    static const canopy_pair_app host_app = {"paircount", pcp_test, NULL, NULL};
    canopy_trav_buffers B;
    pcp_ctx d = *h;
    d.soa_b = NULL;
    d.leaf = NULL;
    double *host_acc = NULL, *back = NULL;
    double t0 = canopy_now();
    canopy_status s = canopy_alloc((void **)&host_acc, (size_t)h->nbins * 2, sizeof *host_acc);
    if (!s) {
        back = host_acc + h->nbins;
        memset(host_acc, 0, sizeof *host_acc * (size_t)h->nbins);
        s = B.upload(&d.e2, h->e2, (int64_t)h->nbins + 1, "paircount bin edges");
    }
    if (!s) s = B.upload(&d.tab, h->tab, h->tab_cells, "paircount bin table");
    if (!s && h->pa) s = B.upload(&d.pa, h->pa, ta->n + 1, "paircount weight sums");
    if (!s && h->pa2) s = B.upload(&d.pa2, h->pa2, ta->n + 1, "paircount squared weight sums");
    if (!s && h->pb)
        s = sym ? (d.pb = d.pa, CANOPY_OK)
                : B.upload(&d.pb, h->pb, tb->n + 1, "paircount weight sums");
    if (!s) s = B.alloc(&d.counts, h->nbins, "paircount histogram");
    if (!s)
        s = canopy_gpu_check(cudaMemset(d.counts, 0, sizeof(double) * (size_t)h->nbins),
                             "paircount histogram");
    rep->transfer_seconds += canopy_now() - t0;
    if (!s)
        s = canopy_pair_gpu_run<pcp_gpu>(B, d, &host_app, h, host_acc, ta, tb, sym, cnt, rep,
                                         h->resident_a, h->resident_b);
    t0 = canopy_now();
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(back, d.counts, sizeof(double) * (size_t)h->nbins, cudaMemcpyDeviceToHost),
            "paircount histogram");
    rep->transfer_seconds += canopy_now() - t0;
    for (int32_t b = 0; !s && b < h->nbins; b++) h->counts[b] += host_acc[b] + back[b];
    canopy_free(host_acc);
    return s;
}
