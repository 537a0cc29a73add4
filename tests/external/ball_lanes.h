/* SPDX-License-Identifier: MIT */
/* The ball count's descriptor with vector hooks, from the public headers only
 * (docs/c-api.md, "Vector hooks"). Without SIMT_W: the descriptor, for the file
 * that instantiates its runners (test_external.c). With SIMT_W and CANOPY_LANES_ISA
 * (ball_lanes_*.c, one per lane width, each built with its ISA's flags): the hooks
 * and that width's simd_l runner. */
#ifndef CANOPY_EXAMPLE_BALL_LANES_H
#define CANOPY_EXAMPLE_BALL_LANES_H

#include "ball_count.h"

static const canopy_app ball_app = {"ball",        sizeof(ball_state), 0,    1,           ball_init,
                                    ball_truncate, ball_visit_leaf,    NULL, ball_finish, 1};

#ifdef SIMT_W
#include <canopy/simt.h>
#include <canopy/traverse_cpu.h>
#include <canopy/traverse_lanes.h>

/* Packet: one count per lane (at most n < 2^31), then the coordinates q[d]. */
typedef struct ball_lanes {
    simt_int count;
} ball_lanes;

static simt_float *ball_lanes_q(void *pk) {
    return (simt_float *)((ball_lanes *)pk + 1);
}

static size_t ball_lanes_size(const void *vctx, const canopy_tree_view *t) {
    (void)vctx;
    return sizeof(ball_lanes) + sizeof(simt_float) * (size_t)t->d;
}

static void ball_lanes_init(const void *vctx, void *pk, const canopy_tree_view *t, const int64_t *q,
                            uint32_t mask) {
    (void)t;
    ((ball_lanes *)pk)->count = simt_splat(0);
    canopy_lanes_load_points(ball_lanes_q(pk), ((const ball_ctx *)vctx)->query, q, mask);
}

static uint32_t ball_lanes_truncate(const void *vctx, void *pk, const canopy_tree_view *t,
                                    int32_t node, uint32_t mask) {
    float r2 = ((const ball_ctx *)vctx)->r2;
    const simt_float *q = ball_lanes_q(pk);
    uint32_t near = mask & ~simt_bits(canopy_lanes_node_min_dist2(t, node, q) > r2);
    uint32_t inside = near ? near & ~simt_bits(canopy_lanes_node_max_dist2(t, node, q) > r2) : 0;
    const canopy_node *h = canopy_tv_node(t, node);
    ((ball_lanes *)pk)->count += simt_from_bits(inside) & (h->end - h->begin);
    return near & ~inside;
}

static void ball_lanes_visit_leaf(const void *vctx, void *pk, const canopy_tree_view *t,
                                  int32_t node, uint32_t mask) {
    float r2 = ((const ball_ctx *)vctx)->r2;
    const canopy_node *h = canopy_tv_node(t, node);
    simt_int hits = simt_splat(0);
    for (int32_t i = h->begin; i < h->end; i++) /* a true compare is -1 */
        hits -= canopy_lanes_dist2(ball_lanes_q(pk), canopy_tv_point(t, i), t->d) <= r2;
    ((ball_lanes *)pk)->count += hits & simt_from_bits(mask);
}

static void ball_lanes_finish(const void *vctx, void *pk, const int64_t *q, uint32_t mask) {
    for (; mask; mask &= mask - 1) {
        int l = __builtin_ctz(mask);
        ((const ball_ctx *)vctx)->counts[q[l]] = ((ball_lanes *)pk)->count[l];
    }
}

static const canopy_lane_app ball_lane_app = {
    ball_lanes_size,   ball_lanes_init, ball_lanes_truncate, ball_lanes_visit_leaf, NULL,
    ball_lanes_finish,
};
CANOPY_SIMD_L_LANES(ball, &ball_app, &ball_lane_app)
#endif

#endif
