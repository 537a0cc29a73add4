/* SPDX-License-Identifier: MIT */
/* Device residency in a build without CUDA: every entry says so. */
#ifndef CANOPY_HAVE_CUDA
#include "index/device.h"

static canopy_status no_cuda(void) {
    return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                       "index: device residency needs a CUDA build of canopy (this one has none)");
}

canopy_status canopy_index_device_build(canopy_points pts, const canopy_tree_options *to,
                                        canopy_index_device *dv, canopy_tree **host) {
    (void)pts, (void)to, (void)dv;
    *host = NULL;
    return no_cuda();
}
canopy_status canopy_index_device_upload(const canopy_tree_view *host, canopy_index_device *dv) {
    (void)host, (void)dv;
    return no_cuda();
}
void canopy_index_device_free(canopy_index_device *dv) {
    (void)dv;
}
canopy_status canopy_index_device_knn(const canopy_index_device *dv, const float *d_queries,
                                      int64_t nq, int32_t k, canopy_variant v, int64_t *d_idx,
                                      float *d_dist2, void *stream, canopy_gpu_report *rep) {
    (void)dv, (void)d_queries, (void)nq, (void)k, (void)v, (void)d_idx, (void)d_dist2, (void)stream,
        (void)rep;
    return no_cuda();
}
#else
typedef int canopy_index_gpu_none_unused; /* ISO C forbids an empty translation unit */
#endif
