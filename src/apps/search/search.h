/* SPDX-License-Identifier: MIT */
/* bs: binary search (top-down over a bst). The answer for key x is the smallest
 * original index whose key is >= x; since keys are sorted that is the least
 * (key, index) pair with key >= x, so a subtree is skipped when all its keys are
 * < x or all are greater than the best key found. Visits O(log n) nodes. */
#ifndef CANOPY_APPS_SEARCH_H
#define CANOPY_APPS_SEARCH_H

#include "canopy/traverse_geom.h"

typedef struct search_ctx {
    const float *queries;
    int64_t n_keys;
    int64_t *idx;
} search_ctx;

typedef struct search_state {
    float x;
    float best_key;
    int64_t best;
} search_state;

CANOPY_HD void search_init(const void *vctx, void *vst, int64_t q) {
    const search_ctx *c = (const search_ctx *)vctx;
    search_state *s = (search_state *)vst;
    s->x = c->queries[q];
    s->best = c->n_keys;
    s->best_key = CANOPY_INF;
}

CANOPY_HD int search_truncate(const void *vctx, void *vst, const canopy_tree_view *t,
                              int32_t node) {
    (void)vctx;
    const search_state *s = (const search_state *)vst;
    const float *g = canopy_tv_geom(t, node); /* lo, hi */
    return g[1] < s->x || g[0] > s->best_key;
}

CANOPY_HD void search_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                                 int32_t node) {
    (void)vctx;
    search_state *s = (search_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        float key = t->points[i];
        int64_t id = t->ids[i];
        if (key >= s->x && (key < s->best_key || (key == s->best_key && id < s->best))) {
            s->best_key = key;
            s->best = id;
        }
    }
}

CANOPY_HD void search_finish(const void *vctx, void *vst, int64_t q) {
    const search_ctx *c = (const search_ctx *)vctx;
    c->idx[q] = ((search_state *)vst)->best;
}

#endif
