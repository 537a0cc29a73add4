/* SPDX-License-Identifier: MIT */
/* Flat GPU kernel, block-mapped: a block per outer item, threads stride over the
 * inner loop and combine through shared memory. Suits long rows; on short rows
 * most of the block idles. */
#include "graph/gpu_graph_apps.cuh"

template <class App> __global__ void nodp_block_kernel(gpu_graph_ctx c, gpu_items it) {
    for (int64_t i = blockIdx.x; i < it.n; i += gridDim.x) {
        int64_t row = gpu_item_row(it, i);
        typename App::Acc a = gpu_row_strided<App>(c, row, c.row_ptr[row], c.row_ptr[row + 1],
                                                   threadIdx.x, blockDim.x);
        a = gpu_block_reduce<App>(a);
        if (threadIdx.x == 0) gpu_row_post<App>(c, row, a);
    }
}

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    const int threads = 128;
    int64_t cap = (int64_t)L->sms * 32;
    unsigned blocks = (unsigned)(L->items.n < cap ? L->items.n : cap);
    if (blocks) nodp_block_kernel<App><<<blocks, threads, 0, L->stream>>>(L->ctx, L->items);
    return cudaGetLastError();
}

cudaError_t gpu_graph_nodp_block(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
