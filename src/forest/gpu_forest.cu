/* SPDX-License-Identifier: MIT */
/* Host side of the forest GPU engines: the per-forest device state (layouts already
 * uploaded, compiled enc kernels), the upload of rows, the engine dispatch timed
 * with events, and the scores copied back for predict.c to finish (aggregation, base
 * score, link) exactly as on the CPU. */
#include "forest/gpu_common.cuh"

#include <mutex>

#include <stdlib.h>
#include <string.h>

enum { CF_MAX_LAYOUTS = 4, CF_MAX_KERNELS = 4, CF_MAX_BUFS = 12 };

/* A layout on the device; key: kind, hier depth, switch level. */
struct cf_dev_layout {
    int used;
    canopy_forest_layout kind;
    int32_t depth, switch_level;
    cf_gpu_model M;
    void *buf[CF_MAX_BUFS];
    int nbuf;
    size_t bytes;
    /* ren: the bags of 32 trees, sorted by the path lengths sampled on the first
     * call's rows and kept for later calls (the sort only balances a warp's lanes;
     * any bags give the same sums) */
    int bags_ready;
    const int32_t *bags;
    int32_t n_bags;
};

struct cf_dev_kernel {
    uint64_t hash;
    cudaLibrary_t lib;
    const void *kernel;
};

struct cf_gpu_state {
    /* rows and scores of the last call, kept for the next: a fresh cudaMalloc of a
     * few hundred MB per call costs as much as the kernel */
    void *rows, *scores;
    size_t rows_cap, scores_cap;
    cf_dev_layout lay[CF_MAX_LAYOUTS];
    int next_lay; /* round-robin eviction */
    cf_dev_kernel ker[CF_MAX_KERNELS];
    int n_ker;
};

/* One lock for every forest's state: predictions on one forest from several
 * threads take turns on the device instead of racing on its cache. */
static std::mutex cf_gpu_mutex;

static void free_layout(cf_dev_layout *d) {
    for (int i = 0; i < d->nbuf; i++) cudaFree(d->buf[i]);
    memset(d, 0, sizeof *d);
}

void canopy_cf_gpu_release(canopy_forest *f) {
    std::lock_guard<std::mutex> g(cf_gpu_mutex);
    cf_gpu_state *S = f->gpu;
    if (!S) return;
    for (int i = 0; i < CF_MAX_LAYOUTS; i++) free_layout(&S->lay[i]);
    for (int i = 0; i < S->n_ker; i++) cudaLibraryUnload(S->ker[i].lib);
    cudaFree(S->rows);
    cudaFree(S->scores);
    free(S);
    f->gpu = NULL;
}

int cf_gpu_state_find_kernel(cf_gpu_state *S, uint64_t h, const void **kernel) {
    for (int i = 0; i < S->n_ker; i++)
        if (S->ker[i].hash == h) {
            *kernel = S->ker[i].kernel;
            return 1;
        }
    return 0;
}

canopy_status cf_gpu_state_add_kernel(cf_gpu_state *S, uint64_t h, cudaLibrary_t lib,
                                      const void *kernel) {
    if (S->n_ker == CF_MAX_KERNELS) {
        cudaLibraryUnload(S->ker[0].lib);
        memmove(S->ker, S->ker + 1, (CF_MAX_KERNELS - 1) * sizeof S->ker[0]);
        S->n_ker--;
    }
    S->ker[S->n_ker++] = cf_dev_kernel{h, lib, kernel};
    return CANOPY_OK;
}

static canopy_status put(cf_dev_layout *d, const void **dst, const void *src, size_t bytes,
                         const char *what) {
    void *p = NULL;
    if (d->nbuf == CF_MAX_BUFS) return canopy_fail(CANOPY_ERR_INTERNAL, "GPU: too many buffers");
    canopy_status s = canopy_gpu_check(cudaMalloc(&p, bytes ? bytes : 16), what);
    if (s) return s;
    d->buf[d->nbuf++] = p;
    d->bytes += bytes;
    *dst = p;
    if (bytes) s = canopy_gpu_check(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice), what);
    return s;
}

#define PUT(field, src, count, what)                                                               \
    if (!s) s = put(d, (const void **)&d->M.field, (src), sizeof(*(src)) * (size_t)(count), what)

static canopy_status upload_layout(const canopy_forest *f, const cf_layout *L, cf_dev_layout *d) {
    memset(d, 0, sizeof *d);
    canopy_status s = CANOPY_OK;
    d->M.n_trees = L->n_trees;
    d->M.K = L->n_outputs;
    d->M.D = L->hier_depth;
    PUT(root, L->root, L->n_trees, "tree roots");
    PUT(leaf_out, L->leaf_out, L->n_leaves, "leaf outputs");
    PUT(leaf_off, L->leaf_off, L->n_leaves, "leaf offsets");
    PUT(values, L->values, f->n_values, "leaf values");
    switch (L->kind) {
    case CANOPY_FOREST_LAYOUT_CSR:
        PUT(csr_feature, L->csr_feature, L->n_csr, "csr features");
        PUT(csr_value, L->csr_value, L->n_csr, "csr thresholds");
        PUT(csr_cidx, L->csr_children_idx, L->n_csr, "csr child index");
        PUT(csr_children, L->csr_children, L->n_csr_children, "csr children");
        break;
    case CANOPY_FOREST_LAYOUT_HIER: {
        int64_t S = (1 << L->hier_depth) - 1;
        PUT(hthr, L->hier_thr, L->n_subtrees * S, "hier thresholds");
        PUT(hkey, L->hier_key, L->n_subtrees * S, "hier keys");
        PUT(hconn, L->hier_conn, L->n_subtrees * (S + 1), "hier connections");
        break;
    }
    default:
        PUT(nodes, L->nodes, L->n_lnodes, "linked nodes");
        break;
    }
    if (s) {
        free_layout(d);
        return s;
    }
    d->used = 1;
    d->kind = L->kind;
    d->depth = L->hier_depth;
    d->switch_level = L->switch_level;
    return CANOPY_OK;
}

/* The device copy of L, uploading it unless this forest already has it. */
static canopy_status device_layout(const canopy_forest *f, const cf_layout *L, cf_dev_layout **out,
                                   int *cached) {
    canopy_forest *mf = (canopy_forest *)f; /* the cache is not part of the model's value */
    if (!mf->gpu) {
        mf->gpu = (cf_gpu_state *)calloc(1, sizeof *mf->gpu);
        if (!mf->gpu) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    }
    cf_gpu_state *S = mf->gpu;
    for (int i = 0; i < CF_MAX_LAYOUTS; i++) {
        cf_dev_layout *d = &S->lay[i];
        if (d->used && d->kind == L->kind && d->depth == L->hier_depth &&
            d->switch_level == L->switch_level) {
            *out = d;
            *cached = 1;
            return CANOPY_OK;
        }
    }
    cf_dev_layout *d = &S->lay[S->next_lay];
    S->next_lay = (S->next_lay + 1) % CF_MAX_LAYOUTS;
    free_layout(d);
    *cached = 0;
    *out = d;
    return upload_layout(f, L, d);
}

static int is_linked(canopy_forest_layout l) {
    return l >= CANOPY_FOREST_LAYOUT_DF && l <= CANOPY_FOREST_LAYOUT_HYBRID;
}

/* A device buffer of at least `bytes`, reused across calls. */
static canopy_status reserve(void **p, size_t *cap, size_t bytes, const char *what) {
    if (*p && *cap >= bytes) return CANOPY_OK;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    canopy_status s = canopy_gpu_check(cudaMalloc(p, bytes ? bytes : 16), what);
    if (!s) *cap = bytes;
    return s;
}

/* Device objects of one call. */
struct cf_call_buffers {
    cudaEvent_t ev[2] = {NULL, NULL};
    cudaStream_t stream = NULL;
    ~cf_call_buffers() {
        for (cudaEvent_t e : ev)
            if (e) cudaEventDestroy(e);
        if (stream) cudaStreamDestroy(stream);
    }
};

/* ren's bags from device rows: an even sample of at most CF_REN_DEVICE_SAMPLE rows
 * copied to the host (the bags only balance a warp's lanes: any sample gives the same
 * sums). */
enum { CF_REN_DEVICE_SAMPLE = 4096 };
static canopy_status device_ren_bags(const cf_layout *L, canopy_points X, int32_t **bags,
                                     int32_t *nb) {
    int64_t step = X.n > CF_REN_DEVICE_SAMPLE ? X.n / CF_REN_DEVICE_SAMPLE : 1;
    int64_t cnt = X.n / step;
    float *rows = (float *)malloc(sizeof(float) * (size_t)(cnt * X.d));
    if (!rows) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for ren's row sample");
    canopy_status s = canopy_gpu_check(
        cudaMemcpy2D(rows, sizeof(float) * X.d, X.data, sizeof(float) * X.stride * step,
                     sizeof(float) * X.d, (size_t)cnt, cudaMemcpyDeviceToHost),
        "ren's row sample");
    if (!s) s = cf_gpu_ren_bags(L, canopy_points_make(rows, cnt, X.d), bags, nb);
    free(rows);
    return s;
}

canopy_status canopy_cf_gpu_predict(const canopy_forest *f, const cf_layout *L, canopy_points X,
                                    canopy_forest_engine e, canopy_forest_mapping m, double *acc,
                                    cf_gpu_report *rep) {
    memset(rep, 0, sizeof *rep);
    if (m == CANOPY_FOREST_MAPPING_AUTO) m = CANOPY_FOREST_MAPPING_ATOMIC;
    rep->mapping = m;
    int hier = L->kind == CANOPY_FOREST_LAYOUT_HIER;
    if ((e == CANOPY_FOREST_ENGINE_GPU_ENC || e == CANOPY_FOREST_ENGINE_GPU_COLLAB) && !hier)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU engine %s runs the hier layout, not %s",
                           canopy_forest_engine_name(e), canopy_forest_layout_name(L->kind));
    if (e == CANOPY_FOREST_ENGINE_GPU_REN && !is_linked(L->kind))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "GPU engine ren runs the linked layouts (df, bf, ll, sll, cc, hybrid), "
                           "not %s",
                           canopy_forest_layout_name(L->kind));
    if (e < CANOPY_FOREST_ENGINE_GPU_ITER || e > CANOPY_FOREST_ENGINE_GPU_REN)
        return canopy_fail(CANOPY_ERR_INVALID, "engine %s is not a GPU engine",
                           canopy_forest_engine_name(e));
    /* grid limits: tree chunks (or bags) in y, rows (or warps of rows) in x */
    if (L->n_trees > 65535 * CF_GPU_TREE_CHUNK)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU engines: more than %d trees",
                           65535 * CF_GPU_TREE_CHUNK);
    if (X.n > INT32_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU engines: more than 2^31 - 1 rows");
    if (X.n == 0) return CANOPY_OK;

    std::lock_guard<std::mutex> guard(cf_gpu_mutex);
    cf_call_buffers B;
    canopy_status s = CANOPY_OK;
    double t0 = canopy_now();
    cf_dev_layout *dl = NULL;
    s = device_layout(f, L, &dl, &rep->model_cached);
    if (s) return s;
    rep->device_bytes = dl->bytes;
    cf_gpu_launch P;
    memset(&P, 0, sizeof P);
    P.n = X.n;
    P.d = X.d;
    P.atomic = m == CANOPY_FOREST_MAPPING_ATOMIC;
    P.tree_chunk = CF_GPU_TREE_CHUNK;
    size_t xbytes = sizeof(float) * (size_t)X.n * (size_t)X.d;
    size_t abytes = sizeof(double) * (size_t)X.n * (size_t)L->n_outputs;
    /* A blocking stream: the model and rows go up with cudaMemcpy on the legacy stream,
     * whose DMA may still run when a pageable copy returns; a non-blocking stream's
     * kernel could read a fresh buffer before it is filled. */
    s = canopy_gpu_check(cudaStreamCreateWithFlags(&B.stream, cudaStreamDefault), "stream");
    P.stream = B.stream;
    cf_gpu_state *S = f->gpu;
    if (!s) s = reserve(&S->rows, &S->rows_cap, xbytes, "allocating the rows");
    if (!s) s = reserve(&S->scores, &S->scores_cap, abytes, "allocating the scores");
    /* rows already on the device (canopy_predictor_predict_device) are read in place
     * when dense; else one plain copy (cudaMemcpy2D may go row by row) */
    const int on_device = canopy_gpu_on_device(X.data);
    P.X = (const float *)S->rows;
    if (!s && on_device && X.stride == X.d)
        P.X = X.data;
    else if (!s && X.stride == X.d)
        s = canopy_gpu_check(cudaMemcpy(S->rows, X.data, xbytes, cudaMemcpyHostToDevice),
                             "uploading the rows");
    else if (!s)
        s = canopy_gpu_check(
            cudaMemcpy2D(S->rows, sizeof(float) * X.d, X.data, sizeof(float) * X.stride,
                         sizeof(float) * X.d, (size_t)X.n,
                         on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice),
            "uploading the rows");
    P.acc = (double *)S->scores;
    if (!s && e == CANOPY_FOREST_ENGINE_GPU_REN && !dl->bags_ready) {
        int32_t *bags = NULL, nb = 0;
        s = on_device ? device_ren_bags(L, X, &bags, &nb) : cf_gpu_ren_bags(L, X, &bags, &nb);
        if (!s)
            s = put(dl, (const void **)&dl->bags, bags, sizeof *bags * 32 * (size_t)nb,
                    "ren's bags");
        if (!s) dl->n_bags = nb, dl->bags_ready = 1;
        free(bags);
    }
    P.bag_tree = dl->bags;
    P.n_bags = dl->n_bags;
    rep->upload_seconds = canopy_now() - t0;
    if (!s && e == CANOPY_FOREST_ENGINE_GPU_ENC)
        s = cf_gpu_enc_kernel(S, L, m, &P.enc_kernel, &rep->compile_seconds, &rep->kernel_cache);
    if (!s) s = canopy_gpu_check(cudaEventCreate(&B.ev[0]), "event");
    if (!s) s = canopy_gpu_check(cudaEventCreate(&B.ev[1]), "event");
    if (!s) s = canopy_gpu_check(cudaMemsetAsync(P.acc, 0, abytes, B.stream), "zeroing the scores");
    if (!s) s = canopy_gpu_check(cudaEventRecord(B.ev[0], B.stream), "event");
    if (!s) {
        const cf_gpu_model &M = dl->M;
        switch (e) {
        case CANOPY_FOREST_ENGINE_GPU_ENC:
            s = cf_gpu_run_enc(M, P);
            break;
        case CANOPY_FOREST_ENGINE_GPU_COLLAB:
            cf_gpu_run_collab(M, P);
            break;
        case CANOPY_FOREST_ENGINE_GPU_REN:
            cf_gpu_run_ren(M, P);
            break;
        default:
            if (L->kind == CANOPY_FOREST_LAYOUT_CSR)
                cf_gpu_run_csr(M, P);
            else if (hier)
                cf_gpu_run_hier(M, P);
            else
                cf_gpu_run_linked(M, P);
            break;
        }
        if (!s) s = canopy_gpu_check(cudaGetLastError(), "launching the forest kernel");
    }
    if (!s) s = canopy_gpu_check(cudaEventRecord(B.ev[1], B.stream), "event");
    if (!s) s = canopy_gpu_check(cudaEventSynchronize(B.ev[1]), "running the forest kernel");
    float ms = 0;
    if (!s) s = canopy_gpu_check(cudaEventElapsedTime(&ms, B.ev[0], B.ev[1]), "event");
    rep->kernel_seconds = ms * 1e-3;
    double t1 = canopy_now();
    if (!s) s = canopy_gpu_check(cudaMemcpy(acc, P.acc, abytes, cudaMemcpyDeviceToHost), "scores");
    rep->download_seconds = canopy_now() - t1;
    return s;
}
