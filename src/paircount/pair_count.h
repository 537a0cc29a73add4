/* SPDX-License-Identifier: MIT */
/* Pair counts on the pair traversal (canopy/pair.h): the descriptor, in the common
 * subset of C and CUDA, shared by paircount.c (CPU engines), the per-ISA leaf
 * kernels (pair_leaf.h) and paircount_gpu.cu.
 *
 * A node pair whose kd boxes are farther apart than the last edge, or nearer than
 * the first, is pruned; one whose distance interval lies inside one bin is counted
 * whole (point counts, or weight sums from prefix sums in tree order); a leaf pair
 * is counted point pair by point pair. A distance's bin comes from a table over the
 * bits of its float32 square (monotone for non-negative floats) that narrows it to a
 * few bins, then a binary search among those (on the CPU, a branchless count of the
 * cell's few edges where each cell holds at most PCP_SCAN_MAX): a cost that grows with
 * log(bins per table cell), not with the number of bins. On the CPU from 16 bins
 * (unweighted) or PCP_DIRECT_MIN_BINS (weighted), by formula instead (pcp_direct_pos),
 * whose loads are of a table that stays in cache. Symmetric walks count a pair of distinct
 * nodes twice and the pairs i < j inside one leaf twice (every ordered pair i != j,
 * as canopy_paircount promises). */
#ifndef CANOPY_PAIRCOUNT_PAIR_COUNT_H
#define CANOPY_PAIRCOUNT_PAIR_COUNT_H

#include "canopy/pair.h"

#include <math.h>
#include <string.h>

/* Cells of the bin table: about 8 per bin, within these limits (the table stays in
 * cache for few bins and at 4 MiB for 10^6). */
enum { PCP_TABLE_MIN_CELLS = 1 << 10, PCP_TABLE_MAX_CELLS = 1 << 20 };
/* Histogram copies per thread for up to PCP_COPIES_MAX_BINS bins: consecutive lanes
 * add to different copies, so runs of pairs in one bin do not wait on each other's
 * store. */
enum { PCP_COPIES = 8, PCP_COPIES_MAX_BINS = 512 };

/* CPU: where no table cell holds more than PCP_SCAN_MAX edges (squared edges padded
 * with that many +inf), a distance's bin is its cell's first bin plus the number of
 * the next `scan` edges <= it: no branch, independent loads. */
enum { PCP_SCAN_MAX = 4 };
/* +inf entries after e2[nbins]: PCP_SCAN_MAX, and whole vectors from any edge */
enum { PCP_E2_PAD = 16 };

/* CPU: unweighted counts into at most this many bins use per-lane counters of the
 * pairs below each edge (pair_leaf.h) instead of a bin and a scalar add per pair. */
enum { PCP_CUM_MAX = 15 };

/* CPU, many bins: a distance's bin by formula (pcp_direct_pos) rather than the table:
 * its position t in bins is the value of a cell table over the float bits of d2 (2^10
 * or more cells an octave) plus a short series in the offset r inside the cell, so
 * every load is of a table of at most PCP_DIRECT_MAX_CELLS cells, which stays in
 * cache. Where the fraction of t lies farther than the measured error from a whole
 * number the bin is certain; otherwise the nearer edge decides. */
/* From PCP_DIRECT_MIN_BINS (weighted) or PCP_CUM_MAX + 1 bins (unweighted). */
enum {
    PCP_DIRECT_MIN_BINS = PCP_COPIES_MAX_BINS + 1,
    PCP_DIRECT_SHIFT = 13,
    PCP_DIRECT_MAX_CELLS = 1 << 18
};
enum { PCP_DIRECT_FRAC = 11 }; /* |t| < 2^20 (nbins <= 10^6) in 32 bits */

/* Log edges rmin * (rmax / rmin)^(b / nbins) as rmin * hi[b >> 10] * lo[b & 1023],
 * each factor an exp of its own: 2 exps per 1024 edges rather than one each (10^6
 * exps took 6 ms, as long as 20k points' 10-bin count), within a few ulps of the
 * power (strictly increasing: neighbours differ by far more), and for b < 1024 the
 * one exp as before. Linear: rmin + (rmax - rmin) * b / nbins. CPU (host) code. */
enum { PCP_EDGE_LO_BITS = 10, PCP_EDGE_HI_MAX = 1000000 / (1 << PCP_EDGE_LO_BITS) + 1 };
typedef struct pcp_edges {
    double rmin, rmax;
    int32_t nbins, log_bins;
    double hi[PCP_EDGE_HI_MAX], lo[1 << PCP_EDGE_LO_BITS];
} pcp_edges;

static inline void pcp_edges_init(pcp_edges *g, double rmin, double rmax, int32_t nbins,
                                  int log_bins) {
    g->rmin = rmin;
    g->rmax = rmax;
    g->nbins = nbins;
    g->log_bins = log_bins;
    if (!log_bins) return;
    const double span = log(rmax / rmin);
    for (int32_t i = 0; i < (1 << PCP_EDGE_LO_BITS); i++)
        g->lo[i] = exp(span * ((double)i / nbins));
    for (int32_t j = 0; j <= nbins >> PCP_EDGE_LO_BITS; j++)
        g->hi[j] = j ? exp(span * ((double)((int64_t)j << PCP_EDGE_LO_BITS) / nbins)) : 1.0;
}

/* Edge b (0 <= b <= nbins). */
static inline double pcp_edge(const pcp_edges *g, int32_t b) {
    if (b == 0) return g->rmin;
    if (b == g->nbins) return g->rmax;
    if (g->log_bins)
        return g->rmin * g->hi[b >> PCP_EDGE_LO_BITS] * g->lo[b & ((1 << PCP_EDGE_LO_BITS) - 1)];
    return g->rmin + (g->rmax - g->rmin) * ((double)b / g->nbins);
}

/* Its squared float edge: computed in float64, rounded once (the edge rule). */
static inline float pcp_edge2(const pcp_edges *g, int32_t b) {
    double r = pcp_edge(g, b);
    return (float)(r * r);
}

/* pcp_edge2 of b0 <= b < b1 into out[b - b0], the same bits: the log edges' product
 * rmin * hi[j] made once per 1024 edges (the loop vectorises; 10^6 edges one at a time
 * took 1.75 ms). */
static inline void pcp_edges2_fill(const pcp_edges *g, int32_t b0, int32_t b1, float *out) {
    const int32_t lo_mask = (1 << PCP_EDGE_LO_BITS) - 1;
    for (int32_t b = b0; b < b1;) {
        if (b == 0 || b == g->nbins || !g->log_bins) {
            out[b - b0] = pcp_edge2(g, b);
            b++;
            continue;
        }
        int32_t end = (b | lo_mask) + 1; /* this hi factor's run, and not edge nbins */
        end = end < b1 ? end : b1;
        end = end < g->nbins ? end : g->nbins;
        const double h = g->rmin * g->hi[b >> PCP_EDGE_LO_BITS], *lo = g->lo + (b & lo_mask);
        float *o = out + (b - b0);
        for (int32_t k = 0; k < end - b; k++) {
            double r = h * lo[k];
            o[k] = (float)(r * r);
        }
        b = end;
    }
}

struct pcp_ctx;
/* A leaf-pair kernel (one per ISA on the CPU, pair_leaf.h). */
typedef void (*pcp_leaf_fn)(const struct pcp_ctx *c, double *hist, const canopy_tree_view *ta,
                            int32_t a, const canopy_tree_view *tb, int32_t b, int sym);

typedef struct pcp_ctx {
    const float *e2; /* nbins + 1 squared float edges, strictly increasing (padded with
                        PCP_E2_PAD +inf); NULL on the CPU with direct bins: pcp_e2 */
    int32_t nbins;
    float lo2, hi2;        /* e2[0], e2[nbins] */
    float box;             /* periodic side, 0 = none */
    float split2;          /* e2[1] (hi2 for one bin): below it, bin 0 */
    uint32_t tab_base;     /* bits of split2 */
    int32_t tab_shift;     /* cell k holds the floats whose bits - tab_base >> shift == k */
    const int32_t *tab;    /* per cell (and one past): 2 * the bin of the cell's smallest
                              float, + 1 when the next cell's starts in another bin */
    int64_t tab_cells;     /* entries of tab */
    const double *pa, *pb; /* weighted: prefix sums of tree-order weights (n + 1), else NULL */
    const double *pa2;     /* weighted, symmetric: prefix sums of squared weights */
    /* CPU: ta's and tb's points as d arrays of soa_stride_{a,b} floats, each leaf's
       run starting at soa_off_{a,b}[leaf], padded with +inf to a multiple of 16 */
    const float *soa_a, *soa_b;
    const int64_t *soa_off_a, *soa_off_b;
    int64_t soa_stride_a, soa_stride;
    pcp_leaf_fn leaf;               /* CPU: this machine's leaf kernel */
    int32_t copies;                 /* CPU: histogram copies per thread (1 or PCP_COPIES) */
    double *counts;                 /* merge target, nbins (CPU: NULL with out's sink) */
    struct pcp_out *out;            /* CPU: the merge's sink and state (paircount.c) */
    int32_t scan;                   /* CPU: most edges in one table cell, -1 above PCP_SCAN_MAX */
    /* CPU, many bins (from PCP_CUM_MAX + 1 unweighted, PCP_DIRECT_MIN_BINS weighted):
       bins by pcp_direct_pos; `tab` unused */
    int32_t direct, dlog; /* on; log bins (else linear) */
    uint32_t dbase;       /* bits of split2 with the low dshift bits cleared */
    int32_t dshift;       /* cell k holds the floats whose bits - dbase >> dshift == k */
    const int32_t *dpos;  /* per cell: t at its first float, PCP_DIRECT_FRAC bits fixed point */
    float dk;             /* log: nbins / log(e2 ratio); linear: nbins / (rmax - rmin) */
    float dlo, dhi;       /* the bin is certain when t's fraction is in (dlo, dhi) */
    const pcp_edges *edges; /* CPU, direct: e2[b] = pcp_edge2(edges, b), made without a load
                               from e2 (a cache miss with 10^6 bins) */
    int32_t small;          /* unweighted: copies of uint8 counters after the histogram
                               (PCP_COPIES up to PCP_COPIES_MAX_BINS bins, else 1; each
                               256th pair of a counter moves to the histogram): 1 MB for
                               10^6 bins, in cache; 0: none */
    double mult;          /* what a counted pair adds (2 in symmetric walks) */
    /* GPU: device copies of the trees already made (canopy_paircount_device builds
       them on the device), walked with no upload; NULL: upload the host trees */
    const canopy_tree_view *resident_a, *resident_b;
} pcp_ctx;

CANOPY_HD uint32_t pcp_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

CANOPY_HD float pcp_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* t of d2 >= split2 as *b0 + *f (the PCP_DIRECT enum above; f in [0, 1)). The leaf kernels
 * repeat these float operations lane by lane, so both give the same bits. */
CANOPY_HD void pcp_direct_pos(const pcp_ctx *c, float d2, int32_t *b0, float *f) {
    uint32_t u = pcp_bits(d2), k = (u - c->dbase) >> c->dshift, ux = u & ~((1u << c->dshift) - 1);
    float xk = pcp_float(ux), g, s = c->dk;
    float r = (d2 - xk) / xk;
    if (c->dlog) { /* log(1 + r) */
        g = r * (1.0f + r * (-0.5f + r * (1.0f / 3.0f)));
    } else { /* sqrt(1 + r) - 1, and the slope at xk */
        g = r * (0.5f + r * (-0.125f + r * 0.0625f));
        s = s * sqrtf(xk);
    }
    int32_t p = c->dpos[k];
    float t = (float)(p & ((1 << PCP_DIRECT_FRAC) - 1)) * (1.0f / (1 << PCP_DIRECT_FRAC)) + s * g;
    int32_t w = (int32_t)t;
    *b0 = (p >> PCP_DIRECT_FRAC) + w;
    *f = t - (float)w;
}

/* Squared edge b: from the table, or on the CPU without one (the direct bins of the pair
 * walk make their edges anew: 10^6 of them were 4 MB to fault in and fill). */
CANOPY_HD float pcp_e2(const pcp_ctx *c, int32_t b) {
#if !defined(__CUDA_ARCH__)
    if (!c->e2) return pcp_edge2(c->edges, b);
#endif
    return c->e2[b];
}

/* The bin of d2 in [lo2, hi2): the last edge <= d2. */
CANOPY_HD int32_t pcp_bin(const pcp_ctx *c, float d2) {
    if (d2 < c->split2) return 0;
    if (c->direct) {
        int32_t b;
        float f;
        pcp_direct_pos(c, d2, &b, &f);
        b = b < 0 ? 0 : b >= c->nbins ? c->nbins - 1 : b;
        while (b > 0 && d2 < pcp_e2(c, b)) b--;
        while (b + 1 < c->nbins && d2 >= pcp_e2(c, b + 1)) b++;
        return b;
    }
    uint32_t k = (pcp_bits(d2) - c->tab_base) >> c->tab_shift;
    int32_t lo = c->tab[k] >> 1, hi = c->tab[k] & 1 ? c->tab[k + 1] >> 1 : lo;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) >> 1;
        if (c->e2[mid] <= d2)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

enum { PCP_DESCEND = 0, PCP_PRUNE = 1, PCP_ACCEPT = 2 };

/* What to do with node pair (a, b); on PCP_ACCEPT, *bin and *w say what to add. */
CANOPY_HD int pcp_classify(const pcp_ctx *c, const canopy_tree_view *ta, int32_t a,
                           const canopy_tree_view *tb, int32_t b, int sym, int32_t *bin,
                           double *w) {
    float mn, mx;
    canopy_pair_box_bounds(canopy_tv_geom(ta, a), canopy_tv_geom(tb, b), ta->d, c->box, &mn, &mx);
    if (mx < c->lo2 || mn >= c->hi2) return PCP_PRUNE;
    if (mn < c->lo2 || mx >= c->hi2) return PCP_DESCEND;
    int32_t lo = pcp_bin(c, mn);
    if (!(mx < pcp_e2(c, lo + 1))) return PCP_DESCEND; /* mx in another bin: one load, no search */
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    double na, nb;
    if (c->pa) {
        na = c->pa[ha->end] - c->pa[ha->begin];
        nb = c->pb[hb->end] - c->pb[hb->begin];
    } else {
        na = (double)(ha->end - ha->begin);
        nb = (double)(hb->end - hb->begin);
    }
    if (sym && a == b) /* ordered pairs i != j of one node */
        *w = na * na - (c->pa ? c->pa2[ha->end] - c->pa2[ha->begin] : na);
    else
        *w = (sym ? 2.0 : 1.0) * na * nb;
    *bin = lo;
    return PCP_ACCEPT;
}

/* hist[bin] += w; with c->small, flags the bin's block of PCP_SMALL_BLOCK bins as used
 * (the flags follow the uint8 counters), so that the merge reads only those blocks of
 * the histogram: with 10^6 bins and few pairs, reading all of it faulted in 8 MB. */
enum { PCP_SMALL_BLOCK = 512 };
CANOPY_HD void pcp_hist_add(const pcp_ctx *c, double *hist, int32_t bin, double w) {
    hist[bin] += w;
    if (c->small)
        ((uint8_t *)(hist + c->nbins))[(int64_t)c->small * c->nbins + bin / PCP_SMALL_BLOCK] = 1;
}

/* The CPU descriptor: acc is a histogram of nbins doubles (then with c->small the
 * uint8 counters and the block flags). */
CANOPY_HD int pcp_test(const void *vctx, void *acc, const canopy_tree_view *ta, int32_t a,
                       const canopy_tree_view *tb, int32_t b, int sym) {
    int32_t bin;
    double w;
    int r = pcp_classify((const pcp_ctx *)vctx, ta, a, tb, b, sym, &bin, &w);
    if (r == PCP_ACCEPT) pcp_hist_add((const pcp_ctx *)vctx, (double *)acc, bin, w);
    return r == PCP_DESCEND ? CANOPY_PAIR_DESCEND : CANOPY_PAIR_DONE;
}

/* The GPU runner (paircount_gpu.cu, in the CUDA module). */
#ifdef __cplusplus
extern "C"
#endif
    canopy_status
    canopy_gpu_paircount_pairs(const void *ctx, const canopy_tree_view *ta,
                               const canopy_tree_view *tb, int sym, canopy_pair_counters *cnt,
                               struct canopy_gpu_report *rep);
#define CANOPY_PAIRCOUNT_PAIR_GPU canopy_gpu_paircount_pairs

#endif
