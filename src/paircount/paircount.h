/* SPDX-License-Identifier: MIT */
/* The pair-count descriptor (canopy_paircount), in the common subset of C and CUDA
 * so that paircount.c instantiates the CPU engines and paircount_gpu.cu the GPU
 * ones. Only public headers. */
#ifndef CANOPY_PAIRCOUNT_PAIRCOUNT_H
#define CANOPY_PAIRCOUNT_PAIRCOUNT_H

#include "canopy/pair.h"
#include "canopy/traverse_geom.h"

#include <math.h>

enum { PASS_BINS = 26 };

typedef struct pc_ctx {
    canopy_points query;
    const float *qw;       /* query weights, or NULL */
    const double *wprefix; /* n + 1 prefix sums of tree-order weights, or NULL */
    const float *e2;       /* squared bin edges, all bins (nbins + 1) */
    int32_t b0, nb;        /* this pass: bins [b0, b0 + nb) */
    float lo2, hi2;        /* e2[b0], e2[b0 + nb] */
    float box;             /* periodic box side, 0 = none */
    int self;              /* auto: query q is tree point q */
    int32_t nbins;         /* all bins */
    double *counts;        /* nbins, added to atomically */
} pc_ctx;

typedef struct pc_state {
    const float *q;
    double wq;
    double h[PASS_BINS];
} pc_state;

/* One coordinate's distance, minimum image in a periodic box (coordinates in
 * [0, box)); the brute force computes it the same way. */
CANOPY_HD float pc_axis(float a, float b, float box) {
    float x = fabsf(a - b);
    if (box > 0.0f) {
        float y = box - x;
        x = y < x ? y : x;
    }
    return x;
}

CANOPY_HD float pc_dist2(const float *a, const float *b, int32_t d, float box) {
    float s = 0.0f;
    for (int32_t j = 0; j < d; j++) {
        float x = pc_axis(a[j], b[j], box);
        s += x * x;
    }
    return s;
}

/* Bounds on pc_dist2 from q to any point of kd box g: per axis, fl(p - q) for p in
 * [lo, hi] lies in [fl(lo - q), fl(hi - q)] (rounding is monotone), so |.| lies in
 * [umin, umax] and fl(box - |.|) in [fl(box - umax), fl(box - umin)]; the minimum of
 * the two terms is bounded by the minima and by the maxima. Sums of squares of
 * non-negative floats are monotone too, so the bounds are exact, not margined. */
CANOPY_HD void pc_box_bounds(const float *g, int32_t d, const float *q, float box, float *mn,
                             float *mx) {
    float smin = 0.0f, smax = 0.0f;
    for (int32_t j = 0; j < d; j++)
        canopy_pair_axis_bounds(g[j] - q[j], g[d + j] - q[j], box, &smin, &smax);
    *mn = smin;
    *mx = smax;
}

/* The bin of d2 among the pass's bins (d2 in [lo2, hi2)): the last edge <= d2. */
CANOPY_HD int32_t pc_bin(const pc_ctx *c, float d2) {
    int32_t lo = c->b0, hi = c->b0 + c->nb - 1;
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if (d2 >= c->e2[mid])
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo - c->b0;
}

CANOPY_HD void pc_init(const void *vctx, void *vst, int64_t q) {
    const pc_ctx *c = (const pc_ctx *)vctx;
    pc_state *s = (pc_state *)vst;
    s->q = canopy_point(c->query, q);
    s->wq = c->qw ? (double)c->qw[q] : 1.0;
    for (int32_t b = 0; b < c->nb; b++) s->h[b] = 0.0;
}

CANOPY_HD int pc_truncate(const void *vctx, void *vst, const canopy_tree_view *t, int32_t node) {
    const pc_ctx *c = (const pc_ctx *)vctx;
    pc_state *s = (pc_state *)vst;
    float mn, mx;
    if (t->kind == CANOPY_TREE_KD) {
        pc_box_bounds(canopy_tv_geom(t, node), t->d, s->q, c->box, &mn, &mx);
    } else {
        mn = canopy_node_min_dist2(t, node, s->q);
        mx = canopy_node_max_dist2(t, node, s->q);
    }
    if (mx < c->lo2 || mn >= c->hi2) return 1;
    if (mn < c->lo2 || mx >= c->hi2) return 0;
    int32_t b = pc_bin(c, mn);
    if (b != pc_bin(c, mx)) return 0;
    const canopy_node *h = canopy_tv_node(t, node);
    s->h[b] += c->wprefix ? s->wq * (c->wprefix[h->end] - c->wprefix[h->begin])
                          : (double)(h->end - h->begin);
    return 1;
}

CANOPY_HD void pc_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t, int32_t node) {
    const pc_ctx *c = (const pc_ctx *)vctx;
    pc_state *s = (pc_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        float d2 = pc_dist2(s->q, canopy_tv_point(t, i), t->d, c->box);
        if (d2 < c->lo2 || d2 >= c->hi2) continue;
        s->h[pc_bin(c, d2)] += c->wprefix ? s->wq * (double)t->weights[i] : 1.0;
    }
}

CANOPY_HD void pc_finish(const void *vctx, void *vst, int64_t q) {
    (void)q;
    const pc_ctx *c = (const pc_ctx *)vctx;
    pc_state *s = (pc_state *)vst;
    /* Auto: the query met itself at distance 0, in bin 0 when rmin = 0. */
    if (c->self && c->b0 == 0 && c->lo2 <= 0.0f) s->h[0] -= s->wq * s->wq;
    for (int32_t b = 0; b < c->nb; b++) {
        if (s->h[b] == 0.0) continue;
#if defined(__CUDA_ARCH__)
        atomicAdd(c->counts + c->b0 + b, s->h[b]);
#elif defined(_OPENMP)
#pragma omp atomic
        c->counts[c->b0 + b] += s->h[b];
#else /* nvcc's host pass of paircount_gpu.cu: no engine runs this copy */
        c->counts[c->b0 + b] += s->h[b];
#endif
    }
}

/* The GPU runner (paircount_gpu.cu, in the CUDA module). */
#ifdef __cplusplus
extern "C"
#endif
    canopy_status
    canopy_gpu_paircount(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                         int64_t nq, canopy_variant v, const struct canopy_profile_plan *plan,
                         struct canopy_gpu_report *rep);
#define CANOPY_PAIRCOUNT_GPU canopy_gpu_paircount

#endif
