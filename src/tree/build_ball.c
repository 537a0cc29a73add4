/* SPDX-License-Identifier: MIT */
/* Ball-tree split rule: each node is bounded by the ball around the mean of its
 * points. Children are split like kd (widest dimension, median position), which
 * splits positions rather than values and so stays balanced on duplicates. */
#include "tree/select.h"
#include "tree/tree.h"

#include <math.h>

/* Dimensions summed per pass over the points: one 64-byte line of each point, so
 * no scratch allocation is needed for any d. */
enum { DIM_BLOCK = 16 };

static int ball_split(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                      int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    (void)ctx;
    (void)depth;
    int32_t d = pts.d;
    int64_t m = end - begin;
    float *c = geom;
    if (m == 0) {
        for (int32_t j = 0; j <= d; j++) geom[j] = 0.0f;
        return 0;
    }
    int32_t dim = 0;
    float widest = -1.0f;
    for (int32_t j0 = 0; j0 < d; j0 += DIM_BLOCK) {
        int32_t nb = d - j0 < DIM_BLOCK ? d - j0 : DIM_BLOCK;
        double sum[DIM_BLOCK] = {0};
        float lo[DIM_BLOCK], hi[DIM_BLOCK];
        for (int32_t j = 0; j < nb; j++) lo[j] = hi[j] = canopy_point(pts, perm[begin])[j0 + j];
        for (int64_t i = begin; i < end; i++) {
            const float *x = canopy_point(pts, perm[i]) + j0;
            for (int32_t j = 0; j < nb; j++) {
                sum[j] += x[j];
                if (x[j] < lo[j]) lo[j] = x[j];
                if (x[j] > hi[j]) hi[j] = x[j];
            }
        }
        for (int32_t j = 0; j < nb; j++) {
            c[j0 + j] = (float)(sum[j] / (double)m);
            if (hi[j] - lo[j] > widest) {
                widest = hi[j] - lo[j];
                dim = j0 + j;
            }
        }
    }
    /* Radius from the stored float centre, in double, then rounded up past the
     * float nearest: it bounds the exact distances, not just their roundings. */
    double r2 = 0.0;
    for (int64_t i = begin; i < end; i++) {
        const float *x = canopy_point(pts, perm[i]);
        double s = 0.0;
        for (int32_t j = 0; j < d; j++) {
            double t = (double)x[j] - c[j];
            s += t * t;
        }
        if (s > r2) r2 = s;
    }
    geom[d] = nextafterf((float)sqrt(r2), INFINITY);
    if (!may_split) return 0;
    return canopy_split_at_median(pts, perm, begin, end, dim, child_begin);
}

canopy_status canopy_tree_spec_ball(int32_t d, canopy_tree_spec *spec) {
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "ball tree: dimension %d < 1", (int)d);
    spec->kind = CANOPY_TREE_BALL;
    spec->geom_stride = d + 1;
    spec->max_children = 2;
    spec->split = ball_split;
    spec->ctx = NULL;
    return CANOPY_OK;
}
