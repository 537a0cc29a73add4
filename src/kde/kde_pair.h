/* SPDX-License-Identifier: MIT */
/* Internal: kde's pair descriptor in the common subset of C and CUDA, shared by kde.c
 * (the CPU engines) and kde_gpu.cu (the GPU engine), so both prune and accept node
 * pairs by the same rule (the bound of kde.c's header comment). */
#ifndef CANOPY_KDE_KDE_PAIR_H
#define CANOPY_KDE_KDE_PAIR_H

#include "canopy.h"
#include "canopy/pair.h"

/* pi, which C11's math.h does not name */
#define KDE_PI 3.14159265358979323846
/* The first walk ignores node pairs whose kernel is at most this (of k(0) = 1). */
#define KDE_LB_FAR 1e-3

typedef struct kde_ctx kde_ctx;
typedef double (*kde_leaf_fn)(const kde_ctx *c, const float *q, const canopy_tree_view *tb,
                              int32_t begin, int32_t end);

struct kde_ctx {
    canopy_kde_kernel kernel;
    kde_leaf_fn leaf_sum; /* CPU: this machine's leaf sum (unused on the GPU) */
    double inv_h, inv_h2;
    int lower_walk;               /* 1: the first walk (lower bounds) */
    double abs_share;             /* atol / knorm: a data point's share of the absolute tolerance */
    double rel_share;             /* rtol / n */
    const double *lower;          /* second walk: per query node, a lower bound on S */
    int32_t qnodes;               /* query tree nodes; an accumulator is qnodes + nq doubles */
    double *node_sum, *point_sum; /* merge targets (on the GPU: device sums added to) */
    int64_t nq;
    /* GPU: device copies of the query and data trees already made (canopy_kde_device
       builds them on the device), walked with no upload; NULL: upload the host trees */
    const canopy_tree_view *resident_a, *resident_b;
};

/* k at squared distance d2 (as the trees and the brute force compute it), with
 * inv_h = 1 / h: monotone in d2, so node bounds on d2 bound it. */
CANOPY_HD double kde_k(canopy_kde_kernel kernel, float d2, double inv_h, double inv_h2) {
    double u2 = (double)d2 * inv_h2;
    switch (kernel) {
    case CANOPY_KDE_GAUSSIAN:
        return exp(-0.5 * u2);
    case CANOPY_KDE_TOPHAT:
        return u2 < 1.0 ? 1.0 : 0.0;
    case CANOPY_KDE_EPANECHNIKOV:
        return u2 < 1.0 ? 1.0 - u2 : 0.0;
    case CANOPY_KDE_EXPONENTIAL:
        return exp(-sqrt((double)d2) * inv_h);
    case CANOPY_KDE_LINEAR: {
        double u = sqrt((double)d2) * inv_h;
        return u < 1.0 ? 1.0 - u : 0.0;
    }
    default: { /* cosine */
        double u = sqrt((double)d2) * inv_h;
        return u < 1.0 ? cos(0.5 * KDE_PI * u) : 0.0;
    }
    }
}

/* The rule for node pair (a of the query tree ta, b of the data tree tb):
 * CANOPY_PAIR_DONE with *add what every query of a gains from b (0: pruned), or
 * CANOPY_PAIR_DESCEND. */
CANOPY_HD int kde_classify(const kde_ctx *c, const canopy_tree_view *ta, int32_t a,
                           const canopy_tree_view *tb, int32_t b, double *add) {
    float mn, mx;
    canopy_pair_box_bounds(canopy_tv_geom(ta, a), canopy_tv_geom(tb, b), ta->d, 0.0f, &mn, &mx);
    double kmax = kde_k(c->kernel, mn, c->inv_h, c->inv_h2);
    double kmin = kde_k(c->kernel, mx, c->inv_h, c->inv_h2);
    const canopy_node *hb = canopy_tv_node(tb, b);
    double nb = (double)(hb->end - hb->begin);
    *add = 0.0;
    if (c->lower_walk) {
        if (kmax <= KDE_LB_FAR) return CANOPY_PAIR_DONE;
        if (kmin < 0.5 * kmax) return CANOPY_PAIR_DESCEND;
        *add = nb * kmin;
        return CANOPY_PAIR_DONE;
    }
    if (kmax == kmin) {
        *add = nb * kmax;
        return CANOPY_PAIR_DONE;
    }
    if (kmax - kmin > 2.0 * (c->abs_share + c->rel_share * c->lower[a])) return CANOPY_PAIR_DESCEND;
    *add = nb * 0.5 * (kmax + kmin);
    return CANOPY_PAIR_DONE;
}

/* The host's test (CPU engines, and the GPU walk's frontier): acc is qnodes node
 * sums, then nq query sums. */
CANOPY_HD int kde_test(const void *vctx, void *acc, const canopy_tree_view *ta, int32_t a,
                       const canopy_tree_view *tb, int32_t b, int sym) {
    (void)sym;
    double add;
    int r = kde_classify((const kde_ctx *)vctx, ta, a, tb, b, &add);
    ((double *)acc)[a] += add;
    return r;
}

/* The GPU walk (kde_gpu.cu, in the CUDA module): adds the walk's node and query sums
 * to c->node_sum and c->point_sum. */
#ifdef __cplusplus
extern "C"
#endif
    canopy_status
    canopy_gpu_kde_pairs(const void *ctx, const canopy_tree_view *ta, const canopy_tree_view *tb,
                         int sym, canopy_pair_counters *cnt, struct canopy_gpu_report *rep);

#endif
