/* SPDX-License-Identifier: MIT */
/* The vector hooks (canopy_lane_app) of tree gravity, written once with the SIMT layer's
 * lane types, and their simd_l runner for one lane width: included by apps/lanes_body.h
 * after SIMT_W and CANOPY_LANES_ISA are defined (once per lane width, so no guard).
 * Each hook computes what the scalar hook (gravity/gravity.h) computes, per lane and in the
 * same order, so simd_l's results equal the per-lane path's. */
#include "canopy/simt.h"
#include "canopy/traverse_cpu.h"
#include "canopy/traverse_lanes.h"

#include "apps/lanes.h"
#include "gravity/gravity.h"

/* Packet: accelerations, positions, and the caller's index of each body (n < 2^31:
 * tree-order indices are int32). */
typedef struct gravity_lanes {
    simt_float a[3], q[3];
    simt_int self;
} gravity_lanes;

static size_t gravity_lanes_size(const void *vctx, const canopy_tree_view *t) {
    (void)vctx;
    (void)t;
    return sizeof(gravity_lanes);
}

CANOPY_LANES void gravity_lanes_init(const void *vctx, void *pk, const canopy_tree_view *t,
                                     const int64_t *q, uint32_t mask) {
    (void)t;
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_lanes *g = (gravity_lanes *)pk;
    g->self = simt_splat(-1);
    for (int j = 0; j < 3; j++) g->a[j] = simt_splat_f(0.0f);
    canopy_lanes_load_points(g->q, c->bodies, q, mask);
    for (uint32_t m = mask; m; m &= m - 1) g->self[__builtin_ctz(m)] = (int32_t)q[__builtin_ctz(m)];
}

/* gravity_add for the lanes of m. */
CANOPY_LANES void gravity_lanes_add(gravity_lanes *g, float eps2, const float *p, float mass,
                                    simt_mask m) {
    simt_float dx = p[0] - g->q[0], dy = p[1] - g->q[1], dz = p[2] - g->q[2];
    simt_float r2 = dx * dx + dy * dy + dz * dz + eps2;
    simt_float inv = 1.0f / simt_sqrt_f(r2);
    simt_float f = mass * inv * inv * inv;
    g->a[0] = simt_blend(m, g->a[0] + f * dx, g->a[0]);
    g->a[1] = simt_blend(m, g->a[1] + f * dy, g->a[1]);
    g->a[2] = simt_blend(m, g->a[2] + f * dz, g->a[2]);
}

CANOPY_LANES uint32_t gravity_lanes_truncate(const void *vctx, void *pk, const canopy_tree_view *t,
                                             int32_t node, uint32_t mask) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_lanes *g = (gravity_lanes *)pk;
    const float *geo = canopy_tv_geom(t, node); /* com[3], mass, centre[3], half */
    float half = geo[7];
    simt_mask inside = (simt_abs_f(g->q[0] - geo[4]) <= half) &
                       (simt_abs_f(g->q[1] - geo[5]) <= half) &
                       (simt_abs_f(g->q[2] - geo[6]) <= half);
    float ox = geo[0] - geo[4], oy = geo[1] - geo[5], oz = geo[2] - geo[6];
    float open_r = 2.0f * half * c->inv_theta + sqrtf(ox * ox + oy * oy + oz * oz);
    simt_float dx = geo[0] - g->q[0], dy = geo[1] - g->q[1], dz = geo[2] - g->q[2];
    simt_mask far = ~inside & (dx * dx + dy * dy + dz * dz > open_r * open_r);
    uint32_t accept = mask & simt_bits(far);
    if (accept) gravity_lanes_add(g, c->eps2, geo, geo[3], simt_from_bits(accept));
    return mask & ~accept;
}

CANOPY_LANES void gravity_lanes_visit_leaf(const void *vctx, void *pk, const canopy_tree_view *t,
                                           int32_t node, uint32_t mask) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    gravity_lanes *g = (gravity_lanes *)pk;
    const canopy_node *h = canopy_tv_node(t, node);
    simt_mask live = simt_from_bits(mask);
    for (int32_t i = h->begin; i < h->end; i++) {
        simt_mask m = live & (g->self != (int32_t)t->ids[i]);
        gravity_lanes_add(g, c->eps2, canopy_tv_point(t, i), t->weights[i], m);
    }
}

CANOPY_LANES void gravity_lanes_finish(const void *vctx, void *pk, const int64_t *q,
                                       uint32_t mask) {
    const gravity_ctx *c = (const gravity_ctx *)vctx;
    const gravity_lanes *g = (const gravity_lanes *)pk;
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        for (int j = 0; j < 3; j++) c->acc[3 * q[l] + j] = g->a[j][l];
    }
}

static const canopy_lane_app gravity_lane_app = {
    gravity_lanes_size,
    gravity_lanes_init,
    gravity_lanes_truncate,
    gravity_lanes_visit_leaf,
    NULL,
    gravity_lanes_finish,
};
CANOPY_SIMD_L_LANES(gravity, &gravity_app, &gravity_lane_app)
