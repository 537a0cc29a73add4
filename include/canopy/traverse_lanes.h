/* SPDX-License-Identifier: MIT */
/* canopy/traverse_lanes.h — the distance bounds of canopy/traverse_geom.h for a packet
 * of queries at once, for descriptors' vector hooks (canopy_lane_app). The queries'
 * coordinates are SoA lanes q[0..d) (q[j][l] = coordinate j of lane l); every bound
 * is the scalar function's expression evaluated per lane in the same order, so each
 * lane's result equals the scalar one bit for bit (C11 mode: no contraction to FMA).
 *
 * Include after defining SIMT_W and including canopy/simt.h. */
#ifndef CANOPY_TRAVERSE_LANES_H
#define CANOPY_TRAVERSE_LANES_H

#include "canopy/simt.h"
#include "canopy/traverse_geom.h"

#ifndef SIMT_W
#error "define SIMT_W and include canopy/simt.h before canopy/traverse_lanes.h"
#endif

#define CANOPY_LANES static inline __attribute__((always_inline))

CANOPY_LANES simt_float canopy_lanes_max(simt_float a, simt_float b) {
    return simt_blend(a > b, a, b);
}

/* canopy_dist2(q, p, d) per lane. */
CANOPY_LANES simt_float canopy_lanes_dist2(const simt_float *q, const float *p, int32_t d) {
    simt_float s = simt_splat_f(0.0f);
    for (int32_t j = 0; j < d; j++) {
        simt_float t = q[j] - p[j];
        s += t * t;
    }
    return s;
}

CANOPY_LANES simt_float canopy_lanes_box_min_dist2(const float *g, int32_t d, const simt_float *q) {
    simt_float s = simt_splat_f(0.0f), zero = simt_splat_f(0.0f);
    for (int32_t j = 0; j < d; j++) {
        simt_float e = canopy_lanes_max(g[j] - q[j], q[j] - g[d + j]);
        e = canopy_lanes_max(e, zero);
        s += e * e;
    }
    return s;
}

CANOPY_LANES simt_float canopy_lanes_box_max_dist2(const float *g, int32_t d, const simt_float *q) {
    simt_float s = simt_splat_f(0.0f);
    for (int32_t j = 0; j < d; j++) {
        simt_float a = q[j] - g[j], b = q[j] - g[d + j];
        s += canopy_lanes_max(a * a, b * b);
    }
    return s;
}

CANOPY_LANES simt_float canopy_lanes_lower2(simt_float s, int32_t d) {
    simt_float m = s * (1.0f - canopy_geom_margin(d));
    return simt_blend((m >= FLT_MIN) & (m < CANOPY_INF), m, simt_splat_f(0.0f));
}

CANOPY_LANES simt_float canopy_lanes_lower_gap(simt_float gap, int32_t d) {
    return simt_blend(gap > 0.0f, canopy_lanes_lower2(gap * gap, d), simt_splat_f(0.0f));
}

CANOPY_LANES simt_float canopy_lanes_upper_reach(simt_float reach, int32_t d) {
    return reach * reach * (1.0f + canopy_geom_margin(d)) + FLT_MIN;
}

CANOPY_LANES simt_float canopy_lanes_ball_min_dist2(const float *g, int32_t d,
                                                    const simt_float *q) {
    simt_float a = simt_sqrt_f(canopy_lanes_dist2(q, g, d));
    return canopy_lanes_lower_gap(a * (1.0f - canopy_geom_margin(d)) - g[d], d);
}
CANOPY_LANES simt_float canopy_lanes_ball_max_dist2(const float *g, int32_t d,
                                                    const simt_float *q) {
    simt_float a = simt_sqrt_f(canopy_lanes_dist2(q, g, d));
    return canopy_lanes_upper_reach(a * (1.0f + canopy_geom_margin(d)) + g[d], d);
}

CANOPY_LANES simt_float canopy_lanes_vp_min_dist2(const float *g, int32_t d, const simt_float *q) {
    simt_float a = simt_sqrt_f(canopy_lanes_dist2(q, g, d));
    float e = canopy_geom_margin(d);
    simt_float beyond = a * (1.0f - e) - g[d + 2], within = g[d + 1] - a * (1.0f + e);
    return canopy_lanes_lower_gap(canopy_lanes_max(beyond, within), d);
}
CANOPY_LANES simt_float canopy_lanes_vp_max_dist2(const float *g, int32_t d, const simt_float *q) {
    simt_float a = simt_sqrt_f(canopy_lanes_dist2(q, g, d));
    return canopy_lanes_upper_reach(a * (1.0f + canopy_geom_margin(d)) + g[d + 2], d);
}

CANOPY_LANES simt_float canopy_lanes_cell_min_dist2(const float *c, float half,
                                                    const simt_float *q) {
    float e = canopy_geom_margin(3);
    simt_float s = simt_splat_f(0.0f);
    for (int32_t j = 0; j < 3; j++) {
        simt_float gap = simt_abs_f(q[j] - c[j]) * (1.0f - e) - half;
        s = simt_blend(gap > 0.0f, s + gap * gap, s);
    }
    return canopy_lanes_lower2(s, 3);
}
CANOPY_LANES simt_float canopy_lanes_cell_max_dist2(const float *c, float half,
                                                    const simt_float *q) {
    simt_float s = simt_splat_f(0.0f);
    for (int32_t j = 0; j < 3; j++) {
        simt_float reach = simt_abs_f(q[j] - c[j]) + half;
        s += reach * reach;
    }
    return s * (1.0f + canopy_geom_margin(3)) + FLT_MIN;
}

/* canopy_node_min_dist2 / canopy_node_max_dist2 per lane. */
CANOPY_LANES simt_float canopy_lanes_node_min_dist2(const canopy_tree_view *t, int32_t node,
                                                    const simt_float *q) {
    const float *g = canopy_tv_geom(t, node);
    switch (t->kind) {
    case CANOPY_TREE_BALL:
        return canopy_lanes_ball_min_dist2(g, t->d, q);
    case CANOPY_TREE_VP:
        return canopy_lanes_vp_min_dist2(g, t->d, q);
    case CANOPY_TREE_OCT:
        return canopy_lanes_cell_min_dist2(g + 4, g[7], q);
    default:
        return canopy_lanes_box_min_dist2(g, t->d, q);
    }
}
CANOPY_LANES simt_float canopy_lanes_node_max_dist2(const canopy_tree_view *t, int32_t node,
                                                    const simt_float *q) {
    const float *g = canopy_tv_geom(t, node);
    switch (t->kind) {
    case CANOPY_TREE_BALL:
        return canopy_lanes_ball_max_dist2(g, t->d, q);
    case CANOPY_TREE_VP:
        return canopy_lanes_vp_max_dist2(g, t->d, q);
    case CANOPY_TREE_OCT:
        return canopy_lanes_cell_max_dist2(g + 4, g[7], q);
    default:
        return canopy_lanes_box_max_dist2(g, t->d, q);
    }
}

/* Loads the lanes of mask with the points q[l] of `pts` as SoA coordinates (other
 * lanes 0): the usual first step of a descriptor's init hook. */
CANOPY_LANES void canopy_lanes_load_points(simt_float *qv, canopy_points pts, const int64_t *q,
                                           uint32_t mask) {
    for (int32_t j = 0; j < pts.d; j++) qv[j] = simt_splat_f(0.0f);
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        const float *p = canopy_point(pts, q[l]);
        for (int32_t j = 0; j < pts.d; j++) qv[j][l] = p[j];
    }
}

/* The vote of canopy/traverse.h at a two-child node, as a ballot: `second` holds the
 * lanes of `live` that want child 1 first; the packet takes child 1 first only when
 * they are a strict majority. */
CANOPY_LANES void canopy_lanes_vote2(uint32_t live, uint32_t second, int32_t *perm) {
    int n1 = __builtin_popcount(second & live), n0 = __builtin_popcount(live) - n1;
    canopy_order_flip(perm, 2, n1 > n0);
}

#endif
