/* SPDX-License-Identifier: MIT */
/* Input checks shared by the tree-search applications. */
#ifndef CANOPY_APPS_COMMON_H
#define CANOPY_APPS_COMMON_H

#include "canopy/traverse.h"

/* Validates ref and query (finite, same d). A query with n == 0 and data == NULL
 * means "ref queries itself": it is replaced by ref and *self set to 1. */
canopy_status canopy_app_check_inputs(const char *app, canopy_points ref, canopy_points *query,
                                      int *self);

/* Builds the tree an application asked for, recording build time and shape in stats. */
canopy_status canopy_app_build(canopy_points ref, canopy_tree_kind kind, int32_t leaf_size,
                               const float *weights, canopy_tree **tree, canopy_stats *stats);

/* Each application's CUDA glue (*_gpu.cu in the CUDA module), a canopy_gpu_runner. */
#define CANOPY_GPU_RUNNER(NAME) canopy_gpu_##NAME
#ifdef __cplusplus
extern "C" {
#endif
canopy_status canopy_gpu_knn(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                             int64_t nq, canopy_variant v, const struct canopy_profile_plan *plan,
                             struct canopy_gpu_report *rep);
canopy_status canopy_gpu_radius(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                                int64_t nq, canopy_variant v,
                                const struct canopy_profile_plan *plan,
                                struct canopy_gpu_report *rep);
canopy_status canopy_gpu_gravity(const void *ctx, const canopy_tree_view *tree,
                                 const int64_t *order, int64_t nq, canopy_variant v,
                                 const struct canopy_profile_plan *plan,
                                 struct canopy_gpu_report *rep);
canopy_status canopy_gpu_search(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                                int64_t nq, canopy_variant v,
                                const struct canopy_profile_plan *plan,
                                struct canopy_gpu_report *rep);
#ifdef __cplusplus
}
#endif

#endif
