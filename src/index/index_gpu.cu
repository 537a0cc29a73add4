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
 * the kd bucket order's state (its descent table, grid and counters), each node's
 * smallest id (kNN's tie rule) and the self-query tables, each made at its first use,
 * and the caller's pointers already found to be device memory. The lock serialises
 * the queries that share it. */
struct canopy_index_scratch {
    std::mutex lock;
    unsigned char *arena = nullptr;
    size_t arena_bytes = 0;
    canopy_gpu_flags *hflags = nullptr;
    cudaEvent_t ev[5] = {}; /* sort start, end; kernel start, end; legacy-stream mark */
    /* the kd walk's bound tests, summed over every call with stats (device), and the
     * sum the last one read: a call's count is the difference, no clearing */
    unsigned long long *kd_tests = nullptr;
    unsigned long long kd_tests_read = 0;
    uint32_t *box = nullptr;
    bool box_ready = false;
    void *order = nullptr; /* canopy_gpu_kd_order_make's state for the index's tree */
    size_t order_bytes = 0;
    canopy_gpu_kd_order kdo = {};
    bool order_ready = false;
    bool order_clean = true;              /* false from a bucket order until its call completed */
    unsigned long long *min_id = nullptr; /* n_nodes, n_nodes int32 parents, a flag */
    size_t min_id_bytes = 0;
    bool min_id_ready = false, ties = false;
    /* self-queries: the points in their build order (n x d), then (kd) each tree
     * position's leaf and bucket (n int32 each) */
    unsigned char *self = nullptr;
    size_t self_bytes = 0;
    bool self_ready = false, self_buckets = false;
    int sms = 0;
    /* device pointers a call checked (cudaPointerGetAttributes costs a driver call
     * each; callers pass the same buffers call after call). A pointer once device
     * memory stays in the device's address range while the context lives. */
    const void *known[6] = {};
    int known_next = 0;
};

/* canopy_gpu_on_device, remembered in x. */
static bool device_pointer(canopy_index_scratch *x, const void *p) {
    for (const void *k : x->known)
        if (k == p && p) return true;
    if (!canopy_gpu_on_device(p)) return false;
    x->known[x->known_next] = p;
    x->known_next = (x->known_next + 1) % (int)(sizeof x->known / sizeof x->known[0]);
    return true;
}

static void scratch_free(canopy_index_scratch *x) {
    if (!x) return;
    cudaFree(x->arena);
    cudaFreeHost(x->hflags);
    cudaFree(x->box);
    cudaFree(x->order);
    cudaFree(x->min_id);
    cudaFree(x->self);
    cudaFree(x->kd_tests);
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
    if (e == cudaSuccess) e = cudaMalloc(&x->kd_tests, sizeof *x->kd_tests);
    if (e == cudaSuccess) e = cudaMemset(x->kd_tests, 0, sizeof *x->kd_tests);
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

/* *p holds at least `bytes` device bytes (grow-only: a smaller need keeps it). */
static canopy_status grow(void **p, size_t *have, size_t bytes, const char *what) {
    if (bytes <= *have) return CANOPY_OK;
    cudaFree(*p);
    *p = nullptr;
    *have = 0;
    canopy_status s = canopy_gpu_check(cudaMalloc(p, bytes), what);
    if (!s) *have = bytes;
    return s;
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
    canopy_status s = grow((void **)&x->min_id, &x->min_id_bytes, bytes, "kNN node ids");
    if (s) return s;
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
    s = canopy_gpu_check(cudaStreamSynchronize(st), "kNN node ids");
    x->ties = dup != 0;
    return s;
}

/* Self-queries' tables: each point back in its build row (original[ids[p]] = point p),
 * and with leaf_of (binary kd trees) the leaf that holds tree position p and its bucket,
 * the first node on the way down of at most `most` points (where the kd bucket order's
 * descent stops): the kd walk of the point at p starts by scanning one of them. */
__global__ void k_self_tables(canopy_tree_view t, int32_t most, float *original, int32_t *leaf_of,
                              int32_t *bucket_of) {
    const int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= t.n) return;
    const int64_t id = t.ids[p];
    for (int32_t j = 0; j < t.d; j++) original[id * t.d + j] = canopy_tv_point(&t, p)[j];
    if (!leaf_of) return;
    int32_t u = 0, b = -1;
    for (;;) {
        const canopy_node *h = canopy_tv_node(&t, u);
        if (b < 0 && h->end - h->begin <= most) b = u;
        if (h->child < 0) break;
        const canopy_node *c = canopy_tv_node(&t, h->child);
        u = p >= c->begin && p < c->end ? h->child : h->child + 1;
    }
    leaf_of[p] = u;
    bucket_of[p] = b;
}

/* x->self for dv's tree (made once per index; the kernel is queued on st, whose
 * queries come after it). */
static canopy_status scratch_self(canopy_index_scratch *x, const canopy_tree_view *t,
                                  cudaStream_t st) {
    typedef canopy_gpu_carve C;
    const bool kd = t->kind == CANOPY_TREE_KD && t->max_children == 2;
    const size_t bytes =
        C::bytes<float>(t->n * t->d + 1) + (kd ? C::bytes<int32_t>(t->n + 1) * 2 : 0);
    canopy_status s = grow((void **)&x->self, &x->self_bytes, bytes, "self-query tables");
    if (s) return s;
    x->self_buckets = kd;
    if (t->n <= 0) return CANOPY_OK;
    C c = {x->self, 0};
    float *original = c.take<float>(t->n * t->d + 1);
    int32_t *leaf_of = kd ? c.take<int32_t>(t->n + 1) : nullptr;
    int32_t *bucket_of = kd ? c.take<int32_t>(t->n + 1) : nullptr;
    k_self_tables<<<(unsigned)((t->n + 255) / 256), 256, 0, st>>>(*t, CANOPY_INDEX_BUCKET_POINTS,
                                                                  original, leaf_of, bucket_of);
    return canopy_gpu_check(cudaGetLastError(), "self-query tables");
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
        kept->order_ready = false;
        kept->min_id_ready = false;
        kept->self_ready = false;
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

/* The tables a query of dv reads, each made at its first use and kept with the index:
 * the Morton grid's box (sorted), the kd descent table (buckets), the self-query
 * tables (self) and each node's smallest id (always: the tie rule needs to know
 * whether the points have duplicates). */
static canopy_status scratch_tables(canopy_index_device *dv, canopy_index_scratch *x, bool sorted,
                                    bool buckets, bool self, void *stream) {
    const cudaStream_t st = (cudaStream_t)stream;
    canopy_status s;
    if (sorted && !x->box_ready) {
        if ((s = canopy_gpu_points_box(dv->view.points, dv->view.n, dv->view.d, x->box))) return s;
        x->box_ready = true;
    }
    if (buckets && !x->order_ready) {
        size_t bytes = 0;
        if ((s = canopy_gpu_kd_order_bytes(&dv->view, &bytes)) ||
            (s = grow(&x->order, &x->order_bytes, bytes, "kd bucket order tables")) ||
            (s = canopy_gpu_kd_order_make(&dv->view, CANOPY_INDEX_BUCKET_POINTS, x->order, stream,
                                          &x->kdo)))
            return s;
        x->order_ready = true;
        x->order_clean = true;
    }
    if (buckets && !x->order_clean) {
        if ((s = canopy_gpu_kd_order_clear(&x->kdo, stream))) return s;
        x->order_clean = true;
    }
    if (self && !x->self_ready) {
        if ((s = scratch_self(x, &dv->view, st))) return s;
        x->self_ready = true;
    }
    if (!x->min_id_ready) {
        if ((s = scratch_min_id(x, &dv->view, st))) return s;
        x->min_id_ready = true;
    }
    return CANOPY_OK;
}

/* Work the caller queued on the legacy default stream (cudaMemset, kernels on stream 0)
 * comes before the query on st, as when the kernels ran there: an event, not a host
 * wait, and only for a non-blocking stream of the caller's (a blocking one waits for
 * stream 0 itself; the index's own staging stream carries only its own copies). */
static canopy_status after_legacy_stream(const canopy_index_device *dv, canopy_index_scratch *x,
                                         cudaStream_t st) {
    if (st == 0 || st == cudaStreamLegacy || st == cudaStreamPerThread ||
        st == (cudaStream_t)dv->own_stream)
        return CANOPY_OK;
    unsigned flags = 0;
    canopy_status s = canopy_gpu_check(cudaStreamGetFlags(st, &flags), "the caller's stream");
    if (s || !(flags & cudaStreamNonBlocking)) return s;
    if (!(s = canopy_gpu_check(cudaEventRecord(x->ev[4], cudaStreamLegacy), "cudaEventRecord")))
        s = canopy_gpu_check(cudaStreamWaitEvent(st, x->ev[4], 0), "waiting for stream 0");
    return s;
}

/* The query of canopy_index_device_knn after its checks, under x's lock. A bucket order
 * leaves its counters dirty until the call completes (x->order_clean). */
static canopy_status device_knn(canopy_index_device *dv, canopy_index_scratch *x,
                                const float *d_queries, int64_t nq, int self, int32_t k,
                                canopy_variant v, canopy_schedule sched, int64_t *d_idx,
                                float *d_dist2, cudaStream_t st, canopy_gpu_report *rep) {
    canopy_status s;
    const int32_t d = dv->view.d;
    const bool sorted = sched == CANOPY_SCHEDULE_MORTON && nq > 1;
    /* self-queries in the tree's point order: already leaf by leaf, nothing to sort */
    const bool tree_order = self && sched == CANOPY_SCHEDULE_TREE && nq > 0;
    const bool buckets = !self && sched == CANOPY_SCHEDULE_TREE && nq > 0;
    if ((s = after_legacy_stream(dv, x, st)) ||
        (s = scratch_tables(dv, x, sorted, buckets, self && nq > 0, st)))
        return s;
    canopy_tree_view tv = dv->view;
    tv.min_id = x->ties ? (const int64_t *)x->min_id : NULL;
    /* the arena: flags | stacks | order | distances | sort scratch */
    canopy_gpu_launch probe;
    if ((s = canopy_gpu_launch_init<knn_reg_gpu<1>>(probe, &dv->view, nq, v, x->sms))) return s;
    typedef canopy_gpu_carve C;
    const size_t stack_bytes = canopy_gpu_stack_bytes(probe, v);
    const bool own_dist2 = !d_dist2 && k > KNN_REG_MAX_K;
    size_t sort_bytes = buckets ? canopy_gpu_kd_bucket_scratch(nq) : 0;
    if (sorted && (s = canopy_gpu_morton_scratch(nq, d, &sort_bytes))) return s;
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
    int64_t *sort_order = sorted || buckets ? c.take<int64_t>(nq) : NULL;
    int32_t *sort_bucket = buckets ? c.take<int32_t>(nq) : NULL;
    const int64_t *order = sort_order;
    const int32_t *bucket = sort_bucket;
    knn_ctx dc;
    dc.k = k;
    dc.self = self == CANOPY_INDEX_SELF_EXCLUDE;
    dc.idx = d_idx;
    dc.dist2 = own_dist2 ? c.take<float>(nq * k) : d_dist2;
    if (self) {
        /* the points in their build rows (scratch_self): query i is point i */
        C t = {x->self, 0};
        d_queries = t.take<float>(nq * d + 1);
        const int32_t *leaf_of = x->self_buckets ? t.take<int32_t>(nq + 1) : NULL;
        const int32_t *bucket_of = leaf_of ? t.take<int32_t>(nq + 1) : NULL;
        if (tree_order) {
            order = dv->view.ids; /* position i holds point ids[i]: its result row */
            /* NN starts in the point's leaf (the point itself, or a duplicate, ends it);
             * k > 1 in its bucket, whose points fill the list closer to the final one */
            bucket = k == 1 ? leaf_of : bucket_of;
        }
    }
    dc.query = canopy_points_make(d_queries, nq, d);
    if (sorted || buckets) {
        void *sort_tmp = c.take<unsigned char>((int64_t)sort_bytes);
        if (rep && (s = canopy_gpu_check(cudaEventRecord(x->ev[0], st), "cudaEventRecord")))
            return s;
        x->order_clean = !buckets;
        if ((s = sorted ? canopy_gpu_morton_order(d_queries, nq, d, x->box, sort_tmp, sort_bytes,
                                                  sort_order, st)
                        : canopy_gpu_kd_bucket_order(&x->kdo, d, d_queries, nq, sort_tmp,
                                                     sort_bytes, sort_order, sort_bucket, st)) ||
            (rep && (s = canopy_gpu_check(cudaEventRecord(x->ev[1], st), "cudaEventRecord"))))
            return s;
    }
    if (!rep) {
        /* nothing to time or count: the kd walk alone and one synchronisation */
        bool taken = false;
        if ((s = canopy_gpu_knn_kd_bare(&dc, &tv, order, bucket, nq, v, x->sms, st, NULL, &taken)))
            return s;
        if (taken) return canopy_gpu_check(cudaStreamSynchronize(st), "kd walk");
        canopy_gpu_report none;
        memset(&none, 0, sizeof none);
        return canopy_gpu_knn_pooled(&dc, &tv, order, bucket, nq, v, P, &none);
    }
    /* the kd walk with stats: timed between two events, its tests the growth of a
     * counter nobody clears (no memset before the walk), read back with the sync */
    bool taken = knn_kd_kernel_applies(&tv, k, v);
    if (taken) {
        float ms = 0.0f;
        if ((s = canopy_gpu_check(cudaEventRecord(x->ev[2], st), "cudaEventRecord")) ||
            (s = canopy_gpu_knn_kd_bare(&dc, &tv, order, bucket, nq, v, x->sms, st, x->kd_tests,
                                        &taken)) ||
            (s = canopy_gpu_check(cudaEventRecord(x->ev[3], st), "cudaEventRecord")) ||
            (s = canopy_gpu_check(cudaMemcpyAsync(&x->hflags->counters[0], x->kd_tests,
                                                  sizeof *x->kd_tests, cudaMemcpyDeviceToHost, st),
                                  "kd walk counters")) ||
            (s = canopy_gpu_check(cudaStreamSynchronize(st), "kd walk")) ||
            (s = canopy_gpu_check(cudaEventElapsedTime(&ms, x->ev[2], x->ev[3]),
                                  "cudaEventElapsedTime")))
            return s;
        rep->traverse_seconds += ms * 1e-3;
        rep->counters.nodes += (int64_t)(x->hflags->counters[0] - x->kd_tests_read);
        x->kd_tests_read = x->hflags->counters[0];
    } else if ((s = canopy_gpu_knn_pooled(&dc, &tv, order, bucket, nq, v, P, rep))) {
        return s;
    }
    if (sorted || buckets) {
        float ms = 0.0f;
        if ((s = canopy_gpu_check(cudaEventElapsedTime(&ms, x->ev[0], x->ev[1]),
                                  "cudaEventElapsedTime")))
            return s;
        rep->schedule_seconds += ms * 1e-3;
    }
    return CANOPY_OK;
}

extern "C" canopy_status canopy_index_device_knn(canopy_index_device *dv, const float *d_queries,
                                                 int64_t nq, int self, int32_t k, canopy_variant v,
                                                 canopy_schedule sched, int64_t *d_idx,
                                                 float *d_dist2, void *stream,
                                                 canopy_gpu_report *rep) {
    if (self && nq != dv->view.n)
        return canopy_fail(CANOPY_ERR_INTERNAL, "index knn (device): a self-query of %lld rows",
                           (long long)nq);
    canopy_index_scratch *x = NULL;
    canopy_status s = scratch_of(dv, &x);
    if (s) return s;
    std::lock_guard<std::mutex> hold(x->lock);
    if (nq > 0 && ((!self && !device_pointer(x, d_queries)) || !device_pointer(x, d_idx) ||
                   (d_dist2 && !device_pointer(x, d_dist2))))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "index knn (device): queries, indices and distances must be device "
                           "memory");
    s = device_knn(dv, x, d_queries, nq, self, k, v, sched, d_idx, d_dist2, (cudaStream_t)stream,
                   rep);
    /* the bucket order's counters are clear once its scatter ran, which a completed
     * call (every path ends in a synchronisation) guarantees */
    if (!s) x->order_clean = true;
    return s;
}
