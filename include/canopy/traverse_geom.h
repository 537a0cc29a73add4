/* SPDX-License-Identifier: MIT */
/* canopy/traverse_geom.h — distance bounds of tree nodes for traversals (the
 * shipped search applications use these). Geometric tests, one per tree
 * kind, chosen by the node's kind at run time (one well-predicted branch). All
 * return squared distances in float. Lower bounds never exceed, and upper bounds
 * never fall below, the distance canopy_dist2 computes to any point of the node,
 * so pruning and whole-subtree counting are exact. */
#ifndef CANOPY_TRAVERSE_GEOM_H
#define CANOPY_TRAVERSE_GEOM_H

#include "canopy/traverse.h"

#include <float.h>
#include <math.h>

#define CANOPY_INF INFINITY

/* Squared distance from q to the nearest point of the kd box (0 inside). Uses the
 * same subtraction as canopy_dist2 against the box faces, which are point
 * coordinates, so rounding keeps it a lower bound. */
CANOPY_HD float canopy_box_min_dist2(const float *g, int32_t d, const float *q) {
    float s = 0.0f;
    for (int32_t j = 0; j < d; j++) {
        /* max(lo - q, q - hi, 0) without branches (they mispredict on every query);
         * fl(lo - q) = -fl(q - lo), so the squares equal the branchy form's. */
        float a = g[j] - q[j], b = q[j] - g[d + j];
        float e = a > b ? a : b;
        e = e > 0.0f ? e : 0.0f;
        s += e * e;
    }
    return s;
}

/* Squared distance from q to the farthest point of the kd box; the same argument
 * (faces are coordinates, rounding is monotone) keeps it an upper bound. */
CANOPY_HD float canopy_box_max_dist2(const float *g, int32_t d, const float *q) {
    float s = 0.0f;
    for (int32_t j = 0; j < d; j++) {
        float a = q[j] - g[j], b = q[j] - g[d + j];
        float e = a * a > b * b ? a * a : b * b;
        s += e;
    }
    return s;
}

/* Ball, vp and oct bounds go through a centre or vantage point that is no point's
 * coordinate, so their rounding bears no monotone relation to canopy_dist2's and
 * they need margins. canopy_dist2 sums d non-negative terms, so short of underflow
 * it is within a relative (d + 2) * 2^-24 of the exact squared distance; the
 * builders store radii and shells that bound exact distances; each bound below
 * takes a few roundings of its own. A relative margin of (2d + 16) * 2^-24 covers
 * all of that twice over; results below FLT_MIN, where underflow breaks relative
 * error bounds, are widened to 0 (lower) or by FLT_MIN (upper). Any overflow to
 * infinity or NaN on the way gives the trivial bound 0 (lower) or +inf (upper). */
CANOPY_HD float canopy_geom_margin(int32_t d) {
    return (float)(2 * d + 16) * 0x1p-24f;
}

/* A lower bound on canopy_dist2 from s, a squared lower bound on the exact
 * distance computed with a few roundings. */
CANOPY_HD float canopy_lower2(float s, int32_t d) {
    float m = s * (1.0f - canopy_geom_margin(d));
    return m >= FLT_MIN && m < CANOPY_INF ? m : 0.0f;
}

/* The same from gap, a lower bound on the exact distance (<= 0: none). */
CANOPY_HD float canopy_lower_gap(float gap, int32_t d) {
    return gap > 0.0f ? canopy_lower2(gap * gap, d) : 0.0f;
}

/* An upper bound on canopy_dist2 from reach, an upper bound on the exact distance
 * computed with a few roundings. */
CANOPY_HD float canopy_upper_reach(float reach, int32_t d) {
    return reach * reach * (1.0f + canopy_geom_margin(d)) + FLT_MIN;
}

/* Ball [c(d), r]: |q - c| - r <= |q - p| <= |q - c| + r for every point p. */
CANOPY_HD float canopy_ball_min_dist2(const float *g, int32_t d, const float *q) {
    float a = sqrtf(canopy_dist2(q, g, d));
    return canopy_lower_gap(a * (1.0f - canopy_geom_margin(d)) - g[d], d);
}
CANOPY_HD float canopy_ball_max_dist2(const float *g, int32_t d, const float *q) {
    float a = sqrtf(canopy_dist2(q, g, d));
    return canopy_upper_reach(a * (1.0f + canopy_geom_margin(d)) + g[d], d);
}

/* Vantage point [v(d), mu, lo, hi]: every point p has lo <= |p - v| <= hi, so
 * |q - p| >= max(|q - v| - hi, lo - |q - v|) and <= |q - v| + hi. */
CANOPY_HD float canopy_vp_min_dist2(const float *g, int32_t d, const float *q) {
    float a = sqrtf(canopy_dist2(q, g, d)), e = canopy_geom_margin(d);
    float beyond = a * (1.0f - e) - g[d + 2], within = g[d + 1] - a * (1.0f + e);
    return canopy_lower_gap(beyond > within ? beyond : within, d);
}
CANOPY_HD float canopy_vp_max_dist2(const float *g, int32_t d, const float *q) {
    float a = sqrtf(canopy_dist2(q, g, d));
    return canopy_upper_reach(a * (1.0f + canopy_geom_margin(d)) + g[d + 2], d);
}

/* Octree cell, the cube c(3) +- half: per axis |q - p| >= |q - c| - half and
 * <= |q - c| + half. */
CANOPY_HD float canopy_cell_min_dist2(const float *c, float half, const float *q) {
    float e = canopy_geom_margin(3), s = 0.0f;
    for (int32_t j = 0; j < 3; j++) {
        float gap = fabsf(q[j] - c[j]) * (1.0f - e) - half;
        if (gap > 0.0f) s += gap * gap;
    }
    return canopy_lower2(s, 3);
}
CANOPY_HD float canopy_cell_max_dist2(const float *c, float half, const float *q) {
    float s = 0.0f;
    for (int32_t j = 0; j < 3; j++) {
        float reach = fabsf(q[j] - c[j]) + half;
        s += reach * reach;
    }
    return s * (1.0f + canopy_geom_margin(3)) + FLT_MIN;
}

/* Lower bound on the squared distance from q to any point of the node. */
CANOPY_HD float canopy_node_min_dist2(const canopy_tree_view *t, int32_t node, const float *q) {
    const float *g = canopy_tv_geom(t, node);
    switch (t->kind) {
    case CANOPY_TREE_BALL:
        return canopy_ball_min_dist2(g, t->d, q);
    case CANOPY_TREE_VP:
        return canopy_vp_min_dist2(g, t->d, q);
    case CANOPY_TREE_OCT:
        return canopy_cell_min_dist2(g + 4, g[7], q);
    default:
        return canopy_box_min_dist2(g, t->d, q); /* kd; bst's [lo, hi] is a 1-d box */
    }
}

/* Upper bound on the squared distance from q to any point of the node. */
CANOPY_HD float canopy_node_max_dist2(const canopy_tree_view *t, int32_t node, const float *q) {
    const float *g = canopy_tv_geom(t, node);
    switch (t->kind) {
    case CANOPY_TREE_BALL:
        return canopy_ball_max_dist2(g, t->d, q);
    case CANOPY_TREE_VP:
        return canopy_vp_max_dist2(g, t->d, q);
    case CANOPY_TREE_OCT:
        return canopy_cell_max_dist2(g + 4, g[7], q);
    default:
        return canopy_box_max_dist2(g, t->d, q);
    }
}

/* An order function's body: the children of internal node `node`, nearest first by
 * their lower distance bound from q (ties: the smaller child index). */
CANOPY_HD void canopy_order_by_bound(const canopy_tree_view *t, int32_t node, const float *q,
                                     int32_t *perm) {
    const canopy_node *h = canopy_tv_node(t, node);
    float key[CANOPY_MAX_CHILDREN];
    for (int32_t c = 0; c < h->nchild; c++) {
        float k = canopy_node_min_dist2(t, h->child + c, q);
        int32_t j = c;
        for (; j > 0 && key[j - 1] > k; j--) {
            key[j] = key[j - 1];
            perm[j] = perm[j - 1];
        }
        key[j] = k;
        perm[j] = c;
    }
}

#endif
