/* SPDX-License-Identifier: MIT */
/* The inner loops of the graph applications as GPU descriptors (see gpu_graph.cuh),
 * the device twins of the CPU inner loops in sssp.c, bfs.c, bfs_rec.c, spmv.c,
 * pagerank.c and color.c. GPU_GRAPH_APPS lists them; a strategy file instantiates
 * its kernels for each with GPU_GRAPH_DISPATCH. */
#ifndef CANOPY_GRAPH_GPU_GRAPH_APPS_CUH
#define CANOPY_GRAPH_GPU_GRAPH_APPS_CUH

#include "graph/gpu_graph.cuh"

/* ------------------------------------------------------ result combinations -- */

/* No result: the work is all side effects (relaxations, claims, releases). */
struct gpu_acc_none {
    typedef int Acc;
    static constexpr bool has_post = false;
    __device__ static Acc zero() { return 0; }
    __device__ static Acc combine(Acc, Acc) { return 0; }
    __device__ static void atomic_combine(unsigned long long *, Acc) {}
    __device__ static Acc from_bits(unsigned long long) { return 0; }
};

struct gpu_acc_sum_f64 {
    typedef double Acc;
    static constexpr bool has_post = true;
    __device__ static Acc zero() { return 0.0; }
    __device__ static Acc combine(Acc a, Acc b) { return a + b; }
    __device__ static void atomic_combine(unsigned long long *p, Acc v) {
        atomicAdd((double *)p, v);
    }
    __device__ static Acc from_bits(unsigned long long b) {
        return __longlong_as_double((long long)b);
    }
};

struct gpu_acc_sum_u64 {
    typedef unsigned long long Acc;
    static constexpr bool has_post = true;
    __device__ static Acc zero() { return 0; }
    __device__ static Acc combine(Acc a, Acc b) { return a + b; }
    __device__ static void atomic_combine(unsigned long long *p, Acc v) { atomicAdd(p, v); }
    __device__ static Acc from_bits(unsigned long long b) { return b; }
};

struct gpu_acc_or_u64 {
    typedef unsigned long long Acc;
    static constexpr bool has_post = true;
    __device__ static Acc zero() { return 0; }
    __device__ static Acc combine(Acc a, Acc b) { return a | b; }
    __device__ static void atomic_combine(unsigned long long *p, Acc v) { atomicOr(p, v); }
    __device__ static Acc from_bits(unsigned long long b) { return b; }
};

/* Appends v to the next round's worklist. */
__device__ __forceinline__ void gpu_push(const gpu_graph_ctx &c, int64_t v) {
    c.next[atomicAdd(c.next_n, 1ull)] = v;
}

/* --------------------------------------------------------------------- sssp -- */

/* Distances are non-negative doubles (or +inf), which order like their bits. */
struct gpu_sssp : gpu_acc_none {
    typedef double Pre;
    __device__ static Pre pre(const gpu_graph_ctx &c, int64_t u) {
        return __longlong_as_double((long long)atomicAdd((unsigned long long *)&c.dist[u], 0ull));
    }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t, Pre du, int64_t k) {
        int32_t v = c.col[k];
        double nd = du + (c.val ? c.val[k] : 1.0);
        unsigned long long bits = (unsigned long long)__double_as_longlong(nd);
        if (atomicMin((unsigned long long *)&c.dist[v], bits) > bits &&
            atomicExch(&c.queued[v], 1u) == 0u)
            gpu_push(c, v);
        return 0;
    }
    __device__ static void post(const gpu_graph_ctx &, int64_t, Acc) {}
};

/* ---------------------------------------------------------------------- bfs -- */

struct gpu_bfs : gpu_acc_none {
    typedef int64_t Pre;
    __device__ static Pre pre(const gpu_graph_ctx &c, int64_t) { return c.next_level; }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t, Pre lvl, int64_t k) {
        int32_t v = c.col[k];
        unsigned long long *p = (unsigned long long *)&c.level[v];
        if (*(volatile long long *)p == -1 && atomicCAS(p, ~0ull, (unsigned long long)lvl) == ~0ull)
            gpu_push(c, v);
        return 0;
    }
    __device__ static void post(const gpu_graph_ctx &, int64_t, Acc) {}
};

/* BFS-Rec: a vertex whose level falls relaxes its neighbours again. */
struct gpu_bfs_rec : gpu_acc_none {
    typedef int64_t Pre;
    __device__ static Pre pre(const gpu_graph_ctx &c, int64_t u) {
        return atomicAdd((unsigned long long *)&c.level[u], 0ull) + 1;
    }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t, Pre lu, int64_t k) {
        int32_t v = c.col[k];
        if (atomicMin((long long *)&c.level[v], (long long)lu) > lu &&
            atomicExch(&c.queued[v], 1u) == 0u)
            gpu_push(c, v);
        return 0;
    }
    __device__ static void post(const gpu_graph_ctx &, int64_t, Acc) {}
};

/* --------------------------------------------------------------------- spmv -- */

/* Pattern and valued matrices are two Apps, so that the inner loop tests for values
 * at compile time (measured on the H100: 5-14 % of nodp-split's SpMV time). Plain
 * loads: the read-only (__ldg) and streaming (__ldcs) hints measured no faster. */
template <bool VALUES> struct gpu_spmv_of : gpu_acc_sum_f64 {
    typedef int Pre;
    __device__ static Pre pre(const gpu_graph_ctx &, int64_t) { return 0; }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t, Pre, int64_t k) {
        const double xv = c.x[c.col[k]];
        if constexpr (VALUES)
            return c.val[k] * xv;
        else
            return xv;
    }
    __device__ static void post(const gpu_graph_ctx &c, int64_t row, Acc a) { c.y[row] = a; }
};
typedef gpu_spmv_of<false> gpu_spmv;
typedef gpu_spmv_of<true> gpu_spmv_val;

/* ----------------------------------------------------------------- pagerank -- */

struct gpu_pagerank : gpu_acc_sum_f64 {
    typedef int Pre;
    __device__ static Pre pre(const gpu_graph_ctx &, int64_t) { return 0; }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t, Pre, int64_t k) {
        return c.contrib[c.col[k]];
    }
    /* c.base is the teleport term; the dangling rank's share is read on the device, so
     * that an iteration needs no round trip to the host before this step. */
    __device__ static void post(const gpu_graph_ctx &c, int64_t v, Acc a) {
        c.rank_next[v] = (c.base + c.damping * *c.dangling / c.n_f) + c.damping * a;
    }
};

/* -------------------------------------------------------------------- color -- */

/* The same priority as color.c: larger hash first, ties to the larger index. */
__device__ __forceinline__ uint64_t gpu_color_priority(int64_t v) {
    uint64_t z = (uint64_t)v * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
__device__ __forceinline__ bool gpu_color_before(int64_t a, int64_t b) {
    uint64_t pa = gpu_color_priority(a), pb = gpu_color_priority(b);
    return pa > pb || (pa == pb && a > b);
}

/* wait[v] = number of higher-priority neighbours. */
struct gpu_color_count : gpu_acc_sum_u64 {
    typedef int Pre;
    __device__ static Pre pre(const gpu_graph_ctx &, int64_t) { return 0; }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t v, Pre, int64_t k) {
        return gpu_color_before(c.col[k], v) ? 1ull : 0ull;
    }
    __device__ static void post(const gpu_graph_ctx &c, int64_t v, Acc a) { c.wait[v] = a; }
};

/* The smallest colour unused by v's (all coloured) higher-priority neighbours, found
 * 64 colours at a time so that a row splits across threads: the row's result is the
 * OR of the colours in [window, window + 64) its neighbours use; a vertex whose
 * window is full goes to the worklist for the next window. */
struct gpu_color_pick : gpu_acc_or_u64 {
    typedef int Pre;
    __device__ static Pre pre(const gpu_graph_ctx &, int64_t) { return 0; }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t v, Pre, int64_t k) {
        int32_t w = c.col[k];
        if (!gpu_color_before(w, v)) return 0;
        int64_t d = c.color[w] - c.window;
        return d >= 0 && d < 64 ? 1ull << d : 0ull;
    }
    __device__ static void post(const gpu_graph_ctx &c, int64_t v, Acc used) {
        if (~used)
            c.color[v] = c.window + __ffsll((long long)~used) - 1;
        else
            gpu_push(c, v);
    }
};

/* A coloured vertex releases its lower-priority neighbours. */
struct gpu_color_release : gpu_acc_none {
    typedef int Pre;
    __device__ static Pre pre(const gpu_graph_ctx &, int64_t) { return 0; }
    __device__ static Acc edge(const gpu_graph_ctx &c, int64_t v, Pre, int64_t k) {
        int32_t w = c.col[k];
        if (gpu_color_before(v, w) && atomicAdd(&c.wait[w], ~0ull) == 1ull) gpu_push(c, w);
        return 0;
    }
    __device__ static void post(const gpu_graph_ctx &, int64_t, Acc) {}
};

/* ------------------------------------------------------------ the app list -- */

#define GPU_GRAPH_APPS(X)                                                                          \
    X(GPU_APP_SSSP, gpu_sssp)                                                                      \
    X(GPU_APP_BFS, gpu_bfs)                                                                        \
    X(GPU_APP_BFS_REC, gpu_bfs_rec)                                                                \
    X(GPU_APP_SPMV, gpu_spmv)                                                                      \
    X(GPU_APP_SPMV_VAL, gpu_spmv_val)                                                              \
    X(GPU_APP_PAGERANK, gpu_pagerank)                                                              \
    X(GPU_APP_COLOR_COUNT, gpu_color_count)                                                        \
    X(GPU_APP_COLOR_PICK, gpu_color_pick)                                                          \
    X(GPU_APP_COLOR_RELEASE, gpu_color_release)

#define GPU_APP_ENUM_(ID, TYPE) ID,
enum gpu_graph_app { GPU_GRAPH_APPS(GPU_APP_ENUM_) GPU_APP_COUNT };
#undef GPU_APP_ENUM_

/* In a strategy file whose entry takes `const gpu_launch *L` and which defines
 * `template <class App> static cudaError_t run_app(const gpu_launch *L)`:
 * GPU_GRAPH_DISPATCH() returns run_app<App>(L) for the App that L->app names. */
#define GPU_APP_CASE_(ID, TYPE)                                                                    \
    case ID:                                                                                       \
        return run_app<TYPE>(L);
#define GPU_GRAPH_DISPATCH()                                                                       \
    do {                                                                                           \
        switch (L->app) {                                                                          \
            GPU_GRAPH_APPS(GPU_APP_CASE_)                                                          \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
        return cudaErrorInvalidValue;                                                              \
    } while (0)

#endif
