/* SPDX-License-Identifier: MIT */
/* Flat GPU strategy with long rows split (the GPU twin of omp-split, and cons-grid
 * without dynamic parallelism). Light rows (at most dp_threshold entries) run inline,
 * those of at most GPU_SERIAL_MAX entries on their own thread and longer ones by their
 * warp; every heavy row is cut into chunks of GPU_CHUNK entries, run a warp each over
 * the whole GPU. Work per warp is then bounded whatever the skew: a hub's row no
 * longer decides the round's time as it does for nodp-warp and nodp-block.
 *
 * A worklist round (items given) buffers its chunks as it goes and runs them in a
 * second kernel. A loop over all rows (SpMV, PageRank, the colouring's counts) is the
 * same every time on a graph, so its chunk records are planned once per graph
 * (gpu_graph_nodp_split_plan, in row order) and every such round is one kernel whose
 * first blocks run the light rows while the rest run the planned chunks: no
 * reservation atomics, and no wait between light rows and chunks. */
#include "graph/gpu_graph_apps.cuh"

#include <cub/device/device_scan.cuh>

/* SPLIT_MIN_BLOCKS asks the compiler for 32 registers, so that 8 blocks (64 warps,
 * the most an SM holds) fit: measured on the H100, 4-10 % faster on SpMV than the 40
 * registers it takes unbounded. */
enum { SPLIT_THREADS = 256, SPLIT_WARPS = SPLIT_THREADS / 32, SPLIT_MIN_BLOCKS = 8 };

__device__ __forceinline__ bool split_heavy(const gpu_graph_ctx &c, int64_t row, int64_t threshold,
                                            int64_t *len) {
    *len = row >= 0 ? c.row_ptr[row + 1] - c.row_ptr[row] : 0;
    return *len > threshold;
}

template <class App> __global__ void split_rows_kernel(gpu_graph_ctx c, gpu_items it, gpu_dp dp) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t row = i < it.n ? gpu_item_row(it, i) : -1;
    int64_t len;
    const bool heavy = split_heavy(c, row, dp.threshold, &len);
    const unsigned long long parts = heavy ? (unsigned long long)gpu_chunks_of(len) : 0;
    const unsigned long long first = gpu_warp_reserve(dp.ch.count, parts);
    if (heavy) gpu_chunks_put(c, dp.ch, first, i, row, (int64_t)parts);
    const unsigned cut = __ballot_sync(GPU_FULL_MASK, heavy);
    if ((threadIdx.x & 31) == 0 && cut)
        atomicAdd(&dp.counters[GPU_DP_HEAVY], (unsigned long long)__popc(cut));
    gpu_light_rows<App>(c, row, row >= 0 && !heavy);
}

template <class App> __global__ void split_chunks_kernel(gpu_graph_ctx c, gpu_dp dp) {
    gpu_chunks_range<App>(c, dp.ch, 0, (int64_t)*dp.ch.count);
}

/* One round over all n rows with a plan: blocks [0, row_blocks) run the light rows,
 * each later warp one planned chunk. */
template <class App>
__global__ void __launch_bounds__(SPLIT_THREADS, SPLIT_MIN_BLOCKS)
    split_planned_kernel(gpu_graph_ctx c, int64_t n, int64_t threshold, gpu_chunks plan,
                         int64_t plan_n, unsigned row_blocks) {
    if (blockIdx.x < row_blocks) {
        const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
        const int64_t row = i < n ? i : -1;
        int64_t len;
        const bool heavy = split_heavy(c, row, threshold, &len);
        gpu_light_rows<App>(c, row, row >= 0 && !heavy);
        return;
    }
    const int64_t q = (int64_t)(blockIdx.x - row_blocks) * SPLIT_WARPS + (threadIdx.x >> 5);
    if (q < plan_n) gpu_chunk_run<App>(c, plan, q, threadIdx.x & 31, 32);
}

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    const int64_t n = L->items.n;
    if (!n) return cudaSuccess;
    const unsigned row_blocks = (unsigned)((n + SPLIT_THREADS - 1) / SPLIT_THREADS);
    if (!L->items.items && L->plan_n >= 0) {
        gpu_chunks plan = L->dp.ch;
        plan.rec = L->plan;
        const unsigned chunk_blocks = (unsigned)((L->plan_n + SPLIT_WARPS - 1) / SPLIT_WARPS);
        split_planned_kernel<App><<<row_blocks + chunk_blocks, SPLIT_THREADS, 0, L->stream>>>(
            L->ctx, n, L->dp.threshold, plan, L->plan_n, row_blocks);
        return cudaGetLastError();
    }
    split_rows_kernel<App><<<row_blocks, SPLIT_THREADS, 0, L->stream>>>(L->ctx, L->items, L->dp);
    /* As many chunk warps as fit on the GPU at once: the chunk count is known only on
     * the device, and the warps stride over it. */
    int per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, split_chunks_kernel<App>,
                                                                  SPLIT_THREADS, 0);
    if (e != cudaSuccess) return e;
    split_chunks_kernel<App>
        <<<(unsigned)(per_sm > 0 ? per_sm * L->sms : L->sms), SPLIT_THREADS, 0, L->stream>>>(L->ctx,
                                                                                             L->dp);
    return cudaGetLastError();
}

cudaError_t gpu_graph_nodp_split(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}

/* ---------------------------------------------------------------- the plan -- */

/* parts[r]: the chunks of row r (0 for a light row); *heavy counts the heavy rows. */
__global__ void plan_parts_kernel(gpu_graph_ctx c, int64_t n, int64_t threshold, int64_t *parts,
                                  unsigned long long *heavy) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t len;
    const bool h = split_heavy(c, i < n ? i : -1, threshold, &len);
    if (i < n) parts[i] = h ? gpu_chunks_of(len) : 0;
    const unsigned cut = __ballot_sync(GPU_FULL_MASK, h);
    if ((threadIdx.x & 31) == 0 && cut) atomicAdd(heavy, (unsigned long long)__popc(cut));
}

/* ends[r]: the inclusive prefix sum of parts; row r's records end there. The partial
 * of a row of several chunks is indexed by the row itself. */
__global__ void plan_fill_kernel(gpu_graph_ctx c, int64_t n, int64_t threshold, const int64_t *ends,
                                 gpu_chunks plan) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int64_t len;
    if (i < n && split_heavy(c, i, threshold, &len)) {
        const int64_t parts = gpu_chunks_of(len);
        gpu_chunks_put(c, plan, (unsigned long long)(ends[i] - parts), i, i, parts);
    }
}

cudaError_t gpu_graph_nodp_split_plan(const gpu_launch *L, int64_t n, gpu_chunk *rec,
                                      int64_t *count, int64_t *heavy) {
    *count = *heavy = 0;
    if (!n) return cudaSuccess;
    int64_t *ends = NULL;
    unsigned long long *d_heavy = NULL;
    void *tmp = NULL;
    size_t tmp_bytes = 0;
    unsigned long long h = 0;
    const unsigned blocks = (unsigned)((n + SPLIT_THREADS - 1) / SPLIT_THREADS);
    gpu_chunks plan = L->dp.ch;
    plan.rec = rec;
    cudaError_t e = cudaMalloc(&ends, sizeof(int64_t) * (size_t)n);
    if (e == cudaSuccess) e = cudaMalloc(&d_heavy, sizeof h);
    if (e == cudaSuccess) e = cudaMemset(d_heavy, 0, sizeof h);
    if (e == cudaSuccess) e = cub::DeviceScan::InclusiveSum(NULL, tmp_bytes, ends, n);
    if (e == cudaSuccess) e = cudaMalloc(&tmp, tmp_bytes ? tmp_bytes : 1);
    if (e == cudaSuccess) {
        plan_parts_kernel<<<blocks, SPLIT_THREADS>>>(L->ctx, n, L->dp.threshold, ends, d_heavy);
        e = cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, ends, n);
    }
    if (e == cudaSuccess) {
        plan_fill_kernel<<<blocks, SPLIT_THREADS>>>(L->ctx, n, L->dp.threshold, ends, plan);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(count, ends + n - 1, sizeof *count, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) e = cudaMemcpy(&h, d_heavy, sizeof h, cudaMemcpyDeviceToHost);
    *heavy = (int64_t)h;
    cudaFree(ends);
    cudaFree(d_heavy);
    cudaFree(tmp);
    return e;
}
