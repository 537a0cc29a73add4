/* SPDX-License-Identifier: MIT */
/* The vector hooks (canopy_lane_app) of kNN, written once with the SIMT layer's
 * lane types, and their simd_l runner for one lane width: included by apps/lanes_body.h
 * after SIMT_W and CANOPY_LANES_ISA are defined (once per lane width, so no guard).
 * Each hook computes what the scalar hook (apps/knn/knn.h) computes, per lane and in the
 * same order, so simd_l's results equal the per-lane path's. */
#include "canopy/simt.h"
#include "canopy/traverse_cpu.h"
#include "canopy/traverse_lanes.h"

#include "apps/lanes.h"
#include "apps/knn/knn.h"

#include <string.h>

/* Packet: per lane the k-bound, the query's own index (-1 unless self), the heap
 * (the output rows) and its fill; then the coordinates. After the first leaves almost
 * every point fails the one vector compare against `worst`. For k <= KNN_REG_K the
 * neighbours are kept instead as a sorted vector of KNN_REG_K keys per lane,
 * (squared distance bits << 32 | index): non-negative floats order as their bits, so
 * one unsigned compare orders (distance, index) exactly as knn_before does, and an
 * insertion is a few branch-free vector operations in place of a heap's sift. For
 * k = 1 (NN) the packet's vectors of best distance and index are the whole result. */
enum { KNN_REG_K = 8, KNN_NN_EMPTY = INT32_MAX };
typedef uint64_t knn_keys __attribute__((vector_size(8 * KNN_REG_K)));
#define KNN_KEY_EMPTY UINT64_MAX

typedef struct knn_lanes {
    simt_float worst;
    simt_int self;
    simt_int nn; /* k = 1: each lane's neighbour (tree indices are < 2^31), NN_EMPTY none */
    float *hd[SIMT_W];
    int64_t *hi[SIMT_W];
    int32_t count[SIMT_W];
    uint64_t best[SIMT_W][KNN_REG_K]; /* k <= KNN_REG_K: ascending keys, EMPTY unused */
} knn_lanes;

CANOPY_LANES simt_float *knn_lanes_q(const void *pk) {
    return (simt_float *)((const knn_lanes *)pk + 1);
}

static size_t knn_lanes_size(const void *vctx, const canopy_tree_view *t) {
    (void)vctx;
    return sizeof(knn_lanes) + sizeof(simt_float) * (size_t)t->d;
}

CANOPY_LANES uint64_t knn_key(float d2, int64_t id) {
    uint32_t bits;
    memcpy(&bits, &d2, sizeof bits);
    return (uint64_t)bits << 32 | (uint32_t)id; /* tree indices are < 2^31 */
}

CANOPY_LANES float knn_key_dist2(uint64_t key) {
    uint32_t bits = (uint32_t)(key >> 32);
    float d2;
    memcpy(&d2, &bits, sizeof d2);
    return key == KNN_KEY_EMPTY ? CANOPY_INF : d2;
}

/* Inserts key into the ascending list best[0..KNN_REG_K) (the last entry falls off):
 * entries below key stay, key takes the first place above them, the rest move up one.
 * Returns the new entry k - 1. (In memory, not by value: a 64-byte vector argument
 * would change the ABI between the ISAs' files.) */
CANOPY_LANES uint64_t knn_keys_insert(uint64_t *best, uint64_t key, int32_t k) {
    const knn_keys zero = {0}, lane = {0, 1, 2, 3, 4, 5, 6, 7};
    knn_keys b;
    memcpy(&b, best, sizeof b);
    knn_keys above = (knn_keys)(b > key); /* ones from key's place on, then from the next one */
    knn_keys above_prev = __builtin_shufflevector(zero, above, 0, 8, 9, 10, 11, 12, 13, 14);
    knn_keys shifted = __builtin_shufflevector(b, b, 0, 0, 1, 2, 3, 4, 5, 6);
    b = (b & ~above) | (shifted & above_prev) | (key & (above & ~above_prev));
    memcpy(best, &b, sizeof b);
    /* entry k - 1 by masks and swaps in registers: b[k - 1] was a spill of the vector and
     * a load of one entry, which waited on store forwarding (a quarter of the one-thread
     * 2-D walk, bench/results/edges.md) */
    knn_keys pick = b & (knn_keys)(lane == (uint64_t)(k - 1));
    pick |= __builtin_shufflevector(pick, pick, 4, 5, 6, 7, 0, 1, 2, 3);
    pick |= __builtin_shufflevector(pick, pick, 2, 3, 0, 1, 6, 7, 4, 5);
    pick |= __builtin_shufflevector(pick, pick, 1, 0, 3, 2, 5, 4, 7, 6);
    return pick[0];
}

CANOPY_LANES void knn_lanes_init(const void *vctx, void *pk, const canopy_tree_view *t,
                                 const int64_t *q, uint32_t mask) {
    (void)t;
    const knn_ctx *c = (const knn_ctx *)vctx;
    knn_lanes *k = (knn_lanes *)pk;
    k->worst = simt_splat_f(CANOPY_INF);
    k->self = simt_splat(-1);
    k->nn = simt_splat(KNN_NN_EMPTY);
    for (int l = 0; l < SIMT_W; l++) {
        k->count[l] = 0;
        for (int j = 0; j < KNN_REG_K; j++) k->best[l][j] = KNN_KEY_EMPTY;
    }
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        k->hd[l] = c->dist2 + q[l] * c->k;
        k->hi[l] = c->idx + q[l] * c->k;
        if (c->self) k->self[l] = (int32_t)q[l];
    }
    canopy_lanes_load_points(knn_lanes_q(pk), c->query, q, mask);
}

/* The index of lane l's k-th neighbour, the one a tie at its distance must beat. */
CANOPY_LANES int64_t knn_lanes_worst_id(const knn_ctx *c, const knn_lanes *k, int l) {
    if (c->k == 1) return k->nn[l];
    if (c->k <= KNN_REG_K) return (int64_t)(uint32_t)k->best[l][c->k - 1];
    return k->hi[l][0];
}

CANOPY_LANES uint32_t knn_lanes_truncate(const void *vctx, void *pk, const canopy_tree_view *t,
                                         int32_t node, uint32_t mask) {
    const knn_lanes *k = (const knn_lanes *)pk;
    simt_float m = canopy_lanes_node_min_dist2(t, node, knn_lanes_q(pk));
    uint32_t out = simt_bits(m > k->worst);
    /* as knn_truncate: at exactly the k-th distance only a smaller index gets in */
    uint32_t tie = t->min_id ? mask & simt_bits((m == k->worst) & (m < CANOPY_INF)) : 0;
    for (; tie; tie &= tie - 1) {
        int l = __builtin_ctz(tie);
        if (t->min_id[node] > knn_lanes_worst_id((const knn_ctx *)vctx, k, l)) out |= 1u << l;
    }
    return mask & ~out;
}

CANOPY_LANES void knn_lanes_visit_leaf(const void *vctx, void *pk, const canopy_tree_view *t,
                                       int32_t node, uint32_t mask) {
    const knn_ctx *c = (const knn_ctx *)vctx;
    knn_lanes *k = (knn_lanes *)pk;
    const simt_float *q = knn_lanes_q(pk);
    const canopy_node *h = canopy_tv_node(t, node);
    simt_mask live = simt_from_bits(mask);
    if (c->k == 1) {
        /* NN: the vector of best distances and indices is the whole state, so a point
         * updates every lane at once: nearer, or as near with a smaller index (the
         * empty index is the largest, so even a distance of +inf is taken) */
        for (int32_t i = h->begin; i < h->end; i++) {
            int32_t id = (int32_t)t->ids[i];
            simt_float d2 = canopy_lanes_dist2(q, canopy_tv_point(t, i), t->d);
            simt_mask better =
                live & (k->self != id) & ((d2 < k->worst) | ((d2 == k->worst) & (k->nn > id)));
            k->worst = simt_blend(better, d2, k->worst);
            k->nn = simt_blend(better, simt_splat(id), k->nn);
        }
        return;
    }
    const int reg = c->k <= KNN_REG_K;
    /* in a register, a lane changed by a blend: a store of one lane into k->worst and the
     * next point's load of the whole vector waited on store forwarding */
    simt_float worst = k->worst;
    for (int32_t i = h->begin; i < h->end; i++) {
        int64_t id = t->ids[i];
        simt_float d2 = canopy_lanes_dist2(q, canopy_tv_point(t, i), t->d);
        uint32_t take = simt_bits(live & (d2 <= worst) & (k->self != (int32_t)id));
        for (; take; take &= take - 1) {
            int l = __builtin_ctz(take);
            float w = worst[l];
            if (reg) {
                w = knn_key_dist2(knn_keys_insert(k->best[l], knn_key(d2[l], id), c->k));
            } else {
                knn_offer(k->hd[l], k->hi[l], c->k, &k->count[l], d2[l], id);
                if (k->count[l] == c->k) w = k->hd[l][0];
            }
            worst = simt_blend(simt_iota() == l, simt_splat_f(w), worst);
        }
    }
    k->worst = worst;
}

/* knn_order per lane, as a ballot of the lanes that want child 1 first. */
CANOPY_LANES void knn_lanes_order(const void *vctx, const void *pk, const canopy_tree_view *t,
                                  int32_t node, uint32_t mask, int32_t *perm) {
    (void)vctx;
    const simt_float *q = knn_lanes_q(pk);
    const canopy_node *h = canopy_tv_node(t, node);
    simt_mask second;
    if (t->kind == CANOPY_TREE_KD) {
        int32_t dim = (int32_t)canopy_tv_geom(t, node)[2 * t->d];
        float split =
            0.5f * (canopy_tv_geom(t, h->child)[t->d + dim] + canopy_tv_geom(t, h->child + 1)[dim]);
        second = q[dim] > split;
    } else {
        simt_float a = canopy_lanes_node_min_dist2(t, h->child, q);
        simt_float b = canopy_lanes_node_min_dist2(t, h->child + 1, q);
        second = b < a;
        if (t->kind == CANOPY_TREE_BALL) {
            /* Overlapping balls often both contain q (bounds 0): the nearer centre first. */
            simt_mask nearer = canopy_lanes_dist2(q, canopy_tv_geom(t, h->child + 1), t->d) <
                               canopy_lanes_dist2(q, canopy_tv_geom(t, h->child), t->d);
            second = simt_blend(a == b, nearer, second);
        }
    }
    canopy_lanes_vote2(mask, simt_bits(second), perm);
}

CANOPY_LANES void knn_lanes_finish(const void *vctx, void *pk, const int64_t *q, uint32_t mask) {
    (void)q;
    const knn_ctx *c = (const knn_ctx *)vctx;
    knn_lanes *k = (knn_lanes *)pk;
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        if (c->k == 1) {
            int empty = k->nn[l] == KNN_NN_EMPTY;
            k->hd[l][0] = empty ? CANOPY_INF : k->worst[l];
            k->hi[l][0] = empty ? -1 : k->nn[l];
            continue;
        }
        if (c->k > KNN_REG_K) {
            knn_sort_row(k->hd[l], k->hi[l], c->k, k->count[l]);
            continue;
        }
        for (int32_t j = 0; j < c->k; j++) { /* empty entries become (-1, +inf) */
            uint64_t key = k->best[l][j];
            k->hd[l][j] = knn_key_dist2(key);
            k->hi[l][j] = key == KNN_KEY_EMPTY ? -1 : (int64_t)(uint32_t)key;
        }
    }
}

static const canopy_lane_app knn_lane_app = {
    knn_lanes_size,       knn_lanes_init,  knn_lanes_truncate,
    knn_lanes_visit_leaf, knn_lanes_order, knn_lanes_finish,
};
CANOPY_SIMD_L_LANES(knn, &knn_app, &knn_lane_app)
