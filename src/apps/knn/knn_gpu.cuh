// SPDX-License-Identifier: MIT
/* knn on the GPU for small k: the same traversal as apps/knn/knn.h (bounds, order, the
 * (distance, index) tie rule), but the candidate list lives in registers as a sorted
 * array of a compile-time capacity K >= k instead of a heap in the output row (global
 * memory, touched on every offer). Slots before the k real ones hold a sentinel that
 * sorts first (distance -1), so the k-th nearest is always slot K - 1: every index is
 * a constant after unrolling and nothing spills to local memory. Indices are kept
 * as int32 (a tree's points are counted by int32 node ranges), one register each:
 * the kernel's occupancy is limited by registers (H100 profile, gpu-index.md). */
#ifndef CANOPY_APPS_KNN_GPU_CUH
#define CANOPY_APPS_KNN_GPU_CUH

#include "apps/kd_walk_gpu.cuh"
#include "apps/knn/knn.h"
#include "canopy/traverse_cuda.cuh"

#include <stdint.h>

template <int K> struct knn_reg_state {
    const float *q;
    int32_t self_id; /* -1, or the query's own point (self-queries: q < n) */
    float d[K];
    int32_t id[K];
};

template <int K> struct knn_reg_gpu {
    typedef knn_ctx Ctx;
    typedef knn_reg_state<K> State;
    static constexpr bool guided = true;
    static constexpr bool equivalent = true;
    /* 64 registers a thread, the whole dr/gdr grid resident: ptxas (sm_90) fits
     * K <= 8 without spills (72 registers unbounded for K = 8, 6 blocks an SM); K = 16
     * would spill, so it stays unbounded (96 registers). */
    static constexpr int min_blocks = K <= 8 ? 8 : 0;

    /* on kd trees (dr, dr_l) the specialised walk of kd_walk_gpu.cu */
    static canopy_status own_kernel(canopy_variant v, const canopy_gpu_launch &L, const Ctx &c,
                                    bool *taken);

    __device__ static void init(const Ctx &c, State &s, int64_t q) {
        s.q = canopy_point(c.query, q);
        s.self_id = c.self ? (int32_t)q : -1;
#pragma unroll
        for (int j = 0; j < K; j++) {
            bool pad = j < K - c.k;
            s.d[j] = pad ? -1.0f : CANOPY_INF;
            s.id[j] = pad ? -1 : INT32_MAX;
        }
    }
    __device__ static int truncate(const Ctx &, State &s, const canopy_tree_view &t, int32_t n) {
        /* At equal distance a tie may still win on the smaller index: pruned only when
         * every index below is larger (min_id, where the view has it) */
        float m = canopy_node_min_dist2(&t, n, s.q);
        return m > s.d[K - 1] || (m == s.d[K - 1] && t.min_id && t.min_id[n] > s.id[K - 1]);
    }
    /* knn_before's (distance, index) order on 32-bit indices */
    __device__ static bool before(float da, int32_t ia, float db, int32_t ib) {
        return da < db || (da == db && ia < ib);
    }
    /* Sorted insertion of (d2, id), known to precede slot K - 1, without branches on
     * slot indices: each slot takes its left neighbour, the candidate or itself. */
    __device__ static void insert(State &s, float d2, int32_t id) {
#pragma unroll
        for (int j = K - 1; j > 0; j--) {
            bool left = before(d2, id, s.d[j - 1], s.id[j - 1]);
            bool here = before(d2, id, s.d[j], s.id[j]);
            s.d[j] = left ? s.d[j - 1] : here ? d2 : s.d[j];
            s.id[j] = left ? s.id[j - 1] : here ? id : s.id[j];
        }
        if (before(d2, id, s.d[0], s.id[0])) s.d[0] = d2, s.id[0] = id;
    }
    __device__ static void visit_leaf(const Ctx &, State &s, const canopy_tree_view &t, int32_t n) {
        const canopy_node *h = canopy_tv_node(&t, n);
        for (int32_t i = h->begin; i < h->end; i++) {
            float d2 = canopy_dist2(s.q, canopy_tv_point(&t, i), t.d);
            if (d2 > s.d[K - 1]) continue;
            int32_t id = (int32_t)t.ids[i];
            if (id == s.self_id || !before(d2, id, s.d[K - 1], s.id[K - 1])) continue;
            insert(s, d2, id);
        }
    }
    __device__ static int order(const Ctx &c, const State &s, const canopy_tree_view &t,
                                int32_t n) {
        /* knn_order reads only the query point of the heap state */
        knn_state h;
        h.q = s.q;
        return knn_order(&c, &h, &t, n);
    }
    /* The k real slots in ascending order; empty ones become (-1, +inf). dist2 may
     * be NULL (a device caller that wants indices only). */
    __device__ static void finish(const Ctx &c, State &s, int64_t q) {
        int64_t *oi = c.idx + q * c.k;
        float *od = c.dist2 + q * c.k;
#pragma unroll
        for (int j = 0; j < K; j++) {
            int32_t o = j - (K - c.k);
            if (o < 0) continue;
            bool empty = s.id[j] == INT32_MAX;
            oi[o] = empty ? -1 : (int64_t)s.id[j];
            if (c.dist2) od[o] = empty ? CANOPY_INF : s.d[j];
        }
    }
};

template <int K>
canopy_status knn_reg_gpu<K>::own_kernel(canopy_variant v, const canopy_gpu_launch &L,
                                         const knn_ctx &c, bool *taken) {
    *taken = knn_kd_kernel_applies(&L.tree, c.k, v);
    return *taken ? kd_walk_knn<K>(v, L, c) : CANOPY_OK;
}

/* Calls f with the register descriptor type for k (k <= KNN_REG_MAX_K). */
template <class F> canopy_status knn_reg_dispatch(int32_t k, F f) {
    if (k <= 1) return f(knn_reg_gpu<1>());
    if (k <= 4) return f(knn_reg_gpu<4>());
    if (k <= 8) return f(knn_reg_gpu<8>());
    return f(knn_reg_gpu<16>());
}

/* kNN over a resident tree with device queries and outputs and pooled scratch (a
 * resident index's, index_gpu.cu), in the device order `order` (NULL: the caller's;
 * bucket: with a kd bucket order, each position's bucket, or NULL): no allocation, no
 * copy. dist2 may be NULL when k <= KNN_REG_MAX_K. */
canopy_status canopy_gpu_knn_pooled(const knn_ctx *dctx, const canopy_tree_view *dtree,
                                    const int64_t *order, const int32_t *bucket, int64_t nq,
                                    canopy_variant v, const canopy_gpu_pooled &P,
                                    canopy_gpu_report *rep);

/* The kd walk of canopy_gpu_knn_pooled alone, where it applies (*taken; else nothing is
 * launched): no events, no flags cleared or read back (the kd walk's stack is sized for
 * the deepest tree it takes, so it cannot overflow). counters: NULL, or a device
 * counter the walk adds its bound tests to (never cleared here: a caller reads it
 * before and after). Queued on stream; the caller synchronises. */
canopy_status canopy_gpu_knn_kd_bare(const knn_ctx *dctx, const canopy_tree_view *dtree,
                                     const int64_t *order, const int32_t *bucket, int64_t nq,
                                     canopy_variant v, int sms, cudaStream_t stream,
                                     unsigned long long *counters, bool *taken);

#endif
