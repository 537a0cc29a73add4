/* SPDX-License-Identifier: MIT */
/* Internal: ptsd/'s GPU entry points in the CUDA module (the GPU point-to-subtree walks), its slice
 * "ptsd" (core/cuda_module.h; forwarders in ptsd/gpu_forward.c). */
#ifndef CANOPY_PTSD_GPU_ENTRIES_H
#define CANOPY_PTSD_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "ptsd/gpu.h"

#define CANOPY_PTSD_GPU_ENTRIES(STATUS, OUT, RELEASE)                                              \
    STATUS(canopy_ptsd_gpu_run,                                                                    \
           (const canopy_ptree *t, canopy_ptsd_app app, const double *mass, const double *pos,     \
            canopy_ptsd_strategy s, void *out, canopy_ptsd_stats *stats),                          \
           (t, app, mass, pos, s, out, stats))

CANOPY_CUDA_SLICE_STRUCT(canopy_ptsd_gpu_entries, CANOPY_PTSD_GPU_ENTRIES)

#endif
