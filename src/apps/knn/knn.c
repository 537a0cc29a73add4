/* SPDX-License-Identifier: MIT */
/* kNN: the descriptor run by the generic engines, canopy_knn's checks and host path (the
 * public entry is in index/index.c, above its device path), its index entry, and its
 * brute-force reference. */
#include "apps/knn/knn.h"

#include "apps/common.h"
#include "apps/lanes.h"
#include "canopy/traverse_cpu.h"
#include "apps/index_entries.h"

#include <string.h>

CANOPY_CPU_INSTANTIATE_LANES(knn, &knn_app)
_Static_assert(sizeof(knn_state) <= CANOPY_MAX_STATE, "knn_state exceeds CANOPY_MAX_STATE");

canopy_status canopy_knn_check(canopy_points ref, canopy_points *query, int32_t k,
                               const canopy_run_options *o, int *self) {
    canopy_status s = canopy_app_check_inputs("knn", ref, query, self);
    if (s) return s;
    if (k < 1) return canopy_fail(CANOPY_ERR_INVALID, "knn: k must be >= 1 (got %d)", (int)k);
    if (o->tree != CANOPY_TREE_KD && o->tree != CANOPY_TREE_BALL && o->tree != CANOPY_TREE_VP)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "knn: tree %s cannot answer kNN (use kd, ball or vp)",
                           canopy_tree_kind_name(o->tree));
    return CANOPY_OK;
}

canopy_status canopy_knn_on_host(canopy_points ref, canopy_points query, int self, int32_t k,
                                 const canopy_run_options *o, int64_t *idx, float *dist2,
                                 canopy_stats *stats) {
    canopy_tree *tree = NULL;
    canopy_status s = canopy_app_build(ref, o->tree, o->leaf_size, NULL, &tree, stats);
    if (!s) s = canopy_knn_on_tree(tree, query, self, k, o, idx, dist2, stats);
    canopy_tree_free(tree);
    return s;
}

canopy_status canopy_knn_on_tree(const canopy_tree *tree, canopy_points query, int self, int32_t k,
                                 const canopy_run_options *o, int64_t *idx, float *dist2,
                                 canopy_stats *stats) {
    float *d2buf = dist2;
    canopy_status s;
    if (!d2buf && (s = canopy_alloc((void **)&d2buf, (size_t)(query.n * k + 1), sizeof(float))))
        return s;
    knn_ctx ctx = {query, k, self, idx, d2buf};
    canopy_traversal tr = {"knn", &knn_app, knn_cpu_runners, CANOPY_GPU_RUNNER(knn),
                           &ctx,  query,    query.n,         knn_gpu_own_kernel};
    s = canopy_traverse(tree, &tr, o, stats);
    if (d2buf != dist2) canopy_free(d2buf);
    return s;
}

canopy_status canopy_knn_brute(canopy_points ref, canopy_points query, int32_t k, int64_t *idx,
                               float *dist2) {
    int self = 0;
    canopy_status s = canopy_app_check_inputs("knn", ref, &query, &self);
    if (s) return s;
    if (k < 1) return canopy_fail(CANOPY_ERR_INVALID, "knn: k must be >= 1 (got %d)", (int)k);
#pragma omp parallel for schedule(dynamic, 16) num_threads(canopy_threads())
    for (int64_t q = 0; q < query.n; q++) {
        int64_t *hi = idx + q * k;
        float *hd = dist2 + q * k;
        int32_t count = 0;
        const float *x = canopy_point(query, q);
        for (int64_t i = 0; i < ref.n; i++) {
            if (self && i == q) continue;
            knn_offer(hd, hi, k, &count, canopy_dist2(x, canopy_point(ref, i), ref.d), i);
        }
        knn_sort_row(hd, hi, k, count);
    }
    return CANOPY_OK;
}
