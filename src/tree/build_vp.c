/* SPDX-License-Identifier: MIT */
/* Vantage-point tree split rule: the node picks one of its points as vantage point
 * v, bounds its points' distances from v by [lo, hi] and splits them at the median
 * distance mu into inside (dist <= mu) and outside (dist > mu). Distances are
 * computed in double; [lo, hi] is rounded outward to float, and the split and mu
 * use the distances rounded to nearest float. Only when every point is at the same
 * distance from v (all points equal) are the halves split by position. */
#include "tree/select.h"
#include "tree/tree.h"

#include <math.h>
#include <stdlib.h>

static double dist_d(const float *a, const float *b, int32_t d) {
    double s = 0.0;
    for (int32_t j = 0; j < d; j++) {
        double t = (double)a[j] - b[j];
        s += t * t;
    }
    return sqrt(s);
}

/* Moves the pairs of [a, b) whose key is below kv (below) or equal to it (!below) to
 * the front of the range; returns how many there are. */
static int64_t gather(float *key, int64_t *perm, int64_t a, int64_t b, float kv, int below) {
    int64_t k = a;
    for (int64_t i = a; i < b; i++)
        if (below ? key[i] < kv : key[i] == kv) canopy_swap_pairs(key, perm, k++, i);
    return k - a;
}

static int vp_split(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                    int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    (void)ctx;
    (void)depth;
    int32_t d = pts.d;
    int64_t m = end - begin;
    float *v = geom;
    if (m == 0) {
        for (int32_t j = 0; j < d + 3; j++) geom[j] = 0.0f;
        return 0;
    }
    /* The point farthest from the node's first point: a deterministic choice on the
     * periphery, where distance shells cut the node most evenly. Ties keep the first. */
    const float *first = canopy_point(pts, perm[begin]);
    int64_t far = begin;
    float far_d = -1.0f;
    for (int64_t i = begin; i < end; i++) {
        float dd = canopy_dist2(first, canopy_point(pts, perm[i]), d);
        if (dd > far_d) {
            far_d = dd;
            far = i;
        }
    }
    const float *vp = canopy_point(pts, perm[far]);
    for (int32_t j = 0; j < d; j++) v[j] = vp[j];

    float *key = may_split ? malloc(sizeof(float) * (size_t)m) : NULL;
    double lo = INFINITY, hi = 0.0;
    for (int64_t i = 0; i < m; i++) {
        double r = dist_d(v, canopy_point(pts, perm[begin + i]), d);
        if (r < lo) lo = r;
        if (r > hi) hi = r;
        if (key) key[i] = (float)r;
    }
    /* Rounded one float step outward so that [lo, hi] bounds the exact distances. */
    float flo = nextafterf((float)lo, -INFINITY);
    geom[d + 1] = flo > 0.0f ? flo : 0.0f;
    geom[d + 2] = nextafterf((float)hi, INFINITY);
    geom[d] = geom[d + 2]; /* a leaf: every point is inside */
    if (!key) return 0;    /* a leaf (also when out of memory: correct, only slower) */

    /* Median split, then ties of the median key go wholly to one side so that
     * "inside: key <= mu" holds exactly: either the right part's ties join the left
     * (inside = key <= kv) or the left part's ties join the right (inside = key < kv),
     * whichever is nearer balance and leaves both children non-empty. */
    int64_t nth = m / 2;
    canopy_select_pairs(key, perm + begin, m, nth);
    float kv = key[nth];
    int64_t sa = nth + gather(key, perm + begin, nth, m, kv, 0);
    int64_t sb = gather(key, perm + begin, 0, nth, kv, 1);
    int64_t split;
    float mu = kv;
    int a_ok = sa < m;
    int b_ok = sb > 0;
    if (a_ok && (!b_ok || sa - nth <= nth - sb)) {
        split = sa;
    } else if (b_ok) {
        split = sb;
        mu = key[0];
        for (int64_t i = 1; i < sb; i++)
            if (key[i] > mu) mu = key[i];
    } else {
        split = nth; /* all keys equal: halves by position; lo/hi still bound both */
    }
    free(key);
    geom[d] = mu;
    child_begin[0] = begin;
    child_begin[1] = begin + split;
    return 2;
}

canopy_status canopy_tree_spec_vp(int32_t d, canopy_tree_spec *spec) {
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "vp tree: dimension %d < 1", (int)d);
    spec->kind = CANOPY_TREE_VP;
    spec->geom_stride = d + 3;
    spec->max_children = 2;
    spec->split = vp_split;
    spec->ctx = NULL;
    return CANOPY_OK;
}
