/* SPDX-License-Identifier: MIT */
/* The SIMT kernels of kernels.h compiled by nvcc: the same sources as the CPU lanes run,
 * on the GPU. Host arrays in and out; CANOPY_ERR_DEVICE with a message on CUDA errors.
 * Where a call takes a simt_gpu_timing (NULL: not timed), it reports the time of the
 * call's kernels from CUDA events, copies and allocations excluded. */
#ifndef CANOPY_SIMT_GPU_H
#define CANOPY_SIMT_GPU_H

#include "canopy.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct simt_gpu_timing {
    double kernel_ms; /* events around the launches (BFS: summed over its levels) */
    int launches;
} simt_gpu_timing;

/* Wu's microbenchmarks (as the CPU tables' entries, runtime.h): which, and their sizes. */
typedef enum simt_micro_kind {
    SIMT_MICRO_EMPTY,   /* `launches` launches of grid x bdim */
    SIMT_MICRO_MEMORY,  /* n threads, rdeg, iters (in, out: n ints) */
    SIMT_MICRO_DIVERGE, /* n threads, d branches of `cost` steps (out: n ints) */
    SIMT_MICRO_BARRIER, /* one block of bdim threads, iters barriers */
    SIMT_MICRO_SHMEM    /* one block of 64 threads, rdeg, iters (out: 64 ints) */
} simt_micro_kind;
typedef struct simt_micro_cfg {
    simt_micro_kind kind;
    int n, rdeg, iters, d, cost, grid, bdim, launches;
} simt_micro_cfg;

canopy_status canopy_simt_gpu_divergent(const int32_t *in, int32_t *out, int n, int bdim);
canopy_status canopy_simt_gpu_exchange(const int32_t *in, int32_t *out, int n, int bdim,
                                       int rounds);
canopy_status canopy_simt_gpu_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out,
                                         simt_gpu_timing *t);
/* Rodinia's pyramids (runtime.h's pathfinder_tiled and hotspot_tiled); blocks of bdim
 * threads (at most 1024), tiles of 2^tw_log x th threads. */
canopy_status canopy_simt_gpu_pathfinder_tiled(const int32_t *wall, int rows, int cols, int bdim,
                                               int steps, int32_t *out, simt_gpu_timing *t);
canopy_status canopy_simt_gpu_bfs(const int32_t *rowptr, const int32_t *col, int n, int src,
                                  int32_t *cost, simt_gpu_timing *t);
canopy_status canopy_simt_gpu_hotspot(const float *temp, const float *power, int rows, int cols,
                                      int iters, float *out, simt_gpu_timing *t);
canopy_status canopy_simt_gpu_hotspot_tiled(const float *temp, const float *power, int rows,
                                            int cols, int iters, int tw_log, int th, int steps,
                                            float *out, simt_gpu_timing *t);
canopy_status canopy_simt_gpu_nn(const float *rec, int n, float lat, float lng, float *dist,
                                 simt_gpu_timing *t);
canopy_status canopy_simt_gpu_lev(const int32_t *text, int n, int len, const int32_t *pat,
                                  int32_t *hits, simt_gpu_timing *t);
canopy_status canopy_simt_gpu_gaussian(const float *a, const float *b, int n, float *x,
                                       simt_gpu_timing *t);
canopy_status canopy_simt_gpu_micro(const simt_micro_cfg *c, const int32_t *in, int32_t *out,
                                    simt_gpu_timing *t);

#ifdef __cplusplus
}
#endif

#endif
