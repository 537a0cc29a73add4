/* SPDX-License-Identifier: MIT */
/* The example traversal of docs/c-api.md (nearest.c). */
#ifndef CANOPY_EXAMPLE_NEAREST_H
#define CANOPY_EXAMPLE_NEAREST_H

#include <canopy.h>

/* For each query point: the index of the nearest point of the tree (smaller index
 * on ties; -1 for an empty tree) and its squared distance. */
canopy_status nearest_run(const canopy_tree *tree, canopy_points query,
                          const canopy_run_options *opt, int64_t *idx, float *dist2,
                          canopy_stats *stats);

#endif
