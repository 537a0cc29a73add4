/* SPDX-License-Identifier: MIT */
/* The device copy of a resident canopy_index: built on the GPU (kd) or uploaded once,
 * and the device-pointer kNN entry. */
#include "index/device.h"

#include "apps/knn/knn_gpu.cuh"
#include "core/gpu.cuh"
#include "core/gpu_pool.cuh"
#include "traverse/gpu_schedule.h"

#include <mutex>
#include <new>
#include <string.h>

/* What a query of a resident index reuses: one grow-only device arena (flags, stacks,
 * sort buffers, the query order, distances nobody asked for), the flags' pinned
 * twin, four events, the SM count, the box of the index's points (the Morton grid),
 * the kd bucket order's descent table and each node's smallest id (kNN's tie rule),
 * all three made at their first use. The lock serialises the queries that share it. */
struct canopy_index_scratch {
    std::mutex lock;
    unsigned char *arena = nullptr;
    size_t arena_bytes = 0;
    canopy_gpu_flags *hflags = nullptr;
    cudaEvent_t ev[5] = {}; /* sort start, end; kernel start, end; legacy-stream mark */
    uint32_t *box = nullptr;
    bool box_ready = false;
    void *descent = nullptr; /* canopy_gpu_kd_descent_table of the index's tree */
    size_t descent_bytes = 0;
    bool descent_ready = false;
    unsigned long long *min_id = nullptr; /* n_nodes, n_nodes int32 parents, a flag */
    size_t min_id_bytes = 0;
    bool min_id_ready = false, ties = false;
    int sms = 0;
};

static void scratch_free(canopy_index_scratch *x) {
    if (!x) return;
    cudaFree(x->arena);
    cudaFreeHost(x->hflags);
    cudaFree(x->box);
    cudaFree(x->descent);
    cudaFree(x->min_id);
    for (cudaEvent_t e : x->ev)
        if (e) cudaEventDestroy(e);
    delete x;
}

/* Everything but the arena, which grows on demand. */
static canopy_status scratch_new(canopy_index_scratch **out) {
    *out = nullptr;
    canopy_index_scratch *x = new (std::nothrow) canopy_index_scratch;
    if (!x) return canopy_fail(CANOPY_ERR_NOMEM, "index scratch");
    int dev = 0;
    cudaError_t e = cudaMallocHost(&x->hflags, sizeof *x->hflags);
    if (e == cudaSuccess) e = cudaMalloc(&x->box, sizeof(uint32_t) * CANOPY_GPU_BOX_WORDS);
    for (int i = 0; i < 4 && e == cudaSuccess; i++) e = cudaEventCreate(&x->ev[i]);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&x->ev[4], cudaEventDisableTiming);
    if (e == cudaSuccess) e = cudaGetDevice(&dev);
    if (e == cudaSuccess) e = cudaDeviceGetAttribute(&x->sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) {
        scratch_free(x);
        return canopy_gpu_check(e, "index scratch");
    }
    *out = x;
    return CANOPY_OK;
}

static canopy_status scratch_reserve(canopy_index_scratch *x, size_t bytes) {
    if (bytes <= x->arena_bytes) return CANOPY_OK;
    cudaFree(x->arena);
    x->arena = nullptr;
    x->arena_bytes = 0;
    cudaError_t e = cudaMalloc(&x->arena, bytes);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "GPU: allocating %zu bytes of index scratch: %s",
                           bytes, cudaGetErrorString(e));
    x->arena_bytes = bytes;
    return CANOPY_OK;
}

/* Each node's parent (the root keeps -1). */
__global__ void k_node_parents(canopy_tree_view t, int32_t *parent) {
    const int32_t u = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
    if (u >= t.n_nodes) return;
    const canopy_node *h = canopy_tv_node(&t, u);
    for (int32_t c = 0; h->child > u && c < h->nchild; c++) parent[h->child + c] = u;
}

/* canopy_tree_fill_min_id on the device: each leaf takes its smallest id and carries it
 * up with atomicMin, stopping at an ancestor that already holds no more (the leaf that
 * put it there carries it on). Empty leaves keep all ones (-1 as int64: never pruned).
 * *dup: 1 when a leaf holds two equal points in a row. */
__global__ void k_node_min_id(canopy_tree_view t, const int32_t *parent, unsigned long long *m,
                              int *dup) {
    const int32_t u = (int32_t)(blockIdx.x * blockDim.x + threadIdx.x);
    if (u >= t.n_nodes) return;
    const canopy_node *h = canopy_tv_node(&t, u);
    if (h->child > u) return;
    unsigned long long v = ~0ull;
    for (int32_t i = h->begin; i < h->end; i++) {
        v = min(v, (unsigned long long)t.ids[i]);
        bool same = i > h->begin;
        for (int32_t j = 0; same && j < t.d; j++)
            same = canopy_tv_point(&t, i)[j] == canopy_tv_point(&t, i - 1)[j];
        if (same) *dup = 1;
    }
    if (v == ~0ull) return;
    m[u] = v;
    for (int32_t p = parent[u]; p >= 0; p = parent[p])
        if (atomicMin(m + p, v) <= v) break;
}

/* x->min_id for dv's tree, and whether its points have duplicates (x->ties): only then
 * can ties at the k-th distance make a walk visit much of the tree. Synchronises
 * the stream (once per index). */
static canopy_status scratch_min_id(canopy_index_scratch *x, const canopy_tree_view *t,
                                    cudaStream_t st) {
    const int32_t nn = t->n_nodes;
    const size_t bytes =
        (sizeof(unsigned long long) + sizeof(int32_t)) * (size_t)(nn > 0 ? nn : 1) + sizeof(int);
    if (bytes > x->min_id_bytes) {
        cudaFree(x->min_id);
        x->min_id = nullptr;
        x->min_id_bytes = 0;
        canopy_status s = canopy_gpu_check(cudaMalloc(&x->min_id, bytes), "kNN node ids");
        if (s) return s;
        x->min_id_bytes = bytes;
    }
    int dup = 0;
    if (nn > 0) {
        int32_t *parent = (int32_t *)(x->min_id + nn), *d_dup = parent + nn;
        const unsigned blocks = (unsigned)((nn + 255) / 256);
        cudaMemsetAsync(x->min_id, 0xff, bytes, st); /* ids all ones, parents -1 */
        cudaMemsetAsync(d_dup, 0, sizeof(int), st);
        k_node_parents<<<blocks, 256, 0, st>>>(*t, parent);
        k_node_min_id<<<blocks, 256, 0, st>>>(*t, parent, x->min_id, d_dup);
        cudaMemcpyAsync(&dup, d_dup, sizeof dup, cudaMemcpyDeviceToHost, st);
    }
    canopy_status s = canopy_gpu_check(cudaStreamSynchronize(st), "kNN node ids");
    x->ties = dup != 0;
    return s;
}

/* The scratch of dv, made by its first query: a build that is never queried, or queried
 * only on the host, pays for none of it. One lock for every index, held only while a
 * scratch is made. */
static canopy_status scratch_of(canopy_index_device *dv, canopy_index_scratch **out) {
    static std::mutex making;
    std::lock_guard<std::mutex> hold(making);
    canopy_status s = dv->scratch ? CANOPY_OK : scratch_new(&dv->scratch);
    *out = dv->scratch;
    return s;
}

extern "C" canopy_status canopy_index_device_build(canopy_points pts, int device_points,
                                                   const canopy_tree_options *to, void *stream,
                                                   canopy_index_device *dv) {
    canopy_index_scratch *kept = dv->scratch; /* the caller's, reused: see device.h */
    if (device_points && pts.n > 0 && !canopy_gpu_on_device(pts.data))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "index build (device): the points must be device memory (host "
                           "points: canopy_index_build)");
    canopy_gpu_tree *g = NULL;
    canopy_status s = canopy_gpu_after_stream(stream);
    if (s || (s = canopy_tree_build_gpu(pts, to, &g))) return s;
    memset(dv, 0, sizeof *dv);
    if (kept) {
        kept->box_ready = false; /* the Morton grid and the descent are the new tree's */
        kept->descent_ready = false;
        kept->min_id_ready = false;
        dv->scratch = kept;
    }
    dv->view = *canopy_gpu_tree_view(g);
    dv->built = g;
    dv->bytes = (size_t)canopy_tree_view_bytes(&dv->view);
    dv->gpu_built = 1;
    return CANOPY_OK;
}

template <class T>
static canopy_status put(const T **dev, const T *host, int64_t count, const char *what) {
    *dev = NULL;
    if (!host) return CANOPY_OK;
    void *p = NULL;
    size_t bytes = sizeof(T) * (size_t)(count > 0 ? count : 1);
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaSuccess && count > 0)
        e = cudaMemcpy(p, host, sizeof(T) * (size_t)count, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(p);
        return canopy_gpu_check(e, what);
    }
    *dev = (const T *)p;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_index_device_upload(const canopy_tree_view *h,
                                                    canopy_index_device *dv) {
    memset(dv, 0, sizeof *dv);
    canopy_status s;
    /* the arrays start NULL and turn to device copies one by one: on a failure the
     * free below touches device memory only */
    dv->view = *h;
    dv->view.hot = NULL;
    dv->view.points = dv->view.weights = NULL;
    dv->view.ids = NULL;
    dv->view.rope = NULL;
    dv->view.min_id = NULL; /* host only (knn_truncate) */
    if ((s = put(&dv->view.hot, h->hot, (int64_t)h->n_nodes * h->hot_stride, "index nodes")) ||
        (s = put(&dv->view.points, h->points, h->n * h->d, "index points")) ||
        (s = put(&dv->view.ids, h->ids, h->n, "index ids")) ||
        (s = put(&dv->view.rope, h->rope, h->n_nodes, "index ropes")) ||
        (s = put(&dv->view.weights, h->weights, h->n, "index weights"))) {
        canopy_index_device_free(dv);
        return s;
    }
    dv->bytes = (size_t)canopy_tree_view_bytes(h);
    return CANOPY_OK;
}

extern "C" void canopy_index_device_free(canopy_index_device *dv) {
    scratch_free(dv->scratch);
    if (dv->built) {
        canopy_gpu_tree_free(dv->built);
    } else {
        cudaFree((void *)dv->view.hot);
        cudaFree((void *)dv->view.points);
        cudaFree((void *)dv->view.ids);
        cudaFree((void *)dv->view.rope);
        cudaFree((void *)dv->view.weights);
    }
    memset(dv, 0, sizeof *dv);
}

extern "C" canopy_status canopy_index_device_knn(canopy_index_device *dv, const float *d_queries,
                                                 int64_t nq, int32_t k, canopy_variant v,
                                                 canopy_schedule sched, int64_t *d_idx,
                                                 float *d_dist2, void *stream,
                                                 canopy_gpu_report *rep) {
    if (nq > 0 && (!canopy_gpu_on_device(d_queries) || !canopy_gpu_on_device(d_idx) ||
                   (d_dist2 && !canopy_gpu_on_device(d_dist2))))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "index knn (device): queries, indices and distances must be device "
                           "memory");
    canopy_index_scratch *x = NULL;
    canopy_status s = scratch_of(dv, &x);
    if (s) return s;
    std::lock_guard<std::mutex> hold(x->lock);
    const cudaStream_t st = (cudaStream_t)stream;
    const int32_t d = dv->view.d;
    const bool sorted = sched == CANOPY_SCHEDULE_MORTON && nq > 1;
    const bool buckets = sched == CANOPY_SCHEDULE_TREE && nq > 0;
    /* Work the caller queued on the legacy default stream (cudaMemset, kernels on
     * stream 0) comes first too, as when the kernels ran there: a non-blocking
     * stream would not wait for it. An event, not a host synchronisation. */
    if (st != 0 && st != cudaStreamLegacy &&
        ((s = canopy_gpu_check(cudaEventRecord(x->ev[4], cudaStreamLegacy), "cudaEventRecord")) ||
         (s = canopy_gpu_check(cudaStreamWaitEvent(st, x->ev[4], 0), "waiting for stream 0"))))
        return s;
    if (sorted && !x->box_ready) {
        if ((s = canopy_gpu_points_box(dv->view.points, dv->view.n, d, x->box))) return s;
        x->box_ready = true;
    }
    if (buckets && !x->descent_ready) {
        const size_t bytes = (size_t)CANOPY_GPU_KD_DESCENT_BYTES * (size_t)dv->view.n_nodes;
        if (bytes > x->descent_bytes) {
            cudaFree(x->descent);
            x->descent = nullptr;
            x->descent_bytes = 0;
            if ((s = canopy_gpu_check(cudaMalloc(&x->descent, bytes), "kd descent table")))
                return s;
            x->descent_bytes = bytes;
        }
        if ((s = canopy_gpu_kd_descent_table(&dv->view, CANOPY_INDEX_BUCKET_POINTS, x->descent,
                                             stream)))
            return s;
        x->descent_ready = true;
    }
    if (!x->min_id_ready) {
        if ((s = scratch_min_id(x, &dv->view, st))) return s;
        x->min_id_ready = true;
    }
    canopy_tree_view tv = dv->view;
    tv.min_id = x->ties ? (const int64_t *)x->min_id : NULL;
    /* the arena: flags | stacks | order | distances | sort scratch */
    canopy_gpu_launch probe;
    if ((s = canopy_gpu_launch_init<knn_reg_gpu<1>>(probe, &dv->view, nq, v, x->sms))) return s;
    typedef canopy_gpu_carve C;
    const size_t stack_bytes = canopy_gpu_stack_bytes(probe, v);
    const bool own_dist2 = !d_dist2 && k > KNN_REG_MAX_K;
    size_t sort_bytes = 0;
    if ((sorted && (s = canopy_gpu_morton_scratch(nq, d, &sort_bytes))) ||
        (buckets && (s = canopy_gpu_kd_bucket_scratch(&dv->view, nq, &sort_bytes))))
        return s;
    size_t need = C::bytes<canopy_gpu_flags>(1) + C::bytes<unsigned char>((int64_t)stack_bytes) +
                  (sorted || buckets ? C::bytes<int64_t>(nq) : 0) +
                  (buckets ? C::bytes<int32_t>(nq) : 0) +
                  (own_dist2 ? C::bytes<float>(nq * k) : 0) + sort_bytes;
    if ((s = scratch_reserve(x, need))) return s;
    C c = {x->arena, 0};
    canopy_gpu_pooled P;
    P.dflags = c.take<canopy_gpu_flags>(1);
    P.hflags = x->hflags;
    P.stacks = (int32_t *)c.take<unsigned char>((int64_t)stack_bytes);
    P.stack_bytes = stack_bytes;
    P.e0 = x->ev[2];
    P.e1 = x->ev[3];
    P.sms = x->sms;
    P.stream = st;
    int64_t *order = sorted || buckets ? c.take<int64_t>(nq) : NULL;
    int32_t *bucket = buckets ? c.take<int32_t>(nq) : NULL;
    knn_ctx dc;
    dc.query = canopy_points_make(d_queries, nq, d);
    dc.k = k;
    dc.self = 0;
    dc.idx = d_idx;
    dc.dist2 = own_dist2 ? c.take<float>(nq * k) : d_dist2;
    if (sorted || buckets) {
        void *sort_tmp = c.take<unsigned char>((int64_t)sort_bytes);
        if ((s = canopy_gpu_check(cudaEventRecord(x->ev[0], st), "cudaEventRecord")) ||
            (s = sorted ? canopy_gpu_morton_order(d_queries, nq, d, x->box, sort_tmp, sort_bytes,
                                                  order, stream)
                        : canopy_gpu_kd_bucket_order(&dv->view, x->descent, d_queries, nq, sort_tmp,
                                                     sort_bytes, order, bucket, stream)) ||
            (s = canopy_gpu_check(cudaEventRecord(x->ev[1], st), "cudaEventRecord")))
            return s;
    }
    if ((s = canopy_gpu_knn_pooled(&dc, &tv, order, bucket, nq, v, P, rep))) return s;
    if (sorted || buckets) {
        float ms = 0.0f;
        if ((s = canopy_gpu_check(cudaEventElapsedTime(&ms, x->ev[0], x->ev[1]),
                                  "cudaEventElapsedTime")))
            return s;
        rep->schedule_seconds += ms * 1e-3;
    }
    return CANOPY_OK;
}
