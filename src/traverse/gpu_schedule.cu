/* SPDX-License-Identifier: MIT */
/* Morton and hilbert query schedules on the GPU (gpu_schedule.h): bounding box by
 * warp reductions, the box's scale in double as schedule.c computes it, one key per
 * query, one stable CUB radix sort of (key, index); and the kd bucket order, a
 * counting sort by the kd node each query falls in. */
#include "core/gpu.cuh"
#include "core/gpu_pool.cuh"
#include "tree/curve_key.h"
#include "traverse/gpu_schedule.h"

#include <cooperative_groups.h>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <stdlib.h>
#include <string.h>

namespace {

enum { THREADS = 256, MAX_DIMS = 63 };

__device__ __forceinline__ uint32_t ord_of(float f) {
    uint32_t u = __float_as_uint(f);
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}
__device__ __forceinline__ float float_of(uint32_t u) {
    return __uint_as_float(u & 0x80000000u ? u ^ 0x80000000u : ~u);
}

/* Bounding box of the first d coordinates and the first non-finite row. */
__global__ void k_box(const float *q, int64_t stride, int64_t n, int32_t d, uint32_t *box,
                      unsigned long long *bad) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    for (int32_t j = 0; j < d; j++) {
        uint32_t u = 0xffffffffu, v = 0;
        if (i < n) {
            float x = q[i * stride + j];
            if (!isfinite(x)) atomicMin(bad, (unsigned long long)i);
            u = v = ord_of(x);
        }
        u = __reduce_min_sync(0xffffffffu, u);
        v = __reduce_max_sync(0xffffffffu, v);
        if (lane == 0) atomicMin(&box[j], u), atomicMax(&box[MAX_DIMS + j], v);
    }
}

/* schedule.c's lo and scale per coordinate. */
__global__ void k_scale(const uint32_t *box, int32_t d, int32_t bits, double *lo, double *scale) {
    int32_t j = threadIdx.x;
    if (j >= d) return;
    float mn = float_of(box[j]), mx = float_of(box[MAX_DIMS + j]);
    lo[j] = mn;
    scale[j] = mx > mn ? ldexp(1.0, bits) / ((double)mx - (double)mn) : 0.0;
}

__global__ void k_keys(const float *q, int64_t stride, int64_t n, int32_t d, int32_t bits,
                       int use_hilbert, const double *lo, const double *scale, uint64_t *keys,
                       int64_t *idx) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint64_t x[MAX_DIMS];
    uint64_t cells = (uint64_t)1 << bits;
    for (int32_t j = 0; j < d; j++) {
        double c = __dmul_rn(__dsub_rn((double)q[i * stride + j], lo[j]), scale[j]);
        x[j] = c >= (double)cells ? cells - 1 : (uint64_t)c; /* the max lands on 2^bits */
    }
    keys[i] = use_hilbert ? canopy_hilbert_key(x, d, bits) : canopy_morton_key(x, d, bits);
    idx[i] = i;
}

__global__ void k_iota(int64_t *order, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) order[i] = i;
}

unsigned blocks(int64_t n) {
    return (unsigned)((n + THREADS - 1) / THREADS);
}

int on_device(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

enum { RESIDENT_KEY_BITS = 24 };

/* A resident query's Morton key: its first min(d, 24) coordinates on a grid of
 * 2^bits cells per axis over the box (the max lands in the last cell). */
__global__ void k_resident_keys(const float *q, int64_t n, int32_t d, const uint32_t *box,
                                uint32_t *keys, int64_t *idx) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int32_t dd = d < RESIDENT_KEY_BITS ? d : RESIDENT_KEY_BITS;
    const int32_t bits = RESIDENT_KEY_BITS / dd;
    const float cells = (float)(1u << bits);
    uint32_t x[RESIDENT_KEY_BITS];
    for (int32_t j = 0; j < dd; j++) {
        float lo = float_of(box[j]), hi = float_of(box[MAX_DIMS + j]);
        float c = hi > lo ? (q[i * d + j] - lo) * (cells / (hi - lo)) : 0.0f;
        c = c > 0.0f ? c : 0.0f; /* NaN lands in cell 0 */
        x[j] = c < cells ? (uint32_t)c : (1u << bits) - 1;
    }
    uint32_t key = 0;
    for (int32_t b = bits - 1; b >= 0; b--)
        for (int32_t j = 0; j < dd; j++) key = key << 1 | ((x[j] >> b) & 1u);
    keys[i] = key;
    idx[i] = i;
}

} // namespace

extern "C" canopy_status canopy_gpu_points_box(const float *d_pts, int64_t n, int32_t d,
                                               uint32_t *box) {
    uint32_t box0[2 * MAX_DIMS];
    for (int j = 0; j < MAX_DIMS; j++) box0[j] = 0xffffffffu, box0[MAX_DIMS + j] = 0;
    unsigned long long *bad = NULL;
    canopy_status rc = canopy_gpu_check(cudaMalloc(&bad, sizeof *bad), "index box flag");
    if (!rc)
        rc = canopy_gpu_check(cudaMemcpy(box, box0, sizeof box0, cudaMemcpyHostToDevice),
                              "clearing the index box");
    if (!rc && n > 0) {
        /* the points are finite (checked at build): the flag is only a sink */
        k_box<<<blocks(n), THREADS>>>(d_pts, d, n, d < MAX_DIMS ? d : MAX_DIMS, box, bad);
        rc = canopy_gpu_check(cudaDeviceSynchronize(), "the index box");
    }
    cudaFree(bad);
    return rc;
}

namespace {
/* Key bits for d coordinates: the same number of bits for each of min(d, 24). */
int resident_end_bit(int32_t d) {
    const int32_t dd = d < RESIDENT_KEY_BITS ? d : RESIDENT_KEY_BITS;
    return RESIDENT_KEY_BITS / dd * dd;
}

canopy_status resident_sort_bytes(int64_t nq, int32_t d, size_t *sort_bytes) {
    *sort_bytes = 0;
    return canopy_gpu_check(cub::DeviceRadixSort::SortPairs(
                                nullptr, *sort_bytes, (const uint32_t *)nullptr,
                                (uint32_t *)nullptr, (const int64_t *)nullptr, (int64_t *)nullptr,
                                (int)nq, 0, resident_end_bit(d), (cudaStream_t)0),
                            "sizing the query sort");
}
} // namespace

extern "C" canopy_status canopy_gpu_morton_scratch(int64_t nq, int32_t d, size_t *bytes) {
    size_t sort_bytes;
    canopy_status rc = resident_sort_bytes(nq, d, &sort_bytes);
    typedef canopy_gpu_carve C;
    *bytes = C::bytes<uint32_t>(nq) * 2 + C::bytes<int64_t>(nq) +
             C::bytes<unsigned char>((int64_t)sort_bytes);
    return rc;
}

extern "C" canopy_status canopy_gpu_morton_order(const float *d_q, int64_t nq, int32_t d,
                                                 const uint32_t *box, void *scratch,
                                                 size_t scratch_bytes, int64_t *d_order,
                                                 void *stream) {
    if (nq <= 0) return CANOPY_OK;
    if (nq >= INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "queries: %lld exceed the GPU sort's limit",
                           (long long)nq);
    size_t sort_bytes, need;
    canopy_status rc;
    if ((rc = resident_sort_bytes(nq, d, &sort_bytes)) ||
        (rc = canopy_gpu_morton_scratch(nq, d, &need)))
        return rc;
    if (need > scratch_bytes)
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU query sort: scratch too small");
    cudaStream_t st = (cudaStream_t)stream;
    canopy_gpu_carve c = {(unsigned char *)scratch, 0};
    uint32_t *ka = c.take<uint32_t>(nq), *kb = c.take<uint32_t>(nq);
    int64_t *va = c.take<int64_t>(nq);
    void *tmp = c.take<unsigned char>((int64_t)sort_bytes);
    k_resident_keys<<<blocks(nq), THREADS, 0, st>>>(d_q, nq, d, box, ka, va);
    if ((rc = canopy_gpu_check(cudaGetLastError(), "query keys"))) return rc;
    return canopy_gpu_check(cub::DeviceRadixSort::SortPairs(tmp, sort_bytes, ka, kb, va, d_order,
                                                            (int)nq, 0, resident_end_bit(d), st),
                            "sorting the queries");
}

namespace {

/* A node of the descent table: the first child (-1 where the descent stops: a leaf,
 * or at most `most` points), the split dimension and the left child's upper bound in
 * it, where the children's boxes meet. A stop node the descent reaches gets its
 * bucket number in .y (k_kd_bucket_numbers). */
__global__ void k_kd_descent(canopy_tree_view t, int32_t most, int4 *table) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= t.n_nodes) return;
    const int4 h = __ldg((const int4 *)(t.hot + i * t.hot_stride)); /* child, nchild, begin, end */
    int4 e = make_int4(-1, 0, 0, 0);
    if (h.x >= 0 && h.w - h.z > most) {
        const float *g = (const float *)(t.hot + i * t.hot_stride + sizeof(canopy_node));
        const float *left =
            (const float *)(t.hot + (int64_t)h.x * t.hot_stride + sizeof(canopy_node));
        int32_t dim = (int32_t)__ldg(g + 2 * t.d);
        if (dim < 0 || dim >= t.d) dim = 0; /* any side is correct, only less aligned */
        e = make_int4(h.x, dim, __float_as_int(__ldg(left + t.d + dim)), 0);
    }
    table[i] = e;
}

/* What the kd bucket order keeps between its kernels and its calls (the state's head):
 * the blocks of the counting kernel that finished (the last one scans, then clears
 * it), the number of buckets, and the grid over the root's box that starts a query's
 * descent (bits per axis, 0: no grid; its origin and cells per unit). */
struct kd_order_meta {
    unsigned done;
    int32_t nb;
    int32_t bits;
    int32_t pad;
    float lo[3], inv[3];
};

/* The buckets (stop nodes the descent reaches: the root, or a stop child of a node it
 * goes through) mark the tree position where their points begin; a scan of the marks
 * numbers them in tree order. An empty bucket shares the number of the next one (one
 * counter for both: still a permutation). */
__global__ void k_kd_bucket_marks(canopy_tree_view t, const int4 *table, int32_t *marks) {
    const int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (u >= t.n_nodes) return;
    const int32_t c = __ldg((const int32_t *)(table + u));
    if (u == 0 && c < 0) marks[0] = 1;
    for (int32_t j = 0; c >= 0 && j < 2; j++) {
        if (__ldg((const int32_t *)(table + c + j)) >= 0) continue;
        marks[__ldg((const int32_t *)(t.hot + (int64_t)(c + j) * t.hot_stride) + 2)] = 1;
    }
}

/* bnode[b] (cleared to -1): bucket b's node, the largest of those sharing the number
 * (any of them is a correct start for the walk; the largest keeps it deterministic). */
__global__ void k_kd_bucket_numbers(canopy_tree_view t, int4 *table, const int32_t *marks,
                                    const int32_t *numbers, kd_order_meta *meta, int32_t *bnode) {
    const int64_t u = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (u >= t.n_nodes) return;
    const int32_t c = ((const int32_t *)(table + u))[0];
    if (u == 0) {
        meta->nb = numbers[t.n] + marks[t.n];
        if (c < 0) ((int32_t *)(table + u))[1] = 0, bnode[0] = 0;
    }
    for (int32_t j = 0; c >= 0 && j < 2; j++) {
        if (((const int32_t *)(table + c + j))[0] >= 0) continue;
        const int32_t begin = __ldg((const int32_t *)(t.hot + (int64_t)(c + j) * t.hot_stride) + 2);
        ((int32_t *)(table + c + j))[1] = numbers[begin];
        atomicMax(bnode + numbers[begin], c + j);
    }
}

/* Grid bits per axis for d <= 3 (about a million cells: 4 MB of int32 a tree), 0 above. */
int kd_grid_bits(int32_t d) {
    return d == 1 ? 20 : d == 2 ? 10 : d == 3 ? 6 : 0;
}

/* The grid's origin and scale from the root's box (the points' box). */
__global__ void k_kd_grid_meta(canopy_tree_view t, int32_t bits, kd_order_meta *meta) {
    const int32_t j = threadIdx.x;
    meta->done = 0;
    meta->bits = bits;
    if (j >= 3) return;
    const float *g = (const float *)(t.hot + sizeof(canopy_node));
    const float lo = j < t.d ? g[j] : 0.0f, hi = j < t.d ? g[t.d + j] : 0.0f;
    meta->lo[j] = lo;
    meta->inv[j] = hi > lo ? (float)(1 << bits) / (hi - lo) : 0.0f;
}

/* Each grid cell: the deepest node of the descent that every point of the cell takes
 * (it stops where a split cuts the cell, or at the cell's bucket). A query starts its
 * descent there: one load instead of the top levels' chain. The cell's edges are
 * rounded, so a query near one may start beside its own path: it then ends in a
 * neighbouring bucket, which only costs locality (any bucket is a correct start).
 * bucketed (the shared form): a cell inside one bucket holds ~(its number), so most
 * queries load nothing after the grid. */
__global__ void k_kd_grid(const int4 *table, const kd_order_meta *meta, int32_t d, bool bucketed,
                          int32_t *grid) {
    const int32_t bits = meta->bits, side = 1 << bits;
    const int64_t g = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (g >= (int64_t)1 << (bits * d)) return;
    float clo[3], chi[3];
    int64_t rest = g;
    for (int32_t j = d - 1; j >= 0; j--) {
        const int32_t c = (int32_t)(rest % side);
        rest /= side;
        const float w = meta->inv[j] > 0.0f ? 1.0f / meta->inv[j] : 0.0f;
        clo[j] = meta->lo[j] + (float)c * w;
        chi[j] = meta->lo[j] + (float)(c + 1) * w;
    }
    int32_t n = 0;
    int4 e = table[0];
    while (e.x >= 0) {
        const float split = __int_as_float(e.z);
        if (chi[e.y] <= split)
            n = e.x;
        else if (clo[e.y] > split)
            n = e.x + 1;
        else
            break;
        e = table[n];
    }
    grid[g] = bucketed && e.x < 0 ? ~e.y : n;
}

/* Blocks of 1024 (the last one scans up to 8192 counts a tile), two an SM: at 64
 * registers one fitted an SM and 200k queries took two waves (H200, ncu: 28 us). */
enum { ORDER_THREADS = 1024, ORDER_ITEMS = 8 };
typedef cub::BlockScan<int32_t, ORDER_THREADS> order_scan_t;

/* Entries a count or first buffer of nb buckets spans: whole vectors of eight. */
__host__ __device__ inline int64_t order_span(int64_t nb) {
    return (nb + 7) / 8 * 8;
}

/* first[b] := count[0] + ... + count[b - 1] for b < nb, by a block of ORDER_THREADS,
 * ORDER_ITEMS counts a thread a tile; first may lie in shared memory, and is complete
 * for every thread when it returns. Both are 16-byte aligned and span order_span(nb)
 * entries: a thread's eight counts are two vector loads, its firsts two vector stores
 * (scalar ones, eight apart, cost 6.6-way bank conflicts and a third of each sector;
 * ncu, H200). */
__device__ __forceinline__ void scan_counts(const int32_t *count, int32_t nb, int32_t *first,
                                            order_scan_t::TempStorage &tmp) {
    static_assert(ORDER_ITEMS == 8, "a thread's counts are two int4");
    int32_t carry = 0;
    for (int32_t t0 = 0; t0 < nb; t0 += ORDER_THREADS * ORDER_ITEMS) {
        const int32_t b0 = t0 + (int32_t)threadIdx.x * ORDER_ITEMS;
        int4 lo = make_int4(0, 0, 0, 0), hi = lo;
        if (b0 < nb) {
            lo = __ldcg((const int4 *)(count + b0));
            hi = __ldcg((const int4 *)(count + b0 + 4));
        }
        int32_t v[ORDER_ITEMS] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w}, sum = 0;
#pragma unroll
        for (int u = 0; u < ORDER_ITEMS; u++) {
            if (b0 + u >= nb) v[u] = 0;
            sum += v[u];
        }
        int32_t before, total, f[ORDER_ITEMS];
        order_scan_t(tmp).ExclusiveSum(sum, before, total);
        before += carry;
#pragma unroll
        for (int u = 0; u < ORDER_ITEMS; u++) {
            f[u] = before;
            before += v[u];
        }
        if (b0 < nb) {
            *(int4 *)(first + b0) = make_int4(f[0], f[1], f[2], f[3]);
            *(int4 *)(first + b0 + 4) = make_int4(f[4], f[5], f[6], f[7]);
        }
        carry += total;
        __syncthreads(); /* tmp is reused by the next tile; first is read after */
    }
}

/* The rank of the lane's query among its bucket b's from one atomic per bucket a warp
 * reaches (where query clusters fall into few buckets, per-query atomics on one counter
 * serialise the kernel). */
__device__ __forceinline__ int32_t warp_rank(int32_t *count, int32_t b) {
    const unsigned same = __match_any_sync(__activemask(), b);
    const int lane = (int)(threadIdx.x & 31), leader = __ffs(same) - 1;
    int32_t base = 0;
    if (lane == leader) base = atomicAdd(count + b, __popc(same));
    base = __shfl_sync(same, base, leader);
    return base + __popc(same & ((1u << lane) - 1));
}

/* A query's bucket (gpu_schedule.h): its grid cell's node, then down the table, one
 * 16-byte load a level; its rank among the bucket's queries from one atomic per bucket
 * a warp reaches (where query clusters fall into few buckets, per-query atomics on one
 * counter serialise the kernel). slot[i] := (node, rank). The last block to finish
 * scans the counts into each bucket's first position (no separate scan kernel, no
 * counts to clear: the scatter clears them). */
__global__ void __launch_bounds__(ORDER_THREADS, 2)
    k_kd_order_count(const int4 *table, const int32_t *grid, kd_order_meta *meta, const float *q,
                     int64_t nq, int32_t d, int32_t *count, int32_t *first, int2 *slot) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nq) {
        const float *p = q + i * d;
        /* low dimensions in registers: a split dimension then needs no load */
        const float q0 = __ldg(p), q1 = d > 1 ? __ldg(p + 1) : 0.0f,
                    q2 = d > 2 ? __ldg(p + 2) : 0.0f;
        int32_t n = 0;
        const int32_t bits = grid ? meta->bits : 0;
        if (bits) {
            const float side = (float)((1 << bits) - 1);
            int32_t cell = 0;
            for (int32_t j = 0; j < d; j++) {
                const float x = j == 0 ? q0 : j == 1 ? q1 : q2;
                /* NaN lands in cell 0, infinities on the edges */
                const float c = fminf(fmaxf((x - meta->lo[j]) * meta->inv[j], 0.0f), side);
                cell = (cell << bits) | (int32_t)c;
            }
            n = __ldg(grid + cell);
        }
        int4 e = __ldg(table + n);
        while (e.x >= 0) {
            const float x = e.y == 0 ? q0 : e.y == 1 ? q1 : e.y == 2 ? q2 : __ldg(p + e.y);
            n = e.x + (x > __int_as_float(e.z));
            e = __ldg(table + n);
        }
        slot[i] = make_int2(n, warp_rank(count, e.y));
    }
    /* the last block: every count is final (each block's atomics returned before its
     * barrier; the fence orders them before its arrival) */
    __shared__ bool last;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicAdd(&meta->done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    __shared__ order_scan_t::TempStorage tmp;
    scan_counts(count, __ldcg(&meta->nb), first, tmp);
    if (threadIdx.x == 0) meta->done = 0;
}

/* Each query to its place; the first of a bucket clears the bucket's count for the
 * next call. */
__global__ void k_kd_order_scatter(const int4 *table, int64_t nq, int32_t *count,
                                   const int32_t *first, const int2 *slot, int64_t *order,
                                   int32_t *bucket) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    const int2 s = slot[i];
    const int32_t b = __ldg((const int32_t *)(table + s.x) + 1);
    const int64_t at = (int64_t)first[b] + s.y;
    order[at] = i;
    bucket[at] = s.x;
    if (s.y == 0) count[b] = 0;
}

/* The shared form's grid, as kernel arguments (read back once at the make). */
struct kd_grid_args {
    int32_t bits;
    float lo[3], inv[3];
};

/* The shared form's two kernels overlap their launch (programmatic dependent launch,
 * Hopper): the ranking kernel lets the scatter's blocks start as soon as its own have,
 * and the scatter waits for every rank before it reads one (its launch and block
 * start-up then hide behind the ranking's tail). Elsewhere both are no-ops. */
__device__ __forceinline__ void ranks_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;");
#endif
}
__device__ __forceinline__ void ranks_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/* A query's bucket number (the shared and fused forms): its grid cell names the bucket
 * where the cell lies inside one; else the descent goes on from the cell's node, one
 * 16-byte load a level. */
__device__ __forceinline__ int32_t query_bucket(const int4 *table, const int32_t *grid,
                                                const kd_grid_args &g, const float *p, int32_t d) {
    const float x[3] = {__ldg(p), d > 1 ? __ldg(p + 1) : 0.0f, d > 2 ? __ldg(p + 2) : 0.0f};
    int32_t n = 0;
    if (grid) {
        const float side = (float)((1 << g.bits) - 1);
        int32_t cell = 0;
#pragma unroll
        for (int32_t j = 0; j < 3; j++)
            if (j < d) /* NaN lands in cell 0, infinities on the edges */
                cell = (cell << g.bits) |
                       (int32_t)fminf(fmaxf((x[j] - g.lo[j]) * g.inv[j], 0.0f), side);
        n = __ldg(grid + cell);
        if (n < 0) return ~n;
    }
    int4 e = __ldg(table + n);
    while (e.x >= 0) {
        const float c = e.y == 0 ? x[0] : e.y == 1 ? x[1] : e.y == 2 ? x[2] : __ldg(p + e.y);
        e = __ldg(table + e.x + (c > __int_as_float(e.z)));
    }
    return e.y;
}

/* The shared form's ranks: a query's bucket number and its rank among the bucket's
 * queries from one atomic per bucket a warp reaches. slot[i] := (bucket number, rank).
 * No block barrier and no scan after it (07309b7's counting kernel, ncu: 31 % of its
 * stalls at the barrier before the last block's scan): the scatter scans. */
__global__ void k_kd_order_rank(const int4 *table, const int32_t *grid, kd_grid_args g,
                                const float *q, int64_t nq, int32_t d, int32_t *count, int2 *slot) {
    ranks_release();
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= nq) return;
    const int32_t b = query_bucket(table, grid, g, q + i * d, d);
    slot[i] = make_int2(b, warp_rank(count, b));
}

/* Blocks of 1024 threads at 64 registers fill an SM: two queries a thread keep 200k
 * queries in one wave of blocks on the H200's 132 SMs. */
enum { PLACE_THREADS = ORDER_THREADS, PLACE_QUERIES = 2 };

/* A scatter block's start: the nb bucket counts scanned into each bucket's first
 * position in shared memory (32 KB of L2 reads a block at 8k buckets), and the block's
 * share of the counts the next call takes cleared. */
__device__ __forceinline__ void block_firsts(const int32_t *count, int32_t nb, int32_t *first,
                                             int32_t *next_count, order_scan_t::TempStorage &tmp) {
    scan_counts(count, nb, first, tmp);
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < nb;
         j += (int64_t)gridDim.x * blockDim.x)
        next_count[j] = 0;
}

/* The shared form's scatter: each block loads its slots and bucket nodes (in flight
 * during its scan), then puts each query at its bucket's first position plus its rank,
 * with the bucket's node beside it. */
__global__ void __launch_bounds__(PLACE_THREADS)
    k_kd_order_place(int32_t nb, int64_t nq, const int32_t *count, int32_t *next_count,
                     const int32_t *bnode, const int2 *slot, int64_t *order, int32_t *bucket) {
    extern __shared__ int4 first_vectors[];
    int32_t *first = (int32_t *)first_vectors;
    __shared__ order_scan_t::TempStorage tmp;
    ranks_wait();
    const int64_t i0 = (int64_t)blockIdx.x * PLACE_THREADS * PLACE_QUERIES + threadIdx.x;
    int2 s[PLACE_QUERIES];
    int32_t node[PLACE_QUERIES];
#pragma unroll
    for (int u = 0; u < PLACE_QUERIES; u++)
        s[u] = i0 + u * PLACE_THREADS < nq ? slot[i0 + u * PLACE_THREADS] : make_int2(0, 0);
#pragma unroll
    for (int u = 0; u < PLACE_QUERIES; u++)
        node[u] = i0 + u * PLACE_THREADS < nq ? __ldg(bnode + s[u].x) : 0;
    block_firsts(count, nb, first, next_count, tmp);
#pragma unroll
    for (int u = 0; u < PLACE_QUERIES; u++) {
        const int64_t i = i0 + u * PLACE_THREADS;
        if (i >= nq) break;
        const int64_t at = (int64_t)first[s[u].x] + s[u].y;
        order[at] = i;
        bucket[at] = node[u];
    }
}

/* Queries a thread of the fused form takes at most: past FUSED_QUERIES times the threads
 * that fit the GPU at once, a call runs the shared form. */
enum { FUSED_QUERIES = 4 };

/* The fused form: the shared form's ranking and scatter in one cooperative kernel. A
 * thread keeps its queries' buckets, ranks and bucket nodes in registers across one
 * grid-wide barrier: no slot array written and read back, no second launch. */
__global__ void __launch_bounds__(PLACE_THREADS)
    k_kd_order_fused(const int4 *table, const int32_t *grid, kd_grid_args g, const float *q,
                     int64_t nq, int32_t d, int32_t nb, int32_t *count, int32_t *next_count,
                     const int32_t *bnode, int64_t *order, int32_t *bucket) {
    extern __shared__ int4 first_vectors[];
    int32_t *first = (int32_t *)first_vectors;
    __shared__ order_scan_t::TempStorage tmp;
    const int64_t stride = (int64_t)gridDim.x * PLACE_THREADS,
                  i0 = (int64_t)blockIdx.x * PLACE_THREADS + threadIdx.x;
    int32_t b[FUSED_QUERIES] = {0}, r[FUSED_QUERIES] = {0}, node[FUSED_QUERIES] = {0};
#pragma unroll
    for (int u = 0; u < FUSED_QUERIES; u++) {
        const int64_t i = i0 + u * stride;
        if (i >= nq) break;
        b[u] = query_bucket(table, grid, g, q + i * d, d);
        r[u] = warp_rank(count, b[u]);
        node[u] = __ldg(bnode + b[u]);
    }
    cooperative_groups::this_grid().sync(); /* every count is final */
    block_firsts(count, nb, first, next_count, tmp);
#pragma unroll
    for (int u = 0; u < FUSED_QUERIES; u++) {
        const int64_t i = i0 + u * stride;
        if (i >= nq) break;
        const int64_t at = (int64_t)first[b[u]] + r[u];
        order[at] = i;
        bucket[at] = node[u];
    }
}

/* The state's layout (kd_order_meta, table, grid, two count buffers, firsts, bucket
 * nodes, then what the making alone uses: marks, numbers, the scan's scratch). */
struct kd_order_parts {
    kd_order_meta *meta;
    int4 *table;
    int32_t *grid, *count, *first, *bnode, *marks, *numbers;
    void *tmp;
    size_t tmp_bytes, bytes;
};

canopy_status kd_order_layout(const canopy_tree_view *dt, void *state, kd_order_parts *P) {
    typedef canopy_gpu_carve C;
    const int32_t bits = kd_grid_bits(dt->d);
    P->tmp_bytes = 0;
    canopy_status rc =
        canopy_gpu_check(cub::DeviceScan::ExclusiveSum(nullptr, P->tmp_bytes, (int32_t *)nullptr,
                                                       (int32_t *)nullptr, (int)(dt->n + 1)),
                         "sizing the bucket numbering");
    C c = {(unsigned char *)state, 0};
    P->meta = c.take<kd_order_meta>(1);
    P->table = c.take<int4>(dt->n_nodes);
    P->grid = bits ? c.take<int32_t>((int64_t)1 << (bits * dt->d)) : nullptr;
    P->count = c.take<int32_t>(2 * order_span(dt->n_nodes));
    P->first = c.take<int32_t>(order_span(dt->n_nodes));
    P->bnode = c.take<int32_t>(dt->n_nodes);
    P->marks = c.take<int32_t>(dt->n + 1);
    P->numbers = c.take<int32_t>(dt->n + 1);
    P->tmp = c.take<unsigned char>((int64_t)P->tmp_bytes);
    P->bytes = c.used;
    return rc;
}

/* CANOPY_GPU_ORDER: canopy_gpu_kd_bucket_order's forms. */
enum kd_order_form_kind { FORM_TWO, FORM_SHARED, FORM_FUSED };
canopy_status kd_order_form(int *form) {
    const char *f = getenv("CANOPY_GPU_ORDER");
    *form = !f || !*f || !strcmp(f, "fused") ? FORM_FUSED
            : !strcmp(f, "shared")           ? FORM_SHARED
            : !strcmp(f, "two")              ? FORM_TWO
                                             : -1;
    if (*form < 0)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "CANOPY_GPU_ORDER=%s: use fused, shared or two (or unset it)", f);
    return CANOPY_OK;
}

/* The shared form where its bucket counts fit a block's shared memory: the bucket
 * count and the grid's box from the device (the make's one synchronisation); with the
 * fused form, the blocks of its kernel that fit the GPU at once. */
canopy_status kd_order_shared(const kd_order_parts *P, int form, cudaStream_t st,
                              canopy_gpu_kd_order *o) {
    kd_order_meta m;
    int dev = 0, optin = 0, sms = 0, coop = 0, per_sm = 0;
    canopy_status rc;
    if ((rc = canopy_gpu_check(cudaMemcpyAsync(&m, P->meta, sizeof m, cudaMemcpyDeviceToHost, st),
                               "kd bucket order tables")) ||
        (rc = canopy_gpu_check(cudaStreamSynchronize(st), "kd bucket order tables")) ||
        (rc = canopy_gpu_check(cudaGetDevice(&dev), "cudaGetDevice")) ||
        (rc = canopy_gpu_check(
             cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev),
             "cudaDeviceGetAttribute")) ||
        (rc = canopy_gpu_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
                               "cudaDeviceGetAttribute")) ||
        (rc = canopy_gpu_check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev),
                               "cudaDeviceGetAttribute")))
        return rc;
    /* the counts beside the scan's own shared memory; the limit is the largest any index
     * takes (the attribute is the kernel's, not the launch's) */
    const size_t scan_bytes = sizeof(order_scan_t::TempStorage),
                 most = sizeof(int32_t) * CANOPY_GPU_ORDER_SHARED_BUCKETS,
                 limit = most + scan_bytes <= (size_t)optin ? most : (size_t)optin - scan_bytes,
                 firsts = sizeof(int32_t) * (size_t)order_span(m.nb);
    if (firsts > limit) return CANOPY_OK;
    if ((rc = canopy_gpu_check(cudaFuncSetAttribute(k_kd_order_place,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    (int)limit),
                               "kd bucket order shared memory")) ||
        (rc = canopy_gpu_check(cudaFuncSetAttribute(k_kd_order_fused,
                                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                    (int)limit),
                               "kd bucket order shared memory")) ||
        (form == FORM_FUSED && coop &&
         (rc = canopy_gpu_check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                                    &per_sm, k_kd_order_fused, PLACE_THREADS, firsts),
                                "kd bucket order occupancy"))))
        return rc;
    o->shared = 1;
    o->fused_blocks = form == FORM_FUSED && coop ? per_sm * sms : 0;
    o->nb = m.nb;
    o->bits = m.bits;
    for (int j = 0; j < 3; j++) o->lo[j] = m.lo[j], o->inv[j] = m.inv[j];
    return CANOPY_OK;
}

} // namespace

extern "C" canopy_status canopy_gpu_kd_order_bytes(const canopy_tree_view *dt, size_t *bytes) {
    kd_order_parts P;
    canopy_status rc = kd_order_layout(dt, nullptr, &P);
    *bytes = P.bytes;
    return rc;
}

extern "C" canopy_status canopy_gpu_kd_order_make(const canopy_tree_view *dt, int32_t most,
                                                  void *state, void *stream,
                                                  canopy_gpu_kd_order *made) {
    memset(made, 0, sizeof *made);
    if (dt->n_nodes <= 0) return CANOPY_OK;
    if (dt->n >= INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "points: %lld exceed the GPU bucket order's limit",
                           (long long)dt->n);
    const cudaStream_t st = (cudaStream_t)stream;
    kd_order_parts P;
    int form = 0;
    canopy_status rc = kd_order_form(&form);
    if (rc || (rc = kd_order_layout(dt, state, &P))) return rc;
    made->meta = P.meta;
    made->table = P.table;
    made->grid = P.grid;
    made->count = P.count;
    made->first = P.first;
    made->bnode = P.bnode;
    made->n_nodes = dt->n_nodes;
    const int32_t bits = kd_grid_bits(dt->d);
    const unsigned nb = blocks(dt->n_nodes);
    if ((rc = canopy_gpu_check(
             cudaMemsetAsync(P.count, 0, sizeof(int32_t) * 2 * order_span(dt->n_nodes), st),
             "clearing bucket counts")) ||
        (rc = canopy_gpu_check(cudaMemsetAsync(P.bnode, 0xff, sizeof(int32_t) * dt->n_nodes, st),
                               "clearing bucket nodes")) ||
        (rc = canopy_gpu_check(cudaMemsetAsync(P.marks, 0, sizeof(int32_t) * (dt->n + 1), st),
                               "clearing bucket marks")))
        return rc;
    k_kd_descent<<<nb, THREADS, 0, st>>>(*dt, most, P.table);
    k_kd_bucket_marks<<<nb, THREADS, 0, st>>>(*dt, P.table, P.marks);
    if ((rc = canopy_gpu_check(cub::DeviceScan::ExclusiveSum(P.tmp, P.tmp_bytes, P.marks, P.numbers,
                                                             (int)(dt->n + 1), st),
                               "numbering the buckets")))
        return rc;
    k_kd_bucket_numbers<<<nb, THREADS, 0, st>>>(*dt, P.table, P.marks, P.numbers, P.meta, P.bnode);
    k_kd_grid_meta<<<1, 32, 0, st>>>(*dt, bits, P.meta);
    if (form != FORM_TWO &&
        ((rc = canopy_gpu_check(cudaGetLastError(), "kd bucket order tables")) ||
         (rc = kd_order_shared(&P, form, st, made))))
        return rc;
    if (bits)
        k_kd_grid<<<blocks((int64_t)1 << (bits * dt->d)), THREADS, 0, st>>>(
            P.table, P.meta, dt->d, made->shared != 0, P.grid);
    return canopy_gpu_check(cudaGetLastError(), "kd bucket order tables");
}

extern "C" canopy_status canopy_gpu_kd_order_clear(const canopy_gpu_kd_order *o, void *stream) {
    if (o->n_nodes <= 0) return CANOPY_OK;
    const cudaStream_t st = (cudaStream_t)stream;
    canopy_status rc = canopy_gpu_check(
        cudaMemsetAsync(o->count, 0, sizeof(int32_t) * 2 * order_span(o->n_nodes), st),
        "clearing bucket counts");
    if (!rc)
        rc = canopy_gpu_check(cudaMemsetAsync(o->meta, 0, sizeof(unsigned), st),
                              "clearing the bucket order");
    return rc;
}

extern "C" size_t canopy_gpu_kd_bucket_scratch(int64_t nq) {
    return canopy_gpu_carve::bytes<int2>(nq);
}

extern "C" canopy_status canopy_gpu_kd_bucket_order(canopy_gpu_kd_order *o, int32_t d,
                                                    const float *d_q, int64_t nq, void *scratch,
                                                    size_t scratch_bytes, int64_t *d_order,
                                                    int32_t *d_bucket, void *stream) {
    if (nq <= 0) return CANOPY_OK;
    if (nq >= INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "queries: %lld exceed the GPU sort's limit",
                           (long long)nq);
    if (canopy_gpu_kd_bucket_scratch(nq) > scratch_bytes)
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU bucket order: scratch too small");
    const cudaStream_t st = (cudaStream_t)stream;
    const int4 *table = (const int4 *)o->table;
    int2 *slot = (int2 *)scratch;
    if (o->shared) {
        /* this call counts in one buffer; its scatter clears the other for the next */
        const int64_t span = order_span(o->n_nodes), half = (o->calls & 1u) * span;
        int32_t *count = o->count + half, *next = o->count + (span - half);
        o->calls++;
        kd_grid_args g;
        g.bits = o->bits;
        for (int j = 0; j < 3; j++) g.lo[j] = o->lo[j], g.inv[j] = o->inv[j];
        const size_t firsts = sizeof(int32_t) * (size_t)order_span(o->nb);
        if (nq <= (int64_t)o->fused_blocks * PLACE_THREADS * FUSED_QUERIES) {
            /* as many blocks as queries need, up to all that fit at once */
            const int64_t want = (nq + PLACE_THREADS - 1) / PLACE_THREADS;
            cudaLaunchAttribute coop;
            coop.id = cudaLaunchAttributeCooperative;
            coop.val.cooperative = 1;
            cudaLaunchConfig_t fused = {};
            fused.gridDim = dim3((unsigned)(want < o->fused_blocks ? want : o->fused_blocks));
            fused.blockDim = dim3(PLACE_THREADS);
            fused.dynamicSmemBytes = firsts;
            fused.stream = st;
            fused.attrs = &coop;
            fused.numAttrs = 1;
            const cudaError_t e = cudaLaunchKernelEx(
                &fused, k_kd_order_fused, table, (const int32_t *)o->grid, g, d_q, nq, d, o->nb,
                count, next, (const int32_t *)o->bnode, d_order, d_bucket);
            if (e != cudaErrorCooperativeLaunchTooLarge)
                return canopy_gpu_check(e, "grouping queries by bucket");
            /* fewer SMs than the device has (MPS, a partitioned GPU): the shared form, now
             * and from now on */
            cudaGetLastError();
            o->fused_blocks = 0;
        }
        k_kd_order_rank<<<blocks(nq), THREADS, 0, st>>>(table, o->grid, g, d_q, nq, d, count, slot);
        const int64_t per_block = PLACE_THREADS * PLACE_QUERIES;
        cudaLaunchAttribute early;
        early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
        early.val.programmaticStreamSerializationAllowed = 1;
        cudaLaunchConfig_t place = {};
        place.gridDim = dim3((unsigned)((nq + per_block - 1) / per_block));
        place.blockDim = dim3(PLACE_THREADS);
        place.dynamicSmemBytes = firsts;
        place.stream = st;
        place.attrs = &early;
        place.numAttrs = 1;
        canopy_status rc = canopy_gpu_check(cudaGetLastError(), "grouping queries by bucket");
        return rc ? rc
                  : canopy_gpu_check(cudaLaunchKernelEx(&place, k_kd_order_place, o->nb, nq,
                                                        (const int32_t *)count, next,
                                                        (const int32_t *)o->bnode,
                                                        (const int2 *)slot, d_order, d_bucket),
                                     "grouping queries by bucket");
    }
    k_kd_order_count<<<(unsigned)((nq + ORDER_THREADS - 1) / ORDER_THREADS), ORDER_THREADS, 0,
                       st>>>(table, o->grid, (kd_order_meta *)o->meta, d_q, nq, d, o->count,
                             o->first, slot);
    k_kd_order_scatter<<<blocks(nq), THREADS, 0, st>>>(table, nq, o->count, o->first, slot, d_order,
                                                       d_bucket);
    return canopy_gpu_check(cudaGetLastError(), "grouping queries by bucket");
}

extern "C" canopy_status canopy_gpu_schedule_queries(canopy_schedule s, canopy_points queries,
                                                     int64_t *order) {
    const int64_t n = queries.n;
    if (s != CANOPY_SCHEDULE_NONE && s != CANOPY_SCHEDULE_MORTON && s != CANOPY_SCHEDULE_HILBERT)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "GPU schedule: %s is computed on the host (morton, hilbert and none "
                           "run on the GPU)",
                           canopy_schedule_name(s));
    if (n < 0 || queries.d < 1 || queries.stride < queries.d || (n > 0 && !queries.data) ||
        (n > 0 && !order))
        return canopy_fail(CANOPY_ERR_INVALID, "queries: bad shape (n=%lld, d=%d, stride=%lld)",
                           (long long)n, (int)queries.d, (long long)queries.stride);
    if (n >= INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "queries: %lld exceed the GPU schedule's limit",
                           (long long)n);
    if (n == 0) return CANOPY_OK;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU schedule: no CUDA device");
    }
    const cudaStream_t st = 0;
    const int32_t d = queries.d < MAX_DIMS ? queries.d : MAX_DIMS;
    const int32_t bits = 63 / d;
    const int in_dev = on_device(queries.data), out_dev = on_device(order);
    /* Host queries are staged compactly: only the d coordinates the keys read. */
    const int64_t in_stride = in_dev ? queries.stride : d;
    size_t in_bytes = in_dev ? 0 : sizeof(float) * (size_t)(n * d);
    size_t out_bytes = out_dev ? 0 : sizeof(int64_t) * (size_t)n;
    size_t sort_bytes = 0;
    canopy_status rc;
    {
        cub::DoubleBuffer<uint64_t> kb(nullptr, nullptr);
        cub::DoubleBuffer<int64_t> vb(nullptr, nullptr);
        if ((rc = canopy_gpu_check(
                 cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, kb, vb, (int)n, 0, 64, st),
                 "sizing the sort")))
            return rc;
    }
    typedef canopy_gpu_carve C;
    size_t scratch = C::bytes<uint64_t>(n) * 2 + C::bytes<int64_t>(n) * 2 +
                     C::bytes<uint32_t>(2 * MAX_DIMS) + C::bytes<double>(2 * MAX_DIMS) +
                     C::bytes<unsigned long long>(1) + C::bytes<unsigned char>((int64_t)in_bytes) +
                     C::bytes<unsigned char>((int64_t)sort_bytes);
    unsigned char *dbase, *hbase;
    if ((rc = canopy_gpu_pool_acquire(scratch, in_bytes + out_bytes + 64, &dbase, &hbase)))
        return rc;
    C c = {dbase, 0};
    uint64_t *ka = c.take<uint64_t>(n), *kb = c.take<uint64_t>(n);
    int64_t *va = c.take<int64_t>(n), *vb = c.take<int64_t>(n);
    uint32_t *box = c.take<uint32_t>(2 * MAX_DIMS);
    double *lo = c.take<double>(MAX_DIMS), *scale = c.take<double>(MAX_DIMS);
    unsigned long long *bad = c.take<unsigned long long>(1);
    unsigned char *staged = c.take<unsigned char>((int64_t)in_bytes);
    void *sort_tmp = c.take<unsigned char>((int64_t)sort_bytes);
    const float *q = queries.data;
    unsigned long long first_bad = ~0ull;
    if (!in_dev) {
        for (int64_t i = 0; i < n; i++)
            memcpy(hbase + sizeof(float) * (size_t)(i * d), canopy_point(queries, i),
                   sizeof(float) * (size_t)d);
        q = (const float *)staged;
    }
    int64_t *result = va;
    if (s == CANOPY_SCHEDULE_NONE) {
        result = out_dev ? order : va;
        k_iota<<<blocks(n), THREADS, 0, st>>>(result, n);
    } else {
        uint32_t box0[2 * MAX_DIMS];
        for (int j = 0; j < MAX_DIMS; j++) box0[j] = 0xffffffffu, box0[MAX_DIMS + j] = 0;
        if ((in_bytes && (rc = canopy_gpu_check(
                              cudaMemcpyAsync(staged, hbase, in_bytes, cudaMemcpyHostToDevice, st),
                              "uploading queries"))) ||
            (rc = canopy_gpu_check(
                 cudaMemcpyAsync(box, box0, sizeof box0, cudaMemcpyHostToDevice, st),
                 "clearing the box")) ||
            (rc = canopy_gpu_check(
                 cudaMemcpyAsync(bad, &first_bad, sizeof first_bad, cudaMemcpyHostToDevice, st),
                 "clearing a flag")))
            goto out;
        k_box<<<blocks(n), THREADS, 0, st>>>(q, in_stride, n, d, box, bad);
        k_scale<<<1, 64, 0, st>>>(box, d, bits, lo, scale);
        k_keys<<<blocks(n), THREADS, 0, st>>>(q, in_stride, n, d, bits,
                                              s == CANOPY_SCHEDULE_HILBERT, lo, scale, ka, va);
        cub::DoubleBuffer<uint64_t> keys(ka, kb);
        cub::DoubleBuffer<int64_t> vals(va, vb);
        if ((rc = canopy_gpu_check(cub::DeviceRadixSort::SortPairs(sort_tmp, sort_bytes, keys, vals,
                                                                   (int)n, 0, 64, st),
                                   "sorting the query keys")))
            goto out;
        result = vals.Current();
        if (out_dev &&
            (rc = canopy_gpu_check(cudaMemcpyAsync(order, result, sizeof(int64_t) * (size_t)n,
                                                   cudaMemcpyDeviceToDevice, st),
                                   "placing the order")))
            goto out;
        if ((rc = canopy_gpu_check(
                 cudaMemcpyAsync(&first_bad, bad, sizeof first_bad, cudaMemcpyDeviceToHost, st),
                 "reading the input check")))
            goto out;
    }
    if (!out_dev && (rc = canopy_gpu_check(cudaMemcpyAsync(hbase + in_bytes, result, out_bytes,
                                                           cudaMemcpyDeviceToHost, st),
                                           "downloading the order")))
        goto out;
    if ((rc = canopy_gpu_check(cudaGetLastError(), "launching the schedule")) ||
        (rc = canopy_gpu_check(cudaStreamSynchronize(st), "scheduling queries")))
        goto out;
    if (first_bad != ~0ull) {
        rc = canopy_fail(CANOPY_ERR_INVALID, "queries: row %lld is not finite",
                         (long long)first_bad);
        goto out;
    }
    if (!out_dev) memcpy(order, hbase + in_bytes, out_bytes);
out:
    canopy_gpu_pool_unlock();
    return rc;
}
