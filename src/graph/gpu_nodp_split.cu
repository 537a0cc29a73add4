/* Flat GPU strategy with long rows split (the GPU twin of omp-split, and cons-grid
 * without dynamic parallelism): two kernels per round, both launched from the host
 * with no round trip between them. The first runs light rows (at most dp_threshold
 * entries) inline, those of at most GPU_SERIAL_MAX entries on their own thread and
 * longer ones by their warp, and cuts every heavy row into chunks of GPU_CHUNK
 * entries (records reserved with one atomic per warp); the second runs the chunks,
 * a warp each, over the whole GPU. Work per warp is then bounded whatever the skew:
 * a hub's row no longer decides the round's time as it does for nodp-warp and
 * nodp-block. */
#include "graph/gpu_graph_apps.cuh"

template <class App> __global__ void split_rows_kernel(gpu_graph_ctx c, gpu_items it, gpu_dp dp) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t row = i < it.n ? gpu_item_row(it, i) : -1;
    const int64_t len = row >= 0 ? c.row_ptr[row + 1] - c.row_ptr[row] : 0;
    const bool heavy = len > dp.threshold;
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

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    const int threads = 256;
    unsigned blocks = (unsigned)((L->items.n + threads - 1) / threads);
    if (!blocks) return cudaSuccess;
    split_rows_kernel<App><<<blocks, threads, 0, L->stream>>>(L->ctx, L->items, L->dp);
    /* As many chunk warps as fit on the GPU at once: the chunk count is known only on
     * the device, and the warps stride over it. */
    int per_sm = 0;
    cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, split_chunks_kernel<App>,
                                                                  threads, 0);
    if (e != cudaSuccess) return e;
    split_chunks_kernel<App>
        <<<(unsigned)(per_sm > 0 ? per_sm * L->sms : L->sms), threads, 0, L->stream>>>(L->ctx,
                                                                                       L->dp);
    return cudaGetLastError();
}

cudaError_t gpu_graph_nodp_split(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
