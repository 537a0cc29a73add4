// SPDX-License-Identifier: MIT
/* Internal (the module's LET code): a device buffer that grows to the largest request
 * and keeps its memory between calls (walks and exchanges repeat every step). */
#ifndef CANOPY_NBODY_LET_GPU_BUF_CUH
#define CANOPY_NBODY_LET_GPU_BUF_CUH

#include "canopy/cuda_util.cuh"

struct let_gpu_buf {
    char *p = nullptr;
    size_t cap = 0;
    let_gpu_buf() = default;
    let_gpu_buf(const let_gpu_buf &) = delete;
    let_gpu_buf &operator=(const let_gpu_buf &) = delete;
    canopy_status need(size_t bytes, const char *what) {
        if (bytes <= cap && p) return CANOPY_OK;
        cudaFree(p);
        p = nullptr;
        cap = 0;
        size_t c = bytes < 256 ? 256 : bytes + bytes / 4;
        cudaError_t e = cudaMalloc((void **)&p, c);
        if (e != cudaSuccess)
            return canopy_fail(CANOPY_ERR_DEVICE, "GPU: allocating %zu bytes for %s: %s", c, what,
                               cudaGetErrorString(e));
        cap = c;
        return CANOPY_OK;
    }
    ~let_gpu_buf() { cudaFree(p); }
};

#endif
