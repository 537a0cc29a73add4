/* SPDX-License-Identifier: MIT */
/* The one interface the index layer (src/index/, above the applications) calls the
 * applications through: each application's traversal over a tree built beforehand, what
 * canopy_knn and its siblings run after building and what a canopy_index runs with no
 * build at all. Each is defined in its application's folder; calls run only downward.
 * Inputs are already checked (finite, query dimension equal to the tree's); stats is
 * filled by the traversal and left otherwise as the caller set it. */
#ifndef CANOPY_APPS_INDEX_ENTRIES_H
#define CANOPY_APPS_INDEX_ENTRIES_H

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

/* canopy_knn's halves around its device path (which index/index.c owns, as it builds a
 * device index): the input checks (o's tree kind included; *self set for a
 * self-query), then the host build and traversal. */
canopy_status canopy_knn_check(canopy_points ref, canopy_points *query, int32_t k,
                               const canopy_run_options *o, int *self);
canopy_status canopy_knn_on_host(canopy_points ref, canopy_points query, int self, int32_t k,
                                 const canopy_run_options *o, int64_t *idx, float *dist2,
                                 canopy_stats *stats);

#endif
