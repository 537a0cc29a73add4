/* SPDX-License-Identifier: MIT */
/* Internal: simt/'s GPU entry points in the CUDA module (the SIMT benchmarks' GPU kernels), its
 * slice "simt" (core/cuda_module.h; forwarders in simt/gpu_forward.c). */
#ifndef CANOPY_SIMT_GPU_ENTRIES_H
#define CANOPY_SIMT_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "simt/gpu.h"

#define CANOPY_SIMT_GPU_ENTRIES(STATUS, OUT, RELEASE)                                              \
    STATUS(canopy_simt_gpu_divergent, (const int32_t *in, int32_t *out, int n, int bdim),          \
           (in, out, n, bdim))                                                                     \
    STATUS(canopy_simt_gpu_exchange,                                                               \
           (const int32_t *in, int32_t *out, int n, int bdim, int rounds),                         \
           (in, out, n, bdim, rounds))                                                             \
    STATUS(canopy_simt_gpu_pathfinder,                                                             \
           (const int32_t *wall, int rows, int cols, int32_t *out, simt_gpu_timing *t),            \
           (wall, rows, cols, out, t))                                                             \
    STATUS(canopy_simt_gpu_pathfinder_tiled,                                                       \
           (const int32_t *wall, int rows, int cols, int bdim, int steps, int32_t *out,            \
            simt_gpu_timing *t),                                                                   \
           (wall, rows, cols, bdim, steps, out, t))                                                \
    STATUS(canopy_simt_gpu_bfs,                                                                    \
           (const int32_t *rowptr, const int32_t *col, int n, int src, int32_t *cost,              \
            simt_gpu_timing *t),                                                                   \
           (rowptr, col, n, src, cost, t))                                                         \
    STATUS(canopy_simt_gpu_hotspot,                                                                \
           (const float *temp, const float *power, int rows, int cols, int iters, float *out,      \
            simt_gpu_timing *t),                                                                   \
           (temp, power, rows, cols, iters, out, t))                                               \
    STATUS(canopy_simt_gpu_hotspot_tiled,                                                          \
           (const float *temp, const float *power, int rows, int cols, int iters, int tw_log,      \
            int th, int steps, float *out, simt_gpu_timing *t),                                    \
           (temp, power, rows, cols, iters, tw_log, th, steps, out, t))                            \
    STATUS(canopy_simt_gpu_nn,                                                                     \
           (const float *rec, int n, float lat, float lng, float *dist, simt_gpu_timing *t),       \
           (rec, n, lat, lng, dist, t))                                                            \
    STATUS(canopy_simt_gpu_lev,                                                                    \
           (const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits,                \
            simt_gpu_timing *t),                                                                   \
           (text, n, len, pat, hits, t))                                                           \
    STATUS(canopy_simt_gpu_gaussian,                                                               \
           (const float *a, const float *b, int n, float *x, simt_gpu_timing *t), (a, b, n, x, t)) \
    STATUS(canopy_simt_gpu_micro,                                                                  \
           (const simt_micro_cfg *c, const int32_t *in, int32_t *out, simt_gpu_timing *t),         \
           (c, in, out, t))

CANOPY_CUDA_SLICE_STRUCT(canopy_simt_gpu_entries, CANOPY_SIMT_GPU_ENTRIES)

#endif
