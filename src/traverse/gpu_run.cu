/* Host side of the CUDA backend: upload the tree and an application's buffers, pick
 * the variant's launcher, time it with events, copy results back, report errors. */
#include "traverse/gpu_apps.cuh"

#include <stdio.h>
#include <string.h>

#define GPU_TRY(expr, what)                                                                        \
    do {                                                                                           \
        if ((s = canopy_gpu_check((expr), what)) != CANOPY_OK) goto done;                          \
    } while (0)

/* Device buffers of one call, released together, and the queries' upload. */
struct gpu_buffers : canopy_gpu_buffers {
    /* Points as a dense (n, d) device array whatever the host stride. */
    canopy_status upload_points(canopy_points *dev, canopy_points host, const char *what) {
        void *p;
        canopy_status s = alloc_bytes(&p, sizeof(float) * (size_t)host.n * host.d, what);
        if (s) return s;
        if (host.n > 0) {
            cudaError_t e =
                cudaMemcpy2D(p, sizeof(float) * host.d, host.data, sizeof(float) * host.stride,
                             sizeof(float) * host.d, (size_t)host.n, cudaMemcpyHostToDevice);
            if ((s = canopy_gpu_check(e, what))) return s;
        }
        *dev = canopy_points_make((const float *)p, host.n, host.d);
        return CANOPY_OK;
    }
};

static canopy_status upload_tree(gpu_buffers &B, const canopy_tree_view *h, canopy_tree_view *d) {
    *d = *h;
    canopy_status s;
    if ((s = B.upload(&d->hot, h->hot, (int64_t)h->n_nodes * h->hot_stride, "tree nodes")) ||
        (s = B.upload(&d->points, h->points, h->n * h->d, "tree points")) ||
        (s = B.upload(&d->ids, h->ids, h->n, "tree ids")) ||
        (s = B.upload(&d->rope, h->rope, h->n_nodes, "tree ropes")))
        return s;
    return h->weights ? B.upload(&d->weights, h->weights, h->n, "tree weights") : CANOPY_OK;
}

template <class App>
static canopy_status dispatch(canopy_variant v, const canopy_gpu_launch &L,
                              const typename App::Ctx &ctx) {
    switch (v) {
    case CANOPY_VARIANT_REC:
        return canopy_gpu_launch_rec<App>(L, ctx);
    case CANOPY_VARIANT_DR:
        return canopy_gpu_launch_dr<App>(L, ctx);
    case CANOPY_VARIANT_SR:
        return canopy_gpu_launch_sr<App>(L, ctx);
    case CANOPY_VARIANT_GDR:
        return canopy_gpu_launch_gdr<App>(L, ctx);
    case CANOPY_VARIANT_DR_L:
        return canopy_gpu_launch_dr_l<App>(L, ctx);
    case CANOPY_VARIANT_SR_L:
        return canopy_gpu_launch_sr_l<App>(L, ctx);
    case CANOPY_VARIANT_FSM_L:
        return canopy_gpu_launch_fsm_l<App>(L, ctx);
    default:
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "variant %s does not run on the GPU",
                           canopy_variant_name(v));
    }
}

static int is_lockstep(canopy_variant v) {
    return v == CANOPY_VARIANT_DR_L || v == CANOPY_VARIANT_SR_L || v == CANOPY_VARIANT_FSM_L;
}

/* Runs App over an uploaded tree; ctx already holds device pointers. */
template <class App>
static canopy_status run(gpu_buffers &B, const typename App::Ctx &ctx, const canopy_tree_view *dt,
                         const int64_t *order, int64_t nq, canopy_variant v,
                         const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    if (App::guided && (v == CANOPY_VARIANT_SR || v == CANOPY_VARIANT_SR_L))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "variant %s (static ropes) needs an unguided traversal",
                           canopy_variant_name(v));
    if (App::guided && !App::equivalent && is_lockstep(v))
        return canopy_fail(CANOPY_ERR_INVALID, "lockstep needs semantically equivalent orders");
    canopy_status s;
    canopy_gpu_launch L;
    memset(&L, 0, sizeof L);
    L.tree = *dt;
    L.nq = nq;
    L.stack_cap = (int32_t)canopy_tree_stack_capacity(dt);
    int dev = 0;
    cudaEvent_t e0 = NULL, e1 = NULL;
    void *p;
    unsigned long long counters[4] = {0, 0, 0, 0};
    int err_flag = 0;
    double t0 = canopy_now();
    float ms = 0.0f;
    GPU_TRY(cudaGetDevice(&dev), "cudaGetDevice");
    GPU_TRY(cudaDeviceGetAttribute(&L.sms, cudaDevAttrMultiProcessorCount, dev),
            "multiprocessor count");
    if (order) {
        if ((s = B.upload_bytes(&p, order, sizeof(int64_t) * (size_t)nq, "query order"))) goto done;
        L.order = (const int64_t *)p;
    }
    if (plan && nq > 0) {
        canopy_profile_plan dplan = *plan;
        if ((s = B.upload_bytes(&p, plan->col, sizeof(int32_t) * (size_t)dt->n_nodes,
                                "profile columns")))
            goto done;
        dplan.col = (int32_t *)p;
        if ((s = B.alloc_bytes(&p, sizeof(int64_t) * (size_t)nq, "hybrid order"))) goto done;
        GPU_TRY(cudaEventCreate(&e0), "cudaEventCreate");
        GPU_TRY(cudaEventCreate(&e1), "cudaEventCreate");
        GPU_TRY(cudaEventRecord(e0, 0), "cudaEventRecord");
        if ((s = canopy_gpu_profile_order<App>(L, ctx, dplan, (int64_t *)p, &rep->profile_tests)))
            goto done;
        GPU_TRY(cudaEventRecord(e1, 0), "cudaEventRecord");
        GPU_TRY(cudaEventSynchronize(e1), "hybrid schedule");
        GPU_TRY(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
        rep->schedule_seconds += ms * 1e-3;
        L.order = (const int64_t *)p;
    }
    if ((s = B.alloc_bytes(&p, 4 * sizeof(unsigned long long), "counters"))) goto done;
    L.counters = (unsigned long long *)p;
    if ((s = B.alloc_bytes(&p, sizeof(int) + sizeof(unsigned long long) * 2, "flags"))) goto done;
    L.error = (int *)p;
    L.next = (unsigned long long *)((char *)p + 8);
    GPU_TRY(cudaMemset(p, 0, sizeof(int) + sizeof(unsigned long long) * 2), "clearing flags");
    GPU_TRY(cudaMemset(L.counters, 0, 4 * sizeof(unsigned long long)), "clearing counters");
    if (v == CANOPY_VARIANT_DR || v == CANOPY_VARIANT_GDR) {
        size_t threads = (size_t)L.sms * 8 * CANOPY_GPU_BLOCK;
        if ((s = B.alloc_bytes(&p, threads * (size_t)L.stack_cap * sizeof(int32_t),
                               "per-thread stacks")))
            goto done;
        L.scratch = (int32_t *)p;
    }
    if (v == CANOPY_VARIANT_REC)
        /* nvcc cannot size a recursive kernel's stack; a frame with the descriptor
         * inlined stays well under 1 KiB. */
        GPU_TRY(cudaDeviceSetLimit(cudaLimitStackSize, (size_t)(dt->depth + 4) * 1024),
                "device stack size for recursion");
    rep->transfer_seconds += canopy_now() - t0 - rep->schedule_seconds;

    if (!e0) GPU_TRY(cudaEventCreate(&e0), "cudaEventCreate");
    if (!e1) GPU_TRY(cudaEventCreate(&e1), "cudaEventCreate");
    GPU_TRY(cudaEventRecord(e0, 0), "cudaEventRecord");
    if (nq > 0 && (s = dispatch<App>(v, L, ctx))) goto done;
    GPU_TRY(cudaEventRecord(e1, 0), "cudaEventRecord");
    GPU_TRY(cudaEventSynchronize(e1), "traversal kernel");
    GPU_TRY(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    rep->traverse_seconds += ms * 1e-3;
    GPU_TRY(cudaMemcpy(counters, L.counters, sizeof counters, cudaMemcpyDeviceToHost), "counters");
    GPU_TRY(cudaMemcpy(&err_flag, L.error, sizeof err_flag, cudaMemcpyDeviceToHost), "flags");
    if (err_flag) {
        s = canopy_fail(CANOPY_ERR_INTERNAL,
                        "GPU %s: a traversal stack overflowed its %d entries (tree depth %d)",
                        canopy_variant_name(v), (int)L.stack_cap, (int)dt->depth);
        goto done;
    }
    rep->counters.nodes += (int64_t)counters[0];
    rep->counters.group_nodes += (int64_t)counters[1];
    rep->counters.group_longest += (int64_t)counters[2];
    rep->counters.groups += (int64_t)counters[3];
    s = CANOPY_OK;
done:
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    return s;
}

/* An output buffer of an application: allocated on the device, copied back after. */
struct gpu_output {
    void *host;
    void *dev;
    size_t bytes;
};

/* The shape every application's glue shares: upload the tree, let `setup` upload
 * the application's inputs and allocate its outputs (pointing the device context at
 * them), run the variant, copy the outputs back. Transfers are timed apart. */
template <class App, class Setup>
static canopy_status run_app(const typename App::Ctx &host_ctx, const canopy_tree_view *tree,
                             const int64_t *order, int64_t nq, canopy_variant v,
                             const canopy_profile_plan *plan, canopy_gpu_report *rep, Setup setup) {
    gpu_buffers B;
    canopy_tree_view dt;
    typename App::Ctx d = host_ctx;
    gpu_output outs[2];
    int n_out = 0;
    double t0 = canopy_now();
    canopy_status s = upload_tree(B, tree, &dt);
    if (!s) s = setup(B, d, outs, n_out);
    rep->transfer_seconds += canopy_now() - t0;
    if (s || (s = run<App>(B, d, &dt, order, nq, v, plan, rep))) return s;
    t0 = canopy_now();
    for (int i = 0; i < n_out && !s; i++)
        s = canopy_gpu_check(
            cudaMemcpy(outs[i].host, outs[i].dev, outs[i].bytes, cudaMemcpyDeviceToHost),
            "copying results");
    rep->transfer_seconds += canopy_now() - t0;
    return s;
}

/* Allocates one output of `bytes` mirroring host memory `host`; *dev gets its address. */
template <class T>
static canopy_status add_output(gpu_buffers &B, T **dev, T *host, size_t bytes, const char *what,
                                gpu_output *outs, int &n_out) {
    void *p;
    canopy_status s = B.alloc_bytes(&p, bytes, what);
    if (s) return s;
    *dev = (T *)p;
    outs[n_out++] = gpu_output{host, p, bytes};
    return CANOPY_OK;
}

/* ---- per-application glue: which buffers each context holds ---- */

extern "C" canopy_status canopy_gpu_knn(const void *vctx, const canopy_tree_view *tree,
                                        const int64_t *order, int64_t nq, canopy_variant v,
                                        const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    const knn_ctx *h = (const knn_ctx *)vctx;
    size_t cells = (size_t)nq * h->k;
    return run_app<knn_gpu>(
        *h, tree, order, nq, v, plan, rep, [&](gpu_buffers &B, knn_ctx &d, gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "knn queries");
            if (!s) s = add_output(B, &d.idx, h->idx, cells * sizeof(int64_t), "knn indices", o, n);
            if (!s)
                s = add_output(B, &d.dist2, h->dist2, cells * sizeof(float), "knn distances", o, n);
            return s;
        });
}

extern "C" canopy_status canopy_gpu_radius(const void *vctx, const canopy_tree_view *tree,
                                           const int64_t *order, int64_t nq, canopy_variant v,
                                           const canopy_profile_plan *plan,
                                           canopy_gpu_report *rep) {
    const radius_ctx *h = (const radius_ctx *)vctx;
    return run_app<radius_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](gpu_buffers &B, radius_ctx &d, gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "radius queries");
            if (!s)
                s = add_output(B, &d.counts, h->counts, (size_t)nq * sizeof(int64_t),
                               "radius counts", o, n);
            return s;
        });
}

extern "C" canopy_status canopy_gpu_gravity(const void *vctx, const canopy_tree_view *tree,
                                            const int64_t *order, int64_t nq, canopy_variant v,
                                            const canopy_profile_plan *plan,
                                            canopy_gpu_report *rep) {
    const gravity_ctx *h = (const gravity_ctx *)vctx;
    return run_app<gravity_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](gpu_buffers &B, gravity_ctx &d, gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.bodies, h->bodies, "gravity bodies");
            if (!s)
                s = add_output(B, &d.acc, h->acc, (size_t)nq * 3 * sizeof(float), "accelerations",
                               o, n);
            return s;
        });
}

extern "C" canopy_status canopy_gpu_search(const void *vctx, const canopy_tree_view *tree,
                                           const int64_t *order, int64_t nq, canopy_variant v,
                                           const canopy_profile_plan *plan,
                                           canopy_gpu_report *rep) {
    const search_ctx *h = (const search_ctx *)vctx;
    return run_app<search_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](gpu_buffers &B, search_ctx &d, gpu_output *o, int &n) {
            void *pq;
            canopy_status s =
                B.upload_bytes(&pq, h->queries, (size_t)nq * sizeof(float), "search queries");
            d.queries = (const float *)pq;
            if (!s)
                s = add_output(B, &d.idx, h->idx, (size_t)nq * sizeof(int64_t), "search results", o,
                               n);
            return s;
        });
}
