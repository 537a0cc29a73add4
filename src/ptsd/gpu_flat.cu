/* SPDX-License-Identifier: MIT */
/* Wu's FLAT on the GPU: a thread per node sets the node's starting value, then every
 * contributing node walks its parent chain to the root and updates each ancestor
 * atomically. No recursion and no launches beyond two kernels, at O(n x depth)
 * atomics; float sums land in arbitrary order (mass agrees with rec to rounding). */
#include "ptsd/gpu_ptsd.cuh"

template <class A> __global__ void flat_start_kernel(gpu_ptsd_ctx c) {
    int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (v < c.n) A::store(c, v, A::start(c, v));
}

template <class A> __global__ void flat_walk_kernel(gpu_ptsd_ctx c) {
    int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (v >= c.n || !A::walks(c, v)) return;
    int64_t dist = 1;
    for (int64_t p = c.parent[v]; p >= 0; p = c.parent[p], dist++) A::up(c, v, p, dist);
}

template <class A> static cudaError_t run_agg(const gpu_ptsd_run *R) {
    unsigned blocks = (unsigned)((R->ctx.n + 255) / 256);
    flat_start_kernel<A><<<blocks, 256>>>(R->ctx);
    flat_walk_kernel<A><<<blocks, 256>>>(R->ctx);
    *R->launches += 2;
    return cudaGetLastError();
}

cudaError_t gpu_ptsd_flat(const gpu_ptsd_run *R) {
    GPU_PTSD_DISPATCH();
}
