/* SPDX-License-Identifier: MIT */
/* The vector hooks (canopy_lane_app) of radius counts, written once with the SIMT layer's
 * lane types, and their simd_l runner for one lane width: included by apps/lanes_body.h
 * after SIMT_W and CANOPY_LANES_ISA are defined (once per lane width, so no guard).
 * Each hook computes what the scalar hook (apps/radius/radius.h) computes, per lane and in the
 * same order, so simd_l's results equal the per-lane path's. */
#include "canopy/simt.h"
#include "canopy/traverse_cpu.h"
#include "canopy/traverse_lanes.h"

#include "apps/lanes.h"
#include "apps/radius/radius.h"

/* Packet: the counts (a subtree or leaf adds at most n < 2^31 per query), then the
 * queries' coordinates. */
typedef struct radius_lanes {
    simt_int count;
} radius_lanes;

CANOPY_LANES simt_float *radius_lanes_q(void *pk) {
    return (simt_float *)((radius_lanes *)pk + 1);
}

static size_t radius_lanes_size(const void *vctx, const canopy_tree_view *t) {
    (void)vctx;
    return sizeof(radius_lanes) + sizeof(simt_float) * (size_t)t->d;
}

CANOPY_LANES void radius_lanes_init(const void *vctx, void *pk, const canopy_tree_view *t,
                                    const int64_t *q, uint32_t mask) {
    (void)t;
    const radius_ctx *c = (const radius_ctx *)vctx;
    ((radius_lanes *)pk)->count = simt_splat(0);
    canopy_lanes_load_points(radius_lanes_q(pk), c->query, q, mask);
}

CANOPY_LANES uint32_t radius_lanes_truncate(const void *vctx, void *pk, const canopy_tree_view *t,
                                            int32_t node, uint32_t mask) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    const simt_float *q = radius_lanes_q(pk);
    uint32_t on = mask & ~simt_bits(canopy_lanes_node_min_dist2(t, node, q) > c->r2);
    if (!on) return 0;
    uint32_t inside = on & simt_bits(canopy_lanes_node_max_dist2(t, node, q) <= c->r2);
    if (inside) {
        const canopy_node *h = canopy_tv_node(t, node);
        ((radius_lanes *)pk)->count += simt_from_bits(inside) & (h->end - h->begin);
    }
    return on & ~inside;
}

CANOPY_LANES void radius_lanes_visit_leaf(const void *vctx, void *pk, const canopy_tree_view *t,
                                          int32_t node, uint32_t mask) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    const simt_float *q = radius_lanes_q(pk);
    const canopy_node *h = canopy_tv_node(t, node);
    simt_int hits = simt_splat(0);
    for (int32_t i = h->begin; i < h->end; i++)
        hits -= canopy_lanes_dist2(q, canopy_tv_point(t, i), t->d) <= c->r2; /* true is -1 */
    ((radius_lanes *)pk)->count += hits & simt_from_bits(mask);
}

CANOPY_LANES void radius_lanes_finish(const void *vctx, void *pk, const int64_t *q, uint32_t mask) {
    const radius_ctx *c = (const radius_ctx *)vctx;
    const radius_lanes *r = (const radius_lanes *)pk;
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        c->counts[q[l]] = (int64_t)r->count[l] - c->self;
    }
}

static const canopy_lane_app radius_lane_app = {
    radius_lanes_size,   radius_lanes_init, radius_lanes_truncate, radius_lanes_visit_leaf, NULL,
    radius_lanes_finish,
};
CANOPY_SIMD_L_LANES(radius, &radius_app, &radius_lane_app)
