/* SPDX-License-Identifier: MIT */
/* The SIMT kernels (kernels.h) on the GPU: under nvcc canopy/simt.h maps SIMT_IF, the
 * votes and the barrier to CUDA's own, so these are the CPU lanes' kernel sources. */
#include "core/gpu.cuh"
#include "simt/gpu.h"
#include "simt/consts.h"
#include "simt/kernels.h"

#include <string.h>

static int blocks(int n, int b) {
    return n > 0 ? (n + b - 1) / b : 0;
}
enum { FLAT = 256 };

/* CUDA events around a run of launches; runs add up (BFS's levels). Inert without a
 * timing to fill. */
struct launch_timer {
    simt_gpu_timing *t;
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    explicit launch_timer(simt_gpu_timing *tm) : t(tm) {
        if (!t) return;
        t->kernel_ms = 0.0;
        t->launches = 0;
        if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) t = nullptr;
    }
    launch_timer(const launch_timer &) = delete;
    launch_timer &operator=(const launch_timer &) = delete;
    ~launch_timer() {
        if (e0) cudaEventDestroy(e0);
        if (e1) cudaEventDestroy(e1);
    }
    void start() {
        if (t) cudaEventRecord(e0);
    }
    /* After the run's launches: waits for them, adds their time. */
    canopy_status stop(int launches) {
        canopy_status s = canopy_gpu_check(cudaGetLastError(), "simt kernel launch");
        if (s || !t) return s;
        float ms = 0.0f;
        s = canopy_gpu_check(cudaEventRecord(e1), "simt timing");
        if (!s) s = canopy_gpu_check(cudaEventSynchronize(e1), "simt kernels");
        if (!s) s = canopy_gpu_check(cudaEventElapsedTime(&ms, e0, e1), "simt timing");
        t->kernel_ms += ms;
        t->launches += launches;
        return s;
    }
};

/* A stencil's two device buffers of n elements, the first uploaded from src. */
template <class T>
canopy_status upload_pair(canopy_gpu_buffers &buf, const T *src, size_t n, T *pair[2],
                          const char *what) {
    void *d0, *d1;
    canopy_status s = buf.upload_bytes(&d0, src, sizeof(T) * n, what);
    if (!s) s = buf.alloc_bytes(&d1, sizeof(T) * n, what);
    if (s) return s;
    pair[0] = (T *)d0;
    pair[1] = (T *)d1;
    return CANOPY_OK;
}

/* Pathfinder's device arrays: the wall and two rows, the first the wall's row 0. */
struct pathfinder_gpu {
    canopy_gpu_buffers buf;
    const int32_t *wall = nullptr;
    int32_t *row[2] = {nullptr, nullptr};
    canopy_status upload(const int32_t *w, int rows, int cols) {
        void *dw = nullptr;
        canopy_status s =
            buf.upload_bytes(&dw, w, sizeof *w * (size_t)cols * (size_t)rows, "simt wall");
        if (!s) s = upload_pair(buf, w, (size_t)cols, row, "simt row");
        wall = (const int32_t *)dw;
        return s;
    }
};

/* Hotspot's device arrays: the powers and two temperature grids, the first uploaded. */
struct hotspot_gpu {
    canopy_gpu_buffers buf;
    const float *power = nullptr;
    float *t[2] = {nullptr, nullptr};
    size_t bytes = 0;
    canopy_status upload(const float *temp, const float *pw, int rows, int cols) {
        bytes = sizeof(float) * (size_t)rows * (size_t)cols;
        void *dp = nullptr;
        canopy_status s = buf.upload_bytes(&dp, pw, bytes, "hotspot power");
        if (!s) s = upload_pair(buf, temp, bytes / sizeof(float), t, "hotspot temperatures");
        power = (const float *)dp;
        return s;
    }
};

canopy_status canopy_simt_gpu_divergent(const int32_t *in, int32_t *out, int n, int bdim) {
    if (n <= 0) return CANOPY_OK;
    canopy_gpu_buffers buf;
    void *din, *dout;
    canopy_status s = buf.upload_bytes(&din, in, sizeof *in * (size_t)n, "simt input");
    if (!s) s = buf.alloc_bytes(&dout, sizeof *out * (size_t)n, "simt output");
    if (s) return s;
    k_divergent_args a = {(const int32_t *)din, (int32_t *)dout, n};
    k_divergent<<<blocks(n, bdim), bdim>>>(a);
    s = canopy_gpu_check(cudaGetLastError(), "simt divergent kernel");
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, dout, sizeof *out * (size_t)n, cudaMemcpyDeviceToHost),
                             "simt output");
    return s;
}

canopy_status canopy_simt_gpu_exchange(const int32_t *in, int32_t *out, int n, int bdim,
                                       int rounds) {
    if (n <= 0) return CANOPY_OK;
    canopy_gpu_buffers buf;
    void *din, *dout;
    canopy_status s = buf.upload_bytes(&din, in, sizeof *in * (size_t)n, "simt input");
    if (!s) s = buf.alloc_bytes(&dout, sizeof *out * (size_t)n, "simt output");
    if (s) return s;
    k_exchange_args a = {(const int32_t *)din, (int32_t *)dout, n, rounds};
    k_exchange<<<blocks(n, bdim), bdim, sizeof(int32_t) * (size_t)bdim>>>(a);
    s = canopy_gpu_check(cudaGetLastError(), "simt exchange kernel");
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, dout, sizeof *out * (size_t)n, cudaMemcpyDeviceToHost),
                             "simt output");
    return s;
}

canopy_status canopy_simt_gpu_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out,
                                         simt_gpu_timing *t) {
    launch_timer tm(t);
    if (rows <= 0 || cols <= 0) return CANOPY_OK;
    pathfinder_gpu g;
    canopy_status s = g.upload(wall, rows, cols);
    if (s) return s;
    int32_t *rowbuf[2] = {g.row[0], g.row[1]};
    tm.start();
    for (int r = 1; r < rows; r++) {
        k_pathfinder_args a = {g.wall, rowbuf[(r - 1) % 2], rowbuf[r % 2], cols, r};
        k_pathfinder<<<blocks(cols, FLAT), FLAT>>>(a);
    }
    s = tm.stop(rows - 1);
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, rowbuf[(rows - 1) % 2], sizeof *out * (size_t)cols,
                                        cudaMemcpyDeviceToHost),
                             "simt pathfinder result");
    return s;
}

canopy_status canopy_simt_gpu_bfs(const int32_t *rowptr, const int32_t *col, int n, int src,
                                  int32_t *cost, simt_gpu_timing *t) {
    if (n <= 0) return CANOPY_OK;
    launch_timer tm(t);
    canopy_gpu_buffers buf;
    void *drow, *dcol, *dflags, *dcost;
    size_t edges = (size_t)rowptr[n];
    canopy_status s = buf.upload_bytes(&drow, rowptr, sizeof *rowptr * ((size_t)n + 1), "rowptr");
    if (!s) s = buf.upload_bytes(&dcol, col, sizeof *col * edges, "columns");
    if (!s) s = buf.alloc_bytes(&dflags, sizeof(int32_t) * ((size_t)n * 3 + 1), "bfs flags");
    if (!s) s = buf.alloc_bytes(&dcost, sizeof *cost * (size_t)n, "bfs cost");
    if (s) return s;
    int32_t *flags = (int32_t *)dflags, one = 1, zero = 0;
    for (int v = 0; v < n; v++) cost[v] = v == src ? 0 : -1;
    s = canopy_gpu_check(cudaMemset(dflags, 0, sizeof(int32_t) * ((size_t)n * 3 + 1)), "bfs flags");
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(dcost, cost, sizeof *cost * (size_t)n, cudaMemcpyHostToDevice), "bfs cost");
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(flags + src, &one, sizeof one, cudaMemcpyHostToDevice),
                             "bfs frontier");
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(flags + 2 * n + src, &one, sizeof one, cudaMemcpyHostToDevice),
            "bfs visited");
    k_bfs_args a = {(const int32_t *)drow, (const int32_t *)dcol, flags,         flags + n,
                    flags + 2 * n,         (int32_t *)dcost,      flags + 3 * n, n};
    int32_t over = 1;
    while (!s && over) {
        s = canopy_gpu_check(cudaMemcpy(a.over, &zero, sizeof zero, cudaMemcpyHostToDevice),
                             "bfs flag");
        tm.start();
        k_bfs_expand<<<blocks(n, FLAT), FLAT>>>(a);
        k_bfs_commit<<<blocks(n, FLAT), FLAT>>>(a);
        if (!s) s = tm.stop(2);
        if (!s)
            s = canopy_gpu_check(cudaMemcpy(&over, a.over, sizeof over, cudaMemcpyDeviceToHost),
                                 "bfs flag");
    }
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(cost, dcost, sizeof *cost * (size_t)n, cudaMemcpyDeviceToHost), "bfs cost");
    return s;
}

canopy_status canopy_simt_gpu_hotspot(const float *temp, const float *power, int rows, int cols,
                                      int iters, float *out, simt_gpu_timing *t) {
    if (rows <= 0 || cols <= 0) return CANOPY_OK;
    launch_timer tm(t);
    hotspot_gpu g;
    canopy_status s = g.upload(temp, power, rows, cols);
    if (s) return s;
    float *tb[2] = {g.t[0], g.t[1]};
    hotspot_consts k = hotspot_consts_for(rows, cols);
    int bpr = blocks(cols, FLAT);
    tm.start();
    for (int it = 0; it < iters; it++) {
        k_hotspot_args a = {tb[it % 2], g.power, tb[(it + 1) % 2], rows, cols, bpr, k};
        k_hotspot<<<rows * bpr, FLAT>>>(a);
    }
    s = tm.stop(iters);
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, tb[iters % 2], g.bytes, cudaMemcpyDeviceToHost),
                             "hotspot result");
    return s;
}

canopy_status canopy_simt_gpu_nn(const float *rec, int n, float lat, float lng, float *dist,
                                 simt_gpu_timing *t) {
    if (n <= 0) return CANOPY_OK;
    launch_timer tm(t);
    canopy_gpu_buffers buf;
    void *drec, *ddist;
    canopy_status s = buf.upload_bytes(&drec, rec, sizeof *rec * 2 * (size_t)n, "nn records");
    if (!s) s = buf.alloc_bytes(&ddist, sizeof *dist * (size_t)n, "nn distances");
    if (s) return s;
    k_nn_args a = {(const float *)drec, (float *)ddist, n, lat, lng};
    tm.start();
    k_nn<<<blocks(n, FLAT), FLAT>>>(a);
    s = tm.stop(1);
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(dist, ddist, sizeof *dist * (size_t)n, cudaMemcpyDeviceToHost),
            "nn distances");
    return s;
}

canopy_status canopy_simt_gpu_lev(const int32_t *text, int n, int len, const int32_t *pat,
                                  int32_t *hits, simt_gpu_timing *t) {
    if (n <= 0) return CANOPY_OK;
    launch_timer tm(t);
    canopy_gpu_buffers buf;
    void *dtext, *dpat, *dhits;
    canopy_status s =
        buf.upload_bytes(&dtext, text, sizeof *text * (size_t)n * (size_t)len, "text");
    if (!s) s = buf.upload_bytes(&dpat, pat, sizeof *pat * SIMT_LEV_M, "pattern");
    if (!s) s = buf.alloc_bytes(&dhits, sizeof *hits * (size_t)n, "hits");
    if (s) return s;
    k_lev_args a = {(const int32_t *)dtext, (int32_t *)dhits, (const int32_t *)dpat, n, len};
    tm.start();
    k_lev<<<blocks(n, FLAT), FLAT>>>(a);
    s = tm.stop(1);
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(hits, dhits, sizeof *hits * (size_t)n, cudaMemcpyDeviceToHost), "hits");
    return s;
}

canopy_status canopy_simt_gpu_pathfinder_tiled(const int32_t *wall, int rows, int cols, int bdim,
                                               int steps, int32_t *out, simt_gpu_timing *t) {
    if (rows <= 0 || cols <= 0) return CANOPY_OK;
    if (steps < 1 || bdim <= 2 * steps || bdim > 1024)
        return canopy_fail(CANOPY_ERR_INVALID, "simt pathfinder: blocks of %d threads for %d rows",
                           bdim, steps);
    launch_timer tm(t);
    pathfinder_gpu g;
    canopy_status s = g.upload(wall, rows, cols);
    if (s) return s;
    int32_t *rowbuf[2] = {g.row[0], g.row[1]};
    int launches = (rows - 1 + steps - 1) / steps;
    tm.start();
    for (int k = 0; k < launches; k++) {
        int r = k * steps, st = rows - 1 - r < steps ? rows - 1 - r : steps;
        k_pathfinder_tile_args a = {g.wall, rowbuf[k % 2], rowbuf[(k + 1) % 2], cols, r, st};
        k_pathfinder_tile<<<blocks(cols, bdim - 2 * st), bdim,
                            2 * sizeof(int32_t) * (size_t)bdim>>>(a);
    }
    s = tm.stop(launches);
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, rowbuf[launches % 2], sizeof *out * (size_t)cols,
                                        cudaMemcpyDeviceToHost),
                             "simt pathfinder result");
    return s;
}

canopy_status canopy_simt_gpu_hotspot_tiled(const float *temp, const float *power, int rows,
                                            int cols, int iters, int tw_log, int th, int steps,
                                            float *out, simt_gpu_timing *t) {
    if (rows <= 0 || cols <= 0) return CANOPY_OK;
    int tw = 1 << tw_log;
    if (steps < 1 || tw <= 2 * steps || th <= 2 * steps || tw * th > 1024)
        return canopy_fail(CANOPY_ERR_INVALID, "simt hotspot: tiles of %dx%d for %d steps", tw, th,
                           steps);
    launch_timer tm(t);
    hotspot_gpu g;
    canopy_status s = g.upload(temp, power, rows, cols);
    if (s) return s;
    float *tb[2] = {g.t[0], g.t[1]};
    hotspot_consts k = hotspot_consts_for(rows, cols);
    int launches = (iters + steps - 1) / steps;
    tm.start();
    for (int l = 0; l < launches; l++) {
        int st = iters - l * steps < steps ? iters - l * steps : steps;
        int bpr = blocks(cols, tw - 2 * st);
        k_hotspot_tile_args a = {tb[l % 2], g.power, tb[(l + 1) % 2], rows, cols, st, tw_log, th,
                                 bpr,       k};
        k_hotspot_tile<<<blocks(rows, th - 2 * st) * bpr, tw * th,
                         3 * sizeof(float) * (size_t)(tw * th)>>>(a);
    }
    s = tm.stop(launches);
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, tb[launches % 2], g.bytes, cudaMemcpyDeviceToHost),
                             "hotspot result");
    return s;
}

canopy_status canopy_simt_gpu_gaussian(const float *a, const float *b, int n, float *x,
                                       simt_gpu_timing *t) {
    if (n <= 0) return CANOPY_OK;
    launch_timer tm(t);
    size_t nn = (size_t)n * (size_t)n;
    canopy_gpu_buffers buf;
    void *da, *db, *dm;
    canopy_status s = buf.upload_bytes(&da, a, sizeof *a * nn, "gaussian matrix");
    if (!s) s = buf.upload_bytes(&db, b, sizeof *b * (size_t)n, "gaussian right-hand side");
    if (!s) s = buf.alloc_bytes(&dm, sizeof *a * (size_t)n, "gaussian multipliers");
    if (s) return s;
    tm.start();
    for (int st = 0; st < n - 1; st++) {
        k_gauss_args g = {(float *)da, (float *)db, (float *)dm, n, st};
        k_gauss_fan1<<<blocks(n - 1 - st, FLAT), FLAT>>>(g);
        k_gauss_fan2<<<n - 1 - st, FLAT>>>(g);
    }
    s = tm.stop(2 * (n - 1));
    float *ha = (float *)malloc(sizeof *ha * (nn + (size_t)n));
    if (!ha) return canopy_fail(CANOPY_ERR_NOMEM, "gaussian: %zu bytes", sizeof *ha * nn);
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(ha, da, sizeof *ha * nn, cudaMemcpyDeviceToHost),
                             "gaussian matrix");
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(ha + nn, db, sizeof *ha * (size_t)n, cudaMemcpyDeviceToHost),
            "gaussian right-hand side");
    if (!s) simt_gauss_back(ha, ha + nn, n, x);
    free(ha);
    return s;
}

canopy_status canopy_simt_gpu_micro(const simt_micro_cfg *c, const int32_t *in, int32_t *out,
                                    simt_gpu_timing *t) {
    launch_timer tm(t);
    canopy_gpu_buffers buf;
    void *din = nullptr, *dout = nullptr;
    int nout = c->kind == SIMT_MICRO_SHMEM ? 64 : c->n;
    canopy_status s = CANOPY_OK;
    if (c->kind == SIMT_MICRO_MEMORY)
        s = buf.upload_bytes(&din, in, sizeof *in * (size_t)c->n, "micro input");
    if (!s && out) s = buf.alloc_bytes(&dout, sizeof *out * (size_t)nout, "micro output");
    if (s) return s;
    k_micro_args a = {
        (const int32_t *)din, (int32_t *)dout, c->n, c->rdeg, c->iters, c->d, c->cost};
    int launches = 1;
    tm.start();
    switch (c->kind) {
    case SIMT_MICRO_EMPTY:
        for (int k = 0; k < c->launches; k++) k_empty<<<c->grid, c->bdim>>>(a);
        launches = c->launches;
        break;
    case SIMT_MICRO_MEMORY:
        k_memory<<<blocks(c->n, FLAT), FLAT>>>(a);
        break;
    case SIMT_MICRO_DIVERGE:
        k_diverge<<<blocks(c->n, FLAT), FLAT>>>(a);
        break;
    case SIMT_MICRO_BARRIER:
        k_barrier<<<1, c->bdim>>>(a);
        break;
    case SIMT_MICRO_SHMEM:
        a.n = 64;
        k_shmem<<<1, 64>>>(a);
        break;
    }
    s = tm.stop(launches);
    if (!s) s = canopy_gpu_check(cudaDeviceSynchronize(), "simt microbenchmark");
    if (!s && out)
        s = canopy_gpu_check(
            cudaMemcpy(out, dout, sizeof *out * (size_t)nout, cudaMemcpyDeviceToHost),
            "micro output");
    return s;
}
