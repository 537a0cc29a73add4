/* SPDX-License-Identifier: MIT */
/* Query schedules: the order in which queries are handed to threads. Neighbouring
 * queries that traverse alike share cache lines (CPU) and warps (GPU). */
#include "traverse/run.h"

#include "canopy/traverse_geom.h"

#include <math.h>
#include <omp.h>
#include <pthread.h>
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

/* Digits of the radix sort: 11 bits make 6 passes of a 62-bit curve key instead of 8,
 * and 2,048 counters (16 KB a thread) still sit in L1. */
enum { RADIX_BITS = 11, RADIX = 1 << RADIX_BITS };

/* Records per thread below which the sort runs on one: a pass over a few thousand
 * records costs microseconds, a team's barriers about as much. */
#define SORT_PER_THREAD 16384

static inline size_t digit(uint64_t key, int shift) {
    return (size_t)(key >> shift) & (RADIX - 1);
}

/* One thread: the counts of every pass from one read of the records, then a scatter per
 * pass whose digit is not the same in all records. */
static void sort_one(canopy_keyed *a, canopy_keyed *tmp, int64_t n, int passes, int64_t *count) {
    for (int64_t i = 0; i < n; i++)
        for (int p = 0; p < passes; p++) count[p * RADIX + digit(a[i].key, p * RADIX_BITS)]++;
    canopy_keyed *src = a, *dst = tmp, *t;
    for (int p = 0; p < passes; p++) {
        int64_t *c = count + p * RADIX, sum = 0;
        int shift = p * RADIX_BITS;
        if (c[digit(src[0].key, shift)] == n) continue; /* one digit value */
        for (int b = 0; b < RADIX; b++) {
            int64_t k = c[b];
            c[b] = sum;
            sum += k;
        }
        for (int64_t i = 0; i < n; i++) dst[c[digit(src[i].key, shift)]++] = src[i];
        t = src, src = dst, dst = t;
    }
    if (src != a) memcpy(a, src, sizeof *a * (size_t)n);
}

/* A team: each thread counts and then scatters its own contiguous share of the records,
 * to offsets that put the shares of one digit in thread order, so the sort stays stable.
 * count has room for threads * RADIX counters. */
static void sort_team(canopy_keyed *a, canopy_keyed *tmp, int64_t n, int passes, int threads,
                      int64_t *count) {
    canopy_keyed *src = a, *dst = tmp;
    int skip = 0;
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t i0 = n * t / nt, i1 = n * (t + 1) / nt;
        int64_t *c = count + (size_t)t * RADIX;
        for (int p = 0; p < passes; p++) {
            int shift = p * RADIX_BITS;
            memset(c, 0, sizeof(int64_t) * RADIX);
            for (int64_t i = i0; i < i1; i++) c[digit(src[i].key, shift)]++;
#pragma omp barrier
#pragma omp single
            {
                size_t d0 = digit(src[0].key, shift);
                int64_t same = 0, sum = 0;
                for (int u = 0; u < nt; u++) same += count[(size_t)u * RADIX + d0];
                skip = same == n; /* one digit value */
                /* exclusive offsets, digit-major then thread */
                for (int b = 0; b < RADIX; b++)
                    for (int u = 0; u < nt; u++) {
                        int64_t k = count[(size_t)u * RADIX + b];
                        count[(size_t)u * RADIX + b] = sum;
                        sum += k;
                    }
            } /* implied barrier */
            if (!skip)
                for (int64_t i = i0; i < i1; i++) dst[c[digit(src[i].key, shift)]++] = src[i];
#pragma omp barrier
#pragma omp single
            if (!skip) {
                canopy_keyed *sw = src;
                src = dst;
                dst = sw;
            } /* implied barrier */
        }
    }
    if (src != a) memcpy(a, src, sizeof *a * (size_t)n);
}

canopy_status canopy_sort_keyed(canopy_keyed *a, int64_t n) {
    if (n < 2) return CANOPY_OK;
    uint64_t any = 0;
    for (int64_t i = 0; i < n; i++) any |= a[i].key;
    int passes = 0;
    while (passes * RADIX_BITS < 64 && (any >> (passes * RADIX_BITS))) passes++;
    if (passes == 0) return CANOPY_OK;
    int64_t most = n / SORT_PER_THREAD;
    int threads = canopy_threads() < most ? canopy_threads() : most > 1 ? (int)most : 1;
    canopy_keyed *tmp;
    int64_t *count;
    canopy_status s = canopy_alloc((void **)&tmp, (size_t)n, sizeof *tmp);
    if (s) return s;
    if ((s = canopy_calloc((void **)&count, (size_t)(threads > passes ? threads : passes),
                           sizeof(int64_t) * RADIX))) {
        canopy_free(tmp);
        return s;
    }
    if (threads > 1)
        sort_team(a, tmp, n, passes, threads, count);
    else
        sort_one(a, tmp, n, passes, count);
    canopy_free(count);
    canopy_free(tmp);
    return CANOPY_OK;
}

enum { CURVE_MAX_DIMS = 63 };

/* 3-D Hilbert keys by a state table, equal to canopy_hilbert_key's (tests/test_variants.c).
 * Skilling's transform at a level reflects or exchanges only the bits below it, alike at
 * every lower level, so what the levels above did is one signed permutation of the axes;
 * with the parity of the Gray code's running correction, 96 states. Two levels a lookup
 * (a 12 KB table) take ~4x less time than the bit loop (~180 ns a key on the 2-core AVX2
 * box), the largest part of cutting gravity's domains. Entries: next state << 6, digits. */
enum { H3_STATES = 96 };
static uint16_t h3_one[H3_STATES * 8], h3_two[H3_STATES * 64];
static pthread_once_t h3_once = PTHREAD_ONCE_INIT;
static const int8_t h3_perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                      {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* State: the permutation (the transformed axis j reads raw axis perm[j]), the flips of
 * the transformed axes and the parity; oct: the raw bits of one level, axis 0 on top. */
static int h3_step(int state, int oct, int *digits) {
    int tpar = state & 1, flips = state >> 1 & 7, perm[3], flip[3], b[3];
    for (int j = 0; j < 3; j++) {
        perm[j] = h3_perms[state >> 4][j];
        flip[j] = flips >> (2 - j) & 1;
    }
    for (int j = 0; j < 3; j++) b[j] = (oct >> (2 - perm[j]) & 1) ^ flip[j];
    for (int i = 0; i < 3; i++) {
        if (b[i]) { /* reflect the bits below on axis 0 */
            flip[0] ^= 1;
        } else { /* exchange axes 0 and i below */
            int t = perm[0];
            perm[0] = perm[i], perm[i] = t;
            t = flip[0], flip[0] = flip[i], flip[i] = t;
        }
    }
    int g0 = b[0], g1 = b[1] ^ g0, g2 = b[2] ^ g1; /* the Gray code */
    *digits = (g0 ^ tpar) << 2 | (g1 ^ tpar) << 1 | (g2 ^ tpar);
    int p = 0;
    while (h3_perms[p][0] != perm[0] || h3_perms[p][1] != perm[1]) p++;
    return p << 4 | (flip[0] << 2 | flip[1] << 1 | flip[2]) << 1 | (tpar ^ g2);
}

static void h3_init(void) {
    for (int s = 0; s < H3_STATES; s++)
        for (int o = 0; o < 64; o++) {
            int d1, d2, s1 = h3_step(s, o >> 3, &d1), s2 = h3_step(s1, o & 7, &d2);
            h3_two[s * 64 + o] = (uint16_t)(s2 << 6 | d1 << 3 | d2);
            if (o < 8) h3_one[s * 8 + o] = (uint16_t)(h3_step(s, o, &d1) << 6 | d1);
        }
}

/* The levels' raw octants are the Morton key's 3-bit groups, top first. */
static inline uint64_t hilbert3_key(const uint64_t *x, int32_t bits) {
    uint64_t m = canopy_morton_key(x, 3, bits), key = 0;
    uint32_t s = 0, e;
    int32_t level = bits;
    if (level & 1) {
        level--;
        e = h3_one[s * 8 + ((m >> (3 * level)) & 7)];
        key = e & 7, s = e >> 6;
    }
    while (level > 0) {
        level -= 2;
        e = h3_two[s * 64 + ((m >> (3 * level)) & 63)];
        key = key << 6 | (e & 63), s = e >> 6;
    }
    return key;
}

int32_t canopy_curve_bits(int32_t d) {
    return 63 / (d < CURVE_MAX_DIMS ? d : CURVE_MAX_DIMS);
}

void canopy_curve_keys(canopy_schedule s, canopy_points pts, const float *lo, const float *hi,
                       canopy_keyed *k) {
    canopy_curve_keys_bits(s, pts, lo, hi, canopy_curve_bits(pts.d), k);
}

void canopy_curve_keys_bits(canopy_schedule s, canopy_points pts, const float *lo, const float *hi,
                            int32_t bits, canopy_keyed *k) {
    int64_t n = pts.n;
    int32_t d = pts.d < CURVE_MAX_DIMS ? pts.d : CURVE_MAX_DIMS;
    double scale[CURVE_MAX_DIMS];
    for (int32_t j = 0; j < d; j++)
        scale[j] = hi[j] > lo[j] ? ldexp(1.0, bits) / ((double)hi[j] - (double)lo[j]) : 0.0;
    uint64_t cells = (uint64_t)1 << bits;
    int threads = canopy_threads_for((double)n * d), table = s == CANOPY_SCHEDULE_HILBERT && d == 3;
    if (table) pthread_once(&h3_once, h3_init);
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t i = 0; i < n; i++) {
        uint64_t x[CURVE_MAX_DIMS];
        const float *p = canopy_point(pts, i);
        for (int32_t j = 0; j < d; j++) {
            double c = ((double)p[j] - (double)lo[j]) * scale[j];
            /* the max lands on 2^bits; points outside the box clamp to its faces */
            x[j] = c >= (double)cells ? cells - 1 : c > 0.0 ? (uint64_t)c : 0;
        }
        k[i].key = table                          ? hilbert3_key(x, bits)
                   : s == CANOPY_SCHEDULE_HILBERT ? canopy_hilbert_key(x, d, bits)
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
