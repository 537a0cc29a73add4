/* SPDX-License-Identifier: MIT */
/* Multipole gravity descriptors (CPU): octree cells carry their monopole in the hot
 * node record (com, mass: the opening test needs nothing else) and, for orders 2-4,
 * the packed moments about the centre of mass (gravity/multipole_terms.h) in a cold
 * array, read only when a cell is accepted (Liu ch. 4's hot/cold split).
 *
 * Two opening tests, both Barnes' offset criterion with r_open = side / theta +
 * |com - cell centre|:
 *   body   (mp_body_*):   one query per body; accept when |q - com| > r_open and q is
 *                         outside the cell;
 *   bucket (mp_bucket_*): one query per leaf bucket (Liu's bucket-to-node test); the
 *                         bucket's bodies walk together and accept a cell when the
 *                         bucket's bounding box is outside the cell and its nearest
 *                         point to com is farther than r_open. Acceptance for the box
 *                         implies acceptance for each body in it, so the per-body error
 *                         bound holds; a bucket's forces accumulate in tree-order rows
 *                         that only this query touches. */
#ifndef CANOPY_APPS_MULTIPOLE_H
#define CANOPY_APPS_MULTIPOLE_H

#include "gravity/multipole_terms.h"
#include "canopy/traverse_geom.h"

enum { MP_QUAD_FLOATS = 7 }; /* order 2: Qxx Qyy Qzz Qxy Qxz Qyz, T */

/* Packed moments (n_nodes * mp_pack_count(order) floats) of an octree built with
 * masses as weights, about each cell's centre of mass, for order 2, 3 or 4. */
canopy_status canopy_mp_moments(const canopy_tree_view *t, int32_t order, float *mom);
/* The order-2 record (n_nodes * MP_QUAD_FLOATS floats): canopy_mp_moments of order 2. */
canopy_status canopy_mp_quadrupoles(const canopy_tree_view *t, float *quad);

typedef struct mp_ctx {
    canopy_points bodies; /* caller order (body opening) */
    const float *quad;    /* n_nodes * mp_pack_count(order), or NULL for order 0 */
    int32_t order;
    const int32_t *leaves; /* bucket opening: leaf node of each query */
    const canopy_tree_view *tv;
    float inv_theta;
    float eps2;
    float *acc;  /* (n, 3), caller order */
    float *pot;  /* (n), caller order, or NULL */
    float *tacc; /* bucket opening: (n, 3) scratch in tree order */
    float *tpot; /* bucket opening: (n) scratch in tree order, or NULL */
} mp_ctx;

/* Acceleration and potential at q from the expansion of cell g (geometry com[3],
 * mass, ...) to the order (0, 2, 3, 4) with packed moments Q (NULL for order 0),
 * Plummer-softened (gravity/multipole_terms.h); for order 2
 *   phi = -M / R - (r.Q.r - T eps^2) / (2 R^5),
 *   a   = -M r / R^3 + Q.r / R^5 - 5 (r.Q.r - T eps^2) r / (2 R^7),
 * r = q - com, R^2 = r^2 + eps^2. Exact for a single point mass. */
CANOPY_HD void mp_expand_order(const float *g, int32_t order, const float *Q, float eps2,
                               const float *q, float *a, float *phi) {
    float p = 0.0f, dx = q[0] - g[0], dy = q[1] - g[1], dz = q[2] - g[2];
    /* A constant order per call, so each keeps only its own terms. */
    switch (Q ? order : 0) {
    case 0:
        mp_cell_terms(0, 1, g[3], dx, dy, dz, eps2, Q, 1, a, a + 1, a + 2, &p);
        break;
    case 2:
        mp_cell_terms(2, 1, g[3], dx, dy, dz, eps2, Q, 1, a, a + 1, a + 2, &p);
        break;
    case 3:
        mp_cell_terms(3, 1, g[3], dx, dy, dz, eps2, Q, 1, a, a + 1, a + 2, &p);
        break;
    default:
        mp_cell_terms(4, 1, g[3], dx, dy, dz, eps2, Q, 1, a, a + 1, a + 2, &p);
        break;
    }
    *phi -= p;
}

/* Order 2 with the MP_QUAD_FLOATS record Q, or the monopole (Q NULL). */
CANOPY_HD void mp_expand(const float *g, const float *Q, float eps2, const float *q, float *a,
                         float *phi) {
    mp_expand_order(g, 2, Q, eps2, q, a, phi);
}

/* One body-body term, the same arithmetic as canopy_gravity's leaves. */
CANOPY_HD void mp_direct(const float *p, float m, float eps2, const float *q, float *a,
                         float *phi) {
    float dx = p[0] - q[0], dy = p[1] - q[1], dz = p[2] - q[2];
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrtf(r2);
    float f = m * inv * inv * inv;
    a[0] += f * dx;
    a[1] += f * dy;
    a[2] += f * dz;
    *phi -= m * inv;
}

/* Squared opening radius of a cell: (side / theta + |com - centre|)^2. */
CANOPY_HD float mp_open2(const float *g, float inv_theta) {
    float ox = g[0] - g[4], oy = g[1] - g[5], oz = g[2] - g[6];
    float r = 2.0f * g[7] * inv_theta + sqrtf(ox * ox + oy * oy + oz * oz);
    return r * r;
}

CANOPY_HD const float *mp_quad(const mp_ctx *c, int32_t node) {
    return c->quad ? c->quad + (int64_t)node * mp_pack_count(c->order) : NULL;
}

/* ------------------------------------------------------------ body opening -- */

typedef struct mp_body_state {
    const float *q;
    int64_t self_id;
    float a[3];
    float phi;
} mp_body_state;

CANOPY_HD void mp_body_init(const void *vctx, void *vst, int64_t q) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_body_state *s = (mp_body_state *)vst;
    s->q = canopy_point(c->bodies, q);
    s->self_id = q;
    s->a[0] = s->a[1] = s->a[2] = s->phi = 0.0f;
}

CANOPY_HD int mp_body_truncate(const void *vctx, void *vst, const canopy_tree_view *t,
                               int32_t node) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_body_state *s = (mp_body_state *)vst;
    const float *g = canopy_tv_geom(t, node), *q = s->q;
    float half = g[7];
    if (fabsf(q[0] - g[4]) <= half && fabsf(q[1] - g[5]) <= half && fabsf(q[2] - g[6]) <= half)
        return 0;
    float dx = g[0] - q[0], dy = g[1] - q[1], dz = g[2] - q[2];
    if (dx * dx + dy * dy + dz * dz <= mp_open2(g, c->inv_theta)) return 0;
    mp_expand_order(g, c->order, mp_quad(c, node), c->eps2, q, s->a, &s->phi);
    return 1;
}

CANOPY_HD void mp_body_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                                  int32_t node) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_body_state *s = (mp_body_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        if (t->ids[i] == s->self_id) continue;
        mp_direct(canopy_tv_point(t, i), t->weights[i], c->eps2, s->q, s->a, &s->phi);
    }
}

CANOPY_HD void mp_body_finish(const void *vctx, void *vst, int64_t q) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_body_state *s = (mp_body_state *)vst;
    for (int j = 0; j < 3; j++) c->acc[3 * q + j] = s->a[j];
    if (c->pot) c->pot[q] = s->phi;
}

/* ---------------------------------------------------------- bucket opening -- */

typedef struct mp_bucket_state {
    int32_t begin, end; /* the bucket's bodies, tree order */
    float lo[3], hi[3]; /* their bounding box */
} mp_bucket_state;

CANOPY_HD void mp_bucket_init(const void *vctx, void *vst, int64_t q) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_bucket_state *s = (mp_bucket_state *)vst;
    const canopy_node *h = canopy_tv_node(c->tv, c->leaves[q]);
    s->begin = h->begin;
    s->end = h->end;
    for (int j = 0; j < 3; j++) {
        s->lo[j] = INFINITY;
        s->hi[j] = -INFINITY;
    }
    for (int32_t i = h->begin; i < h->end; i++) {
        const float *p = canopy_tv_point(c->tv, i);
        for (int j = 0; j < 3; j++) {
            s->lo[j] = p[j] < s->lo[j] ? p[j] : s->lo[j];
            s->hi[j] = p[j] > s->hi[j] ? p[j] : s->hi[j];
            c->tacc[3 * (int64_t)i + j] = 0.0f;
        }
        if (c->tpot) c->tpot[i] = 0.0f;
    }
}

CANOPY_HD int mp_bucket_truncate(const void *vctx, void *vst, const canopy_tree_view *t,
                                 int32_t node) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_bucket_state *s = (mp_bucket_state *)vst;
    const float *g = canopy_tv_geom(t, node);
    float half = g[7], d2 = 0.0f;
    int overlap = 1;
    for (int j = 0; j < 3; j++) {
        overlap &= s->lo[j] <= g[4 + j] + half && s->hi[j] >= g[4 + j] - half;
        float a = s->lo[j] - g[j], b = g[j] - s->hi[j];
        float e = a > b ? a : b;
        e = e > 0.0f ? e : 0.0f;
        d2 += e * e;
    }
    if (overlap || d2 <= mp_open2(g, c->inv_theta)) return 0;
    const float *Q = mp_quad(c, node);
    float sink = 0.0f;
    for (int32_t i = s->begin; i < s->end; i++) {
        float *phi = c->tpot ? c->tpot + i : &sink;
        mp_expand_order(g, c->order, Q, c->eps2, canopy_tv_point(t, i), c->tacc + 3 * (int64_t)i,
                        phi);
    }
    return 1;
}

CANOPY_HD void mp_bucket_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t,
                                    int32_t node) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_bucket_state *s = (mp_bucket_state *)vst;
    const canopy_node *h = canopy_tv_node(t, node);
    float sink = 0.0f;
    for (int32_t i = s->begin; i < s->end; i++) {
        const float *q = canopy_tv_point(t, i);
        float *a = c->tacc + 3 * (int64_t)i, *phi = c->tpot ? c->tpot + i : &sink;
        for (int32_t j = h->begin; j < h->end; j++)
            if (j != i) mp_direct(canopy_tv_point(t, j), t->weights[j], c->eps2, q, a, phi);
    }
}

CANOPY_HD void mp_bucket_finish(const void *vctx, void *vst, int64_t q) {
    const mp_ctx *c = (const mp_ctx *)vctx;
    mp_bucket_state *s = (mp_bucket_state *)vst;
    (void)q;
    for (int32_t i = s->begin; i < s->end; i++) {
        int64_t id = c->tv->ids[i];
        for (int j = 0; j < 3; j++) c->acc[3 * id + j] = c->tacc[3 * (int64_t)i + j];
        if (c->pot) c->pot[id] = c->tpot[i];
    }
}

#endif
