/* SPDX-License-Identifier: MIT */
/* Internal (CUDA builds): the morton and hilbert query schedules computed on the GPU.
 * The permutation equals canopy_schedule_queries' exactly: the same quantisation
 * over the queries' bounding box (first 63 coordinates, floor(63 / d) bits each),
 * the same curve keys (device twins of canopy_morton_key / canopy_hilbert_key) and
 * a stable sort, so equal keys keep the caller's order. queries.data and order may
 * each be a host or a device pointer; non-finite coordinates are an error. NONE
 * gives the identity; other schedules are CANOPY_ERR_UNSUPPORTED. */
#ifndef CANOPY_TRAVERSE_GPU_SCHEDULE_H
#define CANOPY_TRAVERSE_GPU_SCHEDULE_H

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

canopy_status canopy_gpu_schedule_queries(canopy_schedule s, canopy_points queries, int64_t *order);

#ifdef __cplusplus
}
#endif

#endif
