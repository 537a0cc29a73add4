/* SPDX-License-Identifier: MIT */
/* Consolidated recursion on the GPU (Wu ch. 4, CREC): instead of a launch per node,
 * one launch per level holds all of that level's recursive calls. The breadth-first
 * level segments (the consolidation buffer, built going down by gpu_run.cu) are folded
 * from the deepest level up; each level's kernel boundary is the barrier that the
 * post-work (folding finished children) needs. A level whose nodes have many children
 * on average is block-mapped (a block reduces a node's children), otherwise
 * thread-mapped (a thread folds its node's children in order, exactly as rec). */
#include "ptsd/gpu_ptsd.cuh"

/* Mean fan-out from which a level is folded by blocks rather than threads. */
enum { BLOCK_MAPPED_FANOUT = 16, BLOCK_THREADS = 64 };

template <class A>
__global__ void crec_thread_kernel(gpu_ptsd_ctx c, const int64_t *seg, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) gpu_ptsd_fold_serial<A>(c, seg[i]);
}

template <class A>
__global__ void crec_block_kernel(gpu_ptsd_ctx c, const int64_t *seg, int64_t n) {
    for (int64_t i = blockIdx.x; i < n; i += gridDim.x) gpu_ptsd_fold_block<A>(c, seg[i]);
}

template <class A> static cudaError_t run_agg(const gpu_ptsd_run *R) {
    for (int32_t l = R->levels - 1; l >= 0; l--) {
        int64_t lo = R->level_start[l], n = R->level_start[l + 1] - lo;
        int64_t below = l + 1 < R->levels ? R->level_start[l + 2] - R->level_start[l + 1] : 0;
        if (below >= n * BLOCK_MAPPED_FANOUT) {
            int64_t cap = (int64_t)R->sms * 32;
            crec_block_kernel<A>
                <<<(unsigned)(n < cap ? n : cap), BLOCK_THREADS>>>(R->ctx, R->order + lo, n);
        } else {
            crec_thread_kernel<A><<<(unsigned)((n + 255) / 256), 256>>>(R->ctx, R->order + lo, n);
        }
        (*R->launches)++;
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

cudaError_t gpu_ptsd_crec(const gpu_ptsd_run *R) {
    GPU_PTSD_DISPATCH();
}
