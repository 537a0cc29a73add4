/* SPDX-License-Identifier: MIT */
/* Pieces every forest GPU engine shares: the device copy of a layout, the split
 * decision (the same float comparison as cf_go_right), leaf accumulation in double
 * for both query mappings, and the per-thread mapping kernel that iter engines
 * instantiate with their walker. */
#ifndef CANOPY_FOREST_GPU_COMMON_CUH
#define CANOPY_FOREST_GPU_COMMON_CUH

#include "core/gpu.cuh"
#include "forest/gpu.h"

#include <cuda_runtime.h>

enum { CF_GPU_BLOCK = 128, CF_GPU_TREE_CHUNK = 8 };

/* Device pointers of one layout (fields of other layouts are NULL). */
struct cf_gpu_model {
    int32_t n_trees, K, D; /* D: hier subtree depth */
    const int32_t *root;
    const int32_t *leaf_out;
    const int64_t *leaf_off;
    const double *values;
    const int32_t *csr_feature, *csr_cidx, *csr_children;
    const float *csr_value;
    const float *hthr;
    const int32_t *hkey, *hconn;
    const cf_lnode *nodes;
};

/* One launch: rows are dense (n x d) on the device. */
struct cf_gpu_launch {
    const float *X;
    int64_t n;
    int32_t d;
    double *acc;        /* n x K, zeroed */
    int32_t tree_chunk; /* atomic mapping: trees per thread (or warp) */
    int atomic;
    const int32_t *bag_tree; /* ren: 32 tree ids per bag, -1 = idle lane */
    int32_t n_bags;
    const void *enc_kernel; /* enc: the NVRTC-compiled kernel */
    cudaStream_t stream;
};

__device__ __forceinline__ int cf_dev_go_right(float x, float thr, int32_t key) {
    int miss = (x != x) | ((key & CF_KEY_ZERO) && x >= -CF_ZERO_EPS && x <= CF_ZERO_EPS);
    return miss ? !(key & CF_KEY_DL) : !(x <= thr);
}

__device__ __forceinline__ void cf_dev_add(double *p, double v, bool atomic) {
    if (atomic)
        atomicAdd(p, v);
    else
        *p += v;
}

/* A thread's (or lane's) running sums. KR = 1 or 2: the row's outputs live in
 * registers and reach memory once; KR = 0: any width, leaves go straight to the
 * row. Trees are added in increasing order, as the CPU walkers add them. */
template <int KR> struct cf_sum {
    double a[KR > 0 ? KR : 1];
    __device__ cf_sum() {
#pragma unroll
        for (int k = 0; k < (KR > 0 ? KR : 1); k++) a[k] = 0;
    }
    __device__ __forceinline__ void leaf(const cf_gpu_model &M, int32_t leaf, double *row,
                                         bool atomic) {
        int32_t o = M.leaf_out[leaf];
        const double *v = M.values + M.leaf_off[leaf];
        if constexpr (KR == 1) {
            a[0] += v[0];
        } else if constexpr (KR == 2) {
            if (o < 0) {
                a[0] += v[0];
                a[1] += v[1];
            } else if (o == 0) {
                a[0] += v[0];
            } else {
                a[1] += v[0];
            }
        } else if (o >= 0) {
            cf_dev_add(row + o, v[0], atomic);
        } else {
            for (int32_t k = 0; k < M.K; k++) cf_dev_add(row + k, v[k], atomic);
        }
    }
    __device__ __forceinline__ void flush(double *row, bool atomic) {
#pragma unroll
        for (int k = 0; k < KR; k++) cf_dev_add(row + k, a[k], atomic);
    }
};

/* A walk of one tree of a linked layout (iter and ren): siblings are adjacent, so the
 * next node is child + go_right. Returns the leaf index. */
__device__ __forceinline__ int32_t cf_dev_walk_linked(const cf_gpu_model &M, const float *x,
                                                      int32_t t) {
    int32_t n = __ldg(M.root + t), key;
    while ((key = __ldg(&M.nodes[n].key)) >= 0) {
        float thr = __ldg(&M.nodes[n].thr);
        n = __ldg(&M.nodes[n].child) + cf_dev_go_right(__ldg(x + (key & CF_KEY_FEATURE)), thr, key);
    }
    return ~key;
}

/* The thread mappings of Wu Fig. 5.9 (top): atomic-free = a thread per row over all
 * trees; atomic = blockIdx.y picks a chunk of trees, so the blocks resident at a time
 * share the same few trees in cache. W::walk returns the leaf index. */
template <class W, int KR>
__global__ void __launch_bounds__(CF_GPU_BLOCK) cf_thread_kernel(cf_gpu_model M, cf_gpu_launch P) {
    int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= P.n) return;
    int32_t t0 = 0, t1 = M.n_trees;
    if (P.atomic) {
        t0 = (int32_t)blockIdx.y * P.tree_chunk;
        t1 = min(M.n_trees, t0 + P.tree_chunk);
    }
    const float *x = P.X + r * P.d;
    double *row = P.acc + r * M.K;
    cf_sum<KR> s;
    for (int32_t t = t0; t < t1; t++) s.leaf(M, W::walk(M, x, t), row, P.atomic);
    s.flush(row, P.atomic);
}

/* Grid of the thread mappings: rows in x, tree chunks in y (atomic). */
static inline dim3 cf_thread_grid(const cf_gpu_model &M, const cf_gpu_launch &P) {
    unsigned rows = (unsigned)((P.n + CF_GPU_BLOCK - 1) / CF_GPU_BLOCK);
    unsigned chunks = P.atomic ? (unsigned)((M.n_trees + P.tree_chunk - 1) / P.tree_chunk) : 1;
    return dim3(rows, chunks);
}

template <class W> static void cf_thread_launch(const cf_gpu_model &M, const cf_gpu_launch &P) {
    dim3 g = cf_thread_grid(M, P);
    if (M.K == 1)
        cf_thread_kernel<W, 1><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
    else if (M.K == 2)
        cf_thread_kernel<W, 2><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
    else
        cf_thread_kernel<W, 0><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
}

/* The engines (one file each); each enqueues its kernel on P.stream. */
void cf_gpu_run_csr(const cf_gpu_model &M, const cf_gpu_launch &P);
void cf_gpu_run_hier(const cf_gpu_model &M, const cf_gpu_launch &P);
void cf_gpu_run_linked(const cf_gpu_model &M, const cf_gpu_launch &P);
void cf_gpu_run_collab(const cf_gpu_model &M, const cf_gpu_launch &P);
void cf_gpu_run_ren(const cf_gpu_model &M, const cf_gpu_launch &P);
canopy_status cf_gpu_run_enc(const cf_gpu_model &M, const cf_gpu_launch &P);
/* ren: trees sorted by mean path length over a sample of X, in bags of 32. */
canopy_status cf_gpu_ren_bags(const cf_layout *L, canopy_points X, int32_t **bag_tree,
                              int32_t *n_bags);
/* enc: the compiled kernel for L (cached in the forest's state), compile time and
 * cache outcome. */
struct cf_gpu_state;
canopy_status cf_gpu_enc_kernel(struct cf_gpu_state *S, const cf_layout *L, canopy_forest_mapping m,
                                const void **kernel, double *seconds, int32_t *cache);

/* The per-forest memory cache of compiled kernels (gpu_forest.cu). */
int cf_gpu_state_find_kernel(struct cf_gpu_state *S, uint64_t h, const void **kernel);
canopy_status cf_gpu_state_add_kernel(struct cf_gpu_state *S, uint64_t h, cudaLibrary_t lib,
                                      const void *kernel);

#endif
