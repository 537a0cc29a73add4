/* SPDX-License-Identifier: MIT */
/* Block-level consolidation: the heavy items of a block go to one pool segment
 * and thread 0 launches one child for them after __syncthreads, sized KC_16.
 * The mechanics are in gpu_consolidate.cuh; this file picks the level. */
#include "graph/gpu_consolidate.cuh"

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    return gpu_dp_run<GPU_DP_BLOCK, App>(L);
}

cudaError_t gpu_graph_dp_block(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
