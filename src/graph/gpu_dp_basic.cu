/* SPDX-License-Identifier: MIT */
/* Basic dynamic parallelism (the paper's baseline): a thread per outer item; a heavy
 * item (inner loop longer than the threshold) launches its own child grid with a
 * thread per entry, so a skewed graph makes thousands of tiny launches.
 * The mechanics are in gpu_consolidate.cuh; this file picks the level. */
#include "graph/gpu_consolidate.cuh"

template <class App> static cudaError_t run_app(const gpu_launch *L) {
    return gpu_dp_run<GPU_DP_BASIC, App>(L);
}

cudaError_t gpu_graph_dp_basic(const gpu_launch *L) {
    GPU_GRAPH_DISPATCH();
}
