/* SPDX-License-Identifier: MIT */
/* canopy/cuda_util.cuh — CUDA host helpers every backend (and a user's own GPU
 * traversal) shares: turning a CUDA error into a canopy status,
 * and the device allocations of one call, freed together when the call ends. */
#ifndef CANOPY_CUDA_UTIL_CUH
#define CANOPY_CUDA_UTIL_CUH

#include "canopy.h"

#include <cuda_runtime.h>

/* CANOPY_OK, or CANOPY_ERR_DEVICE "GPU: what: CUDA's message". Inline: the caller's
 * CUDA runtime answers, so libcanopy itself never links one. */
inline canopy_status canopy_gpu_check(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return CANOPY_OK;
    return canopy_fail(CANOPY_ERR_DEVICE, "GPU: %s: %s", what, cudaGetErrorString(e));
}

struct canopy_gpu_buffers {
    enum { CAPACITY = 32 };
    void *ptr[CAPACITY];
    int n_ptr = 0;
    canopy_gpu_buffers() = default;
    canopy_gpu_buffers(const canopy_gpu_buffers &) = delete;
    canopy_gpu_buffers &operator=(const canopy_gpu_buffers &) = delete;
    ~canopy_gpu_buffers() {
        for (int i = 0; i < n_ptr; i++) cudaFree(ptr[i]);
    }
    /* Zero bytes still allocate a little, so every buffer is a valid pointer. */
    canopy_status alloc_bytes(void **out, size_t bytes, const char *what) {
        *out = NULL;
        if (n_ptr == CAPACITY) return canopy_fail(CANOPY_ERR_INTERNAL, "GPU: too many buffers");
        cudaError_t e = cudaMalloc(out, bytes ? bytes : 16);
        if (e != cudaSuccess)
            return canopy_fail(CANOPY_ERR_DEVICE, "GPU: allocating %zu bytes for %s: %s", bytes,
                               what, cudaGetErrorString(e));
        ptr[n_ptr++] = *out;
        return CANOPY_OK;
    }
    canopy_status upload_bytes(void **out, const void *src, size_t bytes, const char *what) {
        canopy_status s = alloc_bytes(out, bytes, what);
        if (s || bytes == 0) return s;
        return canopy_gpu_check(cudaMemcpy(*out, src, bytes, cudaMemcpyHostToDevice), what);
    }
    template <class T> canopy_status alloc(T **out, int64_t count, const char *what) {
        return alloc_bytes((void **)out, sizeof(T) * (size_t)(count > 0 ? count : 0), what);
    }
    /* count elements of *out's type from src (the source may be the const view of it) */
    template <class T>
    canopy_status upload(T **out, const void *src, int64_t count, const char *what) {
        return upload_bytes((void **)out, src, sizeof(T) * (size_t)(count > 0 ? count : 0), what);
    }
};

#endif
