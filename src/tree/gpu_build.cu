/* SPDX-License-Identifier: MIT */
/* kd tree built on the GPU, level by level.
 *
 * A kd tree with median splits has a topology fixed by n and the leaf size alone (a
 * node of m > leaf points has children of m/2 and m - m/2), so the host lays out the
 * node headers (order, ropes, levels) exactly as canopy_tree_build does, without
 * looking at a coordinate, straight into the build's pinned buffer (16 bytes a node;
 * the device writes the whole records). The device then fills in the geometry one
 * level at a time: bounding boxes of the level's nodes (warp reductions, one atomic
 * per warp and dimension), the widest dimension, and one stable radix sort of all
 * points by (node begin, coordinate on that dimension), which puts each node's lower
 * half in its first child. The split positions equal the host's; the order of points inside
 * a node, and hence the membership of children, can differ only among points whose
 * coordinates tie at a median (the host uses quickselect). */
#include "core/gpu.cuh"
#include "core/gpu_pool.cuh"
#include "tree/gpu_build.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <math.h>

#include <stdlib.h>
#include <string.h>

namespace {

enum { SLICE = 256, THREADS = 256, SUB = 256, SUB_THREADS = 256, SUB_MAX_D = 16 };

__device__ __forceinline__ uint32_t ord_of(float f) {
    uint32_t u = __float_as_uint(f);
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}
__device__ __forceinline__ float float_of(uint32_t u) {
    return __uint_as_float(u & 0x80000000u ? u ^ 0x80000000u : ~u);
}

__device__ __forceinline__ canopy_node *node_at(unsigned char *hot, int32_t stride, int32_t v) {
    return (canopy_node *)(hot + (int64_t)v * stride);
}

/* Compacts the input rows to stride d, records each point's original index and the
 * first non-finite row, and puts every point in the root. */
__global__ void k_init(const float *in, int64_t stride, int64_t n, int32_t d, float *pts,
                       int32_t *orig, int32_t *node_of, unsigned long long *bad) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int32_t j = 0; j < d; j++) {
        float x = in[i * stride + j];
        if (!isfinite(x)) atomicMin(bad, (unsigned long long)i);
        pts[i * d + j] = x;
    }
    orig[i] = (int32_t)i;
    node_of[i] = 0;
}

/* One warp per slice of SLICE points of one node of the level; spn slices per node
 * (all nodes of a level have sizes within one of each other). */
__global__ void k_bbox(const float *pts, int32_t d, const unsigned char *hot, int32_t stride,
                       const int32_t *nodes, int32_t cnt, int32_t spn, uint32_t *acc_lo,
                       uint32_t *acc_hi) {
    int64_t w = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (w >= (int64_t)cnt * spn) return; /* whole warps leave together */
    int32_t k = (int32_t)(w / spn);
    const canopy_node *h = (const canopy_node *)(hot + (int64_t)nodes[k] * stride);
    int64_t b = h->begin + (w % spn) * (int64_t)SLICE;
    int64_t e = b + SLICE < h->end ? b + SLICE : h->end;
    for (int32_t j = 0; j < d; j++) {
        uint32_t lo = 0xffffffffu, hi = 0;
        for (int64_t p = b + lane; p < e; p += 32) {
            uint32_t u = ord_of(pts[p * d + j]);
            lo = min(lo, u);
            hi = max(hi, u);
        }
        lo = __reduce_min_sync(0xffffffffu, lo);
        hi = __reduce_max_sync(0xffffffffu, hi);
        if (lane == 0 && b < e) {
            atomicMin(&acc_lo[(int64_t)k * d + j], lo);
            atomicMax(&acc_hi[(int64_t)k * d + j], hi);
        }
    }
}

/* Writes the level's boxes into the node records and picks each internal node's
 * split dimension as the host does (first widest). */
__global__ void k_finish(unsigned char *hot, int32_t stride, int32_t d, const int32_t *nodes,
                         int32_t cnt, const uint32_t *acc_lo, const uint32_t *acc_hi,
                         int32_t *ndim) {
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= cnt) return;
    int32_t v = nodes[k];
    canopy_node *h = node_at(hot, stride, v);
    float *lo = (float *)(h + 1), *hi = lo + d;
    int empty = h->begin == h->end;
    int32_t dim = 0;
    for (int32_t j = 0; j < d; j++) {
        lo[j] = empty ? 0.0f : float_of(acc_lo[(int64_t)k * d + j]);
        hi[j] = empty ? 0.0f : float_of(acc_hi[(int64_t)k * d + j]);
        if (j > 0 && hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
    }
    lo[2 * d] = h->child >= 0 ? (float)dim : -1.0f;
    ndim[v] = h->child >= 0 ? dim : -1;
}

/* Sort key of each position: its node's begin above (shifted right by `shift`, which
 * keeps the nodes apart while no node is smaller than 2^shift: fewer radix passes),
 * and for points of nodes split at this level, the order-preserving bits of the split
 * coordinate below. */
__global__ void k_keys(const float *pts, int32_t d, int64_t n, const unsigned char *hot,
                       int32_t stride, const int32_t *node_of, const int32_t *level, int32_t lvl,
                       int32_t shift, const int32_t *ndim, unsigned long long *keys,
                       int32_t *vals) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int32_t v = node_of[i];
    const canopy_node *h = (const canopy_node *)(hot + (int64_t)v * stride);
    unsigned long long key = (unsigned long long)(h->begin >> shift) << 32;
    if (level[v] == lvl && h->child >= 0) key |= ord_of(pts[i * d + ndim[v]]);
    keys[i] = key;
    vals[i] = (int32_t)i;
}

/* Applies the sort to the points and original indices, and moves each point of a
 * node split at this level to the child that now holds its position. */
__global__ void k_gather(const float *src, float *dst, const int32_t *orig_src, int32_t *orig_dst,
                         const int32_t *from, int32_t d, int64_t n, const unsigned char *hot,
                         int32_t stride, int32_t *node_of, const int32_t *level, int32_t lvl) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int64_t f = from[i];
    for (int32_t j = 0; j < d; j++) dst[i * d + j] = src[f * d + j];
    orig_dst[i] = orig_src[f];
    int32_t v = node_of[i];
    const canopy_node *h = (const canopy_node *)(hot + (int64_t)v * stride);
    if (level[v] == lvl && h->child >= 0) {
        const canopy_node *second = (const canopy_node *)(hot + (int64_t)(h->child + 1) * stride);
        node_of[i] = i >= second->begin ? h->child + 1 : h->child;
    }
}

/* Finishes whole subtrees of at most SUB points, one block each, in shared memory:
 * the levels below `v` (boxes as k_bbox/k_finish compute them, then a stable rank
 * sort of each split node's points on its dimension), so the deep levels, whose
 * nodes hold tens of points, cost no full-array sort each. */
__global__ void __launch_bounds__(SUB_THREADS)
    k_subtree(float *pts, int32_t *orig, int32_t d, unsigned char *hot, int32_t stride,
              const int32_t *nodes) {
    extern __shared__ float sh[];
    float *xa = sh, *xb = sh + SUB * d;
    int32_t *oa = (int32_t *)(xb + SUB * d), *ob = oa + SUB;
    int32_t *seg = ob + SUB, *wave = seg + SUB, *next = wave + SUB, *dims = next + SUB;
    __shared__ int32_t n_wave;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = SUB_THREADS / 32;
    const canopy_node *top = (const canopy_node *)(hot + (int64_t)nodes[blockIdx.x] * stride);
    const int32_t b = top->begin, m = top->end - top->begin;
    for (int32_t i = tid; i < m * d; i += SUB_THREADS) xa[i] = pts[(int64_t)b * d + i];
    for (int32_t i = tid; i < m; i += SUB_THREADS) oa[i] = orig[b + i], seg[i] = 0;
    if (tid == 0) wave[0] = nodes[blockIdx.x], n_wave = 1;
    __syncthreads();
    while (n_wave > 0) {
        const int32_t nw = n_wave;
        for (int32_t k = warp; k < nw; k += warps) {
            canopy_node *h = node_at(hot, stride, wave[k]);
            float *lo = (float *)(h + 1), *hi = lo + d;
            int32_t dim = 0;
            float widest = 0.0f;
            for (int32_t j = 0; j < d; j++) {
                uint32_t l = 0xffffffffu, u = 0;
                for (int32_t p = h->begin - b + lane; p < h->end - b; p += 32) {
                    uint32_t o = ord_of(xa[p * d + j]);
                    l = min(l, o);
                    u = max(u, o);
                }
                l = __reduce_min_sync(0xffffffffu, l);
                u = __reduce_max_sync(0xffffffffu, u);
                float fl = float_of(l), fu = float_of(u);
                if (j == 0 || fu - fl > widest) dim = j, widest = fu - fl;
                if (lane == 0) lo[j] = fl, hi[j] = fu;
            }
            if (lane == 0) {
                lo[2 * d] = h->child >= 0 ? (float)dim : -1.0f;
                dims[k] = h->child >= 0 ? dim : -1;
            }
        }
        __syncthreads();
        for (int32_t p = tid; p < m; p += SUB_THREADS) {
            int32_t k = seg[p], to = p; /* k < 0: the point's leaf is done */
            int32_t dim = k >= 0 ? dims[k] : -1;
            if (dim >= 0) {
                const canopy_node *h = (const canopy_node *)(hot + (int64_t)wave[k] * stride);
                float x = xa[p * d + dim];
                int32_t r = 0;
                for (int32_t q = h->begin - b; q < h->end - b; q++) {
                    float y = xa[q * d + dim];
                    r += y < x || (y == x && q < p);
                }
                to = h->begin - b + r;
            }
            for (int32_t j = 0; j < d; j++) xb[to * d + j] = xa[p * d + j];
            ob[to] = oa[p];
        }
        __syncthreads();
        if (tid == 0) {
            int32_t c = 0;
            for (int32_t k = 0; k < nw; k++) {
                const canopy_node *h = (const canopy_node *)(hot + (int64_t)wave[k] * stride);
                if (h->child >= 0) next[c++] = h->child, next[c++] = h->child + 1;
            }
            n_wave = c;
        }
        __syncthreads();
        const int32_t nn = n_wave;
        for (int32_t k = tid; k < nn; k += SUB_THREADS) wave[k] = next[k];
        __syncthreads();
        /* each point's node in the new wave, by position */
        for (int32_t p = tid; p < m; p += SUB_THREADS) {
            int32_t lo = 0, hi = nn - 1, at = -1;
            while (lo <= hi) {
                int32_t mid = (lo + hi) / 2;
                const canopy_node *h = (const canopy_node *)(hot + (int64_t)wave[mid] * stride);
                if (p < h->begin - b)
                    hi = mid - 1;
                else if (p >= h->end - b)
                    lo = mid + 1;
                else {
                    at = mid;
                    break;
                }
            }
            seg[p] = at;
        }
        for (int32_t i = tid; i < m * d; i += SUB_THREADS) xa[i] = xb[i];
        for (int32_t i = tid; i < m; i += SUB_THREADS) oa[i] = ob[i];
        __syncthreads();
    }
    for (int32_t i = tid; i < m * d; i += SUB_THREADS) pts[(int64_t)b * d + i] = xa[i];
    for (int32_t i = tid; i < m; i += SUB_THREADS) orig[b + i] = oa[i];
}

__global__ void k_output(const int32_t *orig, int64_t n, const float *w, int64_t *ids,
                         float *weights) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    ids[i] = orig[i];
    if (weights) weights[i] = w[orig[i]];
}

unsigned blocks(int64_t n) {
    return (unsigned)((n + THREADS - 1) / THREADS);
}

/* What the level loop reads of a kd build's topology: its size and, per level, the
 * offset of its nodes in the level lists, its largest node and its internal nodes. The
 * per-node arrays go straight into the build's pinned buffer (kd_lay_out). */
struct topology {
    int32_t *level_off = nullptr;   /* depth + 1 offsets into bylevel */
    int32_t *level_max = nullptr;   /* largest node of each level */
    int32_t *level_split = nullptr; /* internal nodes of each level */
    int32_t *min_upto = nullptr;    /* smallest node of the levels up to each */
    int32_t n_nodes = 0, depth = 0;
    ~topology() { free(level_off), free(level_max), free(level_split), free(min_upto); }
};

/* Nodes and levels of the median tree over n points with leaves of at most `leaf`:
 * a level's nodes hold one of two consecutive sizes, so counting by size is exact. */
void kd_shape(int64_t n, int32_t leaf, int32_t *nn, int32_t *depth) {
    int64_t size = n, small = 1, big = 0; /* `small` nodes of `size`, `big` of size + 1 */
    int64_t nodes = 0;
    int32_t levels = 0;
    while (small + big > 0) {
        nodes += small + big;
        levels++;
        int64_t half = size / 2, s2 = 0, b2 = 0; /* children of size half and half + 1 */
        if (size > leaf) { /* size = 2h: two of h; 2h + 1: one of h, one of h + 1 */
            s2 += small * (size % 2 ? 1 : 2);
            b2 += small * (size % 2 ? 1 : 0);
        }
        if (size + 1 > leaf) { /* size + 1 = 2h + 1 or 2h + 2 */
            s2 += big * (size % 2 ? 0 : 1);
            b2 += big * (size % 2 ? 2 : 1);
        }
        size = half, small = s2, big = b2;
    }
    *nn = (int32_t)nodes;
    *depth = levels;
}

/* The per-node arrays of a kd build, in the final node order (pinned: uploaded). */
struct kd_layout {
    int4 *hdr; /* child, nchild, begin, end */
    int32_t *level, *bylevel, *rope;
};

/* One subtree the layout's parallel part lays out: its root and where each level's
 * list of it begins (fill, per level). */
struct kd_lay_task {
    int32_t id, begin, m, rope, below;
    int32_t *fill;
};

/* What a layout pass reads: per level l, the smaller of its two node sizes (size[l] =
 * n >> l, the other one more) and, per size k (0 or 1), the nodes r levels below a
 * node of that size (width[(2 l + k) (depth + 1) + r]) and in its whole subtree
 * (nodes[2 l + k]); each level's first breadth-first id (off). The pass stops at
 * level cut (>= 0), recording each node there as a task. */
struct kd_lay_pass {
    const kd_layout *L;
    int32_t leaf, depth, depth_first, cut;
    const int64_t *size;
    const int32_t *width, *nodes, *off;
    kd_lay_task *tasks;
    int32_t *n_tasks;
};

static inline int32_t kd_lay_kind(const kd_lay_pass &P, int32_t l, int64_t m) {
    return 2 * l + (m > P.size[l]);
}

/* A node and its subtree, each node written once, met depth-first left to right (so
 * each level's nodes in their left-to-right order, which is their id order in both
 * orders): depth-first ids give a node's children the ids `below` and below + 1 and
 * their subtrees the ids after (the first child's subtree has nodes[...] nodes);
 * breadth-first ids number each level left to right from off[level]. */
static void kd_lay_node(const kd_lay_pass &P, int32_t *fill, int32_t id, int32_t begin, int32_t m,
                        int32_t l, int32_t rope, int32_t below) {
    if (l == P.cut) {
        kd_lay_task &t = P.tasks[(*P.n_tasks)++];
        t.id = id, t.begin = begin, t.m = m, t.rope = rope, t.below = below;
        memcpy(t.fill, fill, sizeof(int32_t) * (size_t)P.depth);
        const int32_t *w = P.width + (size_t)kd_lay_kind(P, l, m) * (size_t)(P.depth + 1);
        for (int32_t r = 0; l + r < P.depth; r++) fill[l + r] += w[r];
        return;
    }
    const kd_layout &L = *P.L;
    L.level[id] = l;
    L.rope[id] = rope;
    L.bylevel[P.off[l] + fill[l]++] = id;
    if (m <= P.leaf) {
        L.hdr[id] = make_int4(-1, 0, begin, begin + m);
        return;
    }
    const int32_t first = P.depth_first ? below : P.off[l + 1] + fill[l + 1], m0 = m / 2;
    L.hdr[id] = make_int4(first, 2, begin, begin + m);
    kd_lay_node(P, fill, first, begin, m0, l + 1, first + 1, below + 2);
    kd_lay_node(P, fill, first + 1, begin + m0, m - m0, l + 1, rope,
                below + 1 + P.nodes[kd_lay_kind(P, l + 1, m0)]);
}

/* Trees of at least KD_LAY_PARALLEL_MIN nodes (~0.2 ms of this pass on one core) lay
 * out their subtrees below level KD_LAY_CUT (16 of them) on the default OpenMP team: a
 * team of another size than the library's loops use makes OpenMP retire and restart
 * threads between them (H200 host: +0.35 ms on the next host-point build). */
enum { KD_LAY_CUT = 4, KD_LAY_PARALLEL_MIN = 32768 };

/* Node records (headers) in the host's order (breadth-first, or depth-first exactly as
 * the host's linearize), ropes, levels, and the nodes of each level, from the level
 * sizes alone (a level holds `small` nodes of n >> l points and `big` of one more, as
 * kd_shape counts them): one pass writing each node once, the subtrees below level
 * KD_LAY_CUT in parallel (200k points, leaves of 8: 65,535 nodes, 0.3 ms of the H200
 * host's build against 1.2 for the five passes before). */
canopy_status kd_lay_out(int64_t n, int32_t leaf, canopy_tree_order order, const kd_layout &L,
                         topology *t) {
    const int32_t depth = t->depth, wide = depth + 1;
    t->level_off = (int32_t *)calloc((size_t)depth + 1, sizeof(int32_t));
    t->level_max = (int32_t *)calloc((size_t)depth, sizeof(int32_t));
    t->level_split = (int32_t *)calloc((size_t)depth, sizeof(int32_t));
    t->min_upto = (int32_t *)malloc(sizeof(int32_t) * (size_t)depth);
    const int32_t most_tasks = 1 << KD_LAY_CUT;
    const int32_t cut =
        depth > KD_LAY_CUT + 1 && t->n_nodes >= KD_LAY_PARALLEL_MIN ? KD_LAY_CUT : -1;
    int64_t *size = (int64_t *)malloc(sizeof(int64_t) * (size_t)depth);
    int32_t *width = (int32_t *)calloc((size_t)(2 * depth) * (size_t)wide, sizeof(int32_t)),
            *nodes = (int32_t *)calloc((size_t)(2 * depth), sizeof(int32_t)),
            *fill = (int32_t *)calloc((size_t)(most_tasks + 1) * (size_t)depth, sizeof(int32_t));
    kd_lay_task *tasks = (kd_lay_task *)malloc(sizeof(kd_lay_task) * (size_t)most_tasks);
    canopy_status s = CANOPY_OK;
    if (!t->level_off || !t->level_max || !t->level_split || !t->min_upto || !size || !width ||
        !nodes || !fill || !tasks)
        s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory laying out a GPU kd tree");
    int64_t small = 1, big = 0;
    for (int32_t l = 0; !s && l < depth; l++) {
        const int64_t m = n >> l;
        size[l] = m;
        t->level_off[l + 1] = t->level_off[l] + (int32_t)(small + big);
        t->level_max[l] = (int32_t)(big ? m + 1 : m);
        t->level_split[l] = (int32_t)((m > leaf ? small : 0) + (m + 1 > leaf ? big : 0));
        t->min_upto[l] = (int32_t)(small ? m : m + 1);
        if (l > 0 && t->min_upto[l - 1] < t->min_upto[l]) t->min_upto[l] = t->min_upto[l - 1];
        int64_t s2 = 0, b2 = 0;
        if (m > leaf) s2 += small * (m % 2 ? 1 : 2), b2 += small * (m % 2 ? 1 : 0);
        if (m + 1 > leaf) s2 += big * (m % 2 ? 0 : 1), b2 += big * (m % 2 ? 2 : 1);
        small = s2, big = b2;
    }
    if (!s && t->level_off[depth] != t->n_nodes)
        s = canopy_fail(CANOPY_ERR_INTERNAL, "GPU kd layout: node count");
    for (int32_t l = depth - 1; !s && l >= 0; l--)
        for (int32_t k = 0; k < 2; k++) {
            const int64_t m = size[l] + k;
            int32_t *w = width + (size_t)(2 * l + k) * (size_t)wide;
            w[0] = 1;
            if (m > leaf && l + 1 < depth) {
                const int32_t *w0 = width + (size_t)(2 * (l + 1) + (m / 2 > size[l + 1])) * wide,
                              *w1 =
                                  width + (size_t)(2 * (l + 1) + (m - m / 2 > size[l + 1])) * wide;
                for (int32_t r = 1; l + r < depth; r++) w[r] = w0[r - 1] + w1[r - 1];
            }
            for (int32_t r = 0; l + r < depth; r++) nodes[2 * l + k] += w[r];
        }
    if (!s) {
        int32_t n_tasks = 0;
        for (int32_t i = 0; i < most_tasks; i++) tasks[i].fill = fill + (size_t)(i + 1) * depth;
        const kd_lay_pass top = {&L,           leaf,  depth,   order != CANOPY_ORDER_BREADTH_FIRST,
                                 cut,          size,  width,   nodes,
                                 t->level_off, tasks, &n_tasks};
        kd_lay_node(top, fill, 0, 0, (int32_t)n, 0, -1, 1);
        kd_lay_pass below = top;
        below.cut = -1;
#pragma omp parallel for schedule(static, 1) if (n_tasks > 1)
        for (int32_t i = 0; i < n_tasks; i++)
            kd_lay_node(below, tasks[i].fill, tasks[i].id, tasks[i].begin, tasks[i].m, cut,
                        tasks[i].rope, tasks[i].below);
    }
    free(size), free(width), free(nodes), free(fill), free(tasks);
    return s;
}

/* Whole node records from their headers: geometry zero, split dimension -1 (the level
 * loop and k_subtree fill in every node's; an empty tree's root keeps these). */
__global__ void k_headers(const int4 *hdr, int32_t nn, int32_t d, unsigned char *hot,
                          int32_t stride) {
    const int64_t v = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (v >= nn) return;
    int4 *rec = (int4 *)(hot + v * stride);
    rec[0] = hdr[v];
    for (int32_t j = 1; j < stride / 16; j++) rec[j] = make_int4(0, 0, 0, 0);
    ((float *)(rec + 1))[2 * d] = -1.0f;
}

int is_device_pointer(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* ---- octree ----
 *
 * The host octree (build_oct.c) puts a node's points in the smallest cell of the
 * root's dyadic grid that holds them and splits by octant, so its nodes are the
 * runs of a Morton order with a common prefix: a compressed octree. On the GPU each
 * point's 32-level cell path is computed by the host's own double arithmetic (one
 * halving per level), interleaved into a 96-bit Morton key (digit = x | y<<1 | z<<2,
 * the host's child order), and sorted with two stable CUB radix sorts (low 33 bits,
 * then high 63). The length of the common prefix of neighbouring keys (one byte per
 * point) is all the layout needs (oct_lay_out_device, level by level on the device):
 * a node's children start where that length equals the node's minimum. Masses and
 * centres of mass come from double prefix sums, cells from the first key of each
 * node, on the device. */

enum { OCT_LEVELS = 32, OCT_HI = 21 };

__global__ void k_oct_init(const float *in, int64_t stride, int64_t n, const float *w, float *pts,
                           unsigned long long *bad, uint32_t *box) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    uint32_t lo[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, hi[3] = {0, 0, 0};
    if (i < n) {
        for (int j = 0; j < 3; j++) {
            float x = in[i * stride + j];
            if (!isfinite(x)) atomicMin(&bad[0], (unsigned long long)i);
            pts[i * 3 + j] = x;
            lo[j] = ord_of(x);
            hi[j] = lo[j];
        }
        if (w && !isfinite(w[i])) atomicMin(&bad[1], (unsigned long long)i);
    }
    for (int j = 0; j < 3; j++) {
        uint32_t l = __reduce_min_sync(0xffffffffu, lo[j]);
        uint32_t h = __reduce_max_sync(0xffffffffu, hi[j]);
        if (lane == 0) atomicMin(&box[j], l), atomicMax(&box[3 + j], h);
    }
}

struct oct_root {
    double lo[3], hi[3];
};

/* Each point's key, split into 63 high bits (levels 0..20) and 33 low bits (21..31). */
__global__ void k_oct_keys(const float *pts, int64_t n, oct_root r, unsigned long long *khi,
                           unsigned long long *klo, unsigned long long *sort_key, int32_t *idx) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t c[3];
    for (int j = 0; j < 3; j++) {
        double lo = r.lo[j], hi = r.hi[j];
        double x = pts[i * 3 + j];
        uint32_t code = 0;
        for (int k = 0; k < OCT_LEVELS; k++) {
            double mid = (lo + hi) * 0.5;
            uint32_t b = x >= mid;
            code = code << 1 | b;
            if (b)
                lo = mid;
            else
                hi = mid;
        }
        c[j] = code;
    }
    unsigned long long h = 0, l = 0;
    for (int k = 0; k < OCT_LEVELS; k++) {
        int s = OCT_LEVELS - 1 - k;
        unsigned long long dg = (c[0] >> s & 1) | (c[1] >> s & 1) << 1 | (c[2] >> s & 1) << 2;
        if (k < OCT_HI)
            h = h << 3 | dg;
        else
            l = l << 3 | dg;
    }
    khi[i] = h;
    klo[i] = l;
    sort_key[i] = l;
    idx[i] = (int32_t)i;
}

__global__ void k_oct_hi(const unsigned long long *khi, const int32_t *idx, int64_t n,
                         unsigned long long *out) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = khi[idx[i]];
}

__device__ __forceinline__ int oct_lcp(unsigned long long h0, unsigned long long l0,
                                       unsigned long long h1, unsigned long long l1) {
    if (h0 != h1) return (__clzll((long long)(h0 ^ h1)) - 1) / 3;
    if (l0 != l1) return OCT_HI + (__clzll((long long)(l0 ^ l1)) - 31) / 3;
    return OCT_LEVELS;
}

/* Puts points, ids, weights and keys in Morton order, with the prefix sums' inputs. */
__global__ void k_oct_place(const float *pts, const float *w, const int32_t *perm, int64_t n,
                            const unsigned long long *khi, const unsigned long long *klo,
                            float *out_pts, int64_t *ids, float *out_w, unsigned long long *shi,
                            unsigned long long *slo, double *sum) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i > n) return;
    if (i == n) { /* the exclusive scans' final element */
        for (int c = 0; c < 4; c++) sum[c * (n + 1) + n] = 0.0;
        return;
    }
    int32_t p = perm[i];
    double wi = w ? (double)w[p] : 1.0;
    for (int j = 0; j < 3; j++) {
        float x = pts[(int64_t)p * 3 + j];
        out_pts[i * 3 + j] = x;
        sum[(j + 1) * (n + 1) + i] = wi * x;
    }
    sum[i] = wi;
    ids[i] = p;
    if (out_w) out_w[i] = w[p];
    shi[i] = khi[p];
    slo[i] = klo[p];
}

__global__ void k_oct_lcp(const unsigned long long *shi, const unsigned long long *slo, int64_t n,
                          uint8_t *lcp) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    lcp[i] = i == 0 ? 0 : (uint8_t)oct_lcp(shi[i - 1], slo[i - 1], shi[i], slo[i]);
}

/* Nodes of at most this many bodies sum their mass and centre directly, in the host's
 * order: a difference of prefix sums carries an absolute error of ~eps times the
 * prefix (the system's first moment so far), which in a tiny cell is a visible part of
 * its width (a Plummer leaf of width 7e-9 had its centre off by 1.2e-13, test_gpu_build). */
enum { OCT_DIRECT_SUM = 64 };

/* Geometry of every node, as oct_split computes it: the cell from the node's first
 * key down to the common prefix of its first and last keys, mass and centre of mass
 * from the bodies (pts, w: tree order; w NULL unweighted) or the prefix sums. */
__global__ void k_oct_geom(unsigned char *hot, int32_t stride, int32_t nn, oct_root r,
                           const unsigned long long *shi, const unsigned long long *slo,
                           const double *sum, const float *pts, const float *w, int64_t n) {
    int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nn) return;
    canopy_node *h = node_at(hot, stride, v);
    float *geom = (float *)(h + 1);
    int64_t b = h->begin, e = h->end, m = e - b;
    if (m == 0) {
        for (int j = 0; j < 8; j++) geom[j] = 0.0f;
        return;
    }
    unsigned long long h0 = shi[b], l0 = slo[b];
    int level = oct_lcp(h0, l0, shi[e - 1], slo[e - 1]);
    double lo[3], hi[3];
    for (int j = 0; j < 3; j++) lo[j] = r.lo[j], hi[j] = r.hi[j];
    for (int k = 0; k < level; k++) {
        unsigned dg = k < OCT_HI ? (unsigned)(h0 >> (3 * (OCT_HI - 1 - k)) & 7)
                                 : (unsigned)(l0 >> (3 * (OCT_LEVELS - 1 - k)) & 7);
        for (int j = 0; j < 3; j++) {
            double mid = (lo[j] + hi[j]) * 0.5;
            if (dg >> j & 1)
                lo[j] = mid;
            else
                hi[j] = mid;
        }
    }
    double half = 0.0;
    float c[3];
    for (int j = 0; j < 3; j++) {
        c[j] = (float)((lo[j] + hi[j]) * 0.5);
        double ex = fmax(hi[j] - c[j], c[j] - lo[j]);
        if (ex > half) half = ex;
        geom[4 + j] = c[j];
    }
    geom[7] = nextafterf((float)half, INFINITY);
    double ws, wx[3];
    if (m <= OCT_DIRECT_SUM) {
        ws = 0.0, wx[0] = wx[1] = wx[2] = 0.0;
        for (int64_t i = b; i < e; i++) {
            const double wi = w ? (double)w[i] : 1.0;
            ws += wi;
            for (int j = 0; j < 3; j++) wx[j] += wi * pts[i * 3 + j];
        }
    } else {
        ws = sum[e] - sum[b];
        for (int j = 0; j < 3; j++) wx[j] = sum[(j + 1) * (n + 1) + e] - sum[(j + 1) * (n + 1) + b];
    }
    for (int j = 0; j < 3; j++) geom[j] = ws != 0.0 ? (float)(wx[j] / ws) : c[j];
    geom[3] = w ? (float)ws : (float)((double)m / (double)n);
}

/* Device layout of the octree, level by level, in the order the host octree would
 * create it (breadth first: a level's nodes sorted by their first point). Inside a node
 * every prefix length exceeds its parent's split level; the node splits at its
 * interior's minimum, one child starting at its first point and at every point where
 * that minimum recurs. seg[i] is point i's node in the current level (-1 once in a
 * leaf); node records go to per-node arrays (BFS ids), written out at the end. */
struct oct_lay {
    int32_t *seg, *flag, *ex, *nmin, *nb[2], *ne[2], *par;
    int32_t *vbegin, *vend, *vchild, *vnchild, *vrope, *vlevel;
    unsigned long long *ka, *kb;
    int32_t *ia, *ib, *sum, *newid;
};

__device__ __forceinline__ bool lay_internal(const int32_t *nb, const int32_t *ne,
                                             const int32_t *nmin, int k, int32_t leaf) {
    return ne[k] - nb[k] > leaf && nmin[k] < OCT_LEVELS;
}

__global__ void k_lay_root(int64_t n, int32_t *seg, int32_t *nb, int32_t *ne, int32_t *rope) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) seg[i] = 0;
    if (i == 0) nb[0] = 0, ne[0] = (int32_t)n, rope[0] = -1;
}

/* Each node's interior minimum: the lanes of a warp mostly share a node, so they
 * reduce among their peers and one atomic per peer group reaches memory. */
__global__ void k_lay_min(const uint8_t *lcp, int64_t n, const int32_t *seg, const int32_t *nb,
                          int32_t *nmin) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int k = -1, val = OCT_LEVELS + 1;
    if (i < n) {
        k = seg[i];
        if (k >= 0 && i != nb[k])
            val = lcp[i];
        else
            k = -1;
    }
    unsigned peers = __match_any_sync(0xffffffffu, k);
    int m = __reduce_min_sync(peers, val);
    if (k >= 0 && (int)(threadIdx.x & 31) == __ffs(peers) - 1) atomicMin(nmin + k, m);
}

/* flag[i] = 1 where a child of an internal node starts (flag[n] = 0 for the scan). */
__global__ void k_lay_flag(const uint8_t *lcp, int64_t n, const int32_t *seg, const int32_t *nb,
                           const int32_t *ne, const int32_t *nmin, int32_t leaf, int32_t *flag) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i > n) return;
    int f = 0;
    if (i < n) {
        int k = seg[i];
        if (k >= 0 && lay_internal(nb, ne, nmin, k, leaf)) f = i == nb[k] || lcp[i] == nmin[k];
    }
    flag[i] = f;
}

/* This level's node records (BFS ids from off; children from off2). */
__global__ void k_lay_nodes(int32_t cnt, int32_t off, int32_t off2, int32_t level,
                            const int32_t *nb, const int32_t *ne, const int32_t *nmin, int32_t leaf,
                            const int32_t *ex, oct_lay L) {
    int32_t k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= cnt) return;
    int32_t v = off + k;
    L.vbegin[v] = nb[k];
    L.vend[v] = ne[k];
    L.vlevel[v] = level;
    if (lay_internal(nb, ne, nmin, k, leaf)) {
        int32_t f = ex[nb[k]];
        L.vchild[v] = off2 + f;
        L.vnchild[v] = ex[ne[k]] - f;
    } else {
        L.vchild[v] = -1;
        L.vnchild[v] = 0;
    }
}

/* Each point's node in the next level, each child's first point and parent. */
__global__ void k_lay_next(int64_t n, int32_t *seg, const int32_t *nb, const int32_t *ne,
                           const int32_t *nmin, int32_t leaf, const int32_t *flag,
                           const int32_t *ex, int32_t *nb2, int32_t *par) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int k = seg[i];
    if (k < 0) return;
    if (!lay_internal(nb, ne, nmin, k, leaf)) {
        seg[i] = -1;
        return;
    }
    int c = ex[i] + flag[i] - 1;
    seg[i] = c;
    if (flag[i]) nb2[c] = (int32_t)i, par[c] = k;
}

/* The next level's ends and ropes (next sibling, else the parent's rope). */
__global__ void k_lay_children(int32_t total, int32_t off, int32_t off2, const int32_t *par,
                               const int32_t *nb2, const int32_t *ne, int32_t *ne2, int32_t *rope) {
    int32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= total) return;
    int32_t p = par[c];
    bool last = c + 1 == total || par[c + 1] != p;
    ne2[c] = last ? ne[p] : nb2[c + 1];
    rope[off2 + c] = last ? rope[off + p] : off2 + c + 1;
}

/* Depth-first order (canopy_tree_build_generic's linearize): child groups numbered in
 * the preorder of their parents; the preorder sorts nodes by (first point, level). */
__global__ void k_lay_preorder_keys(int32_t nn, oct_lay L) {
    int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nn) return;
    L.ka[v] = (unsigned long long)L.vbegin[v] << 6 | (unsigned long long)L.vlevel[v];
    L.ia[v] = v;
}
__global__ void k_lay_group_sizes(int32_t nn, const int32_t *sorted, oct_lay L) {
    int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < nn) L.sum[j] = L.vnchild[sorted[j]];
}
__global__ void k_lay_renumber(int32_t nn, const int32_t *sorted, const int32_t *start, oct_lay L) {
    int32_t j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= nn) return;
    int32_t v = sorted[j];
    if (v == 0) L.newid[0] = 0;
    for (int32_t c = 0; c < L.vnchild[v]; c++) L.newid[L.vchild[v] + c] = 1 + start[j] + c;
}

/* Final records and ropes (newid NULL: breadth-first ids as they are). */
__global__ void k_lay_write(int32_t nn, const int32_t *newid, oct_lay L, unsigned char *hot,
                            int32_t stride, int32_t *rope) {
    int32_t v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nn) return;
    int32_t o = newid ? newid[v] : v;
    canopy_node *h = node_at(hot, stride, o);
    int32_t ch = L.vchild[v], r = L.vrope[v];
    h->child = ch >= 0 && newid ? newid[ch] : ch;
    h->nchild = L.vnchild[v];
    h->begin = L.vbegin[v];
    h->end = L.vend[v];
    rope[o] = r >= 0 && newid ? newid[r] : r;
}

/* Bytes of device scratch oct_lay_out_device needs for n points (at most 2n - 1 nodes),
 * and of the CUB temporary storage it needs. */
size_t oct_lay_bytes(int64_t n) {
    typedef canopy_gpu_carve C;
    int64_t cap = 2 * n + 1;
    return C::bytes<int32_t>(n + 1) * 9 + C::bytes<int32_t>(cap) * 11 +
           C::bytes<unsigned long long>(cap) * 2;
}
size_t oct_lay_temp_bytes(int64_t n, cudaStream_t st) {
    int64_t cap = 2 * n + 1;
    size_t a = 0, b = 0;
    cub::DoubleBuffer<unsigned long long> kb(nullptr, nullptr);
    cub::DoubleBuffer<int32_t> vb(nullptr, nullptr);
    cub::DeviceRadixSort::SortPairs(nullptr, a, kb, vb, (int)cap, 0, 38, st);
    cub::DeviceScan::ExclusiveSum(nullptr, b, (int32_t *)nullptr, (int)cap, st);
    return a > b ? a : b;
}

/* Lays out the octree of the n sorted points (lcp: neighbouring keys' common prefix
 * lengths, on the device) into result buffers *hot and *rope; *nn and *depth get the
 * node count and the levels. One small copy back per level (its node count). */
canopy_status oct_lay_out_device(int64_t n, int32_t leaf, canopy_tree_order order, int32_t stride,
                                 const uint8_t *lcp, canopy_gpu_carve &c, void *tmp,
                                 size_t tmp_bytes, int32_t *hp_count, cudaStream_t st, void **hot,
                                 void **rope, int32_t *nn, int32_t *depth) {
    int64_t cap = 2 * n + 1;
    oct_lay L;
    L.seg = c.take<int32_t>(n + 1), L.flag = c.take<int32_t>(n + 1), L.ex = c.take<int32_t>(n + 1);
    L.nmin = c.take<int32_t>(n + 1), L.par = c.take<int32_t>(n + 1);
    for (int k = 0; k < 2; k++) L.nb[k] = c.take<int32_t>(n + 1), L.ne[k] = c.take<int32_t>(n + 1);
    L.vbegin = c.take<int32_t>(cap), L.vend = c.take<int32_t>(cap), L.vchild = c.take<int32_t>(cap);
    L.vnchild = c.take<int32_t>(cap), L.vrope = c.take<int32_t>(cap);
    L.vlevel = c.take<int32_t>(cap), L.ia = c.take<int32_t>(cap), L.ib = c.take<int32_t>(cap);
    L.sum = c.take<int32_t>(cap), L.newid = c.take<int32_t>(cap);
    int32_t *start = c.take<int32_t>(cap);
    L.ka = c.take<unsigned long long>(cap), L.kb = c.take<unsigned long long>(cap);
    canopy_status s;
    k_lay_root<<<blocks(n > 0 ? n : 1), THREADS, 0, st>>>(n, L.seg, L.nb[0], L.ne[0], L.vrope);
    int32_t cnt = 1, off = 0, level = 0;
    for (;; level++) {
        int32_t *nb = L.nb[level & 1], *ne = L.ne[level & 1];
        int32_t *nb2 = L.nb[(level + 1) & 1], *ne2 = L.ne[(level + 1) & 1];
        if ((s = canopy_gpu_check(cudaMemsetAsync(L.nmin, 0x7f, sizeof(int32_t) * (size_t)cnt, st),
                                  "clearing node minima")))
            return s;
        if (n > 0) k_lay_min<<<blocks(n), THREADS, 0, st>>>(lcp, n, L.seg, nb, L.nmin);
        k_lay_flag<<<blocks(n + 1), THREADS, 0, st>>>(lcp, n, L.seg, nb, ne, L.nmin, leaf, L.flag);
        size_t tb = tmp_bytes;
        if ((s = canopy_gpu_check(
                 cub::DeviceScan::ExclusiveSum(tmp, tb, L.flag, L.ex, (int)(n + 1), st),
                 "numbering the octree's children")) ||
            (s = canopy_gpu_check(
                 cudaMemcpyAsync(hp_count, L.ex + n, sizeof(int32_t), cudaMemcpyDeviceToHost, st),
                 "reading a level's size")))
            return s;
        k_lay_nodes<<<blocks(cnt), THREADS, 0, st>>>(cnt, off, off + cnt, level, nb, ne, L.nmin,
                                                     leaf, L.ex, L);
        if ((s = canopy_gpu_check(cudaStreamSynchronize(st), "laying out the octree"))) return s;
        int32_t total = *hp_count;
        if (total == 0) break;
        k_lay_next<<<blocks(n), THREADS, 0, st>>>(n, L.seg, nb, ne, L.nmin, leaf, L.flag, L.ex, nb2,
                                                  L.par);
        k_lay_children<<<blocks(total), THREADS, 0, st>>>(total, off, off + cnt, L.par, nb2, ne,
                                                          ne2, L.vrope);
        off += cnt;
        cnt = total;
    }
    *nn = off + cnt;
    *depth = level + 1;
    if ((s = canopy_gpu_pool_result(hot, (size_t)*nn * stride, st, "tree nodes")) ||
        (s = canopy_gpu_pool_result(rope, sizeof(int32_t) * (size_t)*nn, st, "tree ropes")))
        return s;
    const int32_t *newid = nullptr;
    if (order != CANOPY_ORDER_BREADTH_FIRST && *nn > 1) {
        k_lay_preorder_keys<<<blocks(*nn), THREADS, 0, st>>>(*nn, L);
        cub::DoubleBuffer<unsigned long long> keys(L.ka, L.kb);
        cub::DoubleBuffer<int32_t> vals(L.ia, L.ib);
        size_t tb = tmp_bytes;
        if ((s = canopy_gpu_check(
                 cub::DeviceRadixSort::SortPairs(tmp, tb, keys, vals, (int)*nn, 0, 38, st),
                 "ordering the octree depth first")))
            return s;
        k_lay_group_sizes<<<blocks(*nn), THREADS, 0, st>>>(*nn, vals.Current(), L);
        tb = tmp_bytes;
        if ((s = canopy_gpu_check(
                 cub::DeviceScan::ExclusiveSum(tmp, tb, L.sum, start, (int)*nn, st),
                 "numbering the octree depth first")))
            return s;
        k_lay_renumber<<<blocks(*nn), THREADS, 0, st>>>(*nn, vals.Current(), start, L);
        newid = L.newid;
    }
    k_lay_write<<<blocks(*nn), THREADS, 0, st>>>(*nn, newid, L, (unsigned char *)*hot, stride,
                                                 (int32_t *)*rope);
    return canopy_gpu_check(cudaGetLastError(), "laying out the octree");
}

} // namespace

extern "C" const canopy_tree_view *canopy_gpu_tree_view(const canopy_gpu_tree *g) {
    return &g->view;
}

extern "C" void canopy_gpu_tree_free(canopy_gpu_tree *g) {
    if (!g) return;
    if (g->view.hot) cudaFreeAsync((void *)g->view.hot, 0);
    if (g->view.points) cudaFreeAsync((void *)g->view.points, 0);
    if (g->view.ids) cudaFreeAsync((void *)g->view.ids, 0);
    if (g->view.rope) cudaFreeAsync((void *)g->view.rope, 0);
    if (g->view.weights) cudaFreeAsync((void *)g->view.weights, 0);
    free(g);
}

/* The input as the device reads it. Host points (compacted to d columns) and host
 * weights go through the pinned buffer into a device buffer, one copy at full
 * bandwidth; device inputs are read in place. */
struct staged_input {
    int on_device;            /* the points are read in place */
    size_t in_bytes, w_bytes; /* host bytes to stage: the points, then the weights */
    const float *in, *w;      /* the points and the weights the kernels read */
    int64_t in_stride;
};

/* What of the input (points of d columns, weights or NULL) must be staged. */
static staged_input input_plan(canopy_points pts, int32_t d, const float *weights) {
    staged_input si = {};
    const int64_t n = pts.n;
    si.on_device = n > 0 && is_device_pointer(pts.data);
    const int w_on_device = weights && n > 0 && is_device_pointer(weights);
    si.in_bytes = si.on_device ? 0 : sizeof(float) * (size_t)(n * d);
    si.w_bytes = weights && !w_on_device ? sizeof(float) * (size_t)n : 0;
    si.in = pts.data;
    si.in_stride = pts.stride;
    si.w = weights;
    return si;
}

/* Copies the host input into the pinned buffer hp (points, then weights); the kernels
 * then read it from staged, where it is uploaded to. */
static void input_stage(canopy_points pts, int32_t d, const float *weights, unsigned char *hp,
                        unsigned char *staged, staged_input *si) {
    if (!si->on_device && pts.n > 0) {
        if (pts.stride == d) {
            memcpy(hp, pts.data, si->in_bytes);
        } else {
            for (int64_t i = 0; i < pts.n; i++)
                memcpy(hp + sizeof(float) * (size_t)(i * d), canopy_point(pts, i),
                       sizeof(float) * (size_t)d);
        }
        si->in = (const float *)staged;
        si->in_stride = d;
    }
    if (si->w_bytes) {
        memcpy(hp + si->in_bytes, weights, si->w_bytes);
        si->w = (const float *)(staged + si->in_bytes);
    }
}

/* A kd build's device scratch, carved from the pool, and the parts of its pinned
 * buffer (the staged input, then the node arrays the host lays out). */
struct kd_work {
    staged_input si;
    size_t sort_bytes;
    float *pa, *pb;                  /* the points, before and after a level's sort */
    int32_t *oa, *ob;                /* their original indices */
    int32_t *node_of, *va, *vb;      /* each point's node; sort values */
    unsigned long long *ka, *kb;     /* sort keys */
    uint32_t *acc_lo, *acc_hi;       /* a level's bounding boxes, as ordered integers */
    int32_t *level, *bylevel, *ndim; /* per node: level, nodes by level, split dimension */
    int4 *hdr;
    unsigned long long *bad; /* the first non-finite row */
    unsigned char *staged;
    void *sort_tmp;
    unsigned char *hp;
    int4 *hp_hdr;
    int32_t *hp_level, *hp_bylevel, *hp_rope;
};

/* The kd view's shape (the topology follows from n and the leaf size) and its result
 * buffers. */
static canopy_status kd_view(canopy_points pts, const canopy_tree_options *opt, canopy_gpu_tree *g,
                             topology *topo) {
    const int64_t n = pts.n;
    const int32_t d = pts.d;
    int32_t stride = (int32_t)(sizeof(canopy_node) + sizeof(float) * (size_t)(2 * d + 1));
    stride = (stride + 15) / 16 * 16;
    int32_t leaf = opt->leaf_size > 0 ? opt->leaf_size : 16;
    kd_shape(n, leaf, &topo->n_nodes, &topo->depth);
    const int32_t nn = topo->n_nodes;
    canopy_tree_view *tv = &g->view;
    tv->hot_stride = stride;
    tv->geom_stride = 2 * d + 1;
    tv->n_nodes = nn;
    tv->d = d;
    tv->n = n;
    tv->depth = topo->depth;
    tv->max_children = 2;
    tv->kind = CANOPY_TREE_KD;
    g->leaf_size = leaf;
    g->order = opt->order;
    const cudaStream_t st = 0;
    canopy_status s;
    void *hot, *points, *ids, *rope, *weights = nullptr;
    if ((s = canopy_gpu_pool_result(&hot, (size_t)nn * stride, st, "tree nodes")) ||
        (s = canopy_gpu_pool_result(&points, sizeof(float) * (size_t)(n * d), st, "tree points")) ||
        (s = canopy_gpu_pool_result(&ids, sizeof(int64_t) * (size_t)n, st, "tree ids")) ||
        (s = canopy_gpu_pool_result(&rope, sizeof(int32_t) * (size_t)nn, st, "tree ropes")) ||
        (opt->weights &&
         (s = canopy_gpu_pool_result(&weights, sizeof(float) * (size_t)n, st, "tree weights"))))
        return s;
    tv->hot = (const unsigned char *)hot;
    tv->points = (const float *)points;
    tv->ids = (const int64_t *)ids;
    tv->rope = (const int32_t *)rope;
    tv->weights = (const float *)weights;
    return CANOPY_OK;
}

/* Sizes the kd build's scratch and pinned buffer, takes them from the pool (locked on
 * success) and carves them into k. */
static canopy_status kd_acquire(canopy_points pts, const canopy_tree_options *opt,
                                const canopy_gpu_tree *g, kd_work *k) {
    const int64_t n = g->view.n;
    const int32_t d = g->view.d, nn = g->view.n_nodes, depth = g->view.depth;
    const cudaStream_t st = 0;
    canopy_status s;
    /* a level holds at most 2^l nodes and at most all of them */
    const int32_t max_level = depth > 31 || (1ll << (depth - 1)) > nn ? nn : 1 << (depth - 1);
    int end_bit = 32;
    while (end_bit < 64 && ((unsigned long long)n >> (end_bit - 32)) != 0) end_bit++;
    k->sort_bytes = 0;
    {
        cub::DoubleBuffer<unsigned long long> kb(nullptr, nullptr);
        cub::DoubleBuffer<int32_t> vb(nullptr, nullptr);
        if ((s = canopy_gpu_check(cub::DeviceRadixSort::SortPairs(nullptr, k->sort_bytes, kb, vb,
                                                                  (int)(n > 0 ? n : 1), 0, end_bit,
                                                                  st),
                                  "sizing the sort")))
            return s;
    }
    typedef canopy_gpu_carve C;
    k->si = input_plan(pts, d, opt->weights);
    const size_t staged = k->si.in_bytes + k->si.w_bytes;
    size_t scratch = C::bytes<float>(n * d) * 2 + C::bytes<int32_t>(n) * 5 +
                     C::bytes<unsigned long long>(n) * 2 +
                     C::bytes<uint32_t>((int64_t)max_level * d) * 2 + C::bytes<int32_t>(nn) * 3 +
                     C::bytes<int4>(nn) + C::bytes<unsigned long long>(1) +
                     C::bytes<unsigned char>((int64_t)staged) + k->sort_bytes + 256;
    const size_t node_bytes = sizeof(int4) * (size_t)nn + sizeof(int32_t) * (size_t)nn * 3;
    size_t pinned = (staged + 15) / 16 * 16 + node_bytes + 64;
    unsigned char *dbase, *hbase;
    if ((s = canopy_gpu_pool_acquire(scratch, pinned, &dbase, &hbase))) return s;
    C c = {dbase, 0};
    k->pa = c.take<float>(n * d), k->pb = c.take<float>(n * d);
    k->oa = c.take<int32_t>(n), k->ob = c.take<int32_t>(n);
    k->node_of = c.take<int32_t>(n), k->va = c.take<int32_t>(n), k->vb = c.take<int32_t>(n);
    k->ka = c.take<unsigned long long>(n), k->kb = c.take<unsigned long long>(n);
    k->acc_lo = c.take<uint32_t>((int64_t)max_level * d);
    k->acc_hi = c.take<uint32_t>((int64_t)max_level * d);
    k->level = c.take<int32_t>(nn), k->bylevel = c.take<int32_t>(nn), k->ndim = c.take<int32_t>(nn);
    k->hdr = c.take<int4>(nn);
    k->bad = c.take<unsigned long long>(1);
    k->staged = c.take<unsigned char>((int64_t)staged);
    k->sort_tmp = c.take<unsigned char>((int64_t)k->sort_bytes);
    k->hp = hbase;
    /* int4 stores need 16-byte alignment, on the host as well */
    k->hp_hdr = (int4 *)(hbase + (staged + 15) / 16 * 16);
    k->hp_level = (int32_t *)(k->hp_hdr + nn);
    k->hp_bylevel = k->hp_level + nn, k->hp_rope = k->hp_bylevel + nn;
    return CANOPY_OK;
}

/* Stages the input, lays out the node arrays on the host (kd_lay_out) and uploads
 * both. */
static canopy_status kd_upload(canopy_points pts, const canopy_tree_options *opt,
                               const canopy_gpu_tree *g, topology *topo, kd_work *k) {
    const int32_t nn = g->view.n_nodes;
    const cudaStream_t st = 0;
    canopy_status s;
    input_stage(pts, g->view.d, opt->weights, k->hp, k->staged, &k->si);
    const kd_layout L = {k->hp_hdr, k->hp_level, k->hp_bylevel, k->hp_rope};
    if ((s = kd_lay_out(g->view.n, g->leaf_size, opt->order, L, topo))) return s;
    const size_t staged = k->si.in_bytes + k->si.w_bytes;
    const unsigned long long none = ~0ull;
    if ((staged && (s = canopy_gpu_check(
                        cudaMemcpyAsync(k->staged, k->hp, staged, cudaMemcpyHostToDevice, st),
                        "uploading points"))) ||
        (s = canopy_gpu_check(cudaMemcpyAsync(k->hdr, k->hp_hdr, sizeof(int4) * (size_t)nn,
                                              cudaMemcpyHostToDevice, st),
                              "uploading nodes")) ||
        (s = canopy_gpu_check(cudaMemcpyAsync(k->level, k->hp_level, sizeof(int32_t) * (size_t)nn,
                                              cudaMemcpyHostToDevice, st),
                              "uploading levels")) ||
        (s = canopy_gpu_check(cudaMemcpyAsync((void *)g->view.rope, k->hp_rope,
                                              sizeof(int32_t) * (size_t)nn, cudaMemcpyHostToDevice,
                                              st),
                              "uploading ropes")) ||
        (s = canopy_gpu_check(
             cudaMemcpyAsync(k->bad, &none, sizeof none, cudaMemcpyHostToDevice, st),
             "clearing a flag")))
        return s;
    return canopy_gpu_check(cudaMemcpyAsync(k->bylevel, k->hp_bylevel, sizeof(int32_t) * (size_t)nn,
                                            cudaMemcpyHostToDevice, st),
                            "uploading the level lists");
}

/* Level l of the level-by-level loop: the bounding boxes of its nodes and, where they
 * split, one stable sort of all points by (node, coordinate on the widest dimension)
 * that moves each node's lower half into its first child (k->pa, k->oa swap with
 * k->pb, k->ob). */
static canopy_status kd_level(const canopy_gpu_tree *g, const topology *topo, int32_t l,
                              kd_work *k) {
    const int64_t n = g->view.n;
    const int32_t d = g->view.d, stride = g->view.hot_stride;
    unsigned char *hot_d = (unsigned char *)g->view.hot;
    const cudaStream_t st = 0;
    int32_t off = topo->level_off[l], cnt = topo->level_off[l + 1] - off;
    int32_t spn = (topo->level_max[l] + SLICE - 1) / SLICE;
    spn = spn > 0 ? spn : 1;
    cudaMemsetAsync(k->acc_lo, 0xff, sizeof(uint32_t) * (size_t)cnt * d, st);
    cudaMemsetAsync(k->acc_hi, 0, sizeof(uint32_t) * (size_t)cnt * d, st);
    k_bbox<<<blocks((int64_t)cnt * spn * 32), THREADS, 0, st>>>(
        k->pa, d, hot_d, stride, k->bylevel + off, cnt, spn, k->acc_lo, k->acc_hi);
    k_finish<<<blocks(cnt), THREADS, 0, st>>>(hot_d, stride, d, k->bylevel + off, cnt, k->acc_lo,
                                              k->acc_hi, k->ndim);
    if (topo->level_split[l] == 0) return CANOPY_OK;
    int32_t shift = 0;
    while (shift < 30 && (2 << shift) <= topo->min_upto[l]) shift++;
    int level_bits = 32;
    while (level_bits < 64 && ((unsigned long long)n >> shift >> (level_bits - 32)) != 0)
        level_bits++;
    k_keys<<<blocks(n), THREADS, 0, st>>>(k->pa, d, n, hot_d, stride, k->node_of, k->level, l,
                                          shift, k->ndim, k->ka, k->va);
    cub::DoubleBuffer<unsigned long long> keys(k->ka, k->kb);
    cub::DoubleBuffer<int32_t> vals(k->va, k->vb);
    canopy_status s;
    if ((s = canopy_gpu_check(cub::DeviceRadixSort::SortPairs(k->sort_tmp, k->sort_bytes, keys,
                                                              vals, (int)n, 0, level_bits, st),
                              "sorting a level")))
        return s;
    k_gather<<<blocks(n), THREADS, 0, st>>>(k->pa, k->pb, k->oa, k->ob, vals.Current(), d, n, hot_d,
                                            stride, k->node_of, k->level, l);
    float *tp = k->pa;
    k->pa = k->pb, k->pb = tp;
    int32_t *to = k->oa;
    k->oa = k->ob, k->ob = to;
    return CANOPY_OK;
}

/* The node records and, for n > 0, the geometry level by level down to the first
 * level whose nodes all fit a block's shared memory, k_subtree from there, then the
 * points, ids and weights in tree order. */
static canopy_status kd_levels(const canopy_gpu_tree *g, const topology *topo, kd_work *k) {
    const int64_t n = g->view.n;
    const int32_t d = g->view.d, nn = g->view.n_nodes, depth = g->view.depth;
    const int32_t stride = g->view.hot_stride;
    unsigned char *hot_d = (unsigned char *)g->view.hot;
    const cudaStream_t st = 0;
    canopy_status s;
    k_headers<<<blocks(nn), THREADS, 0, st>>>(k->hdr, nn, d, hot_d, stride);
    if (n == 0) return CANOPY_OK;
    k_init<<<blocks(n), THREADS, 0, st>>>(k->si.in, k->si.in_stride, n, d, k->pa, k->oa, k->node_of,
                                          k->bad);
    int32_t sub_level = depth;
    if (d <= SUB_MAX_D)
        for (int32_t l = 0; l < depth && sub_level == depth; l++)
            if (topo->level_max[l] <= SUB) sub_level = l;
    for (int32_t l = 0; l < sub_level; l++)
        if ((s = kd_level(g, topo, l, k))) return s;
    if (sub_level < depth) {
        int32_t off = topo->level_off[sub_level];
        int32_t cnt = topo->level_off[sub_level + 1] - off;
        size_t shm = sizeof(float) * 2 * SUB * d + sizeof(int32_t) * 6 * SUB;
        k_subtree<<<cnt, SUB_THREADS, shm, st>>>(k->pa, k->oa, d, hot_d, stride, k->bylevel + off);
    }
    k_output<<<blocks(n), THREADS, 0, st>>>(k->oa, n, k->si.w, (int64_t *)g->view.ids,
                                            (float *)g->view.weights);
    return canopy_gpu_check(cudaMemcpyAsync((void *)g->view.points, k->pa,
                                            sizeof(float) * (size_t)(n * d),
                                            cudaMemcpyDeviceToDevice, st),
                            "placing the points");
}

/* Waits for the kd build and refuses an input with a non-finite row. */
static canopy_status kd_finish(const kd_work *k) {
    const cudaStream_t st = 0;
    canopy_status s;
    unsigned long long first_bad = ~0ull;
    if ((s = canopy_gpu_check(cudaGetLastError(), "launching the kd build")) ||
        (s = canopy_gpu_check(
             cudaMemcpyAsync(&first_bad, k->bad, sizeof first_bad, cudaMemcpyDeviceToHost, st),
             "reading the input check")) ||
        (s = canopy_gpu_check(cudaStreamSynchronize(st), "building the kd tree")))
        return s;
    if (first_bad != ~0ull)
        return canopy_fail(CANOPY_ERR_INVALID, "tree points: row %lld is not finite",
                           (long long)first_bad);
    return CANOPY_OK;
}

static canopy_status build(canopy_points pts, const canopy_tree_options *opt, canopy_gpu_tree *g,
                           topology *topo) {
    kd_work k = {};
    canopy_status s = kd_view(pts, opt, g, topo);
    if (!s) s = kd_acquire(pts, opt, g, &k);
    if (s) return s;
    if (!(s = kd_upload(pts, opt, g, topo, &k)) && !(s = kd_levels(g, topo, &k))) s = kd_finish(&k);
    canopy_gpu_pool_unlock();
    return s;
}

/* An octree build's device scratch, carved from the pool (the layout carves the rest
 * from c), the parts of its pinned buffer and the root cube. */
struct oct_work {
    staged_input si;
    size_t sort_bytes, tmp_bytes;
    canopy_gpu_carve c;
    float *pa;
    unsigned long long *khi, *klo, *ka, *kb, *shi, *slo; /* Morton keys, sorted keys */
    int32_t *va, *vb;
    double *sum; /* prefix sums of masses and mass moments */
    uint8_t *lcp;
    unsigned long long *bad; /* the first non-finite row and weight */
    uint32_t *box;
    unsigned char *staged;
    void *tmp;
    unsigned char *hp; /* pinned: the staged input, then the box, flags and a count */
    uint32_t *hp_box;
    unsigned long long *hp_bad;
    int32_t *hp_count;
    oct_root root;
};

/* The octree view's fixed shape and its result buffers for points, ids and weights
 * (nodes and ropes come with the layout). */
static canopy_status oct_view(canopy_points pts, const canopy_tree_options *opt,
                              canopy_gpu_tree *g) {
    const int64_t n = pts.n;
    const cudaStream_t st = 0;
    canopy_status s;
    canopy_tree_view *tv = &g->view;
    tv->hot_stride = (int32_t)((sizeof(canopy_node) + sizeof(float) * 8 + 15) / 16 * 16);
    tv->geom_stride = 8;
    tv->d = 3;
    tv->n = n;
    tv->max_children = 8;
    tv->kind = CANOPY_TREE_OCT;
    g->leaf_size = opt->leaf_size > 0 ? opt->leaf_size : 8;
    g->order = opt->order;
    void *points, *ids, *weights = nullptr;
    if ((s = canopy_gpu_pool_result(&points, sizeof(float) * (size_t)(n * 3), st, "tree points")) ||
        (s = canopy_gpu_pool_result(&ids, sizeof(int64_t) * (size_t)n, st, "tree ids")) ||
        (opt->weights &&
         (s = canopy_gpu_pool_result(&weights, sizeof(float) * (size_t)n, st, "tree weights"))))
        return s;
    tv->points = (const float *)points;
    tv->ids = (const int64_t *)ids;
    tv->weights = (const float *)weights;
    return CANOPY_OK;
}

/* Sizes the octree build's scratch and pinned buffer, takes them from the pool (locked
 * on success) and carves them into o. */
static canopy_status oct_acquire(canopy_points pts, const canopy_tree_options *opt, oct_work *o) {
    const int64_t n = pts.n, n1 = n > 0 ? n : 1;
    const cudaStream_t st = 0;
    canopy_status s;
    o->sort_bytes = 0;
    size_t scan_bytes = 0;
    {
        cub::DoubleBuffer<unsigned long long> kb(nullptr, nullptr);
        cub::DoubleBuffer<int32_t> vb(nullptr, nullptr);
        if ((s = canopy_gpu_check(cub::DeviceRadixSort::SortPairs(nullptr, o->sort_bytes, kb, vb,
                                                                  (int)n1, 0, 64, st),
                                  "sizing the sort")) ||
            (s = canopy_gpu_check(cub::DeviceScan::ExclusiveSum(
                                      nullptr, scan_bytes, (double *)nullptr, (int)(n1 + 1), st),
                                  "sizing the scan")))
            return s;
    }
    typedef canopy_gpu_carve C;
    o->si = input_plan(pts, 3, opt->weights);
    const size_t staged = o->si.in_bytes + o->si.w_bytes;
    size_t tmp_bytes = o->sort_bytes > scan_bytes ? o->sort_bytes : scan_bytes;
    size_t lay_tmp = oct_lay_temp_bytes(n, st);
    o->tmp_bytes = tmp_bytes > lay_tmp ? tmp_bytes : lay_tmp;
    size_t scratch = C::bytes<float>(n * 3) + C::bytes<unsigned long long>(n) * 6 +
                     C::bytes<int32_t>(n) * 2 + C::bytes<double>(4 * (n + 1)) +
                     C::bytes<uint8_t>(n) + C::bytes<unsigned long long>(2) +
                     C::bytes<uint32_t>(6) + C::bytes<unsigned char>((int64_t)staged) +
                     C::bytes<unsigned char>((int64_t)o->tmp_bytes) + oct_lay_bytes(n) + 256;
    size_t pinned =
        staged + 64 + sizeof(uint32_t) * 6 + sizeof(unsigned long long) * 2 + sizeof(int32_t);
    unsigned char *dbase, *hbase;
    if ((s = canopy_gpu_pool_acquire(scratch, pinned, &dbase, &hbase))) return s;
    o->c = {dbase, 0};
    C &c = o->c;
    o->pa = c.take<float>(n * 3);
    o->khi = c.take<unsigned long long>(n), o->klo = c.take<unsigned long long>(n);
    o->ka = c.take<unsigned long long>(n), o->kb = c.take<unsigned long long>(n);
    o->shi = c.take<unsigned long long>(n), o->slo = c.take<unsigned long long>(n);
    o->va = c.take<int32_t>(n), o->vb = c.take<int32_t>(n);
    o->sum = c.take<double>(4 * (n + 1));
    o->lcp = c.take<uint8_t>(n);
    o->bad = c.take<unsigned long long>(2);
    o->box = c.take<uint32_t>(6);
    o->staged = c.take<unsigned char>((int64_t)staged);
    o->tmp = c.take<unsigned char>((int64_t)o->tmp_bytes);
    o->hp = hbase;
    o->hp_box = (uint32_t *)(hbase + (staged + 63) / 64 * 64);
    o->hp_bad = (unsigned long long *)(o->hp_box + 6);
    o->hp_count = (int32_t *)(o->hp_bad + 2);
    return CANOPY_OK;
}

/* For n > 0: stages and uploads the input, bounds it (refusing a non-finite row or
 * weight) and sets o->root, the root cube exactly as canopy_tree_spec_oct computes
 * it. */
static canopy_status oct_bound(canopy_points pts, const canopy_tree_options *opt, oct_work *o) {
    unsigned char *hp = o->hp;
    const int64_t n = pts.n;
    const cudaStream_t st = 0;
    canopy_status s;
    input_stage(pts, 3, opt->weights, hp, o->staged, &o->si);
    const size_t staged = o->si.in_bytes + o->si.w_bytes;
    const uint32_t box0[6] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0, 0, 0};
    const unsigned long long none[2] = {~0ull, ~0ull};
    if ((staged &&
         (s = canopy_gpu_check(cudaMemcpyAsync(o->staged, hp, staged, cudaMemcpyHostToDevice, st),
                               "uploading points"))) ||
        (s = canopy_gpu_check(
             cudaMemcpyAsync(o->box, box0, sizeof box0, cudaMemcpyHostToDevice, st),
             "clearing the box")) ||
        (s = canopy_gpu_check(
             cudaMemcpyAsync(o->bad, none, sizeof none, cudaMemcpyHostToDevice, st),
             "clearing a flag")))
        return s;
    k_oct_init<<<blocks(n), THREADS, 0, st>>>(o->si.in, o->si.in_stride, n, o->si.w, o->pa, o->bad,
                                              o->box);
    if ((s = canopy_gpu_check(
             cudaMemcpyAsync(o->hp_box, o->box, sizeof(uint32_t) * 6, cudaMemcpyDeviceToHost, st),
             "reading the bounding box")) ||
        (s = canopy_gpu_check(
             cudaMemcpyAsync(o->hp_bad, o->bad, sizeof none, cudaMemcpyDeviceToHost, st),
             "reading the input check")) ||
        (s = canopy_gpu_check(cudaStreamSynchronize(st), "bounding the octree's points")))
        return s;
    if (o->hp_bad[0] != ~0ull)
        return canopy_fail(CANOPY_ERR_INVALID, "tree points: row %lld is not finite",
                           (long long)o->hp_bad[0]);
    if (o->hp_bad[1] != ~0ull)
        return canopy_fail(CANOPY_ERR_INVALID, "tree weights: weight %lld is not finite",
                           (long long)o->hp_bad[1]);
    float blo[3], bhi[3];
    double size = 0.0;
    for (int j = 0; j < 3; j++) {
        uint32_t l = o->hp_box[j], h = o->hp_box[3 + j];
        l = l & 0x80000000u ? l ^ 0x80000000u : ~l;
        h = h & 0x80000000u ? h ^ 0x80000000u : ~h;
        memcpy(&blo[j], &l, sizeof l);
        memcpy(&bhi[j], &h, sizeof h);
        size = fmax(size, (double)bhi[j] - blo[j]);
    }
    for (int j = 0; j < 3; j++) {
        o->root.lo[j] = blo[j];
        o->root.hi[j] = fmax(blo[j] + size, bhi[j]);
    }
    return CANOPY_OK;
}

/* For n > 0: the points in Morton order (two stable sorts, low then high key bits)
 * into the view's points, ids and weights, the common prefix lengths of neighbouring
 * keys and the prefix sums of the masses. */
static canopy_status oct_sort(const canopy_gpu_tree *g, oct_work *o) {
    const int64_t n = g->view.n;
    const cudaStream_t st = 0;
    canopy_status s;
    k_oct_keys<<<blocks(n), THREADS, 0, st>>>(o->pa, n, o->root, o->khi, o->klo, o->ka, o->va);
    cub::DoubleBuffer<unsigned long long> keys(o->ka, o->kb);
    cub::DoubleBuffer<int32_t> vals(o->va, o->vb);
    size_t tb = o->sort_bytes;
    if ((s = canopy_gpu_check(cub::DeviceRadixSort::SortPairs(o->tmp, tb, keys, vals, (int)n, 0,
                                                              3 * (OCT_LEVELS - OCT_HI), st),
                              "sorting the low key bits")))
        return s;
    unsigned long long *hk = keys.Alternate();
    k_oct_hi<<<blocks(n), THREADS, 0, st>>>(o->khi, vals.Current(), n, hk);
    keys.selector ^= 1;
    if ((s = canopy_gpu_check(
             cub::DeviceRadixSort::SortPairs(o->tmp, tb, keys, vals, (int)n, 0, 3 * OCT_HI, st),
             "sorting the high key bits")))
        return s;
    k_oct_place<<<blocks(n + 1), THREADS, 0, st>>>(
        o->pa, o->si.w, vals.Current(), n, o->khi, o->klo, (float *)g->view.points,
        (int64_t *)g->view.ids, (float *)g->view.weights, o->shi, o->slo, o->sum);
    k_oct_lcp<<<blocks(n), THREADS, 0, st>>>(o->shi, o->slo, n, o->lcp);
    for (int k = 0; k < 4 && !s; k++) {
        size_t sb = o->tmp_bytes;
        s = canopy_gpu_check(
            cub::DeviceScan::ExclusiveSum(o->tmp, sb, o->sum + k * (n + 1), (int)(n + 1), st),
            "summing masses");
    }
    return s;
}

/* The octree's nodes laid out on the device (oct_lay_out_device) into the view's
 * nodes and ropes, then their geometry; waits for the build. */
static canopy_status oct_nodes(const canopy_tree_options *opt, canopy_gpu_tree *g, topology *topo,
                               oct_work *o) {
    canopy_tree_view *tv = &g->view;
    const cudaStream_t st = 0;
    canopy_status s;
    int32_t nn = 0, depth = 0;
    void *hot, *rope;
    if ((s = oct_lay_out_device(tv->n, g->leaf_size, opt->order, tv->hot_stride, o->lcp, o->c,
                                o->tmp, o->tmp_bytes, o->hp_count, st, &hot, &rope, &nn, &depth)))
        return s;
    topo->n_nodes = tv->n_nodes = nn;
    topo->depth = tv->depth = depth;
    tv->hot = (const unsigned char *)hot;
    tv->rope = (const int32_t *)rope;
    k_oct_geom<<<blocks(nn), THREADS, 0, st>>>((unsigned char *)hot, tv->hot_stride, nn, o->root,
                                               o->shi, o->slo, o->sum, tv->points,
                                               opt->weights ? tv->weights : NULL, tv->n);
    if ((s = canopy_gpu_check(cudaGetLastError(), "launching the octree build")) ||
        (s = canopy_gpu_check(cudaStreamSynchronize(st), "building the octree")))
        return s;
    return CANOPY_OK;
}

static canopy_status build_oct(canopy_points pts, const canopy_tree_options *opt,
                               canopy_gpu_tree *g, topology *topo) {
    oct_work o = {};
    canopy_status s = oct_view(pts, opt, g);
    if (!s) s = oct_acquire(pts, opt, &o);
    if (s) return s;
    if (pts.n > 0 && !(s = oct_bound(pts, opt, &o))) s = oct_sort(g, &o);
    if (!s) s = oct_nodes(opt, g, topo, &o);
    canopy_gpu_pool_unlock();
    return s;
}

extern "C" canopy_status canopy_tree_build_gpu(canopy_points pts, const canopy_tree_options *opt,
                                               canopy_gpu_tree **out) {
    *out = NULL;
    double t0 = canopy_now();
    if (opt->kind != CANOPY_TREE_KD && opt->kind != CANOPY_TREE_OCT)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU tree build: %s trees are built on the host",
                           canopy_tree_kind_name(opt->kind));
    if (opt->kind == CANOPY_TREE_OCT && pts.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "oct tree needs d = 3 (got d = %d)", (int)pts.d);
    if (pts.n < 0 || pts.d < 1 || pts.stride < pts.d || (pts.n > 0 && !pts.data))
        return canopy_fail(CANOPY_ERR_INVALID, "tree points: bad shape (n=%lld, d=%d, stride=%lld)",
                           (long long)pts.n, (int)pts.d, (long long)pts.stride);
    if (pts.n >= INT32_MAX / 2)
        return canopy_fail(CANOPY_ERR_INVALID, "tree points: %lld points exceed the limit of %d",
                           (long long)pts.n, INT32_MAX / 2 - 1);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU tree build: no CUDA device");
    }
    canopy_gpu_tree *g = (canopy_gpu_tree *)calloc(1, sizeof *g);
    if (!g) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory allocating a GPU tree");
    topology topo;
    canopy_status s =
        opt->kind == CANOPY_TREE_OCT ? build_oct(pts, opt, g, &topo) : build(pts, opt, g, &topo);
    /* build_seconds: the build's kernels done, not only queued */
    if (!s) s = canopy_gpu_check(cudaStreamSynchronize(0), "GPU tree build");
    if (s) {
        cudaStreamSynchronize(0);
        canopy_gpu_tree_free(g);
        return s;
    }
    g->build_seconds = canopy_now() - t0;
    *out = g;
    return CANOPY_OK;
}

/* The host copy of a device tree: whole, or (shell) the view's sizes and the weights
 * alone, its node, point and id arrays NULL. */
static canopy_status gpu_tree_to_host(const canopy_gpu_tree *g, int shell, canopy_tree **out) {
    *out = NULL;
    const canopy_tree_view *v = &g->view;
    canopy_tree *t = (canopy_tree *)calloc(1, sizeof *t);
    if (!t) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory allocating a tree");
    int64_t n = v->n;
    int32_t nn = v->n_nodes, d = v->d;
    size_t pts_b = sizeof(float) * (size_t)(n * d);
    canopy_status s = CANOPY_OK;
    if (!shell &&
        ((s = canopy_alloc((void **)&t->hot, (size_t)nn, (size_t)v->hot_stride)) ||
         (s = canopy_alloc((void **)&t->points, (size_t)(n > 0 ? n : 1), sizeof(float) * d)) ||
         (s = canopy_alloc((void **)&t->ids, (size_t)(n > 0 ? n : 1), sizeof(int64_t))) ||
         (s = canopy_alloc((void **)&t->rope, (size_t)nn, sizeof(int32_t))) ||
         (s = canopy_alloc((void **)&t->parent, (size_t)nn, sizeof(int32_t))) ||
         (s = canopy_alloc((void **)&t->level, (size_t)nn, sizeof(int32_t))) ||
         (s = canopy_gpu_check(
              cudaMemcpy(t->hot, v->hot, (size_t)nn * v->hot_stride, cudaMemcpyDeviceToHost),
              "downloading nodes")) ||
         (s = canopy_gpu_check(cudaMemcpy(t->points, v->points, pts_b, cudaMemcpyDeviceToHost),
                               "downloading points")) ||
         (s = canopy_gpu_check(
              cudaMemcpy(t->ids, v->ids, sizeof(int64_t) * (size_t)n, cudaMemcpyDeviceToHost),
              "downloading ids")) ||
         (s = canopy_gpu_check(
              cudaMemcpy(t->rope, v->rope, sizeof(int32_t) * (size_t)nn, cudaMemcpyDeviceToHost),
              "downloading ropes")))) {
        canopy_tree_free(t);
        return s;
    }
    if (v->weights &&
        ((s = canopy_alloc((void **)&t->weights, (size_t)(n > 0 ? n : 1), sizeof(float))) ||
         (s = canopy_gpu_check(
              cudaMemcpy(t->weights, v->weights, sizeof(float) * (size_t)n, cudaMemcpyDeviceToHost),
              "downloading weights")))) {
        canopy_tree_free(t);
        return s;
    }
    /* Parents and levels from the records: every child's id exceeds its parent's in
     * both orders the builds make. */
    if (!shell) {
        t->parent[0] = -1;
        t->level[0] = 0;
    }
    for (int32_t u = 0; !shell && u < nn; u++) {
        const canopy_node *h = (const canopy_node *)(t->hot + (int64_t)u * v->hot_stride);
        for (int32_t c = 0; c < h->nchild; c++)
            t->parent[h->child + c] = u, t->level[h->child + c] = t->level[u] + 1;
    }
    t->view = *v;
    t->view.hot = t->hot;
    t->view.points = t->points;
    t->view.ids = t->ids;
    t->view.rope = t->rope;
    t->view.weights = t->weights;
    t->leaf_size = g->leaf_size;
    t->order = g->order;
    t->build_seconds = g->build_seconds;
    *out = t;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_gpu_tree_download(const canopy_gpu_tree *g, canopy_tree **out) {
    return gpu_tree_to_host(g, 0, out);
}

extern "C" canopy_status canopy_gpu_tree_host_shell(const canopy_gpu_tree *g, canopy_tree **out) {
    return gpu_tree_to_host(g, 1, out);
}
