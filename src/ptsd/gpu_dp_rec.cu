/* SPDX-License-Identifier: MIT */
/* REC on the GPU, the dynamic-parallelism baseline (Wu ch. 4): a node's kernel has a
 * thread per child; a child with children of its own launches that child's kernel,
 * so there is one launch per internal node. CUDA 12+ has no device-side
 * cudaDeviceSynchronize to wait for the children before folding them, so the node's
 * post-work (folding its finished children in order) is a tail launch: it starts only
 * once the node's grid and all the work it launched are complete. Launch nesting
 * follows the tree's depth, and a failed launch (over the pending-launch limit) is
 * counted and reported by the host, never ignored; node kernels started after a
 * failure return at once. */
#include "ptsd/gpu_ptsd.cuh"

namespace {

template <class A> __global__ void rec_fold_kernel(gpu_ptsd_ctx c, int64_t v) {
    gpu_ptsd_fold_serial<A>(c, v);
}

__device__ __forceinline__ unsigned rec_threads(const gpu_ptsd_ctx &c, int64_t v) {
    int64_t f = c.child_ptr[v + 1] - c.child_ptr[v];
    return (unsigned)(f < 256 ? f : 256);
}

template <class A>
__global__ void rec_node_kernel(gpu_ptsd_ctx c, int64_t v, unsigned long long *counters) {
    /* Once a launch failed the result is lost (the host reports it): stop launching,
     * so that the failure comes back fast instead of after the whole tree. */
    if (*(volatile unsigned long long *)&counters[1]) return;
    for (int64_t k = c.child_ptr[v] + threadIdx.x; k < c.child_ptr[v + 1]; k += blockDim.x) {
        int64_t ch = c.child[k];
        if (gpu_ptsd_leaf(c, ch)) {
            A::store(c, ch, A::start(c, ch));
            continue;
        }
        rec_node_kernel<A><<<1, rec_threads(c, ch), 0, cudaStreamFireAndForget>>>(c, ch, counters);
        atomicAdd(&counters[cudaGetLastError() == cudaSuccess ? 0 : 1], 1ull);
    }
    if (threadIdx.x == 0) {
        rec_fold_kernel<A><<<1, 1, 0, cudaStreamTailLaunch>>>(c, v);
        atomicAdd(&counters[cudaGetLastError() == cudaSuccess ? 0 : 1], 1ull);
    }
}

template <class A> __global__ void rec_leaf_root_kernel(gpu_ptsd_ctx c) {
    gpu_ptsd_fold_serial<A>(c, c.root);
}

} /* namespace */

/* The host checked the depth (gpu_run.cu) and zeroed R->counters; it reads them
 * back: [0] device-side launches made, [1] launches that failed. */
template <class A> static cudaError_t run_agg(const gpu_ptsd_run *R) {
    if (R->depth == 1)
        rec_leaf_root_kernel<A><<<1, 1>>>(R->ctx);
    else
        rec_node_kernel<A><<<1, 256>>>(R->ctx, R->ctx.root, R->counters);
    (*R->launches)++;
    return cudaGetLastError();
}

cudaError_t gpu_ptsd_dp_rec(const gpu_ptsd_run *R) {
    GPU_PTSD_DISPATCH();
}
