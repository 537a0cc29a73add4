/* SPDX-License-Identifier: MIT */
/* canopy_radius_count: the pc descriptor run by the generic engines, and its
 * brute-force reference. */
#include "apps/radius/radius.h"

#include "apps/common.h"
#include "apps/lanes.h"
#include "canopy/traverse_cpu.h"
#include "apps/index_entries.h"

#include <math.h>
#include <string.h>

CANOPY_CPU_INSTANTIATE_LANES(radius, &radius_app)
_Static_assert(sizeof(radius_state) <= CANOPY_MAX_STATE, "radius_state exceeds CANOPY_MAX_STATE");

static canopy_status check_radius(float r) {
    if (!(r >= 0.0f) || !isfinite(r))
        return canopy_fail(CANOPY_ERR_INVALID, "radius: r must be finite and >= 0 (got %g)",
                           (double)r);
    return CANOPY_OK;
}

canopy_status canopy_radius_count(canopy_points ref, canopy_points query, float r,
                                  const canopy_run_options *opt, int64_t *counts,
                                  canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    int self = 0;
    canopy_status s = canopy_app_check_inputs("radius", ref, &query, &self);
    if (s || (s = check_radius(r))) return s;
    if (o.tree == CANOPY_TREE_BST)
        return canopy_fail(CANOPY_ERR_INVALID, "radius: tree bst cannot answer radius counts");
    canopy_tree *tree = NULL;
    if (stats) memset(stats, 0, sizeof *stats);
    s = canopy_app_build(ref, o.tree, o.leaf_size, NULL, &tree, stats);
    if (!s) s = canopy_radius_on_tree(tree, query, self, r, &o, counts, stats);
    canopy_tree_free(tree);
    return s;
}

canopy_status canopy_radius_on_tree(const canopy_tree *tree, canopy_points query, int self, float r,
                                    const canopy_run_options *o, int64_t *counts,
                                    canopy_stats *stats) {
    canopy_status s = check_radius(r);
    if (s) return s;
    radius_ctx ctx = {query, r * r, self, counts};
    canopy_traversal tr = {
        "radius", &radius_app, radius_cpu_runners,   CANOPY_GPU_RUNNER(radius), &ctx,
        query,    query.n,     radius_gpu_own_kernel};
    return canopy_traverse(tree, &tr, o, stats);
}

canopy_status canopy_radius_count_brute(canopy_points ref, canopy_points query, float r,
                                        int64_t *counts) {
    int self = 0;
    canopy_status s = canopy_app_check_inputs("radius", ref, &query, &self);
    if (s || (s = check_radius(r))) return s;
    float r2 = r * r;
#pragma omp parallel for schedule(dynamic, 16) num_threads(canopy_threads())
    for (int64_t q = 0; q < query.n; q++) {
        int64_t n = 0;
        const float *x = canopy_point(query, q);
        for (int64_t i = 0; i < ref.n; i++)
            n += (!self || i != q) && canopy_dist2(x, canopy_point(ref, i), ref.d) <= r2;
        counts[q] = n;
    }
    return CANOPY_OK;
}
