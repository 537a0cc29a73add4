/* SPDX-License-Identifier: MIT */
/* Internal: traverse/'s GPU entry points in the CUDA module (the GPU query schedules), its slice
 * "traverse" (core/cuda_module.h; forwarders in traverse/gpu_forward.c). */
#ifndef CANOPY_TRAVERSE_GPU_ENTRIES_H
#define CANOPY_TRAVERSE_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "traverse/gpu_schedule.h"

#define CANOPY_TRAVERSE_GPU_ENTRIES(STATUS, OUT, RELEASE)                                          \
    STATUS(canopy_gpu_schedule_queries,                                                            \
           (canopy_schedule s, canopy_points queries, int64_t * order), (s, queries, order))

CANOPY_CUDA_SLICE_STRUCT(canopy_traverse_gpu_entries, CANOPY_TRAVERSE_GPU_ENTRIES)

#endif
