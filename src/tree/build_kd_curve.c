/* SPDX-License-Identifier: MIT */
/* kd tree split along the bits of Morton keys (tree.h: canopy_tree_build_kd_curve), d <= 3.
 * Each point's cell on a 2^(32/d) grid over the points' box, its coordinates' bits
 * interleaved, is radix sorted once; a node then splits at the highest bit in which its
 * first and last keys differ, found by binary search (Karras, "Maximizing parallelism in
 * the construction of BVHs, octrees, and k-d trees", HPG 2012), and its box is the union
 * of its children's. A bit of dimension j halves the node's cell along j, so its children
 * lie apart along j. The median build selects and moves every row once per level; this
 * reads the points about five times in all. A node whose keys are all equal while its
 * points are not (the grid too coarse for a dense cluster) is keyed again over its own
 * box; one whose points all coincide is halved. */
#include "tree/curve_key.h"
#include "tree/tree.h"

#include <math.h>
#include <string.h>

/* Keys of KEY_BITS bits sit in the words' high half, row numbers in the low one (at 22
 * bits, 2-D cities keyed 60 % of their points again; at 32, a few dozen). Ranges above
 * TASK_MIN rows are split among tasks. */
enum { KEY_SHIFT = 32, KEY_BITS = 32, RADIX_BITS = 11, RADIX = 1 << RADIX_BITS };
enum { SMALL_SORT = 48, SHORT_SORT = 8192 };
enum { TASK_MIN = 4096 };

/* The grid of a box: cell c of dimension j holds lo[j] + [c, c + 1) / scale[j]. In float:
 * rounding is monotone, so a smaller coordinate never lands in a later cell, which is all
 * the splits need. */
typedef struct grid {
    float lo[3], scale[3];
    float top; /* the last cell */
} grid;

static grid grid_make(const float *lo, const float *hi, int32_t d) {
    grid g;
    int32_t bits = KEY_BITS / d < 24 ? KEY_BITS / d : 24; /* cells exact in float */
    g.top = (float)(ldexp(1.0, bits) - 1.0);
    for (int32_t j = 0; j < d; j++) {
        g.lo[j] = lo[j];
        g.scale[j] =
            hi[j] > lo[j] ? (float)(ldexp(1.0, bits) / ((double)hi[j] - (double)lo[j])) : 0.0f;
    }
    return g;
}

/* NaN (0 * inf, where a side is below float's range) lands in cell 0. */
static inline uint32_t cell(const grid *g, int32_t j, float x) {
    float c = (x - g->lo[j]) * g->scale[j];
    return (uint32_t)(c >= g->top ? g->top : c > 0.0f ? c : 0.0f);
}

/* Coordinate 0 in the top place of each group: key bit p belongs to dimension
 * d - 1 - p % d. D is d known at compile time (inlined per call site). */
static inline uint32_t curve_key(const grid *g, const float *p, const int32_t D) {
    if (D == 1) return cell(g, 0, p[0]);
    if (D == 2)
        return (uint32_t)(canopy_spread2(cell(g, 0, p[0])) << 1 | canopy_spread2(cell(g, 1, p[1])));
    return (uint32_t)(canopy_spread3(cell(g, 0, p[0])) << 2 |
                      canopy_spread3(cell(g, 1, p[1])) << 1 | canopy_spread3(cell(g, 2, p[2])));
}

/* w[i] = the key of row i of x (rows `stride` floats apart) and base + i, i in [0, m). */
static inline void keys_rows(const grid *g, const float *x, int64_t stride, int64_t m, int64_t base,
                             uint64_t *w, const int32_t D) {
    for (int64_t i = 0; i < m; i++)
        w[i] = (uint64_t)curve_key(g, x + i * stride, D) << KEY_SHIFT | (uint64_t)(base + i);
}

static void keys_any(const grid *g, const float *x, int64_t stride, int64_t m, int64_t base,
                     uint64_t *w, int32_t d) {
    if (d == 1)
        keys_rows(g, x, stride, m, base, w, 1);
    else if (d == 2)
        keys_rows(g, x, stride, m, base, w, 2);
    else
        keys_rows(g, x, stride, m, base, w, 3);
}

/* Row w[i]'s low half of x (rows `stride` floats apart) to row i of y, its id to yp. */
static inline void gather_rows(const float *restrict x, int64_t stride, const int64_t *ids,
                               const uint64_t *w, int64_t m, float *restrict y,
                               int64_t *restrict yp, const int32_t D) {
    for (int64_t i = 0; i < m; i++) {
        uint32_t from = (uint32_t)w[i];
        for (int32_t j = 0; j < D; j++) y[i * D + j] = x[from * stride + j]; /* no call per row */
        yp[i] = ids ? ids[from] : from;
    }
}

static void gather_any(const float *x, int64_t stride, const int64_t *ids, const uint64_t *w,
                       int64_t m, float *y, int64_t *yp, int32_t d) {
    if (d == 1)
        gather_rows(x, stride, ids, w, m, y, yp, 1);
    else if (d == 2)
        gather_rows(x, stride, ids, w, m, y, yp, 2);
    else
        gather_rows(x, stride, ids, w, m, y, yp, 3);
}

static inline uint32_t key_of(uint64_t w) {
    return (uint32_t)(w >> KEY_SHIFT);
}

/* Orders w[0, n), whose keys agree above bit `top`, by their keys' bits below it as far
 * as the tree needs: most significant digit first, and a bucket of `leaf` words or fewer
 * is left as it is (it ends inside one leaf: a node of more words spans several buckets,
 * so its first and last keys differ in the highest bit any two of its keys do, and that
 * bit rises once along it). 11-bit digits, 8-bit ones below SHORT_SORT words (where the
 * counters' prefix sums cost more than the pass); SMALL_SORT words or fewer by insertion.
 * tmp: n words of scratch. */
static void sort_words(uint64_t *w, uint64_t *tmp, int64_t n, int top, int32_t leaf) {
    uint32_t end[RADIX];
    while (n > leaf && top > 0) {
        if (n <= SMALL_SORT) {
            for (int64_t i = 1; i < n; i++) {
                uint64_t x = w[i];
                int64_t j = i;
                for (; j > 0 && w[j - 1] > x; j--) w[j] = w[j - 1];
                w[j] = x;
            }
            return;
        }
        int bits = n >= SHORT_SORT ? RADIX_BITS : 8;
        bits = bits < top ? bits : top;
        top -= bits;
        const int shift = KEY_SHIFT + top;
        const uint32_t mask = (1u << bits) - 1;
        memset(end, 0, sizeof(uint32_t) << bits);
        for (int64_t i = 0; i < n; i++) end[(w[i] >> shift) & mask]++;
        if (end[(w[0] >> shift) & mask] == (uint32_t)n) continue; /* one digit value */
        uint32_t sum = 0;
        for (uint32_t b = 0; b <= mask; b++) {
            uint32_t k = end[b];
            end[b] = sum;
            sum += k;
        }
        for (int64_t i = 0; i < n; i++) tmp[end[(w[i] >> shift) & mask]++] = w[i];
        memcpy(w, tmp, sizeof *w * (size_t)n);
        /* end[b]: where bucket b ends; large buckets are tasks (disjoint ranges) */
        for (uint32_t b = 0, from = 0; b <= mask; from = end[b++]) {
            int64_t size = end[b] - from;
            if (size > TASK_MIN) {
#pragma omp task firstprivate(from, size)
                sort_words(w + from, tmp + from, size, top, leaf);
            } else if (size > leaf) {
                sort_words(w + from, tmp + from, size, top, leaf);
            }
        }
#pragma omp taskwait
        return;
    }
}

typedef struct curve_job {
    const canopy_tree_scratch *sc;
    float *rows;
    int64_t *perm;
    uint64_t *words; /* n sorted words, then n of scratch */
    int64_t n;
    int32_t d, leaf;
    canopy_tmp_tree *tt;
    int failed;
} curve_job;

/* Keys rows [b, e) again over their own box, sorts them and moves them and their ids into
 * that order; 0 when they are all one point (nothing changes). */
static int rekey(const curve_job *J, int64_t b, int64_t e) {
    int32_t d = J->d;
    int64_t m = e - b;
    float lo[3], hi[3];
    canopy_kd_box(J->rows + b * d, d, m, lo, hi);
    int same = 1;
    for (int32_t j = 0; j < d; j++) same &= lo[j] == hi[j];
    if (same) return 0;
    grid g = grid_make(lo, hi, d);
    uint64_t *w = J->words + b;
    keys_any(&g, J->rows + b * d, d, m, 0, w, d);
    sort_words(w, J->words + J->n + b, m, KEY_BITS, J->leaf);
    /* the scratch's rows [b, e) are this range's alone */
    float *sr = J->sc->rows + b * d;
    int64_t *sp = J->sc->perm + b;
    memcpy(sr, J->rows + b * d, sizeof(float) * (size_t)(m * d));
    memcpy(sp, J->perm + b, sizeof(int64_t) * (size_t)m);
    gather_any(sr, d, sp, w, m, J->rows + b * d, J->perm + b, d);
    return 1;
}

/* First row of [b, e) whose key has bit p set; key(b) has it clear, key(e - 1) set. */
static int64_t first_set(const uint64_t *w, int64_t b, int64_t e, int p) {
    int64_t lo = b + 1, hi = e - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (key_of(w[mid]) >> p & 1u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void curve_node(curve_job *J, int32_t v) {
    canopy_tmp_tree *tt = J->tt;
    int32_t d = J->d;
    int64_t b = tt->begin[v], e = tt->end[v], m = e - b;
    float *g = tt->geom + (int64_t)v * tt->geom_stride;
    tt->first[v] = -1;
    tt->nchild[v] = 0;
    if (m <= J->leaf) {
        canopy_kd_box(J->rows + b * d, d, m, g, g + d);
        g[2 * d] = -1.0f; /* leaf: no split dimension */
        return;
    }
    uint32_t x = key_of(J->words[b]) ^ key_of(J->words[e - 1]);
    if (!x && rekey(J, b, e)) x = key_of(J->words[b]) ^ key_of(J->words[e - 1]);
    int64_t split = b + m / 2; /* coincident points: any halves */
    int32_t dim = 0;
    if (x) {
        int p = 31 - __builtin_clz(x);
        split = first_set(J->words, b, e, p);
        dim = d - 1 - p % d;
    }
    int32_t first;
#pragma omp atomic capture
    {
        first = tt->count;
        tt->count += 2;
    }
    if (first + 2 > tt->cap) {
        J->failed = 1;
        return;
    }
    tt->first[v] = first;
    tt->nchild[v] = 2;
    tt->begin[first] = b;
    tt->end[first] = tt->begin[first + 1] = split;
    tt->end[first + 1] = e;
    for (int32_t c = first; c < first + 2; c++) {
        if (tt->end[c] - tt->begin[c] > TASK_MIN) {
#pragma omp task firstprivate(c)
            curve_node(J, c);
        } else {
            curve_node(J, c);
        }
    }
#pragma omp taskwait
    const float *l = tt->geom + (int64_t)first * tt->geom_stride, *r = l + tt->geom_stride;
    for (int32_t j = 0; j < d; j++) {
        g[j] = l[j] < r[j] ? l[j] : r[j];
        g[d + j] = l[d + j] > r[d + j] ? l[d + j] : r[d + j];
    }
    g[2 * d] = (float)dim;
}

static int kd_curve_all(const canopy_tree_scratch *sc, canopy_points pts, float *rows,
                        int64_t *perm, int32_t leaf_size, canopy_tmp_tree *tt) {
    int64_t n = pts.n;
    int32_t d = pts.d;
    curve_job J = {sc, rows, perm, sc->words, n, d, leaf_size, tt, 0};
    float lo[3] = {0}, hi[3] = {0};
    if (pts.stride == d) {
        canopy_kd_box(pts.data, d, n, lo, hi);
    } else {
        for (int64_t i = 0; i < n; i++)
            for (int32_t j = 0; j < d; j++) {
                float x = canopy_point(pts, i)[j];
                lo[j] = i == 0 || x < lo[j] ? x : lo[j];
                hi[j] = i == 0 || x > hi[j] ? x : hi[j];
            }
    }
    grid g = grid_make(lo, hi, d);
    uint64_t *w = J.words;
    int64_t pieces = n / TASK_MIN + 1;
#pragma omp taskloop if (n > 4 * TASK_MIN)
    for (int64_t p = 0; p < pieces; p++) {
        int64_t i0 = n * p / pieces;
        keys_any(&g, canopy_point(pts, i0), pts.stride, n * (p + 1) / pieces - i0, i0, w + i0, d);
    }
    sort_words(w, w + n, n, KEY_BITS, leaf_size);
#pragma omp taskloop if (n > 4 * TASK_MIN)
    for (int64_t p = 0; p < pieces; p++) {
        int64_t i0 = n * p / pieces;
        gather_any(pts.data, pts.stride, NULL, w + i0, n * (p + 1) / pieces - i0, rows + i0 * d,
                   perm + i0, d);
    }
    curve_node(&J, 0);
    return J.failed;
}

canopy_status canopy_tree_build_kd_curve(canopy_points pts, const canopy_tree_options *opt,
                                         canopy_tree **out) {
    *out = NULL;
    if (opt->kind != CANOPY_TREE_KD)
        return canopy_fail(CANOPY_ERR_INVALID, "kd curve tree: kind %s is not kd",
                           canopy_tree_kind_name(opt->kind));
    if (pts.d < 1 || pts.d > 3)
        return canopy_fail(CANOPY_ERR_INVALID, "kd curve tree: dimension %d is not 1, 2 or 3",
                           (int)pts.d);
    canopy_tree_spec spec;
    memset(&spec, 0, sizeof spec);
    canopy_status s = canopy_tree_spec_kd(pts.d, &spec);
    if (s) return s;
    spec.build_all = kd_curve_all;
    canopy_tree_options o = *opt;
    if (o.leaf_size <= 0) o.leaf_size = CANOPY_KD_CURVE_LEAF;
    return canopy_tree_build_generic(pts, &spec, &o, out);
}
