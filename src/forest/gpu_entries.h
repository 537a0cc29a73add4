/* SPDX-License-Identifier: MIT */
/* Internal: forest/'s GPU entry points in the CUDA module (the GPU forest engines), its slice
 * "forest" (core/cuda_module.h; forwarders in forest/gpu_forward.c). */
#ifndef CANOPY_FOREST_GPU_ENTRIES_H
#define CANOPY_FOREST_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "forest/gpu.h"

#define CANOPY_FOREST_GPU_ENTRIES(STATUS, OUT, RELEASE)                                            \
    STATUS(canopy_cf_gpu_predict,                                                                  \
           (const canopy_forest *f, const cf_layout *L, canopy_points X, canopy_forest_engine e,   \
            canopy_forest_mapping m, double *acc, cf_gpu_report *rep),                             \
           (f, L, X, e, m, acc, rep))                                                              \
    RELEASE(canopy_cf_gpu_release, (canopy_forest * f), (f))                                       \
    OUT(canopy_cf_gpu_enc_source, (const cf_layout *L, canopy_forest_mapping m, char **src),       \
        (L, m, src), src)                                                                          \
    OUT(canopy_cf_gpu_nvrtc_compile, (const char *src, int cc, void **cubin, size_t *size),        \
        (src, cc, cubin, size), cubin)

CANOPY_CUDA_SLICE_STRUCT(canopy_forest_gpu_entries, CANOPY_FOREST_GPU_ENTRIES)

#endif
