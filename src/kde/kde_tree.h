/* SPDX-License-Identifier: MIT */
/* Internal: kde over a kd tree built beforehand (canopy_index_kde, index/index.c). */
#ifndef CANOPY_KDE_KDE_TREE_H
#define CANOPY_KDE_KDE_TREE_H

#include "canopy.h"

/* canopy_kde with `tree` (kd; another kind fails with CANOPY_ERR_INVALID) as the data's
 * tree: the queries are already checked (finite, of the tree's dimension), the options
 * are checked here. Only the queries' tree is built (leaf size o->leaf_size, 32 when
 * 0), its time in stats->schedule_seconds; stats' walk fields are filled, the others
 * left as the caller set them. */
canopy_status canopy_kde_on_tree(const canopy_tree *tree, canopy_points queries,
                                 const canopy_kde_options *ko, const canopy_run_options *o,
                                 double *log_density, canopy_stats *stats);

#endif
