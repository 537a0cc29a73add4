/* SPDX-License-Identifier: MIT */
/* kd-tree split rule: tight bounding box as geometry; split on the widest
 * dimension at the median (Goldfarb's and scipy's choice), so depth is log2(n/leaf).
 * The rule is positional (tree.h): it reads and moves whole rows of the builder's
 * copy, in order, where a gather through perm would miss the cache on every point of
 * the upper levels, and its median selection is branch-free (the mispredicted
 * branches of a Dutch-flag partition were most of the build's time) and, on large
 * nodes, confined to a sampled bracket around the median. */
#include "tree/select.h"
#include "tree/tree.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Copies a[lo, hi) to b[lo, hi): the keys that `take` (below the pivot, or equal to it)
 * to the front, the others to the back, and returns where the back begins. Each key
 * is written to both ends and the one claimed by the comparison advances, so neither
 * a branch nor a store the next key must wait for is in the loop. */
static inline int64_t partition_out(const float *a, float *b, int64_t lo, int64_t hi, float pivot,
                                    int equal) {
    int64_t l = lo, r = hi - 1;
    for (int64_t i = lo; i < hi; i++) {
        float t = a[i];
        int take = equal ? t == pivot : t < pivot;
        b[l] = t;
        b[r] = t;
        l += take;
        r -= !take;
    }
    return l;
}

/* The value a full sort would put at key[nth], and in *less how many keys are smaller;
 * key and tmp (room for n keys) are scratch. Quickselect, partitioning out of place
 * between the two; a second pass splits off the keys equal to the pivot, so
 * duplicates cannot make it quadratic. */
static float select_key(float *key, float *tmp, int64_t n, int64_t nth, int64_t *less) {
    float *a = key, *b = tmp, *c;
    int64_t lo = 0, hi = n; /* the answer lies in a[lo, hi) */
    while (hi - lo > 16) {
        float pivot = canopy_select_median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]);
        int64_t l = partition_out(a, b, lo, hi, pivot, 0);
        c = a, a = b, b = c;
        if (nth < l) {
            hi = l;
            continue;
        }
        /* a[l, hi) holds keys >= pivot, the pivot among them */
        int64_t q = partition_out(a, b, l, hi, pivot, 1);
        c = a, a = b, b = c;
        if (nth < q) {
            *less = l; /* everything left of lo is below an earlier, smaller pivot */
            return pivot;
        }
        lo = q;
    }
    for (int64_t i = lo + 1; i < hi; i++) {
        float t = a[i];
        int64_t j = i;
        for (; j > lo && a[j - 1] > t; j--) a[j] = a[j - 1];
        a[j] = t;
    }
    int64_t first = nth;
    while (first > lo && a[first - 1] == a[nth]) first--;
    *less = first;
    return a[nth];
}

/* The median's bracket from a sample (Floyd and Rivest's selection, CACM 1975): the
 * ranks MARGIN_SIGMAS standard deviations either side of the sample's middle bound the
 * median unless the sample is far off, and then the full selection runs. One pass
 * counts the keys below the bracket and collects those inside it (a tenth of the node
 * for large ones), so the selection touches that tenth instead of the whole node
 * three times. */
enum { BRACKET_MIN = 1024, SAMPLE_MAX = 1024, MARGIN_SIGMAS = 3 };

/* Nodes of at most this many rows, of at most STACK_DIMS floats, partition in stack
 * buffers: the many small nodes near the leaves then call no allocator. */
enum { STACK_ROWS = 256, STACK_DIMS = 16 };

/* Keys of the rows below med, or -1 when the bracket missed the median: then *med is
 * unset and key[] unspecified. key has room for m keys. */
static int64_t bracket_median(const float *x, int64_t m, int32_t d, int32_t dim, float *key,
                              float *tmp, float *med) {
    int64_t half = m / 2, s = m / 16 < SAMPLE_MAX ? m / 16 : SAMPLE_MAX;
    int64_t margin = (int64_t)(MARGIN_SIGMAS * 0.5 * sqrt((double)s)) + 1;
    float *sample = key + s; /* key[0, s) is the selections' copy */
    for (int64_t i = 0; i < s; i++) sample[i] = x[(i * m / s + m / (2 * s)) * d + dim];
    int64_t less;
    memcpy(key, sample, sizeof(float) * (size_t)s);
    float lo = select_key(key, tmp, s, s / 2 - margin, &less);
    memcpy(key, sample, sizeof(float) * (size_t)s);
    float hi = select_key(key, tmp, s, s / 2 + margin, &less);
    int64_t below = 0, in = 0;
    for (int64_t i = 0; i < m; i++) {
        float k = x[i * d + dim];
        below += k < lo;
        key[in] = k;
        in += (k >= lo) & (k <= hi);
    }
    if (half < below || half >= below + in) return -1;
    *med = select_key(key, tmp, in, half - below, &less);
    return below + less;
}

/* Rows below med and the first `equal_left` rows equal to it go to the front in their
 * order, the others from `half` on in theirs; D > 0 is the dimension known at compile
 * time (inlined per call site), 0 reads d. */
static inline void scatter_rows(const float *x, const int64_t *perm, int64_t m, int32_t d,
                                int32_t dim, float med, int64_t equal_left, float *tx, int64_t *tp,
                                const int32_t D) {
    int32_t w = D > 0 ? D : d;
    int64_t half = m / 2, nl = 0, nr = 0;
    for (int64_t i = 0; i < m; i++) {
        float k = x[i * w + dim];
        int eq = k == med;
        int left = (k < med) | (eq & (equal_left > 0));
        equal_left -= eq & left;
        int64_t to = left ? nl : half + nr;
        nl += left;
        nr += !left;
        for (int32_t j = 0; j < w; j++) tx[to * w + j] = x[i * w + j]; /* no call per row */
        tp[to] = perm[i];
    }
}

/* Moves the rows x[0..m) (d floats each, with perm) so that the first m/2 have
 * coordinate dim <= the median and the rest >= it. 0 when there is no memory for the
 * scratch (the caller makes a leaf: correct, only slower). */
static int partition_at_median(float *x, int64_t *perm, int64_t m, int32_t d, int32_t dim) {
    int64_t half = m / 2;
    size_t row = sizeof(float) * (size_t)d;
    float stack_key[STACK_ROWS], stack_x[STACK_ROWS * STACK_DIMS];
    int64_t stack_p[STACK_ROWS];
    int small = m <= STACK_ROWS && d <= STACK_DIMS;
    float *key = small ? stack_key : malloc(sizeof(float) * (size_t)m);
    float *tx = small ? stack_x : malloc(row * (size_t)m);
    int64_t *tp = small ? stack_p : malloc(sizeof(int64_t) * (size_t)m);
    int ok = key && tx && tp;
    if (ok) {
        float med = 0.0f;
        int64_t below = m >= BRACKET_MIN ? bracket_median(x, m, d, dim, key, tx, &med) : -1;
        if (below < 0) {
            for (int64_t i = 0; i < m; i++) key[i] = x[i * d + dim];
            med = select_key(key, tx, m, half, &below);
        }
        if (d == 2)
            scatter_rows(x, perm, m, d, dim, med, half - below, tx, tp, 2);
        else if (d == 3)
            scatter_rows(x, perm, m, d, dim, med, half - below, tx, tp, 3);
        else
            scatter_rows(x, perm, m, d, dim, med, half - below, tx, tp, 0);
        memcpy(x, tx, row * (size_t)m);
        memcpy(perm, tp, sizeof(int64_t) * (size_t)m);
    }
    if (!small) {
        free(key);
        free(tx);
        free(tp);
    }
    return ok;
}

/* The bounds accumulate in locals: written straight into lo/hi, which may alias x for
 * the compiler, every row would store them back (most of the build's time in 2-D).
 * Columns [j0, j0 + w) of rows of d floats, w <= BOX_COLS; W > 0 is w known at compile
 * time (inlined per call site). */
enum { BOX_COLS = 32 };

static inline void box_cols(const float *x, int32_t d, int64_t m, int32_t j0, int32_t w, float *lo,
                            float *hi, const int32_t W) {
    if (W > 0) w = W;
    float l[BOX_COLS], h[BOX_COLS];
    for (int32_t j = 0; j < w; j++) {
        l[j] = m > 0 ? FLT_MAX : 0.0f;
        h[j] = m > 0 ? -FLT_MAX : 0.0f;
    }
    x += j0;
    for (int64_t i = 0; i < m; i++, x += (W > 0 ? W : d))
        for (int32_t j = 0; j < w; j++) {
            l[j] = x[j] < l[j] ? x[j] : l[j];
            h[j] = x[j] > h[j] ? x[j] : h[j];
        }
    memcpy(lo + j0, l, sizeof(float) * (size_t)w);
    memcpy(hi + j0, h, sizeof(float) * (size_t)w);
}

static void bounding_box(const float *x, int32_t d, int64_t m, float *lo, float *hi) {
    if (d == 2) {
        box_cols(x, d, m, 0, d, lo, hi, 2);
        return;
    }
    if (d == 3) {
        box_cols(x, d, m, 0, d, lo, hi, 3);
        return;
    }
    for (int32_t j0 = 0; j0 < d; j0 += BOX_COLS)
        box_cols(x, d, m, j0, d - j0 < BOX_COLS ? d - j0 : BOX_COLS, lo, hi, 0);
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
