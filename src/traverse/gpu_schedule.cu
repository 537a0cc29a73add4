/* SPDX-License-Identifier: MIT */
/* Morton and hilbert query schedules on the GPU (gpu_schedule.h): bounding box by
 * warp reductions, the box's scale in double as schedule.c computes it, one key per
 * query, one stable CUB radix sort of (key, index); and the kd bucket order, a
 * counting sort by the kd node each query falls in. */
#include "core/gpu.cuh"
#include "core/gpu_pool.cuh"
#include "traverse/curve_key.h"
#include "traverse/gpu_schedule.h"

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
 * it, where the children's boxes meet. */
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

/* A query's bucket (gpu_schedule.h) and its rank among the bucket's queries: one
 * 16-byte load a level. */
__global__ void k_kd_bucket(const int4 *table, const float *q, int64_t nq, int32_t d,
                            int32_t *count, int32_t *bucket_of, int32_t *rank) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= nq) return;
    const float *p = q + i * d;
    /* low dimensions in registers: a split dimension then needs no load */
    const float q0 = __ldg(p), q1 = d > 1 ? __ldg(p + 1) : 0.0f, q2 = d > 2 ? __ldg(p + 2) : 0.0f;
    int32_t n = 0;
    int4 e = __ldg(table);
    while (e.x >= 0) {
        const float x = e.y == 0 ? q0 : e.y == 1 ? q1 : e.y == 2 ? q2 : __ldg(p + e.y);
        n = e.x + (x > __int_as_float(e.z));
        e = __ldg(table + n);
    }
    bucket_of[i] = n;
    /* one atomic per bucket a warp reaches: where query clusters fall into few buckets,
     * per-query atomics on one counter serialise the whole kernel */
    const unsigned same = __match_any_sync(__activemask(), n);
    const int lane = (int)(threadIdx.x & 31), leader = __ffs(same) - 1;
    int32_t base = 0;
    if (lane == leader) base = atomicAdd(count + n, __popc(same));
    base = __shfl_sync(same, base, leader);
    rank[i] = base + __popc(same & ((1u << lane) - 1));
}

__global__ void k_kd_bucket_scatter(int64_t nq, const int32_t *first, const int32_t *bucket_of,
                                    const int32_t *rank, int64_t *order, int32_t *bucket) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= nq) return;
    const int32_t b = bucket_of[i];
    const int64_t at = (int64_t)first[b] + rank[i];
    order[at] = i;
    bucket[at] = b;
}

canopy_status kd_bucket_scan_bytes(int32_t nodes, size_t *bytes) {
    *bytes = 0;
    return canopy_gpu_check(cub::DeviceScan::ExclusiveSum(nullptr, *bytes, (int32_t *)nullptr,
                                                          (int32_t *)nullptr, nodes),
                            "sizing the bucket scan");
}

} // namespace

extern "C" canopy_status canopy_gpu_kd_bucket_scratch(const canopy_tree_view *dt, int64_t nq,
                                                      size_t *bytes) {
    size_t scan_bytes = 0;
    canopy_status rc = kd_bucket_scan_bytes(dt->n_nodes, &scan_bytes);
    typedef canopy_gpu_carve C;
    *bytes = C::bytes<int32_t>(dt->n_nodes) * 2 + C::bytes<int32_t>(nq) * 2 +
             C::bytes<unsigned char>((int64_t)scan_bytes);
    return rc;
}

extern "C" canopy_status canopy_gpu_kd_descent_table(const canopy_tree_view *dt, int32_t most,
                                                     void *table, void *stream) {
    if (dt->n_nodes <= 0) return CANOPY_OK;
    k_kd_descent<<<blocks(dt->n_nodes), THREADS, 0, (cudaStream_t)stream>>>(*dt, most,
                                                                            (int4 *)table);
    return canopy_gpu_check(cudaGetLastError(), "kd descent table");
}

extern "C" canopy_status canopy_gpu_kd_bucket_order(const canopy_tree_view *dt, const void *table,
                                                    const float *d_q, int64_t nq, void *scratch,
                                                    size_t scratch_bytes, int64_t *d_order,
                                                    int32_t *d_bucket, void *stream) {
    if (nq <= 0) return CANOPY_OK;
    if (nq >= INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "queries: %lld exceed the GPU sort's limit",
                           (long long)nq);
    size_t scan_bytes, need;
    canopy_status rc;
    if ((rc = kd_bucket_scan_bytes(dt->n_nodes, &scan_bytes)) ||
        (rc = canopy_gpu_kd_bucket_scratch(dt, nq, &need)))
        return rc;
    if (need > scratch_bytes)
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU bucket order: scratch too small");
    cudaStream_t st = (cudaStream_t)stream;
    canopy_gpu_carve c = {(unsigned char *)scratch, 0};
    int32_t *count = c.take<int32_t>(dt->n_nodes), *first = c.take<int32_t>(dt->n_nodes);
    int32_t *bucket_of = c.take<int32_t>(nq), *rank = c.take<int32_t>(nq);
    void *tmp = c.take<unsigned char>((int64_t)scan_bytes);
    if ((rc = canopy_gpu_check(cudaMemsetAsync(count, 0, sizeof(int32_t) * dt->n_nodes, st),
                               "clearing bucket counts")))
        return rc;
    k_kd_bucket<<<blocks(nq), THREADS, 0, st>>>((const int4 *)table, d_q, nq, dt->d, count,
                                                bucket_of, rank);
    if ((rc = canopy_gpu_check(cudaGetLastError(), "query buckets")) ||
        (rc = canopy_gpu_check(
             cub::DeviceScan::ExclusiveSum(tmp, scan_bytes, count, first, dt->n_nodes, st),
             "bucket offsets")))
        return rc;
    k_kd_bucket_scatter<<<blocks(nq), THREADS, 0, st>>>(nq, first, bucket_of, rank, d_order,
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
