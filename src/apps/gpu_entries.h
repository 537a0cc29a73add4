/* SPDX-License-Identifier: MIT */
/* Internal: apps/'s GPU entry points in the CUDA module (the tree-search applications' GPU
 * runners), its slice "apps" (core/cuda_module.h; forwarders in apps/gpu_forward.c). */
#ifndef CANOPY_APPS_GPU_ENTRIES_H
#define CANOPY_APPS_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "apps/common.h"

#define CANOPY_APPS_GPU_ENTRIES(STATUS, OUT, RELEASE)                                              \
    STATUS(canopy_gpu_knn,                                                                         \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_radius,                                                                      \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_gravity,                                                                     \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_search,                                                                      \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))

CANOPY_CUDA_SLICE_STRUCT(canopy_apps_gpu_entries, CANOPY_APPS_GPU_ENTRIES)

#endif
