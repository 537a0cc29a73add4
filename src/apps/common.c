/* SPDX-License-Identifier: MIT */
#include "apps/common.h"

#include <stdio.h>

canopy_status canopy_app_check_inputs(const char *app, canopy_points ref, canopy_points *query,
                                      int *self) {
    char what[64];
    snprintf(what, sizeof what, "%s reference points", app);
    canopy_status s = canopy_points_check(ref, what);
    if (s) return s;
    *self = 0;
    if (query->n == 0 && query->data == NULL) {
        *query = ref;
        *self = 1;
        return CANOPY_OK;
    }
    snprintf(what, sizeof what, "%s query points", app);
    if ((s = canopy_points_check(*query, what))) return s;
    if (query->d != ref.d)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: query points have %d dimensions but reference points have %d", app,
                           (int)query->d, (int)ref.d);
    return CANOPY_OK;
}

canopy_status canopy_app_build(canopy_points ref, canopy_tree_kind kind, int32_t leaf_size,
                               const float *weights, canopy_tree **tree, canopy_stats *stats) {
    canopy_tree_options to = canopy_tree_options_default(kind);
    to.leaf_size = leaf_size;
    to.weights = weights;
    canopy_status s = canopy_tree_build(ref, &to, tree);
    if (s) return s;
    if (stats) {
        canopy_tree_info info;
        canopy_tree_get_info(*tree, &info);
        stats->build_seconds = info.build_seconds;
        stats->tree = kind;
        stats->tree_nodes = info.n_nodes;
        stats->tree_depth = info.depth;
    }
    return CANOPY_OK;
}
