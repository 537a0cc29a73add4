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
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* Copies the keys of a[lo, hi) below the pivot to the front of b[lo, hi) and those above
 * it to the back; the keys equal to it are only counted out (their value is the
 * pivot's), so one pass splits three ways. Each key is written to both ends and the one
 * claimed by the comparisons advances: no branch, nor a store the next key waits for.
 * Returns where the equal keys begin, *gt where the keys above it begin. */
static inline int64_t partition_out(const float *a, float *b, int64_t lo, int64_t hi, float pivot,
                                    int64_t *gt) {
    int64_t l = lo, r = hi - 1;
    for (int64_t i = lo; i < hi; i++) {
        float t = a[i];
        b[l] = t;
        b[r] = t;
        l += t < pivot;
        r -= t > pivot;
    }
    *gt = r + 1;
    return l;
}

/* Ranges of at most this many keys end the quickselect in rank_select. */
enum { SELECT_RANK_MAX = 16 };

/* The value a full sort would put at a[nth] and, in *less, lo + how many keys of a[lo,
 * hi) are smaller, by counting each key's rank: branch-free compares, where the
 * insertion sort that used to finish the short ranges mispredicted on every key. */
static float rank_select(const float *a, int64_t lo, int64_t hi, int64_t nth, int64_t *less) {
    int32_t want = (int32_t)(nth - lo), m = (int32_t)(hi - lo);
    a += lo;
    for (int32_t i = 0; i < m - 1; i++) {
        int32_t lt = 0, le = 0;
        for (int32_t j = 0; j < m; j++) {
            lt += a[j] < a[i];
            le += a[j] <= a[i];
        }
        if (lt <= want && want < le) {
            *less = lo + lt;
            return a[i];
        }
    }
    /* the last key: every other one was ruled out */
    int32_t lt = 0;
    for (int32_t j = 0; j < m; j++) lt += a[j] < a[m - 1];
    *less = lo + lt;
    return a[m - 1];
}

/* The value a full sort would put at key[nth], and in *less how many keys are smaller;
 * key and tmp (room for n keys) are scratch. Quickselect, partitioning out of place
 * between the two and three ways, so duplicates cannot make it quadratic; wide: with
 * AVX-512 (the same answer: only the order within each side differs). */
static float select_key(float *key, float *tmp, int64_t n, int64_t nth, int64_t *less, int wide) {
    float *a = key, *b = tmp, *c;
    int64_t lo = 0, hi = n; /* the answer lies in a[lo, hi); all keys left of lo are smaller */
    while (hi - lo > SELECT_RANK_MAX) {
        float pivot = canopy_select_median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]);
        int64_t gt, l = wide ? canopy_kd_partition_avx512(a, b, lo, hi, pivot, &gt)
                             : partition_out(a, b, lo, hi, pivot, &gt);
        c = a, a = b, b = c;
        if (nth < l) {
            hi = l;
        } else if (nth >= gt) {
            lo = gt;
        } else {
            *less = l;
            return pivot;
        }
    }
    return rank_select(a, lo, hi, nth, less);
}

/* The median's bracket from a sample (Floyd and Rivest's selection, CACM 1975): the
 * ranks MARGIN_SIGMAS standard deviations either side of the sample's middle bound the
 * median unless the sample is far off, and then the full selection runs. One pass
 * counts the keys below the bracket and collects those inside it (a tenth of the node
 * for large ones), so the selection touches that tenth instead of the whole node
 * three times. */
enum { BRACKET_MIN = 1024, SAMPLE_MAX = 1024, MARGIN_SIGMAS = 3 };

/* Keys of the rows below med, or -1 when the bracket missed the median: then *med is
 * unset and key[] unspecified. key has room for m keys. */
static int64_t bracket_median(const float *x, int64_t m, int32_t d, int32_t dim, float *key,
                              float *tmp, float *med, int wide) {
    int64_t half = m / 2, s = m / 16 < SAMPLE_MAX ? m / 16 : SAMPLE_MAX;
    int64_t margin = (int64_t)(MARGIN_SIGMAS * 0.5 * sqrt((double)s)) + 1;
    float *sample = key + s; /* key[0, s) is the selections' copy */
    for (int64_t i = 0; i < s; i++) sample[i] = x[(i * m / s + m / (2 * s)) * d + dim];
    int64_t less;
    memcpy(key, sample, sizeof(float) * (size_t)s);
    float lo = select_key(key, tmp, s, s / 2 - margin, &less, wide);
    memcpy(key, sample, sizeof(float) * (size_t)s);
    float hi = select_key(key, tmp, s, s / 2 + margin, &less, wide);
    int64_t below = 0, in = 0;
    for (int64_t i = 0; i < m; i++) {
        float k = x[i * d + dim];
        below += k < lo;
        key[in] = k;
        in += (k >= lo) & (k <= hi);
    }
    if (half < below || half >= below + in) return -1;
    *med = select_key(key, tmp, in, half - below, &less, wide);
    return below + less;
}

/* Rows below med and the first `equal_left` rows equal to it go to tx/tp from row nl
 * on in their order, the others from row nr on in theirs; D > 0 is the dimension known
 * at compile time (inlined per call site), 0 reads d. The buffers are distinct: without
 * restrict the compiler reloaded each row's next float after storing the previous one. */
static inline void scatter_rows(const float *restrict x, const int64_t *restrict perm, int64_t m,
                                int32_t d, int32_t dim, float med, int64_t equal_left,
                                float *restrict tx, int64_t *restrict tp, int64_t nl, int64_t nr,
                                const int32_t D) {
    int32_t w = D > 0 ? D : d;
    for (int64_t i = 0; i < m; i++) {
        float k = x[i * w + dim];
        int eq = k == med;
        int left = (k < med) | (eq & (equal_left > 0));
        equal_left -= eq & left;
        int64_t to = left ? nl : nr;
        nl += left;
        nr += !left;
        for (int32_t j = 0; j < w; j++) tx[to * w + j] = x[i * w + j]; /* no call per row */
        tp[to] = perm[i];
    }
}

static void scatter_any(const float *x, const int64_t *perm, int64_t m, int32_t d, int32_t dim,
                        float med, int64_t equal_left, float *tx, int64_t *tp, int64_t nl,
                        int64_t nr) {
    if (d == 2)
        scatter_rows(x, perm, m, d, dim, med, equal_left, tx, tp, nl, nr, 2);
    else if (d == 3)
        scatter_rows(x, perm, m, d, dim, med, equal_left, tx, tp, nl, nr, 3);
    else
        scatter_rows(x, perm, m, d, dim, med, equal_left, tx, tp, nl, nr, 0);
}

/* Nodes of at least PAR_MIN rows, when the build has a team, have their box and their
 * scatter shared out in pieces of at least PAR_PIECE rows: the top levels are otherwise
 * one thread's work (the root alone a thirteenth of a 2-D build) while the team waits.
 * Each piece counts its rows below and equal to the median, and the counts place its
 * rows where the one-thread scatter puts them: the same tree. */
enum { PAR_MIN = 1 << 16, PAR_PIECE = 1 << 14, PAR_MAX_PIECES = 64 };

static int pieces_for(int64_t m) {
    int64_t p = m >= PAR_MIN ? omp_get_num_threads() : 1;
    if (p > m / PAR_PIECE) p = m / PAR_PIECE;
    return p < 1 ? 1 : p > PAR_MAX_PIECES ? PAR_MAX_PIECES : (int)p;
}

static void scatter_pieces(const float *x, const int64_t *perm, int64_t m, int32_t d, int32_t dim,
                           float med, int64_t equal_left, float *tx, int64_t *tp, int pieces) {
    int64_t lt[PAR_MAX_PIECES], eq[PAR_MAX_PIECES], nl[PAR_MAX_PIECES], nr[PAR_MAX_PIECES];
/* the counts live in this frame: shared, not the tasks' own copies */
#pragma omp taskloop num_tasks(pieces) shared(lt, eq)
    for (int p = 0; p < pieces; p++) {
        int64_t l = 0, e = 0;
        for (int64_t i = m * p / pieces; i < m * (p + 1) / pieces; i++) {
            float k = x[i * d + dim];
            l += k < med;
            e += k == med;
        }
        lt[p] = l;
        eq[p] = e;
    }
    int64_t left = 0, right = m / 2, quota[PAR_MAX_PIECES];
    for (int p = 0; p < pieces; p++) {
        int64_t size = m * (p + 1) / pieces - m * p / pieces;
        quota[p] = equal_left < eq[p] ? equal_left : eq[p];
        equal_left -= quota[p];
        nl[p] = left;
        nr[p] = right;
        left += lt[p] + quota[p];
        right += size - lt[p] - quota[p];
    }
#pragma omp taskloop num_tasks(pieces) shared(quota, nl, nr)
    for (int p = 0; p < pieces; p++) {
        int64_t i0 = m * p / pieces;
        scatter_any(x + i0 * d, perm + i0, m * (p + 1) / pieces - i0, d, dim, med, quota[p], tx, tp,
                    nl[p], nr[p]);
    }
}

/* Moves the rows x[0..m) (d floats each, with perm) to y[0..m) (with yp) so that the
 * first m/2 have coordinate dim <= the median and the rest >= it, each half in its
 * order. yp's room (m int64) serves the selection as two arrays of m keys first. */
static void partition_at_median(const float *x, const int64_t *perm, int64_t m, int32_t d,
                                int32_t dim, float *y, int64_t *yp, int wide) {
    int64_t half = m / 2;
    float *key = (float *)yp, *tmp = key + m;
    float med = 0.0f;
    int64_t below = m >= BRACKET_MIN ? bracket_median(x, m, d, dim, key, tmp, &med, wide) : -1;
    if (below < 0) {
        for (int64_t i = 0; i < m; i++) key[i] = x[i * d + dim];
        med = select_key(key, tmp, m, half, &below, wide);
    }
    int pieces = pieces_for(m);
    if (pieces > 1)
        scatter_pieces(x, perm, m, d, dim, med, half - below, y, yp, pieces);
    else
        scatter_any(x, perm, m, d, dim, med, half - below, y, yp, 0, half);
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

/* Low dimensions read the rows as one flat run of floats into BOX_LANES accumulators per
 * bound (a multiple of d): independent lanes the compiler keeps in vector registers,
 * where one accumulator per column waits on the previous row's min/max. */
enum { BOX_LANES = 12 };

static inline void box_flat(const float *x, int64_t m, float *lo, float *hi, const int32_t D) {
    float l[BOX_LANES], h[BOX_LANES];
    for (int32_t t = 0; t < BOX_LANES; t++) {
        l[t] = FLT_MAX;
        h[t] = -FLT_MAX;
    }
    int64_t full = m * D / BOX_LANES * BOX_LANES;
    for (int64_t i = 0; i < full; i += BOX_LANES)
#pragma omp simd
        for (int32_t t = 0; t < BOX_LANES; t++) {
            l[t] = x[i + t] < l[t] ? x[i + t] : l[t];
            h[t] = x[i + t] > h[t] ? x[i + t] : h[t];
        }
    for (int64_t i = full; i < m * D; i++) {
        int32_t t = (int32_t)(i - full);
        l[t] = x[i] < l[t] ? x[i] : l[t];
        h[t] = x[i] > h[t] ? x[i] : h[t];
    }
    for (int32_t j = 0; j < D; j++) {
        lo[j] = m > 0 ? l[j] : 0.0f;
        hi[j] = m > 0 ? h[j] : 0.0f;
        for (int32_t t = j + D; t < BOX_LANES; t += D) {
            lo[j] = l[t] < lo[j] ? l[t] : lo[j];
            hi[j] = h[t] > hi[j] ? h[t] : hi[j];
        }
    }
}

void canopy_kd_box(const float *x, int32_t d, int64_t m, float *lo, float *hi) {
    if (d == 2) {
        box_flat(x, m, lo, hi, 2);
        return;
    }
    if (d == 3) {
        box_flat(x, m, lo, hi, 3);
        return;
    }
    for (int32_t j0 = 0; j0 < d; j0 += BOX_COLS)
        box_cols(x, d, m, j0, d - j0 < BOX_COLS ? d - j0 : BOX_COLS, lo, hi, 0);
}

/* The box of a large node from pieces on the team (pieces_for); min and max do not
 * depend on the order, so it is the one-thread box. */
static void bounding_box(const float *x, int32_t d, int64_t m, float *lo, float *hi) {
    int pieces = pieces_for(m);
    float *part = pieces > 1 ? malloc(sizeof(float) * 2 * (size_t)d * (size_t)pieces) : NULL;
    if (!part) {
        canopy_kd_box(x, d, m, lo, hi);
        return;
    }
#pragma omp taskloop num_tasks(pieces)
    for (int p = 0; p < pieces; p++) {
        int64_t i0 = m * p / pieces;
        float *l = part + 2 * (size_t)d * (size_t)p;
        canopy_kd_box(x + i0 * d, d, m * (p + 1) / pieces - i0, l, l + d);
    }
    for (int32_t j = 0; j < d; j++) {
        lo[j] = part[j];
        hi[j] = part[d + j];
        for (int p = 1; p < pieces; p++) {
            const float *l = part + 2 * (size_t)d * (size_t)p;
            lo[j] = l[j] < lo[j] ? l[j] : lo[j];
            hi[j] = l[d + j] > hi[j] ? l[d + j] : hi[j];
        }
    }
    free(part);
}

/* A node's rows are in the builder's copy at even depths and in the scratch at odd
 * ones: each split moves them across once, and a leaf found in the scratch moves back,
 * so the copy ends in tree order without a copy back per level. */
static int kd_split(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                    int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    const canopy_tree_scratch *sc = ctx;
    int32_t d = pts.d;
    int64_t m = end - begin;
    /* positional: pts is the builder's own, writable copy */
    float *rows = (float *)pts.data;
    int odd = depth & 1;
    float *x = (odd ? sc->rows : rows) + begin * d, *y = (odd ? rows : sc->rows) + begin * d;
    int64_t *xp = (odd ? sc->perm : perm) + begin, *yp = (odd ? perm : sc->perm) + begin;
    float *lo = geom, *hi = geom + d;
    bounding_box(x, d, m, lo, hi);
    geom[2 * d] = -1.0f; /* leaf: no split dimension */
    if (!may_split) {
        if (odd) {
            memcpy(y, x, sizeof(float) * (size_t)(m * d));
            memcpy(yp, xp, sizeof(int64_t) * (size_t)m);
        }
        return 0;
    }
    int32_t dim = 0;
    for (int32_t j = 1; j < d; j++)
        if (hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
    geom[2 * d] = (float)dim;
    partition_at_median(x, xp, m, d, dim, y, yp, *(const int *)sc->ctx);
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
    /* the rule's ctx: whether the selection partitions on AVX-512 */
    static const int narrow = 0, wide = 1;
    spec->ctx = canopy_cpu_isa() == CANOPY_ISA_AVX512 ? &wide : &narrow;
    spec->positional = 1;
    return CANOPY_OK;
}
