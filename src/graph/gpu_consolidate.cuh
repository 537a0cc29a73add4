/* SPDX-License-Identifier: MIT */
/* Workload consolidation of dynamic parallelism (Wu, Li & Becchi 2016), as one
 * annotation at the launch site. Where a basic-DP parent kernel would write
 *
 *     if (heavy) child<<<...>>>(item); else work(item);
 *
 * it writes
 *
 *     CANOPY_DP_CONSOLIDATE(LEVEL, App, ctx, dp, item, heavy);
 *
 * which plays the role of the paper's `#pragma dp consldt(LEVEL) buffer(pool) work(item)`:
 *   LEVEL  GPU_DP_BASIC (a child launch per heavy item: the baseline), GPU_DP_WARP,
 *          GPU_DP_BLOCK or GPU_DP_GRID (one consolidated child per warp/block/grid);
 *   App    the descriptor whose row is the child's work (gpu_graph.cuh);
 *   dp     the pre-allocated descriptor pool and child configuration (gpu_dp);
 *   item   the work descriptor (a row; -1 for a thread without an item).
 * Light items run inline in the parent: those of at most GPU_SERIAL_MAX entries on
 * their own thread, longer ones by their whole warp (basic-dp, the paper's baseline,
 * runs every light item on its own thread). Every thread of the block must reach the
 * site (the levels vote and synchronise there).
 *
 * Design points, with CUDA 12+ (CDP2) in mind:
 * - Descriptors go to a pool allocated once per run (capacity >= items per round),
 *   reserved per warp/block with one atomic, per item at grid level.
 * - Child kernels are moldable: they loop until their slice of the pool is done, so
 *   their size comes from the KC_X rule (occupancy-optimal blocks / X: X = 32 warp,
 *   16 block, 1 grid), overridable. Four forms: solo thread, solo block, multi-block,
 *   and chunks (the default): a heavy row is buffered as GPU_CHUNK-entry chunks, a
 *   warp per chunk, so one child balances many short rows and a few huge ones alike.
 * - Postwork of a heavy item depends only on its row's combined result, so the
 *   child that finishes the row runs it (multi-block and chunks: the last block or
 *   warp to finish the item, found with a counter); no device-side
 *   cudaDeviceSynchronize.
 * - Grid level needs a global barrier: blocks count themselves in as they finish
 *   buffering and the last one launches; no block ever waits for another.
 * - Launches go to cudaStreamFireAndForget so the children of one block run
 *   concurrently; a failed launch (pending-launch limit) runs its items inline and is
 *   counted, so results stay right. */
#ifndef CANOPY_GRAPH_GPU_CONSOLIDATE_CUH
#define CANOPY_GRAPH_GPU_CONSOLIDATE_CUH

#include "graph/gpu_graph_apps.cuh"

enum { GPU_DP_BASIC = 0, GPU_DP_WARP, GPU_DP_BLOCK, GPU_DP_GRID };

#define CANOPY_DP_CONSOLIDATE(LEVEL, APP, CTX, DP, ITEM, HEAVY)                                    \
    gpu_dp_site<LEVEL, APP>((CTX), (DP), (ITEM), (HEAVY))

/* Kernels are internal to each file that includes this header (one instantiation set
 * per strategy file, no cross-file device symbols to link). */
namespace {

/* The consolidated child: pool slots [first, first + count), or for the chunk form
 * chunk records [first, first + count). */
template <class App>
__global__ void gpu_dp_child(gpu_graph_ctx c, gpu_dp dp, int64_t first, int64_t count, int form) {
    const int64_t end = first + count;
    if (form == CANOPY_CHILD_CHUNK) {
        gpu_chunks_range<App>(c, dp.ch, first, end);
    } else if (form == CANOPY_CHILD_THREAD) {
        const int64_t step = (int64_t)gridDim.x * blockDim.x;
        for (int64_t j = first + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < end;
             j += step) {
            int64_t row = dp.rows[j];
            gpu_row_post<App>(c, row, gpu_row_serial<App>(c, row));
        }
    } else if (form == CANOPY_CHILD_BLOCK) {
        for (int64_t j = first + blockIdx.x; j < end; j += gridDim.x) {
            int64_t row = dp.rows[j];
            typename App::Acc a = gpu_row_strided<App>(c, row, c.row_ptr[row], c.row_ptr[row + 1],
                                                       threadIdx.x, blockDim.x);
            a = gpu_block_reduce<App>(a);
            if (threadIdx.x == 0) gpu_row_post<App>(c, row, a);
        }
    } else {
        const int64_t me = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
        const int64_t step = (int64_t)gridDim.x * blockDim.x;
        for (int64_t j = first; j < end; j++) {
            int64_t row = dp.rows[j];
            typename App::Acc a =
                gpu_row_strided<App>(c, row, c.row_ptr[row], c.row_ptr[row + 1], me, step);
            if constexpr (App::has_post) {
                a = gpu_block_reduce<App>(a);
                if (threadIdx.x == 0) {
                    App::atomic_combine(&dp.acc[j], a);
                    __threadfence();
                    if (atomicAdd(&dp.done[j], 1u) == gridDim.x - 1) {
                        __threadfence();
                        App::post(c, row, App::from_bits(atomicAdd(&dp.acc[j], 0ull)));
                    }
                }
            }
        }
    }
}

/* Buffers one item in pool slot j (partials cleared for the multi-block form). */
__device__ __forceinline__ void gpu_dp_put(const gpu_dp &dp, unsigned long long j, int64_t row) {
    dp.rows[j] = row;
    dp.acc[j] = 0ull;
    dp.done[j] = 0u;
}

/* Counts `n` heavy items buffered up to pool slot `end` (the round's high-water mark
 * is the largest such end). */
__device__ __forceinline__ void gpu_dp_count(const gpu_dp &dp, unsigned long long n,
                                             unsigned long long end) {
    atomicAdd(&dp.counters[GPU_DP_HEAVY], n);
    atomicMax(&dp.counters[GPU_DP_HIGH], end);
}

/* Launches one child of `form` over [first, first + count) (pool slots, or chunk
 * records); `budget` is the most blocks it may have. Called by one thread. */
template <class App>
__device__ void gpu_dp_launch(const gpu_graph_ctx &c, const gpu_dp &dp, unsigned long long first,
                              unsigned long long count, int64_t budget, int form) {
    const int64_t t = dp.child_threads;
    int64_t blocks = form == CANOPY_CHILD_THREAD  ? ((int64_t)count + t - 1) / t
                     : form == CANOPY_CHILD_BLOCK ? (int64_t)count
                     : form == CANOPY_CHILD_CHUNK ? ((int64_t)count + t / 32 - 1) / (t / 32)
                                                  : budget;
    if (blocks > budget) blocks = budget;
    if (blocks < 1) blocks = 1;
    gpu_dp_child<App><<<(unsigned)blocks, (unsigned)t, 0, cudaStreamFireAndForget>>>(
        c, dp, (int64_t)first, (int64_t)count, form);
    if (cudaGetLastError() == cudaSuccess) {
        atomicAdd(&dp.counters[GPU_DP_LAUNCHES], 1ull);
        return;
    }
    atomicAdd(&dp.counters[GPU_DP_FALLBACKS], 1ull);
    for (unsigned long long j = first; j < first + count; j++) {
        if (form == CANOPY_CHILD_CHUNK)
            gpu_chunk_run<App>(c, dp.ch, (int64_t)j, 0, 1);
        else
            gpu_row_post<App>(c, dp.rows[j], gpu_row_serial<App>(c, dp.rows[j]));
    }
}

template <int LEVEL, class App>
__device__ void gpu_dp_site(const gpu_graph_ctx &c, const gpu_dp &dp, int64_t row, bool heavy) {
    const int64_t len = heavy ? c.row_ptr[row + 1] - c.row_ptr[row] : 0;
    if constexpr (LEVEL == GPU_DP_BASIC) {
        /* The baseline: light rows thread-mapped, one child per heavy item, a thread per
         * entry (1-1 mapping). */
        if (row >= 0 && !heavy) gpu_row_post<App>(c, row, gpu_row_serial<App>(c, row));
        if (heavy) {
            unsigned long long j = atomicAdd(dp.cursor, 1ull);
            gpu_dp_put(dp, j, row);
            gpu_dp_count(dp, 1, j + 1);
            gpu_dp_launch<App>(c, dp, j, 1, (len + dp.child_threads - 1) / dp.child_threads,
                               CANOPY_CHILD_GRID);
        }
        return;
    }
    gpu_light_rows<App>(c, row, row >= 0 && !heavy);
    /* auto is the chunk form */
    const bool chunked = dp.form == CANOPY_CHILD_AUTO || dp.form == CANOPY_CHILD_CHUNK;
    const int form = chunked ? CANOPY_CHILD_CHUNK : dp.form;
    const unsigned long long parts = chunked && heavy ? (unsigned long long)gpu_chunks_of(len) : 0;
    const int lane = threadIdx.x & 31;
    if constexpr (LEVEL == GPU_DP_WARP) {
        const unsigned mask = __ballot_sync(GPU_FULL_MASK, heavy);
        if (!mask) return;
        const int leader = __ffs(mask) - 1;
        const unsigned n = __popc(mask);
        unsigned long long base = 0;
        if (lane == leader) {
            base = atomicAdd(dp.cursor, (unsigned long long)n);
            gpu_dp_count(dp, n, base + n);
        }
        base = __shfl_sync(GPU_FULL_MASK, base, leader);
        const unsigned long long slot = base + __popc(mask & ((1u << lane) - 1u));
        unsigned long long first = base, count = n;
        if (chunked) {
            const unsigned long long mine = gpu_warp_reserve(dp.ch.count, parts);
            if (heavy) gpu_chunks_put(c, dp.ch, mine, (int64_t)slot, row, (int64_t)parts);
            first = __shfl_sync(GPU_FULL_MASK, mine, 0);
            count = __shfl_sync(GPU_FULL_MASK, mine + parts, 31) - first;
        } else if (heavy) {
            gpu_dp_put(dp, slot, row);
        }
        __threadfence();
        __syncwarp();
        if (lane == leader) gpu_dp_launch<App>(c, dp, first, count, dp.child_blocks, form);
    } else if constexpr (LEVEL == GPU_DP_BLOCK) {
        __shared__ unsigned long long s_count, s_base, s_parts, s_first;
        if (threadIdx.x == 0) s_count = s_parts = 0;
        __syncthreads();
        unsigned long long mine = 0, my_part = 0;
        if (heavy) {
            mine = atomicAdd(&s_count, 1ull);
            if (chunked) my_part = atomicAdd(&s_parts, parts);
        }
        __syncthreads();
        if (threadIdx.x == 0 && s_count) {
            s_base = atomicAdd(dp.cursor, s_count);
            gpu_dp_count(dp, s_count, s_base + s_count);
            if (chunked) s_first = atomicAdd(dp.ch.count, s_parts);
        }
        __syncthreads();
        if (heavy && chunked)
            gpu_chunks_put(c, dp.ch, s_first + my_part, (int64_t)(s_base + mine), row,
                           (int64_t)parts);
        else if (heavy)
            gpu_dp_put(dp, s_base + mine, row);
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0 && s_count)
            gpu_dp_launch<App>(c, dp, chunked ? s_first : s_base, chunked ? s_parts : s_count,
                               dp.child_blocks, form);
    } else {
        __shared__ bool s_last;
        if (chunked) {
            const unsigned mask = __ballot_sync(GPU_FULL_MASK, heavy);
            unsigned long long base = 0;
            if (lane == 0 && mask) base = atomicAdd(dp.cursor, (unsigned long long)__popc(mask));
            base = __shfl_sync(GPU_FULL_MASK, base, 0);
            const unsigned long long mine = gpu_warp_reserve(dp.ch.count, parts);
            if (heavy)
                gpu_chunks_put(c, dp.ch, mine, (int64_t)(base + __popc(mask & ((1u << lane) - 1u))),
                               row, (int64_t)parts);
        } else if (heavy) {
            gpu_dp_put(dp, atomicAdd(dp.cursor, 1ull), row);
        }
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) s_last = atomicAdd(dp.blocks_done, 1u) == gridDim.x - 1;
        __syncthreads();
        if (s_last && threadIdx.x == 0) {
            /* Every other block fenced its buffering before counting itself in. */
            __threadfence();
            const unsigned long long count = atomicAdd(dp.cursor, 0ull);
            const unsigned long long records = chunked ? atomicAdd(dp.ch.count, 0ull) : count;
            *dp.blocks_done = 0u; /* ready for the next round's parent */
            if (count) {
                gpu_dp_count(dp, count, count);
                gpu_dp_launch<App>(c, dp, 0, records, dp.child_blocks, form);
            }
        }
    }
}

template <int LEVEL, class App>
__global__ void gpu_dp_parent(gpu_graph_ctx c, gpu_items it, gpu_dp dp) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t row = i < it.n ? gpu_item_row(it, i) : -1;
    const bool heavy = row >= 0 && c.row_ptr[row + 1] - c.row_ptr[row] > dp.threshold;
    CANOPY_DP_CONSOLIDATE(LEVEL, App, c, dp, row, heavy);
}

} /* namespace */

/* Host: sizes the consolidated children by the KC_X rule (unless overridden) and
 * launches the parent over the items. */
template <int LEVEL, class App> static cudaError_t gpu_dp_run(const gpu_launch *L) {
    gpu_dp dp = L->dp;
    if (dp.child_blocks <= 0) {
        int per_sm = 0;
        cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gpu_dp_child<App>,
                                                                      dp.child_threads, 0);
        if (e != cudaSuccess) return e;
        static const int kc_default[] = {1, 32, 16, 1};
        int x = dp.kc > 0 ? dp.kc : kc_default[LEVEL];
        dp.child_blocks = per_sm * L->sms / x;
        if (dp.child_blocks < 1) dp.child_blocks = 1;
    }
    const int threads = 256;
    unsigned blocks = (unsigned)((L->items.n + threads - 1) / threads);
    if (blocks) gpu_dp_parent<LEVEL, App><<<blocks, threads, 0, L->stream>>>(L->ctx, L->items, dp);
    return cudaGetLastError();
}

#endif
