/* SPDX-License-Identifier: MIT */
/* The forest GPU engines as seen from C (predict.c, the tests). Defined in the CUDA
 * module; without it they fail with CANOPY_ERR_UNSUPPORTED (forest/gpu_forward.c). */
#ifndef CANOPY_FOREST_GPU_H
#define CANOPY_FOREST_GPU_H

#include "forest/forest.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What one GPU prediction did, for canopy_predict_stats. */
typedef struct cf_gpu_report {
    double upload_seconds, compile_seconds, kernel_seconds, download_seconds;
    int32_t kernel_cache; /* as canopy_predict_stats.kernel_cache */
    int model_cached;     /* the model was already on the device */
    size_t device_bytes;
    canopy_forest_mapping mapping; /* resolved */
} cf_gpu_report;

/* Adds, for every row of X, the leaves of all trees into acc (n x n_outputs doubles,
 * zeroed by the caller), exactly what the CPU walkers add, with engine e (a GPU
 * engine) over layout L of forest f. The forest keeps device copies of its layouts
 * and compiled kernels for later calls (freed by canopy_cf_gpu_release). */
canopy_status canopy_cf_gpu_predict(const canopy_forest *f, const cf_layout *L, canopy_points X,
                                    canopy_forest_engine e, canopy_forest_mapping m, double *acc,
                                    cf_gpu_report *rep);
void canopy_cf_gpu_release(canopy_forest *f);

/* enc: the CUDA C source of the encoded-topology kernel for layout L (a hier layout)
 * under mapping m; *src is malloc'ed. */
canopy_status canopy_cf_gpu_enc_source(const cf_layout *L, canopy_forest_mapping m, char **src);
/* Compiles src with NVRTC for compute capability cc (e.g. 90) into a cubin
 * (malloc'ed). Needs no GPU, so CI checks the generated code too. */
canopy_status canopy_cf_gpu_nvrtc_compile(const char *src, int cc, void **cubin, size_t *size);

#ifdef __cplusplus
}
#endif
#endif
