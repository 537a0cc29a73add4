/* SPDX-License-Identifier: MIT */
/* The CUDA module's side of core/cuda_module.h that knows no subsystem: the device count,
 * and the core functions the module's code calls, each passed on to the core that loaded
 * it. The exported entry and the table of slices are src/cuda_module/'s. */
#include "core/cuda_module.h"
#include "core/device.h"
#include "core/gpu.cuh"

#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdio.h>

static const canopy_cuda_host *host;

/* The runtime reports a missing driver and an old one with the same error, so the
 * driver's version (0 when no driver is installed) tells the user which one to fix. */
int canopy_cuda_module_device_count(char *why, size_t why_len) {
    int n = 0, driver = 0, runtime = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) return n;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0)
        snprintf(why, why_len, "no NVIDIA driver is installed (libcuda.so.1 not found)");
    else if (e == cudaErrorInsufficientDriver)
        snprintf(why, why_len,
                 "the NVIDIA driver is too old: it runs CUDA %d.%d, this module needs CUDA %d.%d",
                 driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
    else if (e == cudaSuccess || e == cudaErrorNoDevice)
        snprintf(why, why_len,
                 "no CUDA device is visible (NVIDIA driver for CUDA %d.%d; CUDA_VISIBLE_DEVICES "
                 "may hide them)",
                 driver / 1000, driver % 1000 / 10);
    else
        snprintf(why, why_len, "no usable CUDA device (%s)", cudaGetErrorString(e));
    return 0;
}

extern "C" {
canopy_status canopy_fail(canopy_status s, const char *fmt, ...) {
    char message[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    return host->fail(s, message);
}
canopy_status canopy_alloc(void **out, size_t count, size_t elem_size) {
    return host->alloc(out, count, elem_size);
}
void canopy_free(void *p) {
    host->free(p);
}
double canopy_now(void) {
    return host->now();
}
void canopy_tree_free(canopy_tree *t) {
    host->tree_free(t);
}
int64_t canopy_profile_chunk(int32_t words) {
    return host->profile_chunk(words);
}
const char *canopy_variant_name(canopy_variant v) {
    return host->variant_name(v);
}
const char *canopy_schedule_name(canopy_schedule s) {
    return host->schedule_name(s);
}
const char *canopy_tree_kind_name(canopy_tree_kind k) {
    return host->tree_kind_name(k);
}
const char *canopy_graph_strategy_name(canopy_graph_strategy s) {
    return host->graph_strategy_name(s);
}
const char *canopy_ptsd_strategy_name(canopy_ptsd_strategy s) {
    return host->ptsd_strategy_name(s);
}
const char *canopy_forest_engine_name(canopy_forest_engine e) {
    return host->forest_engine_name(e);
}
const char *canopy_forest_layout_name(canopy_forest_layout l) {
    return host->forest_layout_name(l);
}

int canopy_have_cuda(void) {
    return 1;
}

int canopy_gpu_usable(void) {
    static int cached = -1;
    if (cached < 0) {
        char why[256];
        cached = canopy_cuda_module_device_count(why, sizeof why) > 0;
    }
    return cached;
}

canopy_status canopy_gpu_warm_up(void) {
    char why[256];
    if (!canopy_cuda_module_device_count(why, sizeof why))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s", why);
    /* the runtime creates the primary context on its first call that needs one */
    cudaError_t e = cudaFree(0);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "GPU: creating the context: %s",
                           cudaGetErrorString(e));
    return CANOPY_OK;
}

canopy_status canopy_gpu_require_device(const void *p, const char *what) {
    if (canopy_gpu_on_device(p)) return CANOPY_OK;
    return canopy_fail(CANOPY_ERR_INVALID,
                       "%s must be device memory (got %s): pass a CUDA array or use the host "
                       "entry",
                       what, p ? "a host pointer" : "NULL");
}

canopy_status canopy_gpu_wait_stream(void *stream) {
    return canopy_gpu_after_stream(stream);
}

canopy_status canopy_gpu_to_device(void *dst, const void *src, size_t bytes, const char *what) {
    return bytes ? canopy_gpu_check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), what)
                 : CANOPY_OK;
}

canopy_status canopy_gpu_dp_reserve(int64_t pending) {
    size_t cur = 0;
    cudaError_t e = cudaDeviceGetLimit(&cur, cudaLimitDevRuntimePendingLaunchCount);
    if (e == cudaSuccess && cur < (size_t)pending)
        e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)pending);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "GPU: raising the pending-launch limit to %lld: %s",
                           (long long)pending, cudaGetErrorString(e));
    return CANOPY_OK;
}

canopy_status canopy_cuda_module_gpu_info(char *name, size_t name_len, size_t *total_bytes) {
    char why[256];
    if (!canopy_cuda_module_device_count(why, sizeof why))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s", why);
    cudaDeviceProp prop;
    int dev = 0; /* the calling thread's device (the table binds it first) */
    cudaGetDevice(&dev);
    cudaError_t e = cudaGetDeviceProperties(&prop, dev);
    if (e != cudaSuccess)
        return canopy_fail(CANOPY_ERR_DEVICE, "cudaGetDeviceProperties: %s", cudaGetErrorString(e));
    if (name && name_len > 0) snprintf(name, name_len, "%s", prop.name);
    if (total_bytes) *total_bytes = prop.totalGlobalMem;
    return CANOPY_OK;
}

int canopy_cuda_module_attach(const canopy_cuda_host *h) {
    if (!h || h->abi != CANOPY_CUDA_MODULE_ABI || h->size != sizeof *h) return 0;
    host = h;
    return 1;
}
}
