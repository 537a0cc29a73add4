/* SPDX-License-Identifier: MIT */
/* The device copy of a resident canopy_index (index_gpu.cu, in the CUDA module; without
 * the module the entries fail with CANOPY_ERR_UNSUPPORTED, core/cuda_load.c). */
#ifndef CANOPY_INDEX_DEVICE_H
#define CANOPY_INDEX_DEVICE_H

#include "tree/gpu_build.h"

#ifdef __cplusplus
extern "C" {
#endif

struct canopy_index_scratch; /* index_gpu.cu */

typedef struct canopy_index_device {
    canopy_tree_view view; /* device pointers; view.hot NULL: no device copy */
    /* per-query scratch kept between queries (grow-only, freed with the index) */
    struct canopy_index_scratch *scratch;
    canopy_gpu_tree *built; /* a GPU build owning the arrays, or NULL (uploaded here) */
    size_t bytes;           /* device bytes of the tree arrays */
    int gpu_built;
} canopy_index_device;

/* Builds a kd tree on the GPU into dv and downloads its host twin into *host (the
 * schedules, auto choices and CPU queries read the host tree). */
canopy_status canopy_index_device_build(canopy_points pts, const canopy_tree_options *to,
                                        canopy_index_device *dv, canopy_tree **host);
/* Copies a host tree to the device once. */
canopy_status canopy_index_device_upload(const canopy_tree_view *host, canopy_index_device *dv);
void canopy_index_device_free(canopy_index_device *dv);

/* kNN of nq device queries (d = the tree's) written to device idx/dist2 (dist2 may be
 * NULL), on `stream`, in the caller's order (schedule none) or Morton-sorted on the
 * device first (morton; rep->schedule_seconds gets the sort's time); returns when the
 * results are written. Calls on one index are serialised (they share its scratch). */
canopy_status canopy_index_device_knn(const canopy_index_device *dv, const float *d_queries,
                                      int64_t nq, int32_t k, canopy_variant v,
                                      canopy_schedule sched, int64_t *d_idx, float *d_dist2,
                                      void *stream, canopy_gpu_report *rep);

#ifdef __cplusplus
}
#endif

#endif
