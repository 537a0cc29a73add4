/* SPDX-License-Identifier: MIT */
/* Internal: index/'s GPU entry points in the CUDA module (the index's device copy and staged
 * queries), its slice "index" (core/cuda_module.h; forwarders in index/gpu_forward.c). */
#ifndef CANOPY_INDEX_GPU_ENTRIES_H
#define CANOPY_INDEX_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "index/device.h"

#define CANOPY_INDEX_GPU_ENTRIES(STATUS, OUT, RELEASE)                                             \
    STATUS(canopy_index_device_build,                                                              \
           (canopy_points pts, int device_points, const canopy_tree_options *to, void *stream,     \
            canopy_index_device *dv),                                                              \
           (pts, device_points, to, stream, dv))                                                   \
    STATUS(canopy_index_device_upload, (const canopy_tree_view *host, canopy_index_device *dv),    \
           (host, dv))                                                                             \
    RELEASE(canopy_index_device_free, (canopy_index_device * dv), (dv))                            \
    STATUS(canopy_index_device_knn,                                                                \
           (canopy_index_device * dv, const float *d_queries, int64_t nq, int self, int32_t k,     \
            canopy_variant v, canopy_schedule sched, int64_t *d_idx, float *d_dist2, void *stream, \
            canopy_gpu_report *rep),                                                               \
           (dv, d_queries, nq, self, k, v, sched, d_idx, d_dist2, stream, rep))                    \
    STATUS(canopy_index_staging_reserve,                                                           \
           (struct canopy_index_staging * *st, int64_t nq, int32_t d, int32_t k, int pinned,       \
            float **h_queries, int64_t **h_idx, float **h_dist2),                                  \
           (st, nq, d, k, pinned, h_queries, h_idx, h_dist2))                                      \
    STATUS(canopy_index_staging_put,                                                               \
           (struct canopy_index_staging * st, const float *rows_at, int64_t row0, int64_t rows,    \
            int last),                                                                             \
           (st, rows_at, row0, rows, last))                                                        \
    STATUS(canopy_index_staging_knn,                                                               \
           (canopy_index_device * dv, struct canopy_index_staging * st, canopy_variant v,          \
            canopy_schedule sched, canopy_gpu_report * rep),                                       \
           (dv, st, v, sched, rep))                                                                \
    STATUS(canopy_index_staging_back,                                                              \
           (struct canopy_index_staging * st, void *h_idx, int narrow, float *h_dist2,             \
            int32_t chunks),                                                                       \
           (st, h_idx, narrow, h_dist2, chunks))                                                   \
    STATUS(canopy_index_staging_wait, (struct canopy_index_staging * st, int32_t chunk),           \
           (st, chunk))                                                                            \
    RELEASE(canopy_index_staging_free, (struct canopy_index_staging * st), (st))

CANOPY_CUDA_SLICE_STRUCT(canopy_index_gpu_entries, CANOPY_INDEX_GPU_ENTRIES)

#endif
