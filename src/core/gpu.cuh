/* SPDX-License-Identifier: MIT */
/* The CUDA host helpers are public (traversals compiled outside the library use
 * them): canopy/cuda_util.cuh. */
#include "canopy/cuda_util.cuh"

#ifndef CANOPY_CORE_GPU_CUH
#define CANOPY_CORE_GPU_CUH

/* 1 when p is device (or managed) memory the kernels can read: what the device-pointer
 * entry points check before reading a caller's pointer. */
inline int canopy_gpu_on_device(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

/* Work that runs on the legacy default stream waits for what the caller queued on
 * `stream` (a cudaStream_t, a non-blocking one included; NULL: nothing to wait for):
 * an event, not a host wait. */
inline canopy_status canopy_gpu_after_stream(void *stream) {
    const cudaStream_t st = (cudaStream_t)stream;
    if (st == 0 || st == cudaStreamLegacy) return CANOPY_OK;
    cudaEvent_t ev;
    canopy_status s =
        canopy_gpu_check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    if (s) return s;
    if (!(s = canopy_gpu_check(cudaEventRecord(ev, st), "cudaEventRecord")))
        s = canopy_gpu_check(cudaStreamWaitEvent(cudaStreamLegacy, ev, 0),
                             "waiting for the caller's stream");
    cudaEventDestroy(ev);
    return s;
}

#endif
