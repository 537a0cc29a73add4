/* SPDX-License-Identifier: MIT */
/* GPU hier, collaborative (Wu Fig. 5.8): a warp walks one tree for one row. Lane j
 * evaluates slot j of the current subtree (<= 31 slots) and holds connection entry j
 * (<= 32), all in one step; the walk through the subtree is then D shuffles, with no
 * memory access, and only the next subtree is loaded. Mappings as in Fig. 5.9
 * (bottom): a warp per row over all trees, or per (row, chunk of trees) + atomics. */
#include "forest/gpu_common.cuh"

#define CF_FULL 0xffffffffu

template <int KR>
__global__ void __launch_bounds__(CF_GPU_BLOCK) cf_collab_kernel(cf_gpu_model M, cf_gpu_launch P) {
    const int lane = threadIdx.x & 31;
    const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (r >= P.n) return; /* whole warps: the block size is a multiple of 32 */
    int32_t t0 = 0, t1 = M.n_trees;
    if (P.atomic) {
        t0 = (int32_t)blockIdx.y * P.tree_chunk;
        t1 = min(M.n_trees, t0 + P.tree_chunk);
    }
    const int32_t S = (1 << M.D) - 1, C = 1 << M.D, bottom = (1 << (M.D - 1)) - 1;
    const float *x = P.X + r * P.d;
    double *row = P.acc + r * M.K;
    cf_sum<KR> s;
    for (int32_t t = t0; t < t1; t++) {
        int64_t st = __ldg(M.root + t);
        int32_t kj;
        for (;;) {
            int32_t key = -1, conn = -1;
            int right = 0;
            if (lane < S) {
                key = __ldg(M.hkey + st * S + lane);
                if (key >= 0)
                    right = cf_dev_go_right(__ldg(x + (key & CF_KEY_FEATURE)),
                                            __ldg(M.hthr + st * S + lane), key);
            }
            if (lane < C) conn = __ldg(M.hconn + st * C + lane);
            int32_t j = 0;
            for (;;) {
                kj = __shfl_sync(CF_FULL, key, j);
                if (kj < 0 || j >= bottom) break;
                j = 2 * j + 1 + __shfl_sync(CF_FULL, right, j);
            }
            if (kj < 0) break;
            int rj = __shfl_sync(CF_FULL, right, j);
            st = __shfl_sync(CF_FULL, conn, 2 * (j - bottom) + rj);
        }
        if (lane == 0) s.leaf(M, ~kj, row, P.atomic);
    }
    if (lane == 0) s.flush(row, P.atomic);
}

void cf_gpu_run_collab(const cf_gpu_model &M, const cf_gpu_launch &P) {
    const int warps = CF_GPU_BLOCK / 32;
    unsigned rows = (unsigned)((P.n + warps - 1) / warps);
    unsigned chunks = P.atomic ? (unsigned)((M.n_trees + P.tree_chunk - 1) / P.tree_chunk) : 1;
    dim3 g(rows, chunks);
    if (M.K == 1)
        cf_collab_kernel<1><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
    else if (M.K == 2)
        cf_collab_kernel<2><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
    else
        cf_collab_kernel<0><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
}
