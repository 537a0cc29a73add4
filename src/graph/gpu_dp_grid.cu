/* SPDX-License-Identifier: MIT */
/* Grid-level consolidation: all heavy items of the outer loop go to one buffer;
 * the last parent block to finish buffering (a counter, no spin wait) launches one
 * child for the whole grid's heavy work, sized KC_1.
 * The mechanics are in gpu_consolidate.cuh; this file picks the level. */
#include "graph/gpu_consolidate.cuh"

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    return gpu_dp_run<GPU_DP_GRID, App>(L);
}

cudaError_t gpu_graph_dp_grid(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
