/* SPDX-License-Identifier: MIT */
/* The applications' traversal over a tree built beforehand: what canopy_knn and its
 * siblings run after building, and what a canopy_index runs with no build at all.
 * Inputs are already checked (finite, query dimension equal to the tree's); stats
 * is filled by the traversal and left otherwise as the caller set it. */
#ifndef CANOPY_INDEX_HOOKS_H
#define CANOPY_INDEX_HOOKS_H

#include "tree/tree.h"

canopy_status canopy_knn_on_tree(const canopy_tree *tree, canopy_points query, int self, int32_t k,
                                 const canopy_run_options *o, int64_t *idx, float *dist2,
                                 canopy_stats *stats);
canopy_status canopy_radius_on_tree(const canopy_tree *tree, canopy_points query, int self, float r,
                                    const canopy_run_options *o, int64_t *counts,
                                    canopy_stats *stats);
/* bodies are the tree's own points in their original order; the tree carries masses. */
canopy_status canopy_gravity_on_tree(const canopy_tree *tree, canopy_points bodies, float theta,
                                     float eps, const canopy_run_options *o, float *acc,
                                     canopy_stats *stats);
canopy_status canopy_search_on_tree(const canopy_tree *tree, const float *queries,
                                    int64_t n_queries, const canopy_run_options *o, int64_t *idx,
                                    canopy_stats *stats);

/* canopy_knn's device path (index.c): where the queries will run on the GPU with a
 * variant and schedule the resident-index path offers, builds a kd index on the GPU
 * from the host points, queries it through pinned staging and frees it; *taken 0
 * (nothing done) where it does not apply. The inputs are already checked; not for
 * self-queries (the device path excludes no point). */
canopy_status canopy_knn_device_once(canopy_points ref, canopy_points query, int32_t k,
                                     const canopy_run_options *o, int64_t *idx, float *dist2,
                                     canopy_stats *stats, int *taken);

#endif
