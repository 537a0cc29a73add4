/* The GPU nested-loop engine's contract. An application's inner loop is a small
 * descriptor type (an "App"):
 *
 *   typedef ... Pre;  Pre pre(ctx, row)        prework of an item (read once per row,
 *                                              recomputed by whoever runs the row)
 *   typedef ... Acc;  Acc edge(ctx, row, pre, k)   one inner iteration, entry k
 *   Acc zero(); Acc combine(Acc, Acc); void atomic_combine(Acc *, Acc)
 *   static constexpr bool has_post; void post(ctx, row, Acc)  postwork on the row's
 *                                              combined result (once per row)
 *
 * Every strategy (flat thread/warp/block-mapped kernels, basic dynamic parallelism,
 * warp/block/grid consolidation) runs any App; an App is listed once in
 * GPU_GRAPH_APPS (gpu_graph_apps.cuh) and gets them all. */
#ifndef CANOPY_GRAPH_GPU_GRAPH_CUH
#define CANOPY_GRAPH_GPU_GRAPH_CUH

#include "canopy.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define GPU_FULL_MASK 0xffffffffu

/* Everything any application's inner loop touches (device pointers), passed by value
 * to every kernel; each App reads its own fields. */
struct gpu_graph_ctx {
    const int64_t *row_ptr;
    const int32_t *col;
    const double *val; /* NULL: pattern */
    /* the next round's worklist (sssp, bfs, color) */
    int64_t *next;
    unsigned long long *next_n;
    unsigned int *queued; /* per vertex: already in next */
    double *dist;         /* sssp */
    int64_t *level;       /* bfs */
    int64_t next_level;   /* bfs: level being assigned */
    const double *x;      /* spmv */
    double *y;
    const double *contrib; /* pagerank */
    double *rank_next;
    double base, damping;
    int64_t *color; /* color */
    unsigned long long *wait;
    int64_t window; /* color pick: colours [window, window + 64) */
};

/* One outer loop: items[0 .. n) (NULL: rows 0 .. n-1). */
struct gpu_items {
    const int64_t *items;
    int64_t n;
};

__device__ __forceinline__ int64_t gpu_item_row(const gpu_items &it, int64_t i) {
    return it.items ? it.items[i] : i;
}

/* -------------------------------------------------------------- reductions -- */

template <class T> __device__ __forceinline__ T gpu_shfl_xor(T v, int m) {
    return __shfl_xor_sync(GPU_FULL_MASK, v, m);
}

/* All 32 lanes must call; every lane gets the warp's combined value. */
template <class App> __device__ typename App::Acc gpu_warp_reduce(typename App::Acc a) {
    if constexpr (App::has_post)
        for (int m = 16; m > 0; m >>= 1) a = App::combine(a, gpu_shfl_xor(a, m));
    return a;
}

/* All threads of the block must call (blockDim a multiple of 32, <= 1024); thread 0
 * gets the block's combined value. */
template <class App> __device__ typename App::Acc gpu_block_reduce(typename App::Acc a) {
    if constexpr (App::has_post) {
        __shared__ typename App::Acc part[32];
        a = gpu_warp_reduce<App>(a);
        const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
        __syncthreads(); /* part[] may still be read by a previous call */
        if (lane == 0) part[w] = a;
        __syncthreads();
        if (w == 0) {
            a = lane < (int)(blockDim.x >> 5) ? part[lane] : App::zero();
            a = gpu_warp_reduce<App>(a);
        }
    }
    return a;
}

/* ------------------------------------------- the three ways to run one row -- */

template <class App>
__device__ typename App::Acc gpu_row_serial(const gpu_graph_ctx &c, int64_t row) {
    typename App::Pre pre = App::pre(c, row);
    typename App::Acc a = App::zero();
    for (int64_t k = c.row_ptr[row], hi = c.row_ptr[row + 1]; k < hi; k++)
        a = App::combine(a, App::edge(c, row, pre, k));
    return a;
}

/* Lanes stride over the row from `lane` by `width`; the caller reduces. */
template <class App>
__device__ typename App::Acc gpu_row_strided(const gpu_graph_ctx &c, int64_t row, int64_t lo,
                                             int64_t hi, int64_t first, int64_t step) {
    typename App::Pre pre = App::pre(c, row);
    typename App::Acc a = App::zero();
    for (int64_t k = lo + first; k < hi; k += step) a = App::combine(a, App::edge(c, row, pre, k));
    return a;
}

template <class App>
__device__ void gpu_row_post(const gpu_graph_ctx &c, int64_t row, typename App::Acc a) {
    if constexpr (App::has_post) App::post(c, row, a);
}

/* ------------------------------------------------- host side of one launch -- */

/* Dynamic-parallelism settings and the pre-allocated descriptor pool (device). */
struct gpu_dp {
    int64_t threshold;             /* heavy: row longer than this */
    int form;                      /* canopy_child_form */
    int child_threads;             /* threads per child block */
    int child_blocks;              /* blocks per consolidated child; 0: the KC_X rule */
    int kc;                        /* X of KC_X; 0: the level's default */
    int64_t cap;                   /* pool capacity (descriptors) */
    int64_t *rows;                 /* pool: the buffered items */
    unsigned long long *acc;       /* pool: multi-block partial results (Acc bits) */
    unsigned int *done;            /* pool: multi-block blocks finished per item */
    unsigned long long *cursor;    /* next free pool slot (reset every round) */
    unsigned int *blocks_done;     /* grid level: parent blocks finished */
    unsigned long long *heavy_len; /* grid level: summed length of buffered rows */
    unsigned long long *counters;  /* GPU_DP_* */
};
enum { GPU_DP_LAUNCHES, GPU_DP_FALLBACKS, GPU_DP_HEAVY, GPU_DP_NCOUNTERS };

/* One outer loop to run: which App (GPU_APP_*), its context and items. */
struct gpu_launch {
    int app;
    gpu_graph_ctx ctx;
    gpu_items items;
    gpu_dp dp;
    int sms;
    cudaStream_t stream;
};

/* One function per strategy file; each dispatches on L->app and returns the launch
 * error (plain CUDA errors: the dynamic-parallelism files sit in their own archive
 * and call nothing of the rest of the library). */
cudaError_t gpu_graph_nodp_thread(const gpu_launch *L);
cudaError_t gpu_graph_nodp_warp(const gpu_launch *L);
cudaError_t gpu_graph_nodp_block(const gpu_launch *L);
cudaError_t gpu_graph_dp_basic(const gpu_launch *L);
cudaError_t gpu_graph_dp_warp(const gpu_launch *L);
cudaError_t gpu_graph_dp_block(const gpu_launch *L);
cudaError_t gpu_graph_dp_grid(const gpu_launch *L);

#endif
