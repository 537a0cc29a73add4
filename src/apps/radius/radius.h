/* SPDX-License-Identifier: MIT */
/* pc: per-query count of reference points within radius r (unguided). A subtree
 * wholly inside the radius is counted from its size without visiting it. */
#ifndef CANOPY_APPS_RADIUS_H
#define CANOPY_APPS_RADIUS_H

#include "apps/kd_walk.h"
#include "canopy/traverse_geom.h"

typedef struct radius_ctx {
    canopy_points query;
    float r2; /* dist <= r  <=>  dist2 <= r * r, both in float */
    int self; /* a point does not count itself */
    int64_t *counts;
} radius_ctx;

typedef struct radius_state {
    const float *q;
    int64_t count;
} radius_state;

/* the GPU's specialised kd walk (apps/kd_walk.h) */
static inline int radius_gpu_own_kernel(const void *ctx, const canopy_tree_view *t, int variant) {
    (void)ctx;
    return kd_walk_applies(t, variant);
}

CANOPY_HD void radius_init(const void *vctx, void *vst, int64_t q) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    radius_state *s = (radius_state *)vst;
    s->q = canopy_point(c->query, q);
    s->count = 0;
}

CANOPY_HD int radius_truncate(const void *vctx, void *vst, const canopy_tree_view *t,
                              int32_t node) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    radius_state *s = (radius_state *)vst;
    if (canopy_node_min_dist2(t, node, s->q) > c->r2) return 1;
    if (canopy_node_max_dist2(t, node, s->q) <= c->r2) {
        const canopy_node *h = canopy_tv_node(t, node);
        s->count += h->end - h->begin;
        return 1;
    }
    return 0;
}

CANOPY_HD void radius_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                                 int32_t node) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    radius_state *s = (radius_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    int64_t n = 0;
    for (int32_t i = h->begin; i < h->end; i++)
        n += canopy_dist2(s->q, canopy_tv_point(t, i), t->d) <= c->r2;
    s->count += n;
}

CANOPY_HD void radius_finish(const void *vctx, void *vst, int64_t q) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    radius_state *s = (radius_state *)vst;
    /* In the self form the query itself (distance 0) was counted exactly once. */
    c->counts[q] = s->count - c->self;
}

#endif
