/* SPDX-License-Identifier: MIT */
/* The device copy of a resident canopy_index: built on the GPU (kd) or uploaded once,
 * and the device-pointer kNN entry. */
#include "index/device.h"

#include "apps/common.h"
#include "apps/knn.h"
#include "canopy/traverse_cuda.cuh"

#include <string.h>

extern "C" canopy_status canopy_index_device_build(canopy_points pts, const canopy_tree_options *to,
                                                   canopy_index_device *dv, canopy_tree **host) {
    *host = NULL;
    canopy_gpu_tree *g = NULL;
    canopy_status s = canopy_tree_build_gpu(pts, to, &g);
    if (!s) s = canopy_gpu_tree_download(g, host);
    if (s) {
        canopy_gpu_tree_free(g);
        return s;
    }
    memset(dv, 0, sizeof *dv);
    dv->view = *canopy_gpu_tree_view(g);
    dv->built = g;
    dv->bytes = (size_t)canopy_tree_view_bytes(&dv->view);
    dv->gpu_built = 1;
    return CANOPY_OK;
}

template <class T>
static canopy_status put(const T **dev, const T *host, int64_t count, const char *what) {
    *dev = NULL;
    if (!host) return CANOPY_OK;
    void *p = NULL;
    size_t bytes = sizeof(T) * (size_t)(count > 0 ? count : 1);
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaSuccess && count > 0)
        e = cudaMemcpy(p, host, sizeof(T) * (size_t)count, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaFree(p);
        return canopy_gpu_check(e, what);
    }
    *dev = (const T *)p;
    return CANOPY_OK;
}

extern "C" canopy_status canopy_index_device_upload(const canopy_tree_view *h,
                                                    canopy_index_device *dv) {
    memset(dv, 0, sizeof *dv);
    dv->view = *h;
    canopy_status s;
    if ((s = put(&dv->view.hot, h->hot, (int64_t)h->n_nodes * h->hot_stride, "index nodes")) ||
        (s = put(&dv->view.points, h->points, h->n * h->d, "index points")) ||
        (s = put(&dv->view.ids, h->ids, h->n, "index ids")) ||
        (s = put(&dv->view.rope, h->rope, h->n_nodes, "index ropes")) ||
        (s = put(&dv->view.weights, h->weights, h->n, "index weights"))) {
        canopy_index_device_free(dv);
        return s;
    }
    dv->bytes = (size_t)canopy_tree_view_bytes(h);
    return CANOPY_OK;
}

extern "C" void canopy_index_device_free(canopy_index_device *dv) {
    if (dv->built) {
        canopy_gpu_tree_free(dv->built);
    } else {
        cudaFree((void *)dv->view.hot);
        cudaFree((void *)dv->view.points);
        cudaFree((void *)dv->view.ids);
        cudaFree((void *)dv->view.rope);
        cudaFree((void *)dv->view.weights);
    }
    memset(dv, 0, sizeof *dv);
}

/* 1 when p is device (or managed) memory the kernels can read. */
static int on_device(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

extern "C" canopy_status canopy_index_device_knn(const canopy_index_device *dv,
                                                 const float *d_queries, int64_t nq, int32_t k,
                                                 canopy_variant v, int64_t *d_idx, float *d_dist2,
                                                 void *stream, canopy_gpu_report *rep) {
    if (nq > 0 && (!on_device(d_queries) || !on_device(d_idx) || (d_dist2 && !on_device(d_dist2))))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "index knn (device): queries, indices and distances must be device "
                           "memory");
    /* Inputs the caller produced on its stream must be complete before the kernels,
     * which run on the legacy default stream. */
    canopy_status s =
        canopy_gpu_check(cudaStreamSynchronize((cudaStream_t)stream), "waiting for the stream");
    if (s) return s;
    knn_ctx d;
    d.query = canopy_points_make(d_queries, nq, dv->view.d);
    d.k = k;
    d.self = 0;
    d.idx = d_idx;
    d.dist2 = d_dist2;
    return canopy_gpu_knn_device(&d, &dv->view, nq, v, rep);
}
