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

canopy_status simt_gpu_divergent(const int32_t *in, int32_t *out, int n, int bdim) {
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

canopy_status simt_gpu_exchange(const int32_t *in, int32_t *out, int n, int bdim, int rounds) {
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

canopy_status simt_gpu_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out) {
    if (rows <= 0 || cols <= 0) return CANOPY_OK;
    canopy_gpu_buffers buf;
    void *dwall, *d0, *d1;
    canopy_status s =
        buf.upload_bytes(&dwall, wall, sizeof *wall * (size_t)rows * (size_t)cols, "simt wall");
    if (!s) s = buf.upload_bytes(&d0, wall, sizeof *wall * (size_t)cols, "simt row");
    if (!s) s = buf.alloc_bytes(&d1, sizeof *wall * (size_t)cols, "simt row");
    if (s) return s;
    int32_t *rowbuf[2] = {(int32_t *)d0, (int32_t *)d1};
    for (int r = 1; r < rows; r++) {
        k_pathfinder_args a = {(const int32_t *)dwall, rowbuf[(r - 1) % 2], rowbuf[r % 2], cols, r};
        k_pathfinder<<<blocks(cols, FLAT), FLAT>>>(a);
    }
    s = canopy_gpu_check(cudaGetLastError(), "simt pathfinder kernel");
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, rowbuf[(rows - 1) % 2], sizeof *out * (size_t)cols,
                                        cudaMemcpyDeviceToHost),
                             "simt pathfinder result");
    return s;
}

canopy_status simt_gpu_bfs(const int32_t *rowptr, const int32_t *col, int n, int src,
                           int32_t *cost) {
    if (n <= 0) return CANOPY_OK;
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
        k_bfs_expand<<<blocks(n, FLAT), FLAT>>>(a);
        k_bfs_commit<<<blocks(n, FLAT), FLAT>>>(a);
        if (!s) s = canopy_gpu_check(cudaGetLastError(), "simt bfs kernels");
        if (!s)
            s = canopy_gpu_check(cudaMemcpy(&over, a.over, sizeof over, cudaMemcpyDeviceToHost),
                                 "bfs flag");
    }
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(cost, dcost, sizeof *cost * (size_t)n, cudaMemcpyDeviceToHost), "bfs cost");
    return s;
}

canopy_status simt_gpu_hotspot(const float *temp, const float *power, int rows, int cols, int iters,
                               float *out) {
    if (rows <= 0 || cols <= 0) return CANOPY_OK;
    size_t bytes = sizeof(float) * (size_t)rows * (size_t)cols;
    canopy_gpu_buffers buf;
    void *dpower, *d0, *d1;
    canopy_status s = buf.upload_bytes(&dpower, power, bytes, "hotspot power");
    if (!s) s = buf.upload_bytes(&d0, temp, bytes, "hotspot temperatures");
    if (!s) s = buf.alloc_bytes(&d1, bytes, "hotspot temperatures");
    if (s) return s;
    float *t[2] = {(float *)d0, (float *)d1};
    hotspot_consts k = hotspot_consts_for(rows, cols);
    int bpr = blocks(cols, FLAT);
    for (int it = 0; it < iters; it++) {
        k_hotspot_args a = {t[it % 2],
                            (const float *)dpower,
                            t[(it + 1) % 2],
                            rows,
                            cols,
                            bpr,
                            k.step_cap,
                            k.rx1,
                            k.ry1,
                            k.rz1,
                            k.amb};
        k_hotspot<<<rows * bpr, FLAT>>>(a);
    }
    s = canopy_gpu_check(cudaGetLastError(), "simt hotspot kernel");
    if (!s)
        s = canopy_gpu_check(cudaMemcpy(out, t[iters % 2], bytes, cudaMemcpyDeviceToHost),
                             "hotspot result");
    return s;
}

canopy_status simt_gpu_nn(const float *rec, int n, float lat, float lng, float *dist) {
    if (n <= 0) return CANOPY_OK;
    canopy_gpu_buffers buf;
    void *drec, *ddist;
    canopy_status s = buf.upload_bytes(&drec, rec, sizeof *rec * 2 * (size_t)n, "nn records");
    if (!s) s = buf.alloc_bytes(&ddist, sizeof *dist * (size_t)n, "nn distances");
    if (s) return s;
    k_nn_args a = {(const float *)drec, (float *)ddist, n, lat, lng};
    k_nn<<<blocks(n, FLAT), FLAT>>>(a);
    s = canopy_gpu_check(cudaGetLastError(), "simt nn kernel");
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(dist, ddist, sizeof *dist * (size_t)n, cudaMemcpyDeviceToHost),
            "nn distances");
    return s;
}

canopy_status simt_gpu_lev(const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits) {
    if (n <= 0) return CANOPY_OK;
    canopy_gpu_buffers buf;
    void *dtext, *dpat, *dhits;
    canopy_status s =
        buf.upload_bytes(&dtext, text, sizeof *text * (size_t)n * (size_t)len, "text");
    if (!s) s = buf.upload_bytes(&dpat, pat, sizeof *pat * SIMT_LEV_M, "pattern");
    if (!s) s = buf.alloc_bytes(&dhits, sizeof *hits * (size_t)n, "hits");
    if (s) return s;
    k_lev_args a = {(const int32_t *)dtext, (int32_t *)dhits, (const int32_t *)dpat, n, len};
    k_lev<<<blocks(n, FLAT), FLAT>>>(a);
    s = canopy_gpu_check(cudaGetLastError(), "simt levenshtein kernel");
    if (!s)
        s = canopy_gpu_check(
            cudaMemcpy(hits, dhits, sizeof *hits * (size_t)n, cudaMemcpyDeviceToHost), "hits");
    return s;
}
