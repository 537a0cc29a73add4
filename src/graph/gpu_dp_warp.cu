/* SPDX-License-Identifier: MIT */
/* Warp-level consolidation: the heavy items of a warp go to one pool segment (one
 * atomic per warp) and the warp's leader launches one child for them, sized KC_32.
 * No barrier beyond the warp's own vote.
 * The mechanics are in gpu_consolidate.cuh; this file picks the level. */
#include "graph/gpu_consolidate.cuh"

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    return gpu_dp_run<GPU_DP_WARP, App>(L);
}

cudaError_t gpu_graph_dp_warp(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
