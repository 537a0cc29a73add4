/* SPDX-License-Identifier: MIT */
/* Internal: whether a CUDA device is usable (0 in CPU-only builds). */
#ifndef CANOPY_CORE_DEVICE_H
#define CANOPY_CORE_DEVICE_H

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build has CUDA and a device is visible; cached after the first call. */
int canopy_gpu_usable(void);

/* Dynamic parallelism: raises the device runtime's pending-launch limit to at least
 * `pending` (device-side launches beyond it fail). CANOPY_ERR_DEVICE on failure. */
canopy_status canopy_gpu_dp_reserve(int64_t pending);

#ifdef __cplusplus
}
#endif

#endif
