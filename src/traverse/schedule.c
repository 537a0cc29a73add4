/* SPDX-License-Identifier: MIT */
/* Query schedules: the order in which queries are handed to threads. Neighbouring
 * queries that traverse alike share cache lines (CPU) and warps (GPU). */
#include "traverse/run.h"

#include "canopy/traverse_geom.h"

#include <math.h>
#include <string.h>

/* Descends to the leaf a guided search would reach first, so that queries are
 * ranked by the reference tree's own depth-first order: vp by its own split rule
 * (inside when dist <= mu), every other kind to the child with the smallest
 * distance bound, ties to the first, as knn_order decides. */
static int32_t locate_leaf(const canopy_tree_view *t, const float *q) {
    int32_t node = 0;
    for (;;) {
        const canopy_node *h = canopy_tv_node(t, node);
        if (h->child < 0) return node;
        if (t->kind == CANOPY_TREE_VP) {
            const float *g = canopy_tv_geom(t, node);
            node = h->child + (canopy_dist2(q, g, t->d) > g[t->d] * g[t->d]);
            continue;
        }
        int32_t best = h->child;
        float best_d = canopy_node_min_dist2(t, best, q);
        for (int32_t c = 1; c < h->nchild; c++) {
            float dd = canopy_node_min_dist2(t, h->child + c, q);
            if (dd < best_d) {
                best_d = dd;
                best = h->child + c;
            }
        }
        node = best;
    }
}

canopy_status canopy_sort_keyed(canopy_keyed *a, int64_t n) {
    uint64_t any = 0;
    for (int64_t i = 0; i < n; i++) any |= a[i].key;
    canopy_keyed *tmp;
    canopy_status s = canopy_alloc((void **)&tmp, (size_t)(n > 0 ? n : 1), sizeof *tmp);
    if (s) return s;
    canopy_keyed *src = a, *dst = tmp;
    for (int shift = 0; shift < 64 && (any >> shift); shift += 8) {
        int64_t start[257] = {0};
        for (int64_t i = 0; i < n; i++) start[((src[i].key >> shift) & 255) + 1]++;
        if (start[((src[0].key >> shift) & 255) + 1] == n) continue; /* one digit value */
        for (int b = 0; b < 256; b++) start[b + 1] += start[b];
        for (int64_t i = 0; i < n; i++) dst[start[(src[i].key >> shift) & 255]++] = src[i];
        canopy_keyed *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, sizeof *a * (size_t)n);
    canopy_free(tmp);
    return CANOPY_OK;
}

enum { CURVE_MAX_DIMS = 63 };

int32_t canopy_curve_bits(int32_t d) {
    return 63 / (d < CURVE_MAX_DIMS ? d : CURVE_MAX_DIMS);
}

void canopy_curve_keys(canopy_schedule s, canopy_points pts, const float *lo, const float *hi,
                       canopy_keyed *k) {
    int64_t n = pts.n;
    int32_t d = pts.d < CURVE_MAX_DIMS ? pts.d : CURVE_MAX_DIMS;
    int32_t bits = canopy_curve_bits(pts.d);
    double scale[CURVE_MAX_DIMS];
    for (int32_t j = 0; j < d; j++)
        scale[j] = hi[j] > lo[j] ? ldexp(1.0, bits) / ((double)hi[j] - (double)lo[j]) : 0.0;
    uint64_t cells = (uint64_t)1 << bits;
    int threads = canopy_threads_for((double)n * d);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; i++) {
        uint64_t x[CURVE_MAX_DIMS];
        const float *p = canopy_point(pts, i);
        for (int32_t j = 0; j < d; j++) {
            double c = ((double)p[j] - (double)lo[j]) * scale[j];
            /* the max lands on 2^bits; points outside the box clamp to its faces */
            x[j] = c >= (double)cells ? cells - 1 : c > 0.0 ? (uint64_t)c : 0;
        }
        k[i].key = s == CANOPY_SCHEDULE_HILBERT ? canopy_hilbert_key(x, d, bits)
                                                : canopy_morton_key(x, d, bits);
        k[i].idx = i;
    }
}

/* Curve keys over the queries' own bounding box. */
static void curve_keys(canopy_schedule s, canopy_points queries, canopy_keyed *k) {
    int32_t d = queries.d < CURVE_MAX_DIMS ? queries.d : CURVE_MAX_DIMS;
    float lo[CURVE_MAX_DIMS], hi[CURVE_MAX_DIMS];
    for (int32_t j = 0; j < d; j++) {
        float mn = canopy_point(queries, 0)[j], mx = mn;
        for (int64_t i = 1; i < queries.n; i++) {
            float v = canopy_point(queries, i)[j];
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        lo[j] = mn;
        hi[j] = mx;
    }
    canopy_curve_keys(s, queries, lo, hi, k);
}

canopy_status canopy_schedule_queries(canopy_schedule s, canopy_points queries,
                                      const canopy_tree_view *t, int64_t *order) {
    int64_t nq = queries.n;
    if (s == CANOPY_SCHEDULE_NONE) {
        for (int64_t i = 0; i < nq; i++) order[i] = i;
        return CANOPY_OK;
    }
    if (s != CANOPY_SCHEDULE_TREE && s != CANOPY_SCHEDULE_MORTON && s != CANOPY_SCHEDULE_HILBERT)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "schedule %s is not a spatial order: the traversal driver computes "
                           "it (hybrid profiles the traversal, auto samples it)",
                           canopy_schedule_name(s));
    if (nq == 0) return CANOPY_OK;
    canopy_keyed *k;
    canopy_status st = canopy_alloc((void **)&k, (size_t)nq, sizeof *k);
    if (st) return st;
    if (s == CANOPY_SCHEDULE_TREE) {
        int threads = canopy_threads_for((double)nq * t->depth);
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t i = 0; i < nq; i++) {
            k[i].key = (uint64_t)locate_leaf(t, canopy_point(queries, i));
            k[i].idx = i;
        }
    } else {
        curve_keys(s, queries, k);
    }
    st = canopy_sort_keyed(k, nq);
    if (!st)
        for (int64_t i = 0; i < nq; i++) order[i] = k[i].idx;
    canopy_free(k);
    return st;
}
