/* SPDX-License-Identifier: MIT */
/* Octree split rule (d = 3). Cells lie on the dyadic grid of the root cube (the
 * bounding cube of all points); a node's cell is the smallest grid cell that holds
 * all its points, found by descending from the root. An internal node's points thus
 * always span >= 2 octants of its cell: where a plain octree would have a chain of
 * one-child cells, the node's cell is the shrunken one at the chain's end. Below
 * MAX_LEVEL levels cells are not split, so identical (or nearly identical) points
 * make one leaf that may exceed the leaf size.
 *
 * Cells are [lo, hi] intervals in double, halved at fl((lo + hi) / 2), so points
 * are inside their cell exactly; the stored float centre and half width are
 * rounded so that the float cube still contains them. */
#include "tree/tree.h"

#include <math.h>
#include <string.h>

enum { MAX_LEVEL = 32 };

static int octant(const double *mid, const float *x) {
    return (x[0] >= mid[0]) | (x[1] >= mid[1]) << 1 | (x[2] >= mid[2]) << 2;
}

/* Descends from the root cube to the smallest cell holding the box [blo, bhi];
 * returns whether the box spans >= 2 octants there (mid: the cell's midpoint). */
static int find_cell(const canopy_oct_ctx *cx, const float *blo, const float *bhi, double *lo,
                     double *hi, double *mid) {
    memcpy(lo, cx->lo, sizeof cx->lo);
    memcpy(hi, cx->hi, sizeof cx->hi);
    for (int level = 0; level < MAX_LEVEL; level++) {
        for (int j = 0; j < 3; j++) mid[j] = (lo[j] + hi[j]) * 0.5;
        int a = octant(mid, blo);
        if (a != octant(mid, bhi)) return 1;
        for (int j = 0; j < 3; j++) {
            if (a >> j & 1)
                lo[j] = mid[j];
            else
                hi[j] = mid[j];
        }
    }
    return 0;
}

static int oct_split(const void *vctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                     int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    (void)depth;
    const canopy_oct_ctx *cx = vctx;
    int64_t m = end - begin;
    if (m == 0) {
        memset(geom, 0, 8 * sizeof(float));
        return 0;
    }
    float blo[3], bhi[3];
    double wsum = 0.0, wx[3] = {0.0, 0.0, 0.0};
    memcpy(blo, canopy_point(pts, perm[begin]), sizeof blo);
    memcpy(bhi, blo, sizeof bhi);
    for (int64_t i = begin; i < end; i++) {
        const float *x = canopy_point(pts, perm[i]);
        double w = cx->weights ? cx->weights[perm[i]] : 1.0;
        wsum += w;
        for (int j = 0; j < 3; j++) {
            wx[j] += w * x[j];
            if (x[j] < blo[j]) blo[j] = x[j];
            if (x[j] > bhi[j]) bhi[j] = x[j];
        }
    }
    double lo[3], hi[3], mid[3];
    int splittable = find_cell(cx, blo, bhi, lo, hi, mid);

    float *com = geom, *c = geom + 4;
    double half = 0.0;
    for (int j = 0; j < 3; j++) {
        c[j] = (float)((lo[j] + hi[j]) * 0.5);
        double e = fmax(hi[j] - c[j], c[j] - lo[j]);
        if (e > half) half = e;
    }
    geom[7] = nextafterf((float)half, INFINITY); /* covers the centre's rounding */
    for (int j = 0; j < 3; j++) com[j] = wsum != 0.0 ? (float)(wx[j] / wsum) : c[j];
    geom[3] = cx->weights ? (float)wsum : (float)((double)m / (double)pts.n);
    if (!may_split || !splittable) return 0;

    /* In-place bucket sort of perm by octant (American flag sort). */
    int64_t next[8] = {0}, stop[8];
    for (int64_t i = begin; i < end; i++) next[octant(mid, canopy_point(pts, perm[i]))]++;
    int nc = 0;
    int64_t pos = begin;
    for (int o = 0; o < 8; o++) {
        int64_t count = next[o];
        if (count > 0) child_begin[nc++] = pos;
        next[o] = pos;
        pos += count;
        stop[o] = pos;
    }
    for (int o = 0; o < 8; o++) {
        while (next[o] < stop[o]) {
            int64_t p = perm[next[o]];
            int b = octant(mid, canopy_point(pts, p));
            if (b == o) {
                next[o]++;
            } else {
                perm[next[o]] = perm[next[b]];
                perm[next[b]++] = p;
            }
        }
    }
    return nc;
}

canopy_status canopy_tree_spec_oct(canopy_points pts, const float *weights, canopy_oct_ctx *ctx,
                                   canopy_tree_spec *spec) {
    if (pts.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "oct tree needs d = 3 (got d = %d)", (int)pts.d);
    float blo[3] = {0.0f, 0.0f, 0.0f}, bhi[3] = {0.0f, 0.0f, 0.0f};
    if (pts.n > 0) {
        memcpy(blo, canopy_point(pts, 0), sizeof blo);
        memcpy(bhi, blo, sizeof bhi);
    }
    for (int64_t i = 1; i < pts.n; i++) {
        const float *x = canopy_point(pts, i);
        for (int j = 0; j < 3; j++) {
            if (x[j] < blo[j]) blo[j] = x[j];
            if (x[j] > bhi[j]) bhi[j] = x[j];
        }
    }
    double size = 0.0;
    for (int j = 0; j < 3; j++) size = fmax(size, (double)bhi[j] - blo[j]);
    for (int j = 0; j < 3; j++) {
        ctx->lo[j] = blo[j];
        ctx->hi[j] = fmax(blo[j] + size, bhi[j]); /* a cube, up to rounding */
    }
    ctx->weights = weights;
    spec->kind = CANOPY_TREE_OCT;
    spec->geom_stride = 8;
    spec->max_children = 8;
    spec->split = oct_split;
    spec->ctx = ctx;
    return CANOPY_OK;
}
