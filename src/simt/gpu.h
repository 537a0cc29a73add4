/* SPDX-License-Identifier: MIT */
/* The SIMT kernels of kernels.h compiled by nvcc: the same sources as the CPU lanes run,
 * on the GPU. Host arrays in and out; CANOPY_ERR_DEVICE with a message on CUDA errors. */
#ifndef CANOPY_SIMT_GPU_H
#define CANOPY_SIMT_GPU_H

#include "canopy.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

canopy_status simt_gpu_divergent(const int32_t *in, int32_t *out, int n, int bdim);
canopy_status simt_gpu_exchange(const int32_t *in, int32_t *out, int n, int bdim, int rounds);
canopy_status simt_gpu_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out);
canopy_status simt_gpu_bfs(const int32_t *rowptr, const int32_t *col, int n, int src,
                           int32_t *cost);
canopy_status simt_gpu_hotspot(const float *temp, const float *power, int rows, int cols, int iters,
                               float *out);
canopy_status simt_gpu_nn(const float *rec, int n, float lat, float lng, float *dist);
canopy_status simt_gpu_lev(const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits);

#ifdef __cplusplus
}
#endif

#endif
