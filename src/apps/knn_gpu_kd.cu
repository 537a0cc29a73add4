/* SPDX-License-Identifier: MIT */
/* kNN over a kd tree on the GPU, specialised: the dimension is a template argument, so
 * the query lives in registers and every distance and box bound is unrolled; a child's
 * box bound is computed once, when its parent is expanded, and travels with it on the
 * stack, so an entry that a shrunken k-th distance has pruned is dropped when popped
 * without touching the tree (the stack keeps what the walk needs of the node: its
 * children or its points). The generic engines (traverse_cuda.cuh) re-read the query
 * from memory, loop over a run-time d and reload a popped node's box: 3-4x the
 * instructions per visit in 2-D (H100 profile, bench/results/gpu-index.md).
 *
 * Two walks, as the generic engines have them: one query per thread (autoropes, dr)
 * and a warp in lockstep (dr_l: the warp visits a node if any lane's bound admits it,
 * children in its majority's order, leaf points loaded once for all lanes). Results
 * equal every other engine's: the list keeps the k smallest (distance, index) pairs and
 * a node is pruned only when its bound exceeds the k-th distance. */
#include "apps/knn_gpu.cuh"

namespace {

/* Stack entries: a kd walk pushes at most one sibling per level. */
enum { KD_KNN_STACK = KNN_KD_MAX_DEPTH - 1 };

struct kd_knn_args {
    const unsigned char *hot;
    const float *points;
    const int64_t *ids;
    const int64_t *order; /* NULL: the caller's order */
    int64_t nq;
    int32_t stride;
    unsigned long long *nodes;
};

/* canopy_box_min_dist2 of a kd node's box (lo[D], hi[D] after its canopy_node), same
 * operations in the same order. */
template <int D>
__device__ __forceinline__ float kd_box_min_dist2(const unsigned char *rec, const float (&q)[D]) {
    const float *g = (const float *)(rec + sizeof(canopy_node));
    float lo[D], hi[D];
    if constexpr (D == 2) {
        float4 b = __ldg((const float4 *)g); /* records are 16-byte aligned */
        lo[0] = b.x, lo[1] = b.y, hi[0] = b.z, hi[1] = b.w;
    } else {
#pragma unroll
        for (int j = 0; j < D; j++) lo[j] = __ldg(g + j), hi[j] = __ldg(g + D + j);
    }
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < D; j++) {
        float a = lo[j] - q[j], b = q[j] - hi[j];
        float e = a > b ? a : b;
        e = e > 0.0f ? e : 0.0f;
        s += e * e;
    }
    return s;
}

/* canopy_dist2(q, point j) */
template <int D>
__device__ __forceinline__ float kd_point_dist2(const float *points, int32_t j,
                                                const float (&q)[D]) {
    const float *p = points + (int64_t)j * D;
    float v[D];
    if constexpr (D == 2) {
        float2 b = __ldg((const float2 *)p);
        v[0] = b.x, v[1] = b.y;
    } else {
#pragma unroll
        for (int i = 0; i < D; i++) v[i] = __ldg(p + i);
    }
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < D; i++) {
        float t = q[i] - v[i];
        s += t * t;
    }
    return s;
}

/* What the walk needs of a node, without going back to the tree: x >= 0, an inner
 * node whose children are x and x + 1; x < 0, a leaf holding the points [~x, y). */
struct kd_ref {
    int32_t x, y;
};

/* A node's record: its reference and its box bound (the two loads are independent,
 * so expanding a node costs one memory latency, not two). */
template <int D>
__device__ __forceinline__ float kd_load(const kd_knn_args &a, int32_t node, const float (&q)[D],
                                         kd_ref &r) {
    const unsigned char *rec = a.hot + (int64_t)node * a.stride;
    const int4 h = __ldg((const int4 *)rec); /* child, nchild, begin, end */
    r.x = h.x >= 0 ? h.x : ~h.z;
    r.y = h.w;
    return kd_box_min_dist2<D>(rec, q);
}

/* Offers the points [begin, end) to the list, four loads in flight at a time. */
template <int D, int K>
__device__ __forceinline__ void kd_scan_leaf(const kd_knn_args &a, int32_t begin, int32_t end,
                                             const float (&q)[D], knn_reg_state<K> &st) {
    typedef knn_reg_gpu<K> R;
    for (int32_t j0 = begin; j0 < end; j0 += 4) {
        float d2[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            d2[u] = j0 + u < end ? kd_point_dist2<D>(a.points, j0 + u, q) : 0.0f;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            if (j0 + u >= end || d2[u] > st.d[K - 1]) continue;
            int32_t id = (int32_t)__ldg(a.ids + j0 + u);
            if (id == st.self_id || !R::before(d2[u], id, st.d[K - 1], st.id[K - 1])) continue;
            R::insert(st, d2[u], id);
        }
    }
}

template <int D, int K, bool LOCK>
__global__ void __launch_bounds__(CANOPY_GPU_BLOCK, K <= 8 ? 8 : 1)
    kd_knn_kernel(kd_knn_args a, knn_ctx ctx) {
    typedef knn_reg_gpu<K> R;
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = i < a.nq;
    if (!LOCK && !live) return;
    const int64_t qi = live ? (a.order ? a.order[i] : i) : 0;
    typename R::State st;
    float q[D];
    if (live) {
        R::init(ctx, st, qi);
#pragma unroll
        for (int j = 0; j < D; j++) q[j] = __ldg(canopy_point(ctx.query, qi) + j);
    } else {
        /* a lockstep warp's padding lane: wants nothing, takes nothing */
#pragma unroll
        for (int j = 0; j < K; j++) st.d[j] = -1.0f, st.id[j] = -1;
#pragma unroll
        for (int j = 0; j < D; j++) q[j] = 0.0f;
        st.self_id = -1;
    }
    kd_ref stack_ref[KD_KNN_STACK];
    float stack_bound[KD_KNN_STACK];
    int32_t sp = 0;
    kd_ref cur;
    float bound = kd_load<D>(a, 0, q, cur);
    unsigned visits = 0;
    for (;;) {
        const bool want = bound <= st.d[K - 1];
        if (LOCK ? __any_sync(CANOPY_FULL_MASK, want) : want) {
            visits++;
            if (cur.x >= 0) {
                kd_ref r0, r1;
                const float b0 = kd_load<D>(a, cur.x, q, r0);
                const float b1 = kd_load<D>(a, cur.x + 1, q, r1);
                bool second = b1 < b0;
                if (LOCK) {
                    unsigned yes = __ballot_sync(CANOPY_FULL_MASK, want && second);
                    unsigned all = __ballot_sync(CANOPY_FULL_MASK, want);
                    second = 2 * __popc(yes) > __popc(all);
                }
                const float far_bound = second ? b0 : b1;
                const bool keep = far_bound <= st.d[K - 1];
                if (LOCK ? __any_sync(CANOPY_FULL_MASK, keep) : keep) {
                    stack_ref[sp] = second ? r0 : r1;
                    stack_bound[sp] = far_bound;
                    sp++;
                }
                cur = second ? r1 : r0;
                bound = second ? b1 : b0;
                continue;
            }
            kd_scan_leaf<D, K>(a, ~cur.x, cur.y, q, st);
        }
        if (sp == 0) break;
        sp--;
        cur = stack_ref[sp];
        bound = stack_bound[sp];
    }
    if (live) R::finish(ctx, st, qi);
    /* one atomic per group of lanes finishing together, not per thread (200k
     * threads on one counter cost ~0.1 ms) */
    const unsigned group = __activemask();
    const unsigned total = __reduce_add_sync(group, live ? visits : 0u);
    if ((int)(threadIdx.x & 31) == __ffs(group) - 1 && total)
        atomicAdd(a.nodes, (unsigned long long)total);
}

template <int D, int K, bool LOCK>
canopy_status kd_knn_launch(const kd_knn_args &a, const knn_ctx &ctx, cudaStream_t st) {
    int64_t blocks = (a.nq + CANOPY_GPU_BLOCK - 1) / CANOPY_GPU_BLOCK;
    kd_knn_kernel<D, K, LOCK><<<(unsigned)blocks, CANOPY_GPU_BLOCK, 0, st>>>(a, ctx);
    return canopy_gpu_check(cudaGetLastError(), "kd kNN kernel launch");
}

template <int D, bool LOCK>
canopy_status kd_knn_by_k(const kd_knn_args &a, const knn_ctx &ctx, cudaStream_t st) {
    return knn_reg_dispatch(ctx.k, [&](auto app) {
        constexpr int K = sizeof(decltype(app)::State::d) / sizeof(float);
        return kd_knn_launch<D, K, LOCK>(a, ctx, st);
    });
}

template <bool LOCK>
canopy_status kd_knn_by_d(int32_t d, const kd_knn_args &a, const knn_ctx &ctx, cudaStream_t st) {
    switch (d) {
    case 1:
        return kd_knn_by_k<1, LOCK>(a, ctx, st);
    case 2:
        return kd_knn_by_k<2, LOCK>(a, ctx, st);
    case 3:
        return kd_knn_by_k<3, LOCK>(a, ctx, st);
    case 4:
        return kd_knn_by_k<4, LOCK>(a, ctx, st);
    case 5:
        return kd_knn_by_k<5, LOCK>(a, ctx, st);
    case 6:
        return kd_knn_by_k<6, LOCK>(a, ctx, st);
    case 7:
        return kd_knn_by_k<7, LOCK>(a, ctx, st);
    default:
        return kd_knn_by_k<8, LOCK>(a, ctx, st);
    }
}

} // namespace

canopy_status canopy_gpu_knn_kd(const knn_ctx *dctx, const canopy_tree_view *dtree,
                                const int64_t *order, int64_t nq, canopy_variant v,
                                const canopy_gpu_pooled &P, canopy_gpu_report *rep) {
    kd_knn_args a;
    a.hot = dtree->hot;
    a.points = dtree->points;
    a.ids = dtree->ids;
    a.order = order;
    a.nq = nq;
    a.stride = dtree->hot_stride;
    a.nodes = P.dflags->counters;
    const bool lock = v == CANOPY_VARIANT_DR_L;
    canopy_status s;
    float ms = 0.0f;
    if ((s = canopy_gpu_check(cudaMemsetAsync(P.dflags, 0, sizeof *P.dflags, P.stream),
                              "clearing counters")) ||
        (s = canopy_gpu_check(cudaEventRecord(P.e0, P.stream), "cudaEventRecord")) ||
        (nq > 0 && (s = lock ? kd_knn_by_d<true>(dtree->d, a, *dctx, P.stream)
                             : kd_knn_by_d<false>(dtree->d, a, *dctx, P.stream))) ||
        (s = canopy_gpu_check(cudaEventRecord(P.e1, P.stream), "cudaEventRecord")) ||
        (s = canopy_gpu_check(cudaMemcpyAsync(P.hflags, P.dflags, sizeof *P.dflags,
                                              cudaMemcpyDeviceToHost, P.stream),
                              "counters")) ||
        (s = canopy_gpu_check(cudaStreamSynchronize(P.stream), "kd kNN kernel")) ||
        (s = canopy_gpu_check(cudaEventElapsedTime(&ms, P.e0, P.e1), "cudaEventElapsedTime")))
        return s;
    rep->traverse_seconds += ms * 1e-3;
    rep->counters.nodes += (int64_t)P.hflags->counters[0];
    return CANOPY_OK;
}
