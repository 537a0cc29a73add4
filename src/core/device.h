/* SPDX-License-Identifier: MIT */
/* Internal: whether a CUDA device is usable (through the CUDA module, core/cuda_module.h). */
#ifndef CANOPY_CORE_DEVICE_H
#define CANOPY_CORE_DEVICE_H

#include "canopy.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when the CUDA module is loaded and a device is visible; cached after the first call. */
int canopy_gpu_usable(void);
/* Why canopy_gpu_usable() is 0 (module absent or refused, no device), or "". */
const char *canopy_gpu_why_not(void);
/* Visible CUDA devices (loading the module; 0 without it or without a device). */
int canopy_gpu_device_count(void);
/* Whether this process has tried to load the CUDA module (0 or 1; it tries once), and
 * whether it holds it; neither call loads it. CPU work must leave both 0. */
int canopy_cuda_load_attempts(void);
int canopy_cuda_loaded(void);
/* Where the CUDA module was loaded from (loading it if need be), or "" without one. */
const char *canopy_cuda_path(void);

/* Creates the device's primary context, the part of CUDA's start-up the first GPU call
 * would otherwise pay after canopy_gpu_usable() (the CLI starts both on a thread while
 * it reads its input). CANOPY_ERR_UNSUPPORTED without the module. */
canopy_status canopy_gpu_warm_up(void);

/* For the device-pointer entries (CUDA callers' arrays): CANOPY_ERR_INVALID naming
 * `what` unless p is device (or managed) memory; the work of the legacy default stream
 * waits for what the caller queued on `stream` (a cudaStream_t, NULL: nothing); a
 * synchronous copy of host bytes to device memory. All CANOPY_ERR_UNSUPPORTED without
 * the module. */
canopy_status canopy_gpu_require_device(const void *p, const char *what);
canopy_status canopy_gpu_wait_stream(void *stream);
canopy_status canopy_gpu_to_device(void *dst, const void *src, size_t bytes, const char *what);

/* Queries profiled at once (canopy/traverse.h declares it for its users; defined in
 * core/alloc.c so the core can lend it to the CUDA module). */
int64_t canopy_profile_chunk(int32_t words);

/* Module only. Dynamic parallelism: raises the device runtime's pending-launch limit to at least
 * `pending` (device-side launches beyond it fail). CANOPY_ERR_DEVICE on failure. */
canopy_status canopy_gpu_dp_reserve(int64_t pending);

#ifdef __cplusplus
}
#endif

#endif
