/* SPDX-License-Identifier: MIT */
/* Internal: the device-resident tree a GPU build produces. Its view holds device
 * pointers in the layout of canopy_tree (tree.h), so GPU engines can traverse it
 * without a copy; the cold per-node arrays (parent, level) are derived from the node
 * records when the tree is downloaded. */
#ifndef CANOPY_TREE_GPU_BUILD_H
#define CANOPY_TREE_GPU_BUILD_H

#include "tree/tree.h"

#ifdef __cplusplus
extern "C" {
#endif

struct canopy_gpu_tree {
    canopy_tree_view view; /* device pointers */
    int32_t leaf_size;
    int32_t order;
    double build_seconds;
};

/* The device view of a GPU-built tree (pointers valid in kernels). */
const canopy_tree_view *canopy_gpu_tree_view(const canopy_gpu_tree *g);

/* The host side of a device tree for a walk that runs on the device: the view's sizes
 * and the weights (their sums are made on the host), no node, point or id arrays
 * (NULL). canopy_tree_free releases it; nothing may walk it on the host. */
canopy_status canopy_gpu_tree_host_shell(const canopy_gpu_tree *g, canopy_tree **out);

#ifdef __cplusplus
}
#endif

#endif
