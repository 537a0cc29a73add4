/* SPDX-License-Identifier: MIT */
/* The leaf-pair kernel of pair counts, one body for every lane width: each point of
 * leaf a against SIMT_W points of leaf b at a time (b's coordinates from the SoA
 * copy, so a vector load per dimension), distances exactly as canopy_paircount_brute
 * computes them (|x - y|, minimum image, squares summed in dimension order, no FMA:
 * C11 mode). Unweighted with up to PCP_CUM_MAX bins: per lane, the number of pairs
 * below each edge, one compare and one subtract per edge and vector, no scalar add
 * (bin b is the difference of two edges' counts). Otherwise the bin of the lanes in
 * range: up to SIMT_W bins by a binary search over the edges held in a register, more
 * from the bin table (one gather) and a count of the cell's few edges <= d2 (a gather
 * each) or a binary search among its bins (a gather per step, while any lane is
 * unresolved), and a scalar add per counted pair; with many bins, by formula (pcp_direct_pos,
 * no load outside a small table except near an edge) into uint8 counters when
 * unweighted.
 *
 * Include once per width's translation unit with SIMT_W defined and canopy/simt.h
 * included; PCP_LEAF_NAME names the kernel. */
#ifndef PCP_LEAF_NAME
#error "define PCP_LEAF_NAME before including paircount/pair_leaf.h"
#endif

#include "paircount/pair_count.h"

void PCP_LEAF_NAME(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                   const canopy_tree_view *tb, int32_t b, int sym);

/* Unweighted pairs' bins wait in a buffer, so that the adds run as one tight loop
 * (consecutive ones into different histogram copies) rather than lane by lane. */
enum { PCP_LEAF_BUF = 1024 };

static inline int32_t pcp_leaf_flush(const pcp_ctx *c, double *hist, const int32_t *buf, int32_t n,
                                     double w) {
    const int32_t mask = c->copies - 1;
    const int64_t nbins = c->nbins;
    for (int32_t i = 0; i < n; i++) hist[(i & mask) * nbins + buf[i]] += w;
    return 0;
}

/* Weighted pairs' bins and weight products, added a buffer at a time. */
static inline int32_t pcp_leaf_flush_w(double *hist, const int32_t *buf, const double *w,
                                       int32_t n) {
    for (int32_t i = 0; i < n; i++) hist[buf[i]] += w[i];
    return 0;
}

/* Few bins: the number of inner edges <= d2 by a branchless binary search over the
 * register, log2(SIMT_W) permutes and no memory access. */
static inline simt_int pcp_bins_reg(simt_float inner, simt_float d2) {
    simt_int pos = simt_splat(0);
    for (int32_t step = SIMT_W / 2; step >= 1; step /= 2) {
        simt_int cand = pos + step;
        pos = simt_blend_i(simt_shfl_f(inner, cand - 1) <= d2, cand, pos);
    }
    return pos;
}

/* More bins: the lane's table cell (one gather, two when it holds an edge), then
 * the last edge <= d2 among the cell's bins. Lanes outside `in` get 0. */
static inline simt_int pcp_bins_table(const pcp_ctx *c, simt_float d2, simt_mask in) {
    simt_mask far = in & (d2 >= c->split2); /* the others are in bin 0 */
    simt_int cell =
        simt_blend_i(far, ((simt_int)d2 - (int32_t)c->tab_base) >> c->tab_shift, simt_splat(0));
    simt_int t = simt_gather_i(c->tab, cell, far), lo = t >> 1, hi = lo;
    if (c->scan >= 0) {
        simt_int b = lo;
        for (int32_t m = 1; m <= c->scan; m++) b -= far & (simt_gather_f(c->e2, lo + m, far) <= d2);
        return b;
    }
    simt_mask wide = far & ((t & 1) != 0);
    if (simt_any(wide)) hi = simt_blend_i(wide, simt_gather_i(c->tab + 1, cell, wide) >> 1, lo);
    simt_mask open = wide & (lo < hi);
    while (simt_any(open)) {
        simt_int mid = (lo + hi + 1) >> 1;
        simt_mask le = simt_gather_f(c->e2, mid, open) <= d2;
        lo = simt_blend_i(open & le, mid, lo);
        hi = simt_blend_i(open & ~le, mid - 1, hi);
        open = open & (lo < hi);
    }
    return lo;
}

/* pcp_direct_pos lane by lane (the same float operations) for the lanes `far` (d2 >=
 * split2): t as *w + *f, *w unclamped. */
static inline void pcp_direct_t(const pcp_ctx *c, simt_float d2, simt_mask far, simt_int *w,
                                simt_float *f) {
    simt_int u = (simt_int)d2;
    /* other lanes may hold any bits (negative as int): they subtract nothing */
    simt_int k = (simt_blend_i(far, u, simt_splat((int32_t)c->dbase)) - (int32_t)c->dbase) >>
                 c->dshift;
    simt_float xk = (simt_float)(u & (int32_t) ~((1u << c->dshift) - 1));
    xk = simt_blend_f(far, xk, simt_splat_f(1.0f));
    simt_float r = (d2 - xk) / xk, g, s = simt_splat_f(c->dk);
    if (c->dlog) {
        g = r * (1.0f + r * (-0.5f + r * (1.0f / 3.0f)));
    } else {
        g = r * (0.5f + r * (-0.125f + r * 0.0625f));
        s = s * simt_sqrt_f(xk);
    }
    simt_int p = simt_gather_i(c->dpos, k, far);
    simt_float t = __builtin_convertvector(p & ((1 << PCP_DIRECT_FRAC) - 1), simt_float) *
                       (1.0f / (1 << PCP_DIRECT_FRAC)) +
                   s * g;
    t = simt_blend_f(far, t, simt_splat_f(0.0f));
    simt_int v = __builtin_convertvector(t, simt_int);
    *f = t - __builtin_convertvector(v, simt_float);
    *w = (p >> PCP_DIRECT_FRAC) + v;
}

/* pcp_direct_t's whole part clamped to a bin; *unsure where the fraction is within the
 * error of a whole number (or was clamped), and then *edge the nearer edge, which
 * decides: the bin is edge - (d2 < e2[edge]) (bin_direct keeps the error below 1/4). */
static inline simt_int pcp_direct_lanes(const pcp_ctx *c, simt_float d2, simt_mask far,
                                        simt_mask *unsure, simt_int *edge) {
    simt_int b;
    simt_float f;
    pcp_direct_t(c, d2, far, &b, &f);
    simt_mask inside = (b >= 0) & (b < c->nbins);
    b = simt_blend_i(inside, b, simt_blend_i(b < 0, simt_splat(0), simt_splat(c->nbins - 1)));
    *unsure = far & ~(inside & (f > c->dlo) & (f < c->dhi));
    *edge = b - (f > 0.5f);
    return b;
}

/* The bins of the lanes `in` by pcp_direct_lanes, the uncertain ones resolved here
 * (one gather). Lanes outside `in` get 0. */
static inline simt_int pcp_bins_direct(const pcp_ctx *c, simt_float d2, simt_mask in) {
    simt_mask far = in & (d2 >= c->split2), unsure; /* the others are in bin 0 */
    simt_int edge, b = pcp_direct_lanes(c, d2, far, &unsure, &edge);
    for (uint32_t m = simt_bits(unsure); m; m &= m - 1) { /* a few lanes: edges made anew */
        int l = __builtin_ctz(m);
        b[l] = edge[l] - (d2[l] < pcp_edge2(c->edges, edge[l]));
    }
    return simt_blend_i(far, b, simt_splat(0));
}

/* The squared distances of point p to the points k..k+SIMT_W of a leaf's SoA run yb
 * (c->soa_stride floats a dimension). */
static inline simt_float pcp_d2(const pcp_ctx *c, const float *p, int32_t d, const float *yb,
                                int32_t k, float box) {
    simt_float d2 = simt_splat_f(0.0f);
    for (int32_t j = 0; j < d; j++) {
        simt_float y;
        __builtin_memcpy(&y, yb + (int64_t)j * c->soa_stride + k, sizeof y);
        simt_float x = p[j] - y; /* its sign does not change x * x */
        if (box > 0.0f) {
            x = simt_abs_f(x);
            simt_float z = box - x;
            x = simt_blend_f(z < x, z, x);
        }
        d2 += x * x;
    }
    return d2;
}

/* pcp_d2 for d = 3 and no wrap: a point's coordinates broadcast once per row of a
 * leaf pair, then per vector no loop or branch per dimension and the same operations
 * (d2 = 0 + x0 * x0 is x0 * x0; the sign of x does not change x * x). */
typedef struct pcp_row3 {
    simt_float p0, p1, p2;
    const float *y0, *y1, *y2; /* the run's three coordinate arrays */
} pcp_row3;

static inline pcp_row3 pcp_row3_make(const pcp_ctx *c, const float *p, const float *yb) {
    pcp_row3 r = {
        .p0 = simt_splat_f(p[0]),
        .p1 = simt_splat_f(p[1]),
        .p2 = simt_splat_f(p[2]),
        .y0 = yb,
        .y1 = yb + c->soa_stride,
        .y2 = yb + 2 * c->soa_stride,
    };
    return r;
}

static inline __attribute__((always_inline)) simt_float pcp_d2_3(const pcp_row3 *r, int32_t k) {
    simt_float x0, x1, x2;
    __builtin_memcpy(&x0, r->y0 + k, sizeof x0);
    __builtin_memcpy(&x1, r->y1 + k, sizeof x1);
    __builtin_memcpy(&x2, r->y2 + k, sizeof x2);
    x0 = r->p0 - x0;
    x1 = r->p1 - x1;
    x2 = r->p2 - x2;
    simt_float d2 = x0 * x0;
    d2 += x1 * x1;
    d2 += x2 * x2;
    return d2;
}

/* The lanes of points k..k+SIMT_W of leaf run xa (of ta) that may have a pair in range with
 * kd box gb: canopy_pair_box_bounds's lower bound, a point being a box with lo = hi,
 * so exact under rounding (padding lanes, +inf, are never near). */
static inline uint32_t pcp_near(const pcp_ctx *c, const float *xa, int32_t k, const float *gb,
                                int32_t d) {
    simt_float l2 = simt_splat_f(0.0f);
    for (int32_t j = 0; j < d; j++) {
        simt_float x;
        __builtin_memcpy(&x, xa + (int64_t)j * c->soa_stride_a + k, sizeof x);
        simt_float lo = x - gb[d + j], hi = x - gb[j];
        simt_float fa = simt_abs_f(lo), fb = simt_abs_f(hi);
        simt_float l = simt_blend_f(fa < fb, fa, fb);
        l = simt_blend_f((lo <= 0.0f) & (hi >= 0.0f), simt_splat_f(0.0f), l);
        if (c->box > 0.0f) {
            simt_float vmin = c->box - simt_blend_f(fa > fb, fa, fb);
            l = simt_blend_f(vmin < l, vmin, l);
        }
        l2 += l * l;
    }
    return simt_bits(l2 < c->hi2);
}

/* The periodic side for the distances of leaf pair (ga, gb), or 0 where no pair of
 * their points is more than half the side apart along any axis: there the minimum
 * image is the plain difference, bit for bit (x <= box / 2 makes fl(box - x) >= x). */
static inline float pcp_wrap(const pcp_ctx *c, const float *ga, const float *gb, int32_t d) {
    for (int32_t j = 0; c->box > 0.0f && j < d; j++) {
        float lo = fabsf(ga[j] - gb[d + j]), hi = fabsf(ga[d + j] - gb[j]);
        if ((lo > hi ? lo : hi) > 0.5f * c->box) return c->box;
    }
    return 0.0f;
}

/* acc + 1 in the lanes where x < e (one masked add on AVX-512). */
static inline simt_int pcp_count_below(simt_int acc, simt_float x, float e) {
#if defined(SIMT_AVX512)
    __mmask16 m = _mm512_cmp_ps_mask((__m512)x, _mm512_set1_ps(e), _CMP_LT_OQ);
    return (simt_int)_mm512_mask_add_epi32((__m512i)acc, m, (__m512i)acc, _mm512_set1_epi32(1));
#else
    return acc - (x < e);
#endif
}

/* Unweighted, up to PCP_CUM_MAX bins: below[j] counts the lanes' pairs with d2 < e2[m0 +
 * j] (padding lanes are +inf) for the edges m0..m0+K-1 that the leaf pair's distance
 * bounds [mn, mx] do not decide: no pair is below an edge <= mn, every pair is below
 * one > mx (the bounds are exact under rounding), so those need no compare (2M
 * uniform points, 10 log bins to 0.1: 1.6x faster than all 11 edges). K (a
 * constant at each call, so that the K per-lane counters stay in registers) is at
 * least the window's width; its spare counters compare with -inf. Leaf pairs of
 * distinct leaves skip the points of a out of range of b's box. Every vector is
 * counted, with no test for one without a pair in range: that branch mispredicted
 * enough to cost 20 % on uniform points. A counter grows by at most one a vector, so
 * they are added to hist before 2^30 vectors. */
static inline __attribute__((always_inline)) void
pcp_leaf_cum(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
             const canopy_tree_view *tb, int32_t b, int diag, double mult, int32_t m0, int32_t m1,
             const int32_t K) {
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    const float *xa = c->soa_a + c->soa_off_a[a], *yb = c->soa_b + c->soa_off_b[b];
    const float *gb = canopy_tv_geom(tb, b);
    const float box = pcp_wrap(c, canopy_tv_geom(ta, a), gb, ta->d);
    simt_int below[PCP_CUM_MAX + 1];
    float e[PCP_CUM_MAX + 1];
    for (int32_t j = 0; j < K; j++) {
        below[j] = simt_splat(0);
        e[j] = m0 + j < m1 ? c->e2[m0 + j] : -INFINITY;
    }
    const simt_float inf = simt_splat_f(INFINITY);
    const int32_t d = ta->d, na = ha->end - ha->begin, nb = hb->end - hb->begin;
    int64_t vectors = 0, pairs = 0; /* pairs: all counted, each below the edges from m1 */
    for (int32_t i0 = 0; i0 < na; i0 += SIMT_W) {
        uint32_t near = diag ? (uint32_t)((1ull << (na - i0 < SIMT_W ? na - i0 : SIMT_W)) - 1)
                             : pcp_near(c, xa, i0, gb, d);
        for (; near; near &= near - 1) {
            const int32_t i = i0 + __builtin_ctz(near), k0 = diag ? i + 1 : 0;
            const float *p = canopy_tv_point(ta, ha->begin + i);
            if (d == 3 && box == 0.0f) { /* the usual case: no loop or branch per dimension */
                const pcp_row3 row = pcp_row3_make(c, p, yb);
                for (int32_t k = k0; k < nb; k += SIMT_W) {
                    simt_float d2 = pcp_d2_3(&row, k);
                    if (diag) d2 = simt_blend_f(simt_iota() + k < nb, d2, inf);
#pragma GCC unroll 16
                    for (int32_t j = 0; j < K; j++) below[j] = pcp_count_below(below[j], d2, e[j]);
                }
            } else {
                for (int32_t k = k0; k < nb; k += SIMT_W) {
                    simt_float d2 = pcp_d2(c, p, d, yb, k, box);
                    if (diag) d2 = simt_blend_f(simt_iota() + k < nb, d2, inf);
#pragma GCC unroll 16
                    for (int32_t j = 0; j < K; j++) below[j] = pcp_count_below(below[j], d2, e[j]);
                }
            }
            vectors += (nb - k0 + SIMT_W - 1) / SIMT_W;
            pairs += nb - k0;
            if (vectors < (1 << 30) && (near & (near - 1))) continue;
            int64_t at[PCP_CUM_MAX + 2]; /* pairs below edge m */
            for (int32_t m = 0; m <= c->nbins; m++) {
                at[m] = m < m0 ? 0 : m >= m1 ? pairs : 0;
                for (int32_t l = 0; m >= m0 && m < m1 && l < SIMT_W; l++) at[m] += below[m - m0][l];
            }
            for (int32_t m = 0; m < c->nbins; m++) hist[m] += mult * (double)(at[m + 1] - at[m]);
            for (int32_t j = 0; j < K; j++) below[j] = simt_splat(0);
            vectors = pairs = 0;
        }
    }
}

/* Counts n buffered squared distances (in range, as float bits) into the uint8
 * counters: their bins by pcp_direct_lanes on whole vectors, then the adds as tight
 * loops; the uncertain ones (their nearer edge and distance kept) after the others,
 * against their edge made anew (with 10^6 bins, a load of e2 mostly missed the cache). */
static int32_t pcp_small_flush(const pcp_ctx *c, double *hist, const int32_t *bits, int32_t n,
                               double w) {
    int32_t bins[PCP_LEAF_BUF], edge[PCP_LEAF_BUF], ubits[PCP_LEAF_BUF], nb = 0, nu = 0;
    uint8_t *small = (uint8_t *)(void *)(hist + c->nbins);
    for (int32_t j = 0; j < n; j += SIMT_W) {
        simt_int v;
        __builtin_memcpy(&v, bits + j, sizeof v);
        simt_float d2 = (simt_float)v;
        simt_mask in = simt_iota() + j < n, far = in & (d2 >= c->split2), unsure;
        simt_int e, b = simt_blend_i(far, pcp_direct_lanes(c, d2, far, &unsure, &e), simt_splat(0));
        nb += simt_compress_i_padded(bins + nb, b, in & ~unsure);
        /* no branch: a third of the vectors hold an uncertain lane, and the mispredicted
           branch cost more than these two compresses */
        simt_compress_i_padded(ubits + nu, v, unsure);
        nu += simt_compress_i_padded(edge + nu, e, unsure);
    }
    /* every 256th pair of a counter moves to hist; with few bins, consecutive pairs
       go to different copies (runs in one bin do not wait on each other's store) */
    const int64_t mask = c->small - 1, nbins = c->nbins;
    for (int32_t i = 0; i < nb; i++)
        if (!++small[(i & mask) * nbins + bins[i]]) pcp_hist_add(c, hist, bins[i], 256.0 * w);
    for (int32_t i = 0; i < nu; i++) {
        int32_t b = edge[i] - (pcp_float((uint32_t)ubits[i]) < pcp_edge2(c->edges, edge[i]));
        if (!++small[(i & mask) * nbins + b]) pcp_hist_add(c, hist, b, 256.0 * w);
    }
    return 0;
}

/* Unweighted, many bins (c->small): the squared distances in range wait in a buffer for
 * pcp_small_flush (their bins on full vectors); leaf pairs of distinct leaves skip the
 * points of a out of range of b's box (as pcp_leaf_cum). */
static void pcp_leaf_small(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                           const canopy_tree_view *tb, int32_t b, int diag, double mult) {
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    const float *xa = c->soa_a + c->soa_off_a[a], *yb = c->soa_b + c->soa_off_b[b];
    const float *gb = canopy_tv_geom(tb, b);
    const float box = pcp_wrap(c, canopy_tv_geom(ta, a), gb, ta->d);
    const simt_float inf = simt_splat_f(INFINITY);
    const float lo2 = c->lo2, hi2 = c->hi2;
    const int32_t d = ta->d, na = ha->end - ha->begin, nb = hb->end - hb->begin;
    int32_t buf[PCP_LEAF_BUF + SIMT_W], n = 0;
    for (int32_t i0 = 0; i0 < na; i0 += SIMT_W) {
        uint32_t near = diag ? (uint32_t)((1ull << (na - i0 < SIMT_W ? na - i0 : SIMT_W)) - 1)
                             : pcp_near(c, xa, i0, gb, d);
        for (; near; near &= near - 1) {
            const int32_t i = i0 + __builtin_ctz(near), k0 = diag ? i + 1 : 0;
            const float *p = canopy_tv_point(ta, ha->begin + i);
            if (d == 3 && box == 0.0f) { /* as pcp_leaf_cum */
                const pcp_row3 row = pcp_row3_make(c, p, yb);
                for (int32_t k = k0; k < nb; k += SIMT_W) {
                    simt_float d2 = pcp_d2_3(&row, k);
                    if (diag) d2 = simt_blend_f(simt_iota() + k < nb, d2, inf);
                    n += simt_compress_i_padded(buf + n, (simt_int)d2, (d2 >= lo2) & (d2 < hi2));
                    if (n > PCP_LEAF_BUF - SIMT_W) n = pcp_small_flush(c, hist, buf, n, mult);
                }
                continue;
            }
            for (int32_t k = k0; k < nb; k += SIMT_W) {
                simt_float d2 = pcp_d2(c, p, d, yb, k, box);
                if (diag) d2 = simt_blend_f(simt_iota() + k < nb, d2, inf);
                n += simt_compress_i_padded(buf + n, (simt_int)d2, (d2 >= lo2) & (d2 < hi2));
                if (n > PCP_LEAF_BUF - SIMT_W) n = pcp_small_flush(c, hist, buf, n, mult);
            }
        }
    }
    pcp_small_flush(c, hist, buf, n, mult);
}

void PCP_LEAF_NAME(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                   const canopy_tree_view *tb, int32_t b, int sym) {
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    const int32_t d = ta->d, end = hb->end - hb->begin;
    const int diag = sym && a == b;
    /* symmetric walks: each unordered pair is met once and stands for two */
    const double mult = sym ? 2.0 : 1.0;
    if (!c->pa && c->nbins <= PCP_CUM_MAX) {
        /* the edges m0..m1-1 that the leaf pair's bounds leave open */
        float mn, mx;
        canopy_pair_box_bounds(canopy_tv_geom(ta, a), canopy_tv_geom(tb, b), d, c->box, &mn, &mx);
        int32_t m0 = 0, m1 = c->nbins + 1;
        while (m0 < m1 && c->e2[m0] <= mn) m0++;
        while (m1 > m0 && c->e2[m1 - 1] > mx) m1--;
        switch (m1 - m0) {
        case 0:
        case 1:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 1);
            break;
        case 2:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 2);
            break;
        case 3:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 3);
            break;
        case 4:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 4);
            break;
        case 5:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 5);
            break;
        case 6:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 6);
            break;
        case 7:
        case 8:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 8);
            break;
        case 9:
        case 10:
        case 11:
        case 12:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 12);
            break;
        default:
            pcp_leaf_cum(c, hist, ta, a, tb, b, diag, mult, m0, m1, 16);
        }
        return;
    }
    if (c->small) {
        pcp_leaf_small(c, hist, ta, a, tb, b, diag, mult);
        return;
    }
    const float *yb = c->soa_b + c->soa_off_b[b];
    const float box = pcp_wrap(c, canopy_tv_geom(ta, a), canopy_tv_geom(tb, b), d);
    const float lo2 = c->lo2, hi2 = c->hi2;
    int32_t buf[PCP_LEAF_BUF], nbuf = 0;
    double wbuf[PCP_LEAF_BUF]; /* weighted, many bins: what buf's pairs add */
    /* up to SIMT_W bins: the inner edges e2[1..nbins) in one register, +inf after */
    const int few = c->nbins <= SIMT_W;
    simt_float inner = simt_splat_f(INFINITY);
    for (int32_t l = 0; few && l + 1 < c->nbins; l++) inner[l] = c->e2[l + 1];
    for (int32_t i = ha->begin; i < ha->end; i++) {
        const float *p = canopy_tv_point(ta, i);
        const double wi = c->pa ? mult * (double)ta->weights[i] : mult;
        for (int32_t k = diag ? i - ha->begin + 1 : 0; k < end; k += SIMT_W) {
            simt_float d2 = pcp_d2(c, p, d, yb, k, box);
            simt_mask in = (simt_iota() + k < end) & (d2 >= lo2) & (d2 < hi2);
            if (!simt_any(in)) continue;
            simt_int lo = few         ? pcp_bins_reg(inner, d2)
                          : c->direct ? pcp_bins_direct(c, d2, in)
                                      : pcp_bins_table(c, d2, in);
            if (!c->pa) { /* counts: the bins of this run of pairs, added below */
                nbuf += simt_compress_i_padded(buf + nbuf, lo, in);
                if (nbuf > PCP_LEAF_BUF - SIMT_W) nbuf = pcp_leaf_flush(c, hist, buf, nbuf, mult);
                continue;
            }
            if (c->direct) { /* many bins: the adds wait, their lines fetched meanwhile */
                for (uint32_t m = simt_bits(in); m; m &= m - 1, nbuf++) {
                    int l = __builtin_ctz(m);
                    buf[nbuf] = lo[l];
                    wbuf[nbuf] = wi * (double)tb->weights[hb->begin + k + l];
                    __builtin_prefetch(hist + lo[l], 1);
                }
                if (nbuf > PCP_LEAF_BUF - SIMT_W) nbuf = pcp_leaf_flush_w(hist, buf, wbuf, nbuf);
                continue;
            }
            for (uint32_t m = simt_bits(in); m; m &= m - 1) {
                int l = __builtin_ctz(m);
                double *h = hist + (int64_t)(l & (c->copies - 1)) * c->nbins;
                h[lo[l]] += wi * (double)tb->weights[hb->begin + k + l];
            }
        }
    }
    if (c->pa)
        pcp_leaf_flush_w(hist, buf, wbuf, nbuf);
    else
        pcp_leaf_flush(c, hist, buf, nbuf, mult);
}
