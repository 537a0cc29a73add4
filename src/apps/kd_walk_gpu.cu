/* SPDX-License-Identifier: MIT */
/* kNN and radius counts over a kd tree on the GPU, specialised: the dimension is a
 * template argument, so the query lives in registers and every distance and box bound
 * is unrolled; a child's box bound is computed once, when its parent is expanded, and
 * travels with it on the stack, so an entry that the walk's limit (the k-th distance,
 * the radius) has pruned is dropped when popped without touching the tree (the stack
 * keeps what the walk needs of the node: its children or its points). The generic
 * engines (traverse_cuda.cuh) re-read the query from memory, loop over a run-time d and
 * reload a popped node's box: 3-4x the instructions per visit in 2-D (H100 profile,
 * bench/results/gpu-index.md).
 *
 * Two walks, as the generic engines have them: one query per thread (autoropes, dr)
 * and a warp in lockstep (dr_l: the warp visits a node if any lane's bound admits it,
 * children in its majority's order, leaf points loaded once for all lanes). Results
 * equal every other engine's: a kNN list keeps the k smallest (distance, index) pairs
 * and a node is pruned only when its bound exceeds the k-th distance; a radius count
 * takes a box wholly inside the radius by its size, as radius_truncate does, from the
 * same bounds computed the same way. */
#include "apps/kd_walk_gpu.cuh"
#include "apps/knn/knn_gpu.cuh"

namespace {

/* Stack entries: a kd walk pushes at most one sibling per level. */
enum { KD_WALK_STACK = KD_WALK_MAX_DEPTH - 1 };

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

/* canopy_box_max_dist2 of a kd node's box */
template <int D>
__device__ __forceinline__ float kd_box_max_dist2(const unsigned char *rec, const float (&q)[D]) {
    const float *g = (const float *)(rec + sizeof(canopy_node));
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < D; j++) {
        float a = q[j] - __ldg(g + j), b = q[j] - __ldg(g + D + j);
        float e = a * a > b * b ? a * a : b * b;
        s += e;
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

/* The walk's two applications. An Op has a per-query State; init (or idle, for a
 * lockstep warp's padding lane: wants nothing, takes nothing); limit, the largest
 * bound a node may have to be visited; whole (radius: a box wholly within the limit
 * is taken by its size, take_whole); offer (a leaf point at squared distance d2);
 * finish (write the query's result). */
template <int K> struct kd_op_knn {
    typedef knn_ctx Ctx;
    typedef knn_reg_gpu<K> R;
    typedef typename R::State State;
    static constexpr bool whole = false;
    __device__ static void init(const Ctx &c, State &s, int64_t q) { R::init(c, s, q); }
    __device__ static void idle(const Ctx &, State &s) {
#pragma unroll
        for (int j = 0; j < K; j++) s.d[j] = -1.0f, s.id[j] = -1;
        s.self_id = -1;
    }
    static constexpr bool starts_in_bucket = true;
    __device__ static float limit(const Ctx &, const State &s) {
        return s.d[K - 1];
    }
    /* A node at exactly the k-th distance holds a winner only below the k-th index (the
     * tie rule; knn_truncate): its children's min_id say. Without this, n identical
     * points make every query visit every node. */
    static constexpr bool ties = true;
    __device__ static bool tie_open(const canopy_tree_view &t, const State &s, const kd_ref &r) {
        if (r.x < 0) return true;
        const int64_t m = min(__ldg(t.min_id + r.x), __ldg(t.min_id + r.x + 1));
        return m <= s.id[K - 1];
    }
    __device__ static void take_whole(const Ctx &, State &, int32_t) {}
    __device__ static void offer(const Ctx &, State &s, float d2, const int64_t *ids, int32_t j) {
        if (d2 > s.d[K - 1]) return;
        int32_t id = (int32_t)__ldg(ids + j);
        if (id == s.self_id || !R::before(d2, id, s.d[K - 1], s.id[K - 1])) return;
        R::insert(s, d2, id);
    }
    __device__ static void finish(const Ctx &c, State &s, int64_t q) {
        R::finish(c, s, q);
    }
};

struct kd_op_radius {
    typedef radius_ctx Ctx;
    struct State {
        float lim; /* r2, or -1 for an idle lane */
        int64_t count;
    };
    static constexpr bool whole = true;
    /* no: an ancestor taken whole would count the bucket's points again */
    static constexpr bool starts_in_bucket = false;
    __device__ static void init(const Ctx &c, State &s, int64_t) { s.lim = c.r2, s.count = 0; }
    __device__ static void idle(const Ctx &, State &s) { s.lim = -1.0f, s.count = 0; }
    __device__ static float limit(const Ctx &, const State &s) { return s.lim; }
    /* a point at exactly the radius counts */
    static constexpr bool ties = false;
    __device__ static bool tie_open(const canopy_tree_view &, const State &, const kd_ref &) {
        return true;
    }
    __device__ static void take_whole(const Ctx &, State &s, int32_t n) { s.count += n; }
    __device__ static void offer(const Ctx &, State &s, float d2, const int64_t *, int32_t) {
        s.count += d2 <= s.lim;
    }
    /* in the self form the query itself (distance 0) was counted exactly once */
    __device__ static void finish(const Ctx &c, State &s, int64_t q) {
        c.counts[q] = s.count - c.self;
    }
};

/* A node's reference and its box bound (the record's two loads are independent, so
 * expanding a node costs one memory latency, not two). A box Op takes whole, and the
 * bucket the walk began with (skip), come back as NaN: no limit admits them. `mine`:
 * the query wants the node's parent; a lockstep lane also loads the children of nodes
 * it does not want, and gets NaN for them (it may have taken their parent whole
 * already: nothing below is its own). */
template <int D, class Op>
__device__ __forceinline__ float
kd_load(const canopy_tree_view &t, int32_t node, const float (&q)[D], const typename Op::Ctx &c,
        typename Op::State &st, kd_ref &r, bool mine, int32_t skip) {
    const unsigned char *rec = t.hot + (int64_t)node * t.hot_stride;
    const int4 h = __ldg((const int4 *)rec); /* child, nchild, begin, end */
    r.x = h.x >= 0 ? h.x : ~h.z;
    r.y = h.w;
    const float nan = __int_as_float(0x7fffffff);
    if (!mine || node == skip) return nan;
    const float lo = kd_box_min_dist2<D>(rec, q);
    if constexpr (Op::whole) {
        const float lim = Op::limit(c, st);
        if (lo <= lim && kd_box_max_dist2<D>(rec, q) <= lim) {
            Op::take_whole(c, st, h.w - h.z);
            return nan;
        }
    }
    return lo;
}

/* Offers the points [begin, end), four loads in flight at a time. */
template <int D, class Op>
__device__ __forceinline__ void kd_scan_leaf(const canopy_tree_view &t, int32_t begin, int32_t end,
                                             const float (&q)[D], const typename Op::Ctx &c,
                                             typename Op::State &st) {
    for (int32_t j0 = begin; j0 < end; j0 += 4) {
        float d2[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            d2[u] = j0 + u < end ? kd_point_dist2<D>(t.points, j0 + u, q) : 0.0f;
#pragma unroll
        for (int u = 0; u < 4; u++)
            if (j0 + u < end) Op::offer(c, st, d2[u], t.ids, j0 + u);
    }
}

/* Launch bounds: states up to kNN's 8-slot list fit 64 registers without spills (8
 * blocks of 128 per SM; bounds for 12 made ptxas spill in 2-D, 5 % slower on the H100);
 * the 16-slot list is left unbounded. */
template <class Op> struct kd_blocks {
    static constexpr int value = sizeof(typename Op::State) <= 80 ? 8 : 1;
};

/* One query's walk (position i of the launch; a lockstep warp's padding lane is not
 * live); returns its bound tests, as the engines count them: the root's, and both
 * children's of every node the query expands (a lockstep lane that does not want a
 * node tests nothing). TIES: the tie rule (Op::tie_open) at nodes exactly at the
 * limit; launched only on views with min_id (points with duplicates), so other walks
 * do not pay for it.
 * The walk descends to the next wanted leaf in an inner loop and scans that leaf after
 * it (while-while): the lanes of a warp that reach leaves at different steps then scan
 * them together, where one loop with both branches ran each lane's scan while the
 * others waited (one lane's visits and their order are the same either way; H200,
 * clust2 k = 8: walk 0.24 -> 0.20 ms, bench/results/edges.md). */
template <int D, class Op, bool LOCK, bool TIES>
__device__ __forceinline__ unsigned kd_walk_one(const canopy_gpu_launch &L,
                                                const typename Op::Ctx &ctx, int64_t i, bool live) {
    const canopy_tree_view &t = L.tree;
    const int64_t qi = live ? canopy_gpu_query(L, i) : 0;
    typename Op::State st;
    float q[D];
    if (live) {
        Op::init(ctx, st, qi);
#pragma unroll
        for (int j = 0; j < D; j++) q[j] = __ldg(canopy_point(ctx.query, qi) + j);
    } else {
        Op::idle(ctx, st);
#pragma unroll
        for (int j = 0; j < D; j++) q[j] = 0.0f;
    }
    /* With a kd bucket order (kNN), the walk begins with the query's bucket: its points
     * give every lane a k-th distance before the first step from the root (a lockstep
     * warp then visits only what some lane's own neighbourhood needs), and the walk
     * leaves the bucket out. */
    int32_t skip = -1;
    if (Op::starts_in_bucket && L.bucket && live) {
        skip = __ldg(L.bucket + i);
        const int4 h = __ldg((const int4 *)(t.hot + (int64_t)skip * t.hot_stride));
        kd_scan_leaf<D, Op>(t, h.z, h.w, q, ctx, st);
    }
    kd_ref stack_ref[KD_WALK_STACK];
    float stack_bound[KD_WALK_STACK];
    int32_t sp = 0;
    kd_ref cur;
    float bound = kd_load<D, Op>(t, 0, q, ctx, st, cur, true, skip);
    unsigned tests = 1;
    for (;;) {
        /* at_leaf: cur is a leaf some lane wants (mine: this lane) */
        bool at_leaf = false, mine = false;
        for (;;) {
            const float lim = Op::limit(ctx, st);
            const bool want =
                TIES ? bound < lim || (bound == lim && Op::tie_open(t, st, cur)) : bound <= lim;
            if (LOCK ? __any_sync(CANOPY_FULL_MASK, want) : want) {
                if (cur.x >= 0) {
                    tests += want ? 2 : 0;
                    kd_ref r0, r1;
                    const float b0 = kd_load<D, Op>(t, cur.x, q, ctx, st, r0, want, skip);
                    const float b1 = kd_load<D, Op>(t, cur.x + 1, q, ctx, st, r1, want, skip);
                    /* near child first; a NaN (taken whole) bound is never first */
                    bool second = b1 < b0 || b0 != b0;
                    if (LOCK) {
                        unsigned yes = __ballot_sync(CANOPY_FULL_MASK, want && second);
                        unsigned all = __ballot_sync(CANOPY_FULL_MASK, want);
                        second = 2 * __popc(yes) > __popc(all);
                    }
                    const float far_bound = second ? b0 : b1;
                    const bool keep = far_bound <= Op::limit(ctx, st);
                    if (LOCK ? __any_sync(CANOPY_FULL_MASK, keep) : keep) {
                        stack_ref[sp] = second ? r0 : r1;
                        stack_bound[sp] = far_bound;
                        sp++;
                    }
                    cur = second ? r1 : r0;
                    bound = second ? b1 : b0;
                    continue;
                }
                /* a lockstep lane that does not want the leaf may have taken it whole */
                at_leaf = true, mine = want;
                break;
            }
            if (sp == 0) break;
            sp--;
            cur = stack_ref[sp];
            bound = stack_bound[sp];
        }
        if (!at_leaf) break;
        if (mine) kd_scan_leaf<D, Op>(t, ~cur.x, cur.y, q, ctx, st);
        if (sp == 0) break;
        sp--;
        cur = stack_ref[sp];
        bound = stack_bound[sp];
    }
    if (live) Op::finish(ctx, st, qi);
    return live ? tests : 0u;
}

template <int D, class Op, bool LOCK, bool TIES>
__global__ void __launch_bounds__(CANOPY_GPU_BLOCK, kd_blocks<Op>::value)
    kd_walk_kernel(canopy_gpu_launch L, typename Op::Ctx ctx) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool live = i < L.nq;
    if (!LOCK && !live) return;
    const unsigned tests = kd_walk_one<D, Op, LOCK, TIES>(L, ctx, i, live);
    /* no counters: a caller that wants no statistics (canopy_gpu_knn_kd_bare) */
    if (!L.counters) return;
    /* one atomic per group of lanes finishing together, not per thread (200k
     * threads on one counter cost ~0.1 ms) */
    const unsigned group = __activemask();
    const unsigned total = __reduce_add_sync(group, tests);
    if ((int)(threadIdx.x & 31) == __ffs(group) - 1 && total)
        atomicAdd(L.counters, (unsigned long long)total);
}

template <int D, class Op>
canopy_status kd_walk_launch(canopy_variant v, const canopy_gpu_launch &L,
                             const typename Op::Ctx &ctx) {
    const unsigned blocks = (unsigned)((L.nq + CANOPY_GPU_BLOCK - 1) / CANOPY_GPU_BLOCK);
    /* with ties, one query per thread whatever the variant (same results; one more
     * kernel per shape rather than two) */
    if (Op::ties && L.tree.min_id)
        kd_walk_kernel<D, Op, false, Op::ties><<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    else if (v == CANOPY_VARIANT_DR_L)
        kd_walk_kernel<D, Op, true, false><<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    else
        kd_walk_kernel<D, Op, false, false><<<blocks, CANOPY_GPU_BLOCK, 0, L.stream>>>(L, ctx);
    return canopy_gpu_check(cudaGetLastError(), "kd walk kernel launch");
}

template <class Op>
canopy_status kd_walk_by_d(canopy_variant v, const canopy_gpu_launch &L,
                           const typename Op::Ctx &ctx) {
    switch (L.tree.d) {
    case 1:
        return kd_walk_launch<1, Op>(v, L, ctx);
    case 2:
        return kd_walk_launch<2, Op>(v, L, ctx);
    case 3:
        return kd_walk_launch<3, Op>(v, L, ctx);
    case 4:
        return kd_walk_launch<4, Op>(v, L, ctx);
    case 5:
        return kd_walk_launch<5, Op>(v, L, ctx);
    case 6:
        return kd_walk_launch<6, Op>(v, L, ctx);
    case 7:
        return kd_walk_launch<7, Op>(v, L, ctx);
    default:
        return kd_walk_launch<8, Op>(v, L, ctx);
    }
}

} // namespace

template <int K>
canopy_status kd_walk_knn(canopy_variant v, const canopy_gpu_launch &L, const knn_ctx &ctx) {
    return kd_walk_by_d<kd_op_knn<K>>(v, L, ctx);
}
template canopy_status kd_walk_knn<1>(canopy_variant, const canopy_gpu_launch &, const knn_ctx &);
template canopy_status kd_walk_knn<4>(canopy_variant, const canopy_gpu_launch &, const knn_ctx &);
template canopy_status kd_walk_knn<8>(canopy_variant, const canopy_gpu_launch &, const knn_ctx &);
template canopy_status kd_walk_knn<16>(canopy_variant, const canopy_gpu_launch &, const knn_ctx &);

canopy_status kd_walk_radius(canopy_variant v, const canopy_gpu_launch &L, const radius_ctx &ctx) {
    return kd_walk_by_d<kd_op_radius>(v, L, ctx);
}
