/* SPDX-License-Identifier: MIT */
/* Ren's GPU mapping (Ren et al. §3.4): the trees, sorted by their mean path length
 * over a sample of the rows, are cut into bags of 32; a warp evaluates one row on a
 * bag, lane i walking tree i of the bag over a linked layout. Sorting replaces
 * stream compaction: lanes of a bag finish at about the same step. The lanes' sums
 * meet by a warp reduction; the atomic mapping gives a warp one bag of one row,
 * the atomic-free one all bags of one row. The 32 lanes read one row, so it stays
 * in L1 while the trees' top levels are shared by all warps. The bags are sampled
 * once per forest and layout (on the first call's rows) and kept on the device. */
#include "forest/gpu_common.cuh"

#include <stdlib.h>

#define CF_FULL 0xffffffffu

template <int KR>
__global__ void __launch_bounds__(CF_GPU_BLOCK) cf_ren_kernel(cf_gpu_model M, cf_gpu_launch P) {
    const int lane = threadIdx.x & 31;
    const int64_t r = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (r >= P.n) return;
    int32_t b0 = 0, b1 = P.n_bags;
    if (P.atomic) {
        b0 = (int32_t)blockIdx.y;
        b1 = b0 + 1;
    }
    const float *x = P.X + r * P.d;
    double *row = P.acc + r * M.K;
    cf_sum<KR> s;
    for (int32_t b = b0; b < b1; b++) {
        int32_t t = __ldg(P.bag_tree + 32 * b + lane);
        int32_t leaf = t >= 0 ? cf_dev_walk_linked(M, x, t) : -1;
        if constexpr (KR > 0) {
            if (leaf >= 0) s.leaf(M, leaf, row, P.atomic);
        } else {
            /* any width: per output, the bag's 32 leaves meet in a warp sum and one
             * lane adds it (32 lanes adding to one row would serialise on atomics) */
            int32_t o = leaf >= 0 ? __ldg(M.leaf_out + leaf) : 0;
            const double *v = leaf >= 0 ? M.values + __ldg(M.leaf_off + leaf) : NULL;
            for (int32_t k = 0; k < M.K; k++) {
                double c = leaf < 0 ? 0.0 : o < 0 ? v[k] : o == k ? v[0] : 0.0;
                for (int off = 16; off > 0; off >>= 1) c += __shfl_down_sync(CF_FULL, c, off);
                if (lane == 0) cf_dev_add(row + k, c, P.atomic);
            }
        }
    }
    if constexpr (KR > 0) {
#pragma unroll
        for (int k = 0; k < KR; k++)
            for (int off = 16; off > 0; off >>= 1) s.a[k] += __shfl_down_sync(CF_FULL, s.a[k], off);
        if (lane == 0) s.flush(row, P.atomic);
    }
}

void cf_gpu_run_ren(const cf_gpu_model &M, const cf_gpu_launch &P) {
    const int warps = CF_GPU_BLOCK / 32;
    dim3 g((unsigned)((P.n + warps - 1) / warps), P.atomic ? (unsigned)P.n_bags : 1);
    if (M.K == 1)
        cf_ren_kernel<1><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
    else if (M.K == 2)
        cf_ren_kernel<2><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
    else
        cf_ren_kernel<0><<<g, CF_GPU_BLOCK, 0, P.stream>>>(M, P);
}

typedef struct {
    double steps;
    int32_t tree;
} cf_tree_len;

static int by_length(const void *a, const void *b) {
    const cf_tree_len *x = (const cf_tree_len *)a, *y = (const cf_tree_len *)b;
    if (x->steps != y->steps) return x->steps < y->steps ? -1 : 1;
    return x->tree - y->tree;
}

canopy_status cf_gpu_ren_bags(const cf_layout *L, canopy_points X, int32_t **bag_tree,
                              int32_t *n_bags) {
    int32_t nt = L->n_trees, nb = (nt + 31) / 32;
    cf_tree_len *len = (cf_tree_len *)malloc((size_t)nt * sizeof *len);
    int32_t *bags = (int32_t *)malloc((size_t)nb * 32 * sizeof *bags);
    if (!len || !bags) {
        free(len);
        free(bags);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for ren's bags");
    }
    /* every 20th row (5 %, as the cache model samples), at most 4096 */
    int64_t step = 20, cnt = X.n / step + (X.n % step != 0);
    if (cnt > 4096) step = X.n / 4096, cnt = 4096;
    for (int32_t t = 0; t < nt; t++) {
        int64_t total = 0;
        for (int64_t i = 0; i < cnt; i++) {
            const float *x = X.data + i * step * X.stride;
            cf_lnode nd = L->nodes[L->root[t]];
            while (nd.key >= 0) {
                nd = L->nodes[nd.child + cf_go_right(x[nd.key & CF_KEY_FEATURE], nd.thr, nd.key)];
                total++;
            }
        }
        len[t].steps = cnt ? (double)total / cnt : 0;
        len[t].tree = t;
    }
    qsort(len, (size_t)nt, sizeof *len, by_length);
    for (int32_t i = 0; i < nb * 32; i++) bags[i] = i < nt ? len[i].tree : -1;
    free(len);
    *bag_tree = bags;
    *n_bags = nb;
    return CANOPY_OK;
}
