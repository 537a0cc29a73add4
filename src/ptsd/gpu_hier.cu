/* SPDX-License-Identifier: MIT */
/* Wu's HIER on the GPU: two levels per launch. A block takes a node; its threads take
 * the node's children, each folding that child's (finished) children — the node's
 * grandchildren — in order, and after a barrier one thread folds the node's
 * children in order. Half the launches of crec, and every fold is serial in child
 * order, so results equal rec's exactly. */
#include "ptsd/gpu_ptsd.cuh"

enum { HIER_THREADS = 64 };

/* Nodes seg[0 .. n) and their children; the grandchildren are finished. */
template <class A> __global__ void hier_pair_kernel(gpu_ptsd_ctx c, const int64_t *seg, int64_t n) {
    for (int64_t i = blockIdx.x; i < n; i += gridDim.x) {
        int64_t v = seg[i];
        for (int64_t k = c.child_ptr[v] + threadIdx.x; k < c.child_ptr[v + 1]; k += blockDim.x)
            gpu_ptsd_fold_serial<A>(c, c.child[k]);
        __syncthreads();
        if (threadIdx.x == 0) gpu_ptsd_fold_serial<A>(c, v);
        __syncthreads();
    }
}

template <class A> __global__ void hier_root_kernel(gpu_ptsd_ctx c) {
    gpu_ptsd_fold_serial<A>(c, c.root);
}

template <class A> static cudaError_t run_agg(const gpu_ptsd_run *R) {
    const int64_t cap = (int64_t)R->sms * 32;
    /* Levels l and l + 1 per launch, from the bottom (the deepest level, leaves only,
     * is folded with its parents); with an odd number of levels the root is left
     * over and folded alone. */
    int32_t l = R->levels - 2;
    for (; l >= 0; l -= 2) {
        int64_t lo = R->level_start[l], n = R->level_start[l + 1] - lo;
        hier_pair_kernel<A>
            <<<(unsigned)(n < cap ? n : cap), HIER_THREADS>>>(R->ctx, R->order + lo, n);
        (*R->launches)++;
    }
    if (l == -1) {
        hier_root_kernel<A><<<1, 1>>>(R->ctx);
        (*R->launches)++;
    }
    return cudaGetLastError();
}

cudaError_t gpu_ptsd_hier(const gpu_ptsd_run *R) {
    GPU_PTSD_DISPATCH();
}
