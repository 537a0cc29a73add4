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
 * log(bins per table cell), not with the number of bins. Symmetric walks count a pair of distinct
 * nodes twice and the pairs i < j inside one leaf twice (every ordered pair i != j,
 * as canopy_paircount promises). */
#ifndef CANOPY_PAIRCOUNT_PAIR_COUNT_H
#define CANOPY_PAIRCOUNT_PAIR_COUNT_H

#include "canopy/pair.h"

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

/* CPU: unweighted counts into at most this many bins use per-lane counters of the
 * pairs below each edge (pair_leaf.h) instead of a bin and a scalar add per pair. */
enum { PCP_CUM_MAX = 15 };

/* Many bins: the squared distances of unweighted pairs in range wait in a buffer
 * after each thread's histogram (of about two per bin, within these limits) and are
 * counted a buffer at a time, partitioned first by table range so that each part's
 * table cells, edges and bins are reused while in cache (with 10^6 bins, a pair's bin
 * met at random missed the caches three times). */
enum { PCP_SORT_MIN_BINS = 1 << 13, PCP_SORT_BUF_MIN = 1 << 16, PCP_SORT_BUF_MAX = 1 << 21 };
enum { PCP_SORT_PARTS_MAX = 1 << 12 };
typedef struct pcp_sortbuf { /* followed by sort_cap float bits, then as many of scratch */
    int64_t n;               /* buffered */
    double w;                /* what each pair adds */
} pcp_sortbuf;

struct pcp_ctx;
/* A leaf-pair kernel (one per ISA on the CPU, pair_leaf.h). */
typedef void (*pcp_leaf_fn)(const struct pcp_ctx *c, double *hist, const canopy_tree_view *ta,
                            int32_t a, const canopy_tree_view *tb, int32_t b, int sym);

typedef struct pcp_ctx {
    const float *e2; /* nbins + 1 squared float edges, strictly increasing */
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
    double *counts;                 /* merge target, nbins */
    int32_t scan;                   /* CPU: most edges in one table cell, -1 above PCP_SCAN_MAX */
    int32_t sorted, sort_cap;       /* CPU: the pcp_sortbuf after the histogram is used */
    int32_t sort_shift, sort_parts; /* its part of float bits u >= tab_base:
                                       (u - tab_base) >> sort_shift */
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

/* The bin of d2 in [lo2, hi2): the last edge <= d2. */
CANOPY_HD int32_t pcp_bin(const pcp_ctx *c, float d2) {
    if (d2 < c->split2) return 0;
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
    if (!(mx < c->e2[lo + 1])) return PCP_DESCEND; /* mx in another bin: one load, no search */
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

/* The CPU descriptor: acc is a histogram of nbins doubles. */
CANOPY_HD int pcp_test(const void *vctx, void *acc, const canopy_tree_view *ta, int32_t a,
                       const canopy_tree_view *tb, int32_t b, int sym) {
    int32_t bin;
    double w;
    int r = pcp_classify((const pcp_ctx *)vctx, ta, a, tb, b, sym, &bin, &w);
    if (r == PCP_ACCEPT) ((double *)acc)[bin] += w;
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
