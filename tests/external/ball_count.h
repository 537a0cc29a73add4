/* SPDX-License-Identifier: MIT */
/* A ball count (unguided; a node wholly inside the ball counts at once), shared by
 * the CPU test (test_external.c) and its GPU twin (tests/gpu/), written in the
 * common subset of C and CUDA against the public headers only. */
#ifndef CANOPY_EXAMPLE_BALL_COUNT_H
#define CANOPY_EXAMPLE_BALL_COUNT_H

#include <canopy/traverse_geom.h>

typedef struct ball_ctx {
    canopy_points query;
    float r2;
    int64_t *counts;
} ball_ctx;

typedef struct ball_state {
    const float *q;
    int64_t count;
} ball_state;

CANOPY_HD void ball_init(const void *vctx, void *vst, int64_t q) {
    const ball_ctx *c = (const ball_ctx *)vctx;
    ball_state *s = (ball_state *)vst;
    s->q = canopy_point(c->query, q);
    s->count = 0;
}

CANOPY_HD int ball_truncate(const void *vctx, void *vst, const canopy_tree_view *t, int32_t node) {
    const ball_ctx *c = (const ball_ctx *)vctx;
    ball_state *s = (ball_state *)vst;
    if (canopy_node_min_dist2(t, node, s->q) > c->r2) return 1;
    if (canopy_node_max_dist2(t, node, s->q) > c->r2) return 0;
    const canopy_node *h = canopy_tv_node(t, node);
    s->count += h->end - h->begin;
    return 1;
}

CANOPY_HD void ball_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                               int32_t node) {
    const ball_ctx *c = (const ball_ctx *)vctx;
    ball_state *s = (ball_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++)
        s->count += canopy_dist2(s->q, canopy_tv_point(t, i), t->d) <= c->r2;
}

CANOPY_HD void ball_finish(const void *vctx, void *vst, int64_t q) {
    const ball_ctx *c = (const ball_ctx *)vctx;
    c->counts[q] = ((const ball_state *)vst)->count;
}

#endif
