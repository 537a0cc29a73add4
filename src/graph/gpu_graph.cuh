/* SPDX-License-Identifier: MIT */
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
    int64_t window;         /* color pick: colours [window, window + 64) */
    const double *dangling; /* pagerank: the rank of vertices without out-edges */
    double n_f;             /* pagerank: the vertex count */
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

/* The inner loops below are unrolled so that a thread issues the loads of several
 * entries before it waits for the first: a loop that waits for col[k] and then for
 * x[col[k]] entry by entry pays two memory latencies per entry. (The serial loop is
 * left to the compiler's own unrolling: measured faster than unroll 4 or none.) */
template <class App>
__device__ typename App::Acc gpu_row_serial(const gpu_graph_ctx &c, int64_t row) {
    typename App::Pre pre = App::pre(c, row);
    typename App::Acc a = App::zero();
    for (int64_t k = c.row_ptr[row], hi = c.row_ptr[row + 1]; k < hi; k++)
        a = App::combine(a, App::edge(c, row, pre, k));
    return a;
}

/* A row of at most `MAX` entries [lo, hi) on one thread, fully unrolled. */
template <class App, int MAX>
__device__ typename App::Acc gpu_row_short(const gpu_graph_ctx &c, int64_t row, int64_t lo,
                                           int64_t hi) {
    typename App::Pre pre = App::pre(c, row);
    typename App::Acc a = App::zero();
#pragma unroll
    for (int t = 0; t < MAX; t++)
        if (lo + t < hi) a = App::combine(a, App::edge(c, row, pre, lo + t));
    return a;
}

/* Lanes stride over the row from `lane` by `width`; the caller reduces. */
template <class App>
__device__ typename App::Acc gpu_row_strided(const gpu_graph_ctx &c, int64_t row, int64_t lo,
                                             int64_t hi, int64_t first, int64_t step) {
    typename App::Pre pre = App::pre(c, row);
    typename App::Acc a = App::zero();
#pragma unroll 4
    for (int64_t k = lo + first; k < hi; k += step) a = App::combine(a, App::edge(c, row, pre, k));
    return a;
}

template <class App>
__device__ void gpu_row_post(const gpu_graph_ctx &c, int64_t row, typename App::Acc a) {
    if constexpr (App::has_post) App::post(c, row, a);
}

/* ------------------------------------------------------- rows cut in chunks -- */

/* Rows longer than GPU_SERIAL_MAX entries can be cut into chunks of GPU_CHUNK
 * entries, one warp per chunk, wherever the chunks run (nodp-split's second kernel,
 * the chunk form of consolidated children): a hub's row then spreads over the whole
 * GPU instead of serialising on one warp or block. */
enum { GPU_SERIAL_MAX = 16, GPU_CHUNK = 256 };

/* One chunk: entries [from, to) of row; item indexes the row's partials when the row
 * has several chunks, else -1. 32 bytes, so a record is one memory sector and the
 * warp that runs it waits for one load before it reads the row. A round's records
 * are either buffered by the round itself or, for loops over all rows, a plan made
 * once per graph (nodp-split). */
struct __align__(32) gpu_chunk {
    int64_t row, item, from, to;
};

/* Chunk records of one round and the partial results of rows cut in several. */
struct gpu_chunks {
    gpu_chunk *rec;
    unsigned long long *acc;   /* per item: the combined chunks (Acc bits); zero between rounds */
    unsigned int *done;        /* per item: chunks finished; zero between rounds */
    unsigned long long *count; /* records written this round (reset by the host) */
};

__device__ __forceinline__ int64_t gpu_chunks_of(int64_t len) {
    return (len + GPU_CHUNK - 1) / GPU_CHUNK;
}

/* Writes the n chunk records of row (item i) from record `first` on. */
__device__ __forceinline__ void gpu_chunks_put(const gpu_graph_ctx &c, const gpu_chunks &ch,
                                               unsigned long long first, int64_t i, int64_t row,
                                               int64_t n) {
    const int64_t lo = c.row_ptr[row], hi = c.row_ptr[row + 1];
    for (int64_t p = 0; p < n; p++) {
        int64_t from = lo + p * GPU_CHUNK;
        ch.rec[first + p] =
            gpu_chunk{row, n > 1 ? i : -1, from, from + GPU_CHUNK < hi ? from + GPU_CHUNK : hi};
    }
}

/* Reserves `mine` consecutive slots of *counter for each lane, one atomic per warp;
 * returns the lane's first slot. All 32 lanes must call. */
__device__ __forceinline__ unsigned long long gpu_warp_reserve(unsigned long long *counter,
                                                               unsigned long long mine) {
    const int lane = threadIdx.x & 31;
    unsigned long long incl = mine;
    for (int d = 1; d < 32; d <<= 1) {
        unsigned long long y = __shfl_up_sync(GPU_FULL_MASK, incl, d);
        if (lane >= d) incl += y;
    }
    unsigned long long base = 0;
    const unsigned long long total = __shfl_sync(GPU_FULL_MASK, incl, 31);
    if (lane == 31 && total) base = atomicAdd(counter, total);
    return __shfl_sync(GPU_FULL_MASK, base, 31) + incl - mine;
}

/* Runs chunk record q with `width` threads (32: a whole warp, all lanes calling with
 * the same q; 1: one thread). A row of one chunk runs its postwork at once; the
 * chunks of a longer row combine their results atomically and the last to finish
 * (it counts the row's chunks from its length) runs the postwork and clears the
 * row's partial and count for the next round, so a plan's records need no reset. */
template <class App>
__device__ void gpu_chunk_run(const gpu_graph_ctx &c, const gpu_chunks &ch, int64_t q, int lane,
                              int width) {
    const gpu_chunk r = ch.rec[q];
    const int64_t row = r.row, from = r.from, to = r.to;
    typename App::Pre pre = App::pre(c, row);
    typename App::Acc a = App::zero();
    if (width == 32) {
        /* unrolled, so that every lane has all its loads in flight at once */
#pragma unroll
        for (int t = 0; t < GPU_CHUNK / 32; t++) {
            int64_t k = from + lane + 32 * t;
            if (k < to) a = App::combine(a, App::edge(c, row, pre, k));
        }
        a = gpu_warp_reduce<App>(a);
    } else {
        for (int64_t k = from; k < to; k++) a = App::combine(a, App::edge(c, row, pre, k));
    }
    if constexpr (App::has_post) {
        if (lane != 0) return;
        if (r.item < 0) {
            App::post(c, row, a);
            return;
        }
        App::atomic_combine(&ch.acc[r.item], a);
        __threadfence();
        const unsigned parts = (unsigned)gpu_chunks_of(c.row_ptr[row + 1] - c.row_ptr[row]);
        if (atomicAdd(&ch.done[r.item], 1u) == parts - 1u) {
            __threadfence();
            ch.done[r.item] = 0u;
            App::post(c, row, App::from_bits(atomicExch(&ch.acc[r.item], 0ull)));
        }
    }
}

/* Chunk records [first, end), a warp per record, warps striding over the grid. */
template <class App>
__device__ void gpu_chunks_range(const gpu_graph_ctx &c, const gpu_chunks &ch, int64_t first,
                                 int64_t end) {
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t q = first + ((blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5); q < end;
         q += warps)
        gpu_chunk_run<App>(c, ch, q, threadIdx.x & 31, 32);
}

/* Light rows of a warp: those of at most GPU_SERIAL_MAX entries on their own thread,
 * longer ones by the whole warp, one after another. All 32 lanes must call; row < 0
 * or !light: the lane has no light row. */
template <class App>
__device__ void gpu_light_rows(const gpu_graph_ctx &c, int64_t row, bool light) {
    const bool wide = light && c.row_ptr[row + 1] - c.row_ptr[row] > GPU_SERIAL_MAX;
    if (light && !wide)
        gpu_row_post<App>(
            c, row, gpu_row_short<App, GPU_SERIAL_MAX>(c, row, c.row_ptr[row], c.row_ptr[row + 1]));
    const int lane = threadIdx.x & 31;
    for (unsigned mask = __ballot_sync(GPU_FULL_MASK, wide); mask; mask &= mask - 1) {
        const int64_t r = __shfl_sync(GPU_FULL_MASK, row, __ffs(mask) - 1);
        typename App::Acc a = gpu_row_strided<App>(c, r, c.row_ptr[r], c.row_ptr[r + 1], lane, 32);
        a = gpu_warp_reduce<App>(a);
        if (lane == 0) gpu_row_post<App>(c, r, a);
    }
}

/* ------------------------------------------------- host side of one launch -- */

/* Dynamic-parallelism settings and the pre-allocated descriptor pool (device). */
struct gpu_dp {
    int64_t threshold;            /* heavy: row longer than this */
    int form;                     /* canopy_child_form */
    int child_threads;            /* threads per child block */
    int child_blocks;             /* blocks per consolidated child; 0: the KC_X rule */
    int kc;                       /* X of KC_X; 0: the level's default */
    int64_t cap;                  /* pool capacity (descriptors) */
    int64_t *rows;                /* pool: the buffered items */
    unsigned long long *acc;      /* pool: multi-block partial results (Acc bits) */
    unsigned int *done;           /* pool: multi-block blocks finished per item */
    unsigned long long *cursor;   /* next free pool slot (reset every round) */
    unsigned int *blocks_done;    /* grid level: parent blocks finished */
    unsigned long long *counters; /* GPU_DP_* */
    gpu_chunks ch;                /* chunk form (and nodp-split) */
};
/* Device counters summed over the run; GPU_DP_HIGH is a maximum (the pool cursor at
 * the end of the fullest round). */
enum { GPU_DP_LAUNCHES, GPU_DP_FALLBACKS, GPU_DP_HEAVY, GPU_DP_HIGH, GPU_DP_NCOUNTERS };

/* One outer loop to run: which App (GPU_APP_*), its context and items. */
struct gpu_launch {
    int app;
    gpu_graph_ctx ctx;
    gpu_items items;
    gpu_dp dp;
    /* nodp-split: the planned chunk records of a loop over all rows (plan_n of them;
     * plan_n < 0: no plan) */
    gpu_chunk *plan;
    int64_t plan_n;
    int sms;
    cudaStream_t stream;
};

/* One function per strategy file; each dispatches on L->app and returns the launch
 * error (plain CUDA errors: the dynamic-parallelism files sit in their own archive
 * and call nothing of the rest of the library). */
cudaError_t gpu_graph_nodp_thread(const gpu_launch *L);
cudaError_t gpu_graph_nodp_warp(const gpu_launch *L);
cudaError_t gpu_graph_nodp_block(const gpu_launch *L);
cudaError_t gpu_graph_nodp_split(const gpu_launch *L);
/* Plans nodp-split's loops over all n rows of L's graph: rec (room for
 * nnz / GPU_CHUNK + n records) gets the chunk records of every heavy row in row
 * order, *count their number and *heavy the heavy rows. Synchronous. */
cudaError_t gpu_graph_nodp_split_plan(const gpu_launch *L, int64_t n, gpu_chunk *rec,
                                      int64_t *count, int64_t *heavy);
cudaError_t gpu_graph_dp_basic(const gpu_launch *L);
cudaError_t gpu_graph_dp_warp(const gpu_launch *L);
cudaError_t gpu_graph_dp_block(const gpu_launch *L);
cudaError_t gpu_graph_dp_grid(const gpu_launch *L);

#endif
