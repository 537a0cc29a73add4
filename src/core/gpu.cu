/* SPDX-License-Identifier: MIT */
#include "core/gpu.cuh"

canopy_status canopy_gpu_check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return CANOPY_OK;
    return canopy_fail(CANOPY_ERR_DEVICE, "GPU: %s: %s", what, cudaGetErrorString(e));
}
