/* SPDX-License-Identifier: MIT */
/* knn: k nearest neighbours (guided; orders equivalent). The result heap lives in
 * the caller's output row, a max-heap on (distance, index), so ties resolve to the
 * smaller index exactly as the brute-force reference does. */
#ifndef CANOPY_APPS_KNN_H
#define CANOPY_APPS_KNN_H

#include "apps/kd_walk.h"
#include "canopy/traverse_geom.h"

typedef struct knn_ctx {
    canopy_points query;
    int32_t k;
    int self; /* the query set is the reference set: skip the point itself */
    int64_t *idx;
    float *dist2;
} knn_ctx;

typedef struct knn_state {
    const float *q;
    int64_t *hi; /* heap of indices (the output row) */
    float *hd;   /* heap of squared distances */
    int64_t self_id;
    int32_t count;
    float worst; /* +inf until the heap is full, then hd[0] */
} knn_state;

/* Largest k with a register list on the GPU (knn_gpu.cuh); larger k keeps the heap. */
enum { KNN_REG_MAX_K = 16 };

/* Where the GPU runs kNN with the specialised kd walk (apps/kd_walk.h). */
CANOPY_HD int knn_kd_kernel_applies(const canopy_tree_view *t, int32_t k, int variant) {
    return k <= KNN_REG_MAX_K && kd_walk_applies(t, variant);
}
static inline int knn_gpu_own_kernel(const void *vctx, const canopy_tree_view *t, int variant) {
    return knn_kd_kernel_applies(t, ((const knn_ctx *)vctx)->k, variant);
}

CANOPY_HD int knn_before(float da, int64_t ia, float db, int64_t ib) {
    return da < db || (da == db && ia < ib);
}

CANOPY_HD void knn_sift_down(float *hd, int64_t *hi, int32_t n, int32_t i) {
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && knn_before(hd[m], hi[m], hd[l], hi[l])) m = l;
        if (r < n && knn_before(hd[m], hi[m], hd[r], hi[r])) m = r;
        if (m == i) return;
        float td = hd[i];
        hd[i] = hd[m];
        hd[m] = td;
        int64_t ti = hi[i];
        hi[i] = hi[m];
        hi[m] = ti;
        i = m;
    }
}

/* Offers a candidate to a max-heap of capacity k holding `count` entries. */
CANOPY_HD void knn_offer(float *hd, int64_t *hi, int32_t k, int32_t *count, float d2, int64_t id) {
    if (*count < k) {
        int32_t i = (*count)++;
        hd[i] = d2;
        hi[i] = id;
        while (i > 0) {
            int32_t p = (i - 1) / 2;
            if (!knn_before(hd[p], hi[p], hd[i], hi[i])) break;
            float td = hd[i];
            hd[i] = hd[p];
            hd[p] = td;
            int64_t ti = hi[i];
            hi[i] = hi[p];
            hi[p] = ti;
            i = p;
        }
    } else if (knn_before(d2, id, hd[0], hi[0])) {
        hd[0] = d2;
        hi[0] = id;
        knn_sift_down(hd, hi, k, 0);
    }
}

/* Heap -> ascending order in place; unused slots become (-1, +inf). */
CANOPY_HD void knn_sort_row(float *hd, int64_t *hi, int32_t k, int32_t count) {
    for (int32_t n = count; n > 1; n--) {
        float td = hd[0];
        hd[0] = hd[n - 1];
        hd[n - 1] = td;
        int64_t ti = hi[0];
        hi[0] = hi[n - 1];
        hi[n - 1] = ti;
        knn_sift_down(hd, hi, n - 1, 0);
    }
    for (int32_t i = count; i < k; i++) {
        hd[i] = CANOPY_INF;
        hi[i] = -1;
    }
}

CANOPY_HD void knn_init(const void *vctx, void *vst, int64_t q) {
    const knn_ctx *c = (const knn_ctx *)vctx;
    knn_state *s = (knn_state *)vst;
    s->q = canopy_point(c->query, q);
    s->hi = c->idx + q * c->k;
    s->hd = c->dist2 + q * c->k;
    s->self_id = c->self ? q : -1;
    s->count = 0;
    s->worst = CANOPY_INF;
}

CANOPY_HD int knn_truncate(const void *vctx, void *vst, const canopy_tree_view *t, int32_t node) {
    (void)vctx;
    const knn_state *s = (const knn_state *)vst;
    float m = canopy_node_min_dist2(t, node, s->q);
    if (m != s->worst || m == CANOPY_INF) return m > s->worst; /* +inf: the heap is not full */
    /* At exactly the k-th distance a tie wins only on a smaller index, so a node whose
     * indices are all larger is out: without this, duplicates visit every node. */
    return t->min_id && t->min_id[node] > s->hi[0];
}

CANOPY_HD void knn_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                              int32_t node) {
    const knn_ctx *c = (const knn_ctx *)vctx;
    knn_state *s = (knn_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        int64_t id = t->ids[i];
        if (id == s->self_id) continue;
        float d2 = canopy_dist2(s->q, canopy_tv_point(t, i), t->d);
        if (d2 > s->worst) continue;
        knn_offer(s->hd, s->hi, c->k, &s->count, d2, id);
        if (s->count == c->k) s->worst = s->hd[0];
    }
}

CANOPY_HD int knn_order(const void *vctx, const void *vst, const canopy_tree_view *t,
                        int32_t node) {
    (void)vctx;
    const knn_state *s = (const knn_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    if (t->kind == CANOPY_TREE_KD) {
        /* The side of the split plane: one comparison instead of two box distances. */
        int32_t dim = (int32_t)canopy_tv_geom(t, node)[2 * t->d];
        float split =
            0.5f * (canopy_tv_geom(t, h->child)[t->d + dim] + canopy_tv_geom(t, h->child + 1)[dim]);
        return s->q[dim] > split;
    }
    float a = canopy_node_min_dist2(t, h->child, s->q);
    float b = canopy_node_min_dist2(t, h->child + 1, s->q);
    if (a != b || t->kind != CANOPY_TREE_BALL) return b < a;
    /* Overlapping balls often both contain q (bounds 0): the nearer centre first. */
    return canopy_dist2(s->q, canopy_tv_geom(t, h->child + 1), t->d) <
           canopy_dist2(s->q, canopy_tv_geom(t, h->child), t->d);
}

/* The CPU descriptor's order: near child first. */
CANOPY_HD void knn_order_perm(const void *vctx, const void *vst, const canopy_tree_view *t,
                              int32_t node, int32_t *perm) {
    canopy_order_flip(perm, canopy_tv_node(t, node)->nchild, knn_order(vctx, vst, t, node));
}

CANOPY_HD void knn_finish(const void *vctx, void *vst, int64_t q) {
    (void)q;
    const knn_ctx *c = (const knn_ctx *)vctx;
    knn_state *s = (knn_state *)vst;
    knn_sort_row(s->hd, s->hi, c->k, s->count);
}

#endif
