/* SPDX-License-Identifier: MIT */
/* Flat GPU kernel, warp-mapped: a warp per outer item, lanes stride over the inner
 * loop and combine with shuffles. Good for rows of tens to thousands of entries;
 * short rows leave lanes idle. */
#include "graph/gpu_graph_apps.cuh"

template <class App> __global__ void nodp_warp_kernel(gpu_graph_ctx c, gpu_items it) {
    const int lane = threadIdx.x & 31;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x >> 5);
    for (int64_t i = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) >> 5; i < it.n; i += warps) {
        int64_t row = gpu_item_row(it, i);
        typename App::Acc a =
            gpu_row_strided<App>(c, row, c.row_ptr[row], c.row_ptr[row + 1], lane, 32);
        a = gpu_warp_reduce<App>(a);
        if (lane == 0) gpu_row_post<App>(c, row, a);
    }
}

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    const int threads = 256;
    int64_t want = (L->items.n + threads / 32 - 1) / (threads / 32);
    int64_t cap = (int64_t)L->sms * 64;
    unsigned blocks = (unsigned)(want < cap ? want : cap);
    if (blocks) nodp_warp_kernel<App><<<blocks, threads, 0, L->stream>>>(L->ctx, L->items);
    return cudaGetLastError();
}

cudaError_t gpu_graph_nodp_warp(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
