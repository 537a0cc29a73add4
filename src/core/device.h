/* Internal: whether a CUDA device is usable (0 in CPU-only builds). */
#ifndef CANOPY_CORE_DEVICE_H
#define CANOPY_CORE_DEVICE_H

/* 1 when this build has CUDA and a device is visible; cached after the first call. */
int canopy_gpu_usable(void);

#endif
