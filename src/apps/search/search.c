/* SPDX-License-Identifier: MIT */
/* canopy_search: the bs descriptor over a binary search tree of the keys. */
#include "apps/search/search.h"

#include "apps/common.h"
#include "canopy/traverse_cpu.h"
#include "apps/index_entries.h"

#include <math.h>
#include <string.h>

static const canopy_app search_app = {
    "search", sizeof(search_state), 0, 1, search_init, search_truncate, search_visit_leaf,
    NULL,     search_finish,        0,
};
CANOPY_CPU_INSTANTIATE(search, &search_app)
_Static_assert(sizeof(search_state) <= CANOPY_MAX_STATE, "search_state exceeds CANOPY_MAX_STATE");

canopy_status canopy_search(const float *keys, int64_t n_keys, const float *queries,
                            int64_t n_queries, const canopy_run_options *opt, int64_t *idx,
                            canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    for (int64_t i = 0; i < n_keys; i++) {
        if (!isfinite(keys[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "search: key %lld is not finite", (long long)i);
        if (i > 0 && keys[i] < keys[i - 1])
            return canopy_fail(CANOPY_ERR_INVALID,
                               "search: keys must be sorted ascending (key %lld < key %lld)",
                               (long long)i, (long long)i - 1);
    }
    for (int64_t i = 0; i < n_queries; i++)
        if (isnan(queries[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "search: query %lld is NaN", (long long)i);
    canopy_points kp = canopy_points_make(keys, n_keys, 1);
    canopy_tree *tree = NULL;
    if (stats) memset(stats, 0, sizeof *stats);
    canopy_status s = canopy_app_build(kp, CANOPY_TREE_BST, o.leaf_size, NULL, &tree, stats);
    if (!s) s = canopy_search_on_tree(tree, queries, n_queries, &o, idx, stats);
    canopy_tree_free(tree);
    return s;
}

canopy_status canopy_search_on_tree(const canopy_tree *tree, const float *queries,
                                    int64_t n_queries, const canopy_run_options *o, int64_t *idx,
                                    canopy_stats *stats) {
    canopy_points qp = canopy_points_make(queries, n_queries, 1);
    search_ctx ctx = {queries, tree->view.n, idx};
    canopy_traversal tr = {"search", &search_app, search_cpu_runners, CANOPY_GPU_RUNNER(search),
                           &ctx,     qp,          n_queries,          NULL};
    return canopy_traverse(tree, &tr, o, stats);
}
