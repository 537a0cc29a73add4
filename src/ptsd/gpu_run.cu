/* SPDX-License-Identifier: MIT */
/* Host side of the GPU bottom-up aggregations: upload the tree, build the breadth-first
 * level segments that crec and hier consume (going down, one launch per level, each
 * level's children appended to one buffer), run the strategy, download the result. */
#include "core/device.h"
#include "core/gpu.cuh"
#include "ptsd/gpu.h"
#include "ptsd/gpu_ptsd.cuh"

#include <string.h>

#define TRY(expr)                                                                                  \
    do {                                                                                           \
        if ((s = (expr)) != CANOPY_OK) return s;                                                   \
    } while (0)
#define CUDA_TRY(expr, what) TRY(canopy_gpu_check((expr), what))

/* Segment [lo, hi) of order appends its nodes' children at *end. */
__global__ void expand_kernel(gpu_ptsd_ctx c, int64_t *order, int64_t lo, int64_t hi,
                              unsigned long long *end) {
    int64_t i = lo + blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= hi) return;
    int64_t v = order[i], k0 = c.child_ptr[v], f = c.child_ptr[v + 1] - k0;
    if (!f) return;
    int64_t at = (int64_t)atomicAdd(end, (unsigned long long)f);
    for (int64_t k = 0; k < f; k++) order[at + k] = c.child[k0 + k];
}

/* Deepest nesting of device-side launches the CUDA device runtime allows. */
enum { MAX_NESTING = 24 };

/* Device memory of one run. */
typedef canopy_gpu_buffers tree_session;

/* The consolidation buffer of crec/hier: all nodes, level by level. */
static canopy_status build_levels(tree_session &S, const canopy_ptree *t, gpu_ptsd_run *R,
                                  int64_t *level_start, canopy_ptsd_stats *st) {
    canopy_status s;
    int64_t *order;
    unsigned long long *end;
    TRY(S.alloc(&order, t->n, "level buffer"));
    TRY(S.alloc(&end, 1, "level counter"));
    CUDA_TRY(cudaMemcpy(order, &t->root, sizeof t->root, cudaMemcpyHostToDevice), "root");
    level_start[0] = 0;
    level_start[1] = 1;
    int32_t levels = 1;
    for (;;) {
        int64_t lo = level_start[levels - 1], hi = level_start[levels];
        unsigned long long e = (unsigned long long)hi;
        CUDA_TRY(cudaMemcpy(end, &e, sizeof e, cudaMemcpyHostToDevice), "level counter");
        expand_kernel<<<(unsigned)((hi - lo + 255) / 256), 256>>>(R->ctx, order, lo, hi, end);
        st->launches++;
        CUDA_TRY(cudaMemcpy(&e, end, sizeof e, cudaMemcpyDeviceToHost), "level counter");
        if ((int64_t)e == hi) break;
        if ((int64_t)e - hi > st->buffer_high_water) st->buffer_high_water = (int64_t)e - hi;
        level_start[++levels] = (int64_t)e;
    }
    if (level_start[levels] != t->n)
        return canopy_fail(CANOPY_ERR_INTERNAL, "GPU tree: %lld of %lld nodes reached going down",
                           (long long)level_start[levels], (long long)t->n);
    R->order = order;
    R->levels = levels;
    st->levels = levels;
    if (st->buffer_high_water < 1) st->buffer_high_water = 1;
    return CANOPY_OK;
}

static canopy_status run(const canopy_ptree *t, canopy_ptsd_app app, const double *mass,
                         const double *pos, canopy_ptsd_strategy strategy, void *out,
                         canopy_ptsd_stats *st, int64_t *level_start) {
    canopy_status s;
    if (!canopy_gpu_usable())
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "tree: strategy '%s' needs a GPU, and %s (use rec, flat, crec or hier)",
                           canopy_ptsd_strategy_name(strategy),
                           canopy_have_cuda() ? "no usable CUDA device is visible"
                                              : "this build of canopy has no CUDA backend");
    tree_session S;
    gpu_ptsd_run R;
    memset(&R, 0, sizeof R);
    R.app = app;
    R.depth = t->depth;
    R.launches = &st->launches;
    int dev = 0;
    CUDA_TRY(cudaGetDevice(&dev), "cudaGetDevice");
    CUDA_TRY(cudaDeviceGetAttribute(&R.sms, cudaDevAttrMultiProcessorCount, dev), "SM count");
    double t0 = canopy_now();
    gpu_ptsd_ctx &c = R.ctx;
    c.n = t->n;
    c.root = t->root;
    int64_t *p;
    TRY(S.upload(&p, (const int64_t *)t->parent, t->n, "parents"));
    c.parent = p;
    TRY(S.upload(&p, (const int64_t *)t->child_ptr, t->n + 1, "child offsets"));
    c.child_ptr = p;
    TRY(S.upload(&p, (const int64_t *)t->child, t->n, "children"));
    c.child = p;
    const bool is_mass = app == CANOPY_PTSD_MASS;
    if (is_mass) {
        double *d;
        TRY(S.upload(&d, mass, t->n, "masses"));
        c.mass = d;
        TRY(S.upload(&d, pos, 3 * t->n, "positions"));
        c.pos = d;
        TRY(S.alloc(&c.out_f64, 4 * t->n, "output"));
    } else {
        TRY(S.alloc(&c.out_i64, t->n, "output"));
    }
    TRY(S.alloc(&R.counters, 2, "launch counters"));
    CUDA_TRY(cudaMemset(R.counters, 0, 2 * sizeof(unsigned long long)), "launch counters");
    if (strategy == CANOPY_PTSD_GPU_REC) {
        if (t->depth > MAX_NESTING - 2)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "tree: strategy gpu-rec nests one device launch per level and "
                               "this tree has %d levels (at most %d); use gpu-crec or gpu-flat",
                               (int)t->depth, MAX_NESTING - 2);
        int64_t internal = 0;
        for (int64_t v = 0; v < t->n; v++) internal += t->child_ptr[v] != t->child_ptr[v + 1];
        /* A node launch and its tail launch per internal node may be pending at once;
         * twice that was measured too little on random1 (H100, CUDA 13), so 4x. */
        int64_t want = 4 * internal + 1024;
        TRY(canopy_gpu_dp_reserve(want < (1 << 23) ? want : (1 << 23)));
    }
    CUDA_TRY(cudaDeviceSynchronize(), "upload");
    st->upload_seconds = canopy_now() - t0;

    t0 = canopy_now();
    const char *name = canopy_ptsd_strategy_name(strategy);
    switch (strategy) {
    case CANOPY_PTSD_GPU_REC:
        CUDA_TRY(gpu_ptsd_dp_rec(&R), name);
        break;
    case CANOPY_PTSD_GPU_FLAT:
        CUDA_TRY(gpu_ptsd_flat(&R), name);
        break;
    case CANOPY_PTSD_GPU_CREC:
        TRY(build_levels(S, t, &R, level_start, st));
        R.level_start = level_start;
        CUDA_TRY(gpu_ptsd_crec(&R), name);
        break;
    default:
        TRY(build_levels(S, t, &R, level_start, st));
        R.level_start = level_start;
        CUDA_TRY(gpu_ptsd_hier(&R), name);
        break;
    }
    CUDA_TRY(cudaDeviceSynchronize(), name);
    st->kernel_seconds = canopy_now() - t0;
    unsigned long long made[2];
    CUDA_TRY(cudaMemcpy(made, R.counters, sizeof made, cudaMemcpyDeviceToHost), "launch counters");
    st->launches += (int64_t)made[0];
    if (made[1])
        return canopy_fail(CANOPY_ERR_DEVICE,
                           "tree: gpu-rec: %llu device-side launches failed (more pending "
                           "launches than the device runtime holds); use gpu-crec",
                           made[1]);

    t0 = canopy_now();
    if (is_mass)
        CUDA_TRY(
            cudaMemcpy(out, c.out_f64, sizeof(double) * 4 * (size_t)t->n, cudaMemcpyDeviceToHost),
            "download");
    else
        CUDA_TRY(cudaMemcpy(out, c.out_i64, sizeof(int64_t) * (size_t)t->n, cudaMemcpyDeviceToHost),
                 "download");
    st->download_seconds = canopy_now() - t0;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_ptsd_gpu_run(const canopy_ptree *t, canopy_ptsd_app app,
                                             const double *mass, const double *pos,
                                             canopy_ptsd_strategy strategy, void *out,
                                             canopy_ptsd_stats *st) {
    int64_t *level_start = NULL;
    canopy_status s = canopy_alloc((void **)&level_start, (size_t)t->depth + 2, sizeof(int64_t));
    if (s == CANOPY_OK) s = run(t, app, mass, pos, strategy, out, st, level_start);
    canopy_free(level_start);
    return s;
}
