/* SPDX-License-Identifier: MIT */
/* Flat GPU kernel, thread-mapped: one thread per outer item runs the item's whole
 * inner loop (the paper's no-DP baseline; a hub's row serialises on one thread). */
#include "graph/gpu_graph_apps.cuh"

template <class App> __global__ void nodp_thread_kernel(gpu_graph_ctx c, gpu_items it) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= it.n) return;
    int64_t row = gpu_item_row(it, i);
    gpu_row_post<App>(c, row, gpu_row_serial<App>(c, row));
}

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    const int threads = 256;
    unsigned blocks = (unsigned)((L->items.n + threads - 1) / threads);
    if (blocks) nodp_thread_kernel<App><<<blocks, threads, 0, L->stream>>>(L->ctx, L->items);
    return cudaGetLastError();
}

cudaError_t gpu_graph_nodp_thread(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
