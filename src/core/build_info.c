/* SPDX-License-Identifier: MIT */
/* What this build contains and which GPU (if any) it sees. */
#include "canopy.h"
#include "canopy/dist.h"
#include "core/device.h"

#include <stdio.h>
#ifdef CANOPY_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

const char *canopy_version(void) {
    return CANOPY_VERSION_STRING;
}

int canopy_have_cuda(void) {
#ifdef CANOPY_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int canopy_have_mpi(void) {
#ifdef CANOPY_HAVE_MPI
    return 1;
#else
    return 0;
#endif
}

int canopy_gpu_usable(void) {
#ifdef CANOPY_HAVE_CUDA
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    }
    return cached;
#else
    return 0;
#endif
}

canopy_status canopy_gpu_dp_reserve(int64_t pending) {
#ifdef CANOPY_HAVE_CUDA
    size_t cur = 0;
    cudaError_t e = cudaDeviceGetLimit(&cur, cudaLimitDevRuntimePendingLaunchCount);
    if (e == cudaSuccess && cur < (size_t)pending)
        e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)pending);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "GPU: raising the pending-launch limit to %lld: %s",
                           (long long)pending, cudaGetErrorString(e));
    return CANOPY_OK;
#else
    (void)pending;
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "this build of canopy has no CUDA backend");
#endif
}

canopy_status canopy_gpu_info(char *name, size_t name_len, size_t *total_bytes) {
#ifdef CANOPY_HAVE_CUDA
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "no CUDA device visible (%s)",
                           e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    struct cudaDeviceProp prop;
    e = cudaGetDeviceProperties(&prop, 0);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
    if (name && name_len > 0) snprintf(name, name_len, "%s", prop.name);
    if (total_bytes) *total_bytes = prop.totalGlobalMem;
    return CANOPY_OK;
#else
    (void)name;
    (void)name_len;
    (void)total_bytes;
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "this build of canopy has no CUDA backend");
#endif
}
