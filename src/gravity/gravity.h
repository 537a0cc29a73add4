/* SPDX-License-Identifier: MIT */
/* bh: Barnes-Hut accelerations (unguided, octree). A cell far enough away is
 * accepted as its monopole inside truncate; leaves are summed directly.
 * Opening rule: accept when |q - com| > side / theta + |com - centre| (Barnes'
 * offset criterion, which keeps the error bounded when the centre of mass sits near
 * a cell edge) and q is outside the cell. */
#ifndef CANOPY_APPS_GRAVITY_H
#define CANOPY_APPS_GRAVITY_H

#include "canopy/traverse_geom.h"

typedef struct gravity_ctx {
    canopy_points bodies;
    float inv_theta;
    float eps2;
    float *acc; /* (n, 3) in the caller's order */
} gravity_ctx;

typedef struct gravity_state {
    const float *q;
    int64_t self_id;
    float ax, ay, az;
} gravity_state;

/* The checks every gravity entry (tree, multipole, direct) makes of its bodies, masses
 * (NULL: unit) and softening. */
canopy_status canopy_gravity_check_bodies(canopy_points b, const float *mass, float eps);

CANOPY_HD void gravity_init(const void *vctx, void *vst, int64_t q) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_state *s = (gravity_state *)vst;
    s->q = canopy_point(c->bodies, q);
    s->self_id = q;
    s->ax = s->ay = s->az = 0.0f;
}

CANOPY_HD void gravity_add(gravity_state *s, float eps2, float px, float py, float pz, float m) {
    float dx = px - s->q[0], dy = py - s->q[1], dz = pz - s->q[2];
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrtf(r2);
    float f = m * inv * inv * inv;
    s->ax += f * dx;
    s->ay += f * dy;
    s->az += f * dz;
}

CANOPY_HD int gravity_truncate(const void *vctx, void *vst, const canopy_tree_view *t,
                               int32_t node) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_state *s = (gravity_state *)vst;
    const float *g = canopy_tv_geom(t, node); /* com[3], mass, centre[3], half */
    const float *q = s->q;
    float half = g[7];
    int inside =
        fabsf(q[0] - g[4]) <= half && fabsf(q[1] - g[5]) <= half && fabsf(q[2] - g[6]) <= half;
    if (inside) return 0;
    float ox = g[0] - g[4], oy = g[1] - g[5], oz = g[2] - g[6];
    float open_r = 2.0f * half * c->inv_theta + sqrtf(ox * ox + oy * oy + oz * oz);
    float dx = g[0] - q[0], dy = g[1] - q[1], dz = g[2] - q[2];
    if (dx * dx + dy * dy + dz * dz <= open_r * open_r) return 0;
    gravity_add(s, c->eps2, g[0], g[1], g[2], g[3]);
    return 1;
}

CANOPY_HD void gravity_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                                  int32_t node) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_state *s = (gravity_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        if (t->ids[i] == s->self_id) continue;
        const float *p = canopy_tv_point(t, i);
        gravity_add(s, c->eps2, p[0], p[1], p[2], t->weights[i]);
    }
}

CANOPY_HD void gravity_finish(const void *vctx, void *vst, int64_t q) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_state *s = (gravity_state *)vst;
    c->acc[3 * q + 0] = s->ax;
    c->acc[3 * q + 1] = s->ay;
    c->acc[3 * q + 2] = s->az;
}

#endif
