/* SPDX-License-Identifier: MIT */
/* Internal: the device memory pool of GPU builds. One grow-only scratch arena and
 * one grow-only pinned staging buffer per process, reused by every build (a build
 * holds the pool's lock from reserve to release); results (trees that outlive a
 * build) come from CUDA's stream-ordered pool, whose release threshold is raised so
 * freed blocks are kept for the next build instead of going back to the driver. */
#ifndef CANOPY_CORE_GPU_POOL_CUH
#define CANOPY_CORE_GPU_POOL_CUH

#include "canopy.h"

#include <cuda_runtime.h>

/* Locks the pool and makes its arena at least `bytes` (device) and its staging
 * buffer at least `pinned` bytes (host, page-locked); *dev / *host get their bases. */
canopy_status canopy_gpu_pool_acquire(size_t bytes, size_t pinned, unsigned char **dev,
                                      unsigned char **host);
void canopy_gpu_pool_unlock(void);

/* Stream-ordered allocations for results, from the retained CUDA pool. */
canopy_status canopy_gpu_pool_result(void **out, size_t bytes, cudaStream_t s, const char *what);

/* Carves aligned pieces out of an acquired arena, in order. */
struct canopy_gpu_carve {
    unsigned char *base;
    size_t used;
    template <class T> T *take(int64_t count) {
        size_t bytes = (sizeof(T) * (size_t)(count > 0 ? count : 1) + 255) / 256 * 256;
        T *p = (T *)(base + used);
        used += bytes;
        return p;
    }
    /* The same arithmetic without a base: how many bytes a sequence of takes needs. */
    template <class T> static size_t bytes(int64_t count) {
        return (sizeof(T) * (size_t)(count > 0 ? count : 1) + 255) / 256 * 256;
    }
};

#endif
