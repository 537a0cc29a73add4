/* SPDX-License-Identifier: MIT */
/* GPU build entry points of a build without CUDA: they say so. */
#ifndef CANOPY_HAVE_CUDA
#include "tree/gpu_build.h"

#include <stddef.h>

canopy_status canopy_tree_build_gpu(canopy_points pts, const canopy_tree_options *opt,
                                    canopy_gpu_tree **out) {
    (void)pts, (void)opt;
    *out = NULL;
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU tree build: this build has no CUDA");
}
canopy_status canopy_gpu_tree_download(const canopy_gpu_tree *g, canopy_tree **out) {
    (void)g;
    *out = NULL;
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU tree download: this build has no CUDA");
}
void canopy_gpu_tree_free(canopy_gpu_tree *g) {
    (void)g;
}
void canopy_gpu_pool_release(void) {}
const canopy_tree_view *canopy_gpu_tree_view(const canopy_gpu_tree *g) {
    (void)g;
    return NULL;
}
#else
typedef int canopy_gpu_build_none_unused; /* ISO C forbids an empty translation unit */
#endif
