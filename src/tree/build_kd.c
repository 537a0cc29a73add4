/* SPDX-License-Identifier: MIT */
/* kd-tree split rule: tight bounding box as geometry; split on the widest
 * dimension at the median (Goldfarb's and scipy's choice), so depth is log2(n/leaf).
 * The rule is positional (tree.h): it reads and moves whole rows of the builder's
 * copy, in order, where a gather through perm would miss the cache on every point of
 * the upper levels, and its median selection is branch-free (the mispredicted
 * branches of a Dutch-flag partition were most of the build's time). */
#include "tree/select.h"
#include "tree/tree.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The value a full sort would put at key[nth] (key is reordered). Quickselect with
 * branch-free Lomuto partitions, whose comparisons the CPU need not predict; a second
 * pass splits off the keys equal to the pivot, so duplicates cannot make it quadratic. */
static float select_key(float *key, int64_t n, int64_t nth) {
    int64_t lo = 0, hi = n;
    while (hi - lo > 16) {
        float pivot = canopy_select_median3(key[lo], key[lo + (hi - lo) / 2], key[hi - 1]);
        int64_t p = lo;
        for (int64_t i = lo; i < hi; i++) {
            float t = key[i];
            key[i] = key[p];
            key[p] = t;
            p += t < pivot;
        }
        if (nth < p) {
            hi = p;
            continue;
        }
        int64_t q = p; /* [p, hi) holds keys >= pivot, the pivot among them */
        for (int64_t i = p; i < hi; i++) {
            float t = key[i];
            key[i] = key[q];
            key[q] = t;
            q += t == pivot;
        }
        if (nth < q) return pivot;
        lo = q;
    }
    for (int64_t i = lo + 1; i < hi; i++) {
        float t = key[i];
        int64_t j = i;
        for (; j > lo && key[j - 1] > t; j--) key[j] = key[j - 1];
        key[j] = t;
    }
    return key[nth];
}

/* Moves the rows x[0..m) (d floats each, with perm) so that the first m/2 have
 * coordinate dim <= the median and the rest >= it: rows below it and the first rows
 * equal to it go left, in their order, the others right, in theirs. 0 when there is
 * no memory for the scratch (the caller makes a leaf: correct, only slower). */
static int partition_at_median(float *x, int64_t *perm, int64_t m, int32_t d, int32_t dim) {
    int64_t half = m / 2;
    size_t row = sizeof(float) * (size_t)d;
    float *key = malloc(sizeof(float) * (size_t)m);
    float *tx = malloc(row * (size_t)m);
    int64_t *tp = malloc(sizeof(int64_t) * (size_t)m);
    int ok = key && tx && tp;
    if (ok) {
        for (int64_t i = 0; i < m; i++) key[i] = x[i * d + dim];
        float med = select_key(key, m, half);
        int64_t below = 0;
        for (int64_t i = 0; i < m; i++) below += x[i * d + dim] < med;
        int64_t equal_left = half - below, nl = 0, nr = 0;
        for (int64_t i = 0; i < m; i++) {
            float k = x[i * d + dim];
            int eq = k == med;
            int left = (k < med) | (eq & (equal_left > 0));
            equal_left -= eq & left;
            int64_t to = left ? nl : half + nr;
            nl += left;
            nr += !left;
            for (int32_t j = 0; j < d; j++) tx[to * d + j] = x[i * d + j]; /* no call per row */
            tp[to] = perm[i];
        }
        memcpy(x, tx, row * (size_t)m);
        memcpy(perm, tp, sizeof(int64_t) * (size_t)m);
    }
    free(key);
    free(tx);
    free(tp);
    return ok;
}

static void bounding_box(const float *x, int32_t d, int64_t m, float *lo, float *hi) {
    for (int32_t j = 0; j < d; j++) {
        lo[j] = m > 0 ? FLT_MAX : 0.0f;
        hi[j] = m > 0 ? -FLT_MAX : 0.0f;
    }
    for (int64_t i = 0; i < m; i++, x += d)
        for (int32_t j = 0; j < d; j++) {
            lo[j] = x[j] < lo[j] ? x[j] : lo[j];
            hi[j] = x[j] > hi[j] ? x[j] : hi[j];
        }
}

static int kd_split(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                    int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    (void)ctx;
    (void)depth;
    int32_t d = pts.d;
    /* positional: pts is the builder's own, writable copy */
    float *x = (float *)pts.data + begin * d;
    float *lo = geom, *hi = geom + d;
    bounding_box(x, d, end - begin, lo, hi);
    geom[2 * d] = -1.0f; /* leaf: no split dimension */
    if (!may_split) return 0;
    int32_t dim = 0;
    for (int32_t j = 1; j < d; j++)
        if (hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
    geom[2 * d] = (float)dim;
    int64_t m = end - begin;
    if (!partition_at_median(x, perm + begin, m, d, dim)) return 0;
    child_begin[0] = begin;
    child_begin[1] = begin + m / 2;
    return 2;
}

canopy_status canopy_tree_spec_kd(int32_t d, canopy_tree_spec *spec) {
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "kd tree: dimension %d < 1", (int)d);
    spec->kind = CANOPY_TREE_KD;
    spec->geom_stride = 2 * d + 1;
    spec->max_children = 2;
    spec->split = kd_split;
    spec->ctx = NULL;
    spec->positional = 1;
    return CANOPY_OK;
}
