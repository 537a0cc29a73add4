/* SPDX-License-Identifier: MIT */
/* canopy_paircount on the GPU: the descriptor of paircount.h as a GPU type, and the
 * glue that uploads its context (queries, weights, prefix sums, edges) and the
 * running histogram, which each pass adds to and the host gets back. */
#include "paircount/pair_count.h"
#include "paircount/paircount.h"

#include "canopy/pair_cuda.cuh"
#include "canopy/traverse_cuda.cuh"

#include <stdlib.h>
#include <string.h>

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
/* Pair counts on canopy/pair_cuda.cuh: the descriptor of pair_count.h. A warp's lanes
 * take the points of a leaf pair's first leaf in turn, each against every point of the
 * second.
 *
 * Few unweighted bins (up to PCP_GPU_LANE_BINS): each lane counts its point pairs in
 * its own column of 32-bit counters in shared memory, laid out [bin][lane] so that lane
 * l always hits bank l (no atomic, no conflict); a pair's bin is found among the few
 * edges inside the leaf pair's distance bounds (the edge windows of pair_leaf.h, two
 * ballots). A lane moves its column into the block's 64-bit counts before a counter
 * could overflow, and at the end. One shared fp64 atomic per pair, which every lane of a
 * warp aimed at the same few bins, cost 0.43x Corrfunc on clustered data.
 *
 * Otherwise each pair adds its weight with an atomic to a histogram in the block's
 * shared memory (up to PCP_GPU_SHARED_BINS bins) or, for more bins, in global memory.
 * Node pairs counted whole go to the fp64 shared histogram in both cases; the block
 * adds it to the device histogram once, at the end. */
/* A lane flushes before a leaf pair that could take its pairs since the last flush past
 * PCP_GPU_FLUSH (so its counters never overflow); a leaf pair that alone could (leaves
 * of more than about 360 points) takes the atomic path. Flushing costs a few shared ops
 * per bin every 4096 pairs or more, and the tests reach it. */
enum { PCP_GPU_SHARED_BINS = 4096, PCP_GPU_LANE_BINS = 32, PCP_GPU_FLUSH = 1 << 12 };

/* How a 3-D leaf pair's points meet in a periodic box of side `box`, axis by axis: the
 * rounded differences p - q lie in [lo, hi] (as in canopy_pair_box_bounds); all within
 * box / 2 is direct (the minimum image is |p - q|), all at least box / 2 away is wrapped
 * (box - |p - q|), either way for every pair, bit for bit. m, o get 1, 0 (direct) or
 * -1, box (wrapped) an axis. Returns 1 (mixed) when some axis straddles box / 2 (leaves
 * as wide as a quarter of the box), whose pairs take the minimum-image form. Every
 * other leaf pair of a periodic walk takes the affine form, the direct ones too: one
 * kernel body for the walk (2M uniform points, H200, 2026-12-03: the open body for
 * direct leaf pairs beside the affine one for the rest ran the kernel in 0.062 s
 * against 0.048, instruction fetch being what the kernel waits on). */
__device__ static int pcp_gpu_mixed(float box, const float *ga, const float *gb, float *m,
                                    float *o) {
    const float half = 0.5f * box;
    for (int j = 0; j < 3; j++) {
        const float lo = ga[j] - gb[3 + j], hi = ga[3 + j] - gb[j];
        if (fabsf(lo) <= half && fabsf(hi) <= half) continue;
        if (lo < half && hi > -half) return 1;
        m[j] = -1.0f;
        o[j] = box;
    }
    return 0;
}

/* REGS: in 3-D, leaf pairs whose window holds at most 6 edges count in registers
   (count_regs); else every lane-counter leaf pair takes count_window. STAGED (with
   REGS): leaf pairs of two different leaves take count_staged instead of count_regs.
   All are built so that one process can time them against each other
   (CANOPY_PAIRCOUNT_GPU_KERNEL). */
template <bool REGS, bool STAGED = false> struct pcp_gpu {
    typedef pcp_ctx Ctx;
    enum { WARPS = CANOPY_PAIR_GPU_BLOCK / 32 };
    /* lane counters: shared memory holds the fp64 histogram, the block's u64 counts,
       the squared edges, then per warp nbins + 1 rows of 32 u32 (the last: pairs a
       lane may have added since its last flush) */
    __host__ __device__ static bool lanes(const Ctx &c) {
        return !c.pa && c.nbins <= PCP_GPU_LANE_BINS;
    }
    __host__ __device__ static size_t cols_at(const Ctx &c) {
        return (16 * (size_t)c.nbins + 4 * (size_t)(c.nbins + 1) + 15) & ~(size_t)15;
    }
    __host__ __device__ static size_t stage_at(const Ctx &c) {
        return cols_at(c) + sizeof(uint32_t) * 32 * WARPS * (size_t)(c.nbins + 1);
    }
    __host__ __device__ static size_t shared_bytes(const Ctx &c) {
        if (lanes(c)) return stage_at(c) + (STAGED ? sizeof(float4) * 32 * WARPS : 0);
        return c.nbins <= PCP_GPU_SHARED_BINS ? sizeof(double) * (size_t)c.nbins : 0;
    }
    __device__ static double *hist(const Ctx &c, void *smem) {
        return c.nbins <= PCP_GPU_SHARED_BINS ? (double *)smem : c.counts;
    }
    __device__ static unsigned long long *block_counts(const Ctx &c, void *smem) {
        return (unsigned long long *)smem + c.nbins;
    }
    __device__ static float *edges(const Ctx &c, void *smem) {
        return (float *)((unsigned long long *)smem + 2 * c.nbins);
    }
    /* this thread's column: counter of bin b at [32 * b], pending at [32 * nbins] */
    __device__ static uint32_t *column(const Ctx &c, void *smem) {
        return (uint32_t *)((char *)smem + cols_at(c)) + (threadIdx.x >> 5) * 32 * (c.nbins + 1) +
               (threadIdx.x & 31);
    }
    __device__ static void flush(const Ctx &c, void *smem, uint32_t *col) {
        unsigned long long *blk = block_counts(c, smem);
        for (int32_t b = 0; b < c.nbins; b++) {
            if (col[32 * b]) atomicAdd(blk + b, (unsigned long long)col[32 * b]);
            col[32 * b] = 0;
        }
        col[32 * c.nbins] = 0;
    }
    __device__ static void block_begin(const Ctx &c, void *smem) {
        if (lanes(c)) {
            uint32_t *w = (uint32_t *)smem;
            for (size_t i = threadIdx.x; i < shared_bytes(c) / 4; i += blockDim.x) w[i] = 0;
            __syncthreads();
            for (int32_t b = threadIdx.x; b <= c.nbins; b += blockDim.x)
                edges(c, smem)[b] = c.e2[b];
            return;
        }
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
    /* pc_dist2 with the dimension (D > 0) and the periodic test known at compile time:
       the same operations in the same order */
    template <int D, bool P>
    __device__ static float dist2(const float *p, const float *q, int32_t d, float box) {
        float s = 0.0f;
        for (int32_t j = 0; j < (D > 0 ? D : d); j++) {
            float x = fabsf(p[j] - q[j]);
            if (P) {
                float y = box - x;
                x = y < x ? y : x;
            }
            s += x * x;
        }
        return s;
    }
    /* 3-D, each axis known to be direct (x = |p - q|: m 1, o 0) or wrapped (box - x: m -1,
       o box) for every pair of a leaf pair (pcp_gpu_axes): one fma an axis, equal to the
       minimum-image form to the bit (fma rounds box - x once, as the subtraction does) */
    __device__ static float dist2_axes(const float *p, const float *q, const float *m,
                                       const float *o) {
        float s = 0.0f;
        for (int j = 0; j < 3; j++) {
            const float x = fmaf(m[j], fabsf(p[j] - q[j]), o[j]);
            s += x * x;
        }
        return s;
    }
    /* d = 3 and at most PCP_GPU_REG_EDGES edges in the window: b's points go round the
       warp by shuffles (each lane loads one per 32), and each lane counts in registers
       the pairs at or above each threshold (lo2, the window's edges, hi2), so a bin is
       the difference of two neighbours; the column gets them once per leaf pair. A pair
       that does not count (a lane past a's end, b's padding, k <= i in a leaf with
       itself) has distance +inf: at or above every threshold, in no difference. A: a
       periodic walk's affine distances (dist2_axes with m, o), else the open ones. */
    template <bool A, int W>
    __device__ static void count_regs(const Ctx &c, const float *e2, int base, uint32_t *col,
                                      const canopy_tree_view &ta, const canopy_node *ha,
                                      const canopy_tree_view &tb, const canopy_node *hb, int diag,
                                      int lane, const float *m, const float *o) {
        float t[W + 2];
        uint32_t n[W + 2];
        t[0] = c.lo2;
        for (int e = 0; e < W; e++) t[e + 1] = e2[base + 1 + e];
        t[W + 1] = c.hi2;
        for (int e = 0; e < W + 2; e++) n[e] = 0;
        for (int32_t i0 = ha->begin; i0 < ha->end; i0 += 32) {
            const int32_t i = i0 + lane;
            const float *pi = canopy_tv_point(&ta, i < ha->end ? i : i0);
            const float x0 = pi[0], x1 = pi[1], x2 = pi[2];
            const bool vi = i < ha->end;
            for (int32_t k0 = diag ? i0 : hb->begin; k0 < hb->end; k0 += 32) {
                const float *pk = canopy_tv_point(&tb, k0 + lane < hb->end ? k0 + lane : k0);
                const float y0 = pk[0], y1 = pk[1], y2 = pk[2];
                const int nk = hb->end - k0 < 32 ? hb->end - k0 : 32;
#pragma unroll 4
                for (int j = 0; j < nk; j++) {
                    const float q[3] = {__shfl_sync(CANOPY_FULL_MASK, y0, j),
                                        __shfl_sync(CANOPY_FULL_MASK, y1, j),
                                        __shfl_sync(CANOPY_FULL_MASK, y2, j)};
                    const float p[3] = {x0, x1, x2};
                    float d2 = A ? dist2_axes(p, q, m, o) : dist2<3, false>(p, q, 3, 0.0f);
                    d2 = vi && (!diag || k0 + j > i) ? d2 : INFINITY;
                    for (int e = 0; e < W + 2; e++) n[e] += d2 >= t[e];
                }
            }
        }
        for (int e = 0; e <= W; e++) col[32 * (base + e)] += n[e] - n[e + 1];
    }
    template <bool A>
    __device__ static bool
    count_regs_of(const Ctx &c, const float *e2, int base, int top, uint32_t *col,
                  const canopy_tree_view &ta, const canopy_node *ha, const canopy_tree_view &tb,
                  const canopy_node *hb, int diag, int lane, const float *m, const float *o) {
        switch (top - base) {
#define PCP_GPU_REGS(W)                                                                            \
    case W:                                                                                        \
        count_regs<A, W>(c, e2, base, col, ta, ha, tb, hb, diag, lane, m, o);                      \
        return true;
            PCP_GPU_REGS(0)
            PCP_GPU_REGS(1)
            PCP_GPU_REGS(2)
            PCP_GPU_REGS(3)
            PCP_GPU_REGS(4)
            PCP_GPU_REGS(5)
            PCP_GPU_REGS(6)
#undef PCP_GPU_REGS
        }
        return false;
    }
    /* count_regs for two different leaves, with the work per pair cut: b's points go
       through the warp's float4 slots in shared memory (one broadcast load a point, not
       three shuffles) and each lane holds two of a's points, so a load serves two
       pairs; a lane's missing point sits at +inf (at or above every threshold). */
    template <bool A, int W>
    __device__ static void
    count_staged(const Ctx &c, const float *e2, int base, uint32_t *col, float4 *stage,
                 const canopy_tree_view &ta, const canopy_node *ha, const canopy_tree_view &tb,
                 const canopy_node *hb, int lane, const float *m, const float *o) {
        float t[W + 2];
        uint32_t n[W + 2];
        t[0] = c.lo2;
        for (int e = 0; e < W; e++) t[e + 1] = e2[base + 1 + e];
        t[W + 1] = c.hi2;
        for (int e = 0; e < W + 2; e++) n[e] = 0;
        for (int32_t i0 = ha->begin; i0 < ha->end; i0 += 64) {
            float x[2][3];
            for (int r = 0; r < 2; r++) {
                const int32_t i = i0 + 32 * r + lane;
                const float *pi = canopy_tv_point(&ta, i < ha->end ? i : i0);
                for (int j = 0; j < 3; j++) x[r][j] = i < ha->end ? pi[j] : INFINITY;
            }
            for (int32_t k0 = hb->begin; k0 < hb->end; k0 += 32) {
                const int nk = hb->end - k0 < 32 ? hb->end - k0 : 32;
                __syncwarp(); /* the previous round's loads are done */
                if (lane < nk) {
                    const float *pk = canopy_tv_point(&tb, k0 + lane);
                    stage[lane] = make_float4(pk[0], pk[1], pk[2], 0.0f);
                }
                __syncwarp();
#pragma unroll 4
                for (int j = 0; j < nk; j++) {
                    const float4 v = stage[j];
                    const float q[3] = {v.x, v.y, v.z};
                    for (int r = 0; r < 2; r++) {
                        const float d2 =
                            A ? dist2_axes(x[r], q, m, o) : dist2<3, false>(x[r], q, 3, 0.0f);
                        for (int e = 0; e < W + 2; e++) n[e] += d2 >= t[e];
                    }
                }
            }
        }
        for (int e = 0; e <= W; e++) col[32 * (base + e)] += n[e] - n[e + 1];
    }
    template <bool A>
    __device__ static bool
    count_staged_of(const Ctx &c, const float *e2, int base, int top, uint32_t *col, float4 *stage,
                    const canopy_tree_view &ta, const canopy_node *ha, const canopy_tree_view &tb,
                    const canopy_node *hb, int lane, const float *m, const float *o) {
        switch (top - base) {
#define PCP_GPU_STAGED(W)                                                                          \
    case W:                                                                                        \
        count_staged<A, W>(c, e2, base, col, stage, ta, ha, tb, hb, lane, m, o);                   \
        return true;
            PCP_GPU_STAGED(0)
            PCP_GPU_STAGED(1)
            PCP_GPU_STAGED(2)
            PCP_GPU_STAGED(3)
            PCP_GPU_STAGED(4)
            PCP_GPU_STAGED(5)
            PCP_GPU_STAGED(6)
#undef PCP_GPU_STAGED
        }
        return false;
    }
    /* lane counters over edges base + 1 .. top of the window */
    template <int D, bool P>
    __device__ static void count_window(const Ctx &c, const float *e2, int base, int top,
                                        uint32_t *col, const canopy_tree_view &ta,
                                        const canopy_node *ha, const canopy_tree_view &tb,
                                        const canopy_node *hb, int diag, int lane) {
        const float lo2 = c.lo2, hi2 = c.hi2, box = c.box;
        const int32_t d = ta.d;
        for (int32_t i = ha->begin + lane; i < ha->end; i += 32) {
            float p[D > 0 ? D : 1];
            const float *pi = canopy_tv_point(&ta, i);
            if (D > 0)
                for (int j = 0; j < D; j++) p[j] = pi[j];
            for (int32_t k = diag ? i + 1 : hb->begin; k < hb->end; k++) {
                float d2 = dist2<D, P>(D > 0 ? p : pi, canopy_tv_point(&tb, k), d, box);
                int bin = base;
                for (int e = base + 1; e <= top; e++) bin += d2 >= e2[e];
                col[32 * bin] += d2 >= lo2 && d2 < hi2;
            }
        }
    }
    __device__ static void visit_leaves(const Ctx &c, void *smem, const canopy_tree_view &ta,
                                        int32_t a, const canopy_tree_view &tb, int32_t b, int sym,
                                        int lane) {
        const canopy_node *ha = canopy_tv_node(&ta, a), *hb = canopy_tv_node(&tb, b);
        const int diag = sym && a == b;
        const uint64_t most =
            (uint64_t)((ha->end - ha->begin + 31) / 32) * (uint64_t)(hb->end - hb->begin);
        if (lanes(c) && most <= PCP_GPU_FLUSH) {
            float mn, mx;
            canopy_pair_box_bounds(canopy_tv_geom(&ta, a), canopy_tv_geom(&tb, b), ta.d, c.box, &mn,
                                   &mx);
            /* edges 1 .. nbins - 1, one per lane: those <= mn are below every pair's
               distance, those > mx above it */
            const float *e2 = edges(c, smem);
            const bool mine = lane + 1 < c.nbins;
            const float ek = mine ? e2[lane + 1] : 0.0f;
            const int base = __popc(__ballot_sync(CANOPY_FULL_MASK, mine && ek <= mn));
            const int top = __popc(__ballot_sync(CANOPY_FULL_MASK, mine && ek <= mx));
            uint32_t *col = column(c, smem);
            if (col[32 * c.nbins] + most > PCP_GPU_FLUSH) flush(c, smem, col);
            col[32 * c.nbins] += (uint32_t)most;
            /* in a periodic box, the affine distances where every axis is direct or
               wrapped for all of the leaf pair's pairs, else the minimum-image form */
            float m[3] = {1.0f, 1.0f, 1.0f}, o[3] = {0.0f, 0.0f, 0.0f};
            const bool wrap = c.box > 0.0f;
            const bool mixed = wrap && (ta.d != 3 || pcp_gpu_mixed(c.box, canopy_tv_geom(&ta, a),
                                                                   canopy_tv_geom(&tb, b), m, o));
            if (STAGED && ta.d == 3 && !diag && !mixed) {
                float4 *stage = (float4 *)((char *)smem + stage_at(c)) + 32 * (threadIdx.x >> 5);
                if (wrap ? count_staged_of<true>(c, e2, base, top, col, stage, ta, ha, tb, hb, lane,
                                                 m, o)
                         : count_staged_of<false>(c, e2, base, top, col, stage, ta, ha, tb, hb,
                                                  lane, m, o))
                    return;
            }
            if (REGS && ta.d == 3 && !mixed &&
                (wrap ? count_regs_of<true>(c, e2, base, top, col, ta, ha, tb, hb, diag, lane, m, o)
                      : count_regs_of<false>(c, e2, base, top, col, ta, ha, tb, hb, diag, lane, m,
                                             o)))
                return;
            if (ta.d == 3 && wrap)
                count_window<3, true>(c, e2, base, top, col, ta, ha, tb, hb, diag, lane);
            else if (ta.d == 3)
                count_window<3, false>(c, e2, base, top, col, ta, ha, tb, hb, diag, lane);
            else if (wrap)
                count_window<0, true>(c, e2, base, top, col, ta, ha, tb, hb, diag, lane);
            else
                count_window<0, false>(c, e2, base, top, col, ta, ha, tb, hb, diag, lane);
            return;
        }
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
        if (lanes(c)) {
            flush(c, smem, column(c, smem));
            __syncthreads();
        }
        for (int32_t b = threadIdx.x; b < c.nbins; b += blockDim.x) {
            double v = ((double *)smem)[b];
            if (lanes(c)) v += c.mult * (double)block_counts(c, smem)[b];
            if (v != 0.0) atomicAdd(c.counts + b, v);
        }
    }
};

/* Switches for A/B timings in one process (bench/paircount_bench.py --gpu-only; the
   results are the same): CANOPY_PAIRCOUNT_GPU_KERNEL "staged4" (the default:
   count_staged, with at least 4 blocks an SM), "regs" or "columns" (lane columns
   alone); CANOPY_PAIRCOUNT_GPU_TASKS node pairs a warp in the frontier (default
   PCP_GPU_TASKS). Measured and dropped (2M points, H200, 2026-12-03): staged with 2
   blocks an SM, regs with 6. */
enum { PCP_GPU_COLUMNS, PCP_GPU_REGS, PCP_GPU_STAGED4 };
/* node pairs a warp by default: finer tasks than the engine's 4 even out the warps'
   work, and the device frontier makes them cheap (2M points, H200, 2026-12-03: 512
   against 64, kernel 0.044 -> 0.034 s uniform, 0.116 -> 0.086 s clustered; the
   frontier 0.001 -> 0.002 s; on the host it had taken 0.032 s at 64) */
enum { PCP_GPU_TASKS = 512 };
static canopy_status pcp_gpu_switches(int *kernel, int *tasks) {
    const char *k = getenv("CANOPY_PAIRCOUNT_GPU_KERNEL"),
               *t = getenv("CANOPY_PAIRCOUNT_GPU_TASKS");
    *kernel = !k || !*k               ? PCP_GPU_STAGED4
              : !strcmp(k, "columns") ? PCP_GPU_COLUMNS
              : !strcmp(k, "regs")    ? PCP_GPU_REGS
              : !strcmp(k, "staged4") ? PCP_GPU_STAGED4
                                      : -1;
    if (*kernel < 0)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "CANOPY_PAIRCOUNT_GPU_KERNEL=%s: use columns, regs or staged4 (or "
                           "unset it)",
                           k);
    *tasks = PCP_GPU_TASKS;
    if (t && *t) {
        char *end = NULL;
        long v = strtol(t, &end, 10);
        if (*end || v < 1 || v > 1024)
            return canopy_fail(CANOPY_ERR_INVALID,
                               "CANOPY_PAIRCOUNT_GPU_TASKS=%s: give node pairs a warp, 1 to 1024",
                               t);
        *tasks = (int)v;
    }
    return CANOPY_OK;
}

extern "C" canopy_status canopy_gpu_paircount_pairs(const void *vctx, const canopy_tree_view *ta,
                                                    const canopy_tree_view *tb, int sym,
                                                    canopy_pair_counters *cnt,
                                                    canopy_gpu_report *rep) {
    const pcp_ctx *h = (const pcp_ctx *)vctx;
    int kernel = PCP_GPU_COLUMNS, tasks = 0;
    canopy_status s = pcp_gpu_switches(&kernel, &tasks);
    if (s) return s;
    canopy_trav_buffers B;
    pcp_ctx d = *h;
    d.soa_b = NULL;
    d.leaf = NULL;
    double *back = NULL;
    double t0 = canopy_now();
    s = canopy_alloc((void **)&back, (size_t)h->nbins, sizeof *back);
    if (!s) s = B.upload(&d.e2, h->e2, (int64_t)h->nbins + 1, "paircount bin edges");
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
    if (!s && kernel == PCP_GPU_STAGED4)
        s = canopy_pair_gpu_run<pcp_gpu<true, true>, 4>(B, d, ta, tb, sym, cnt, rep, h->resident_a,
                                                        h->resident_b, tasks);
    else if (!s && kernel == PCP_GPU_REGS)
        s = canopy_pair_gpu_run<pcp_gpu<true>>(B, d, ta, tb, sym, cnt, rep, h->resident_a,
                                               h->resident_b, tasks);
    else if (!s)
        s = canopy_pair_gpu_run<pcp_gpu<false>>(B, d, ta, tb, sym, cnt, rep, h->resident_a,
                                                h->resident_b, tasks);
    t0 = canopy_now();
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(back, d.counts, sizeof(double) * (size_t)h->nbins, cudaMemcpyDeviceToHost),
            "paircount histogram");
    rep->transfer_seconds += canopy_now() - t0;
    for (int32_t b = 0; !s && b < h->nbins; b++) h->counts[b] += back[b];
    canopy_free(back);
    return s;
}
