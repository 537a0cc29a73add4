/* SPDX-License-Identifier: MIT */
/* A user's own traversal, written against the public headers only (include/): the
 * nearest reference point of each query (ties: the smaller index), guided by a
 * permutation that takes the children nearest first. docs/c-api.md ("Write your own
 * traversal") walks through this file; tests/external/test_external.c runs it under
 * every CPU variant and schedule against brute force. */
#include "nearest.h"

#include <canopy/traverse_cpu.h>
#include <canopy/traverse_geom.h>

#include <math.h>

/* Shared, read-only during the run (finish writes its own rows). */
typedef struct nearest_ctx {
    canopy_points query;
    int64_t *idx;
    float *dist2;
} nearest_ctx;

/* Per query: at most CANOPY_MAX_STATE bytes. */
typedef struct nearest_state {
    const float *q;
    float best; /* squared distance of the best point so far */
    int64_t id; /* its original index, -1 while none */
} nearest_state;

CANOPY_HD void nearest_init(const void *vctx, void *vst, int64_t q) {
    const nearest_ctx *c = (const nearest_ctx *)vctx;
    nearest_state *s = (nearest_state *)vst;
    s->q = canopy_point(c->query, q);
    s->best = INFINITY;
    s->id = -1;
}

/* Skip a node that cannot hold a point nearer than the best (an equal distance may
 * still win on the smaller index, so it is not skipped). */
CANOPY_HD int nearest_truncate(const void *vctx, void *vst, const canopy_tree_view *t,
                               int32_t node) {
    (void)vctx;
    const nearest_state *s = (const nearest_state *)vst;
    return canopy_node_min_dist2(t, node, s->q) > s->best;
}

CANOPY_HD void nearest_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                                  int32_t node) {
    (void)vctx;
    nearest_state *s = (nearest_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        float d2 = canopy_dist2(s->q, canopy_tv_point(t, i), t->d);
        int64_t id = t->ids[i];
        if (d2 < s->best || (d2 == s->best && id < s->id)) {
            s->best = d2;
            s->id = id;
        }
    }
}

/* Any permutation of the children: here all of them sorted by their distance bound
 * (an octree node has up to 8), nearest first, ties by child index
 * (canopy_order_by_bound of canopy/traverse_geom.h). */
CANOPY_HD void nearest_order(const void *vctx, const void *vst, const canopy_tree_view *t,
                             int32_t node, int32_t *perm) {
    (void)vctx;
    const nearest_state *s = (const nearest_state *)vst;
    canopy_order_by_bound(t, node, s->q, perm);
}

CANOPY_HD void nearest_finish(const void *vctx, void *vst, int64_t q) {
    const nearest_ctx *c = (const nearest_ctx *)vctx;
    const nearest_state *s = (const nearest_state *)vst;
    c->idx[q] = s->id;
    c->dist2[q] = s->best;
}

/* guided = 1 (it has an order); orders_equivalent = 1 (the result, ties included,
 * does not depend on the order, so lockstep variants may run it). */
static const canopy_app nearest_app = {
    "nearest",     sizeof(nearest_state), 1, 1, nearest_init, nearest_truncate, nearest_visit_leaf,
    nearest_order, nearest_finish,        0,
};
/* Defines nearest_cpu_runners: one runner per CPU variant. */
CANOPY_CPU_INSTANTIATE(nearest, &nearest_app)

canopy_status nearest_run(const canopy_tree *tree, canopy_points query,
                          const canopy_run_options *opt, int64_t *idx, float *dist2,
                          canopy_stats *stats) {
    nearest_ctx ctx = {query, idx, dist2};
    canopy_traversal tr = {"nearest", &nearest_app, nearest_cpu_runners, NULL, &ctx, query,
                           query.n,   NULL};
    return canopy_traverse(tree, &tr, opt, stats);
}
