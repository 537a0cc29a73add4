/* SPDX-License-Identifier: MIT */
#include "core/gpu.cuh"
#include "core/gpu_pool.cuh"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *arena, *staging;
static size_t arena_bytes, staging_bytes;
static int mempool_ready;

canopy_status canopy_gpu_pool_acquire(size_t bytes, size_t pinned, unsigned char **dev,
                                      unsigned char **host) {
    pthread_mutex_lock(&pool_lock);
    canopy_status s = CANOPY_OK;
    if (bytes > arena_bytes) {
        cudaFree(arena);
        arena = NULL;
        arena_bytes = 0;
        /* Grow by at least half again, so slowly growing inputs reallocate rarely. */
        size_t want = bytes + bytes / 2;
        if ((s = canopy_gpu_check(cudaMalloc((void **)&arena, want), "allocating the build pool")))
            goto out;
        arena_bytes = want;
    }
    if (pinned > staging_bytes) {
        cudaFreeHost(staging);
        staging = NULL;
        staging_bytes = 0;
        size_t want = pinned + pinned / 2;
        if ((s = canopy_gpu_check(cudaMallocHost((void **)&staging, want),
                                  "allocating the pinned staging buffer")))
            goto out;
        staging_bytes = want;
    }
    *dev = arena;
    *host = staging;
out:
    if (s) pthread_mutex_unlock(&pool_lock);
    return s;
}

void canopy_gpu_pool_unlock(void) {
    pthread_mutex_unlock(&pool_lock);
}

canopy_status canopy_gpu_pool_result(void **out, size_t bytes, cudaStream_t st, const char *what) {
    if (!__atomic_load_n(&mempool_ready, __ATOMIC_ACQUIRE)) {
        int dev = 0;
        cudaMemPool_t mp;
        canopy_status s;
        if ((s = canopy_gpu_check(cudaGetDevice(&dev), "selecting the device")) ||
            (s = canopy_gpu_check(cudaDeviceGetDefaultMemPool(&mp, dev), "the device pool")))
            return s;
        uint64_t keep = UINT64_MAX;
        if ((s = canopy_gpu_check(
                 cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep),
                 "keeping the device pool")))
            return s;
        __atomic_store_n(&mempool_ready, 1, __ATOMIC_RELEASE);
    }
    cudaError_t e = cudaMallocAsync(out, bytes ? bytes : 16, st);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "GPU: allocating %zu bytes for %s: %s", bytes, what,
                           cudaGetErrorString(e));
    return CANOPY_OK;
}

void canopy_gpu_pool_release(void) {
    pthread_mutex_lock(&pool_lock);
    cudaFree(arena);
    cudaFreeHost(staging);
    arena = staging = NULL;
    arena_bytes = staging_bytes = 0;
    pthread_mutex_unlock(&pool_lock);
}
