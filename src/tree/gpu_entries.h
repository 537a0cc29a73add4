/* SPDX-License-Identifier: MIT */
/* Internal: tree/'s GPU entry points in the CUDA module (the GPU tree builder), its slice
 * "tree" (core/cuda_module.h; forwarders in tree/gpu_forward.c). */
#ifndef CANOPY_TREE_GPU_ENTRIES_H
#define CANOPY_TREE_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "canopy.h"
#include "tree/gpu_build.h"

#define CANOPY_TREE_GPU_ENTRIES(STATUS, OUT, RELEASE)                                              \
    OUT(canopy_tree_build_gpu,                                                                     \
        (canopy_points pts, const canopy_tree_options *opt, canopy_gpu_tree **out),                \
        (pts, opt, out), out)                                                                      \
    OUT(canopy_gpu_tree_download, (const canopy_gpu_tree *g, canopy_tree **out), (g, out), out)    \
    OUT(canopy_gpu_tree_host_shell, (const canopy_gpu_tree *g, canopy_tree **out), (g, out), out)  \
    RELEASE(canopy_gpu_tree_free, (canopy_gpu_tree * g), (g))

CANOPY_CUDA_SLICE_STRUCT(canopy_tree_gpu_entries, CANOPY_TREE_GPU_ENTRIES)

#endif
