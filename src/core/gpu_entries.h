/* SPDX-License-Identifier: MIT */
/* Internal: core/'s own GPU entry points in the CUDA module, its slice "core"
 * (core/cuda_module.h; forwarders in core/gpu_forward.c). */
#ifndef CANOPY_CORE_GPU_ENTRIES_H
#define CANOPY_CORE_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "core/device.h"

#define CANOPY_CORE_GPU_ENTRIES(STATUS, OUT, RELEASE)                                              \
    STATUS(canopy_gpu_warm_up, (void), ())                                                         \
    RELEASE(canopy_gpu_pool_release, (void), ())

CANOPY_CUDA_SLICE_STRUCT(canopy_core_gpu_entries, CANOPY_CORE_GPU_ENTRIES)

#endif
