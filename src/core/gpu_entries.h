/* SPDX-License-Identifier: MIT */
/* Internal: core/'s own GPU entry points in the CUDA module, its slice "core"
 * (core/cuda_module.h; forwarders in core/gpu_forward.c). */
#ifndef CANOPY_CORE_GPU_ENTRIES_H
#define CANOPY_CORE_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "core/device.h"

#define CANOPY_CORE_GPU_ENTRIES(STATUS, OUT, RELEASE)                                              \
    STATUS(canopy_gpu_warm_up, (void), ())                                                         \
    STATUS(canopy_gpu_require_device, (const void *p, const char *what), (p, what))                \
    STATUS(canopy_gpu_wait_stream, (void *stream), (stream))                                       \
    STATUS(canopy_gpu_to_device, (void *dst, const void *src, size_t bytes, const char *what),     \
           (dst, src, bytes, what))                                                                \
    RELEASE(canopy_gpu_pool_release, (void), ())

CANOPY_CUDA_SLICE_STRUCT(canopy_core_gpu_entries, CANOPY_CORE_GPU_ENTRIES)

#endif
