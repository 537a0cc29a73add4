/* SPDX-License-Identifier: MIT */
/* Locally essential trees: domain build, export with the box opening test (corrected
 * or naive radius), the body walk over pieces, and the curve split (gravity/let.h). */
#include "gravity/let.h"

#include "apps/common.h"
#include "traverse/run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* d->boxes: the deepest level of the tree (leaves above it stand for themselves) with
 * at most LET_MAX_BOXES non-empty cells, each cell's tight bounding box. */
static void top_boxes(let_domain *d) {
    const canopy_tree_view *tv = d->tv;
    int32_t level[LET_MAX_BOXES], next[LET_MAX_BOXES * 8], n = 1;
    level[0] = 0;
    for (;;) {
        int32_t m = 0, deeper = 0;
        for (int32_t k = 0; k < n; k++) {
            const canopy_node *h = canopy_tv_node(tv, level[k]);
            if (h->child < 0) {
                next[m++] = level[k];
                continue;
            }
            deeper = 1;
            for (int32_t c = h->child; c < h->child + h->nchild; c++) {
                const canopy_node *hc = canopy_tv_node(tv, c);
                if (hc->end > hc->begin) next[m++] = c;
            }
        }
        if (!deeper || m > LET_MAX_BOXES) break;
        memcpy(level, next, (size_t)m * sizeof *level);
        n = m;
    }
    d->n_boxes = 0;
    for (int32_t k = 0; k < n; k++) {
        const canopy_node *h = canopy_tv_node(tv, level[k]);
        if (h->end == h->begin) continue;
        d->box_node[d->n_boxes] = level[k];
        float *b = d->boxes[d->n_boxes++];
        for (int j = 0; j < 3; j++) {
            b[j] = INFINITY;
            b[3 + j] = -INFINITY;
        }
        for (int32_t i = h->begin; i < h->end; i++) {
            const float *p = canopy_tv_point(tv, i);
            for (int j = 0; j < 3; j++) {
                b[j] = p[j] < b[j] ? p[j] : b[j];
                b[3 + j] = p[j] > b[3 + j] ? p[j] : b[3 + j];
            }
        }
    }
}

/* The octree of the bodies on the host, or built on the GPU and brought back. */
static canopy_status build_octree(canopy_points bodies, const float *mass, int32_t leaf_size,
                                  int on_gpu, canopy_tree **tree) {
    if (!on_gpu) return canopy_app_build(bodies, CANOPY_TREE_OCT, leaf_size, mass, tree, NULL);
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_OCT);
    to.leaf_size = leaf_size;
    to.weights = mass;
    canopy_gpu_tree *g = NULL;
    canopy_status s = canopy_tree_build_gpu(bodies, &to, &g);
    if (!s) s = canopy_gpu_tree_download(g, tree);
    canopy_gpu_tree_free(g);
    return s;
}

static canopy_status domain_build(canopy_points bodies, const float *mass, const int64_t *gid,
                                  int32_t order, int32_t leaf_size, int on_gpu, let_domain *d) {
    memset(d, 0, sizeof *d);
    d->gid = gid;
    d->order = order;
    for (int j = 0; j < 3; j++) {
        d->lo[j] = INFINITY;
        d->hi[j] = -INFINITY;
    }
    if (order != 0 && order != 2)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: order must be 0 or 2 (got %d)",
                           (int)order);
    if (bodies.n == 0) return CANOPY_OK;
    if (bodies.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: bodies must have 3 coordinates (got %d)",
                           (int)bodies.d);
    for (int64_t i = 0; i < bodies.n; i++) {
        const float *p = canopy_point(bodies, i);
        for (int j = 0; j < 3; j++) {
            d->lo[j] = p[j] < d->lo[j] ? p[j] : d->lo[j];
            d->hi[j] = p[j] > d->hi[j] ? p[j] : d->hi[j];
        }
    }
    double t0 = canopy_now();
    canopy_status s = build_octree(bodies, mass, leaf_size, on_gpu, &d->tree);
    if (s) return s;
    d->tree_seconds = canopy_now() - t0;
    t0 = canopy_now();
    d->tv = canopy_tree_get_view(d->tree);
    top_boxes(d);
    if (order == 2) {
        s = canopy_alloc((void **)&d->quad, (size_t)d->tv->n_nodes * MP_QUAD_FLOATS,
                         sizeof *d->quad);
        if (!s) s = canopy_mp_quadrupoles(d->tv, d->quad);
    }
    d->moments_seconds = canopy_now() - t0;
    if (s) canopy_let_domain_free(d);
    return s;
}

canopy_status canopy_let_domain_build(canopy_points bodies, const float *mass, const int64_t *gid,
                                      int32_t order, int32_t leaf_size, let_domain *d) {
    return domain_build(bodies, mass, gid, order, leaf_size, 0, d);
}

canopy_status canopy_let_domain_build_gpu(canopy_points bodies, const float *mass,
                                          const int64_t *gid, int32_t order, int32_t leaf_size,
                                          let_domain *d) {
    return domain_build(bodies, mass, gid, order, leaf_size, 1, d);
}

void canopy_let_domain_free(let_domain *d) {
    canopy_tree_free(d->tree);
    canopy_free(d->quad);
    d->tree = NULL;
    d->tv = NULL;
    d->quad = NULL;
}

/* Whether every point of the box [lo, hi] accepts cell g under the body opening test
 * (mp_body_truncate). Rounding is monotone, so for q in the box each |q_j - x_j| is
 * at least the box's per-axis gap computed here, and the squared sums (same order)
 * compare the same way: the box test never accepts where a body would open. With
 * the naive radius the gap is taken to the geometric centre instead of com. */
static int box_accepts(const float *g, const float *lo, const float *hi, float inv_theta,
                       let_radius radius) {
    if (radius == LET_RADIUS_ALL || radius == LET_RADIUS_TOP) return 0;
    float half = g[7];
    int outside = 0;
    for (int j = 0; j < 3; j++) outside |= (lo[j] - g[4 + j] > half) | (g[4 + j] - hi[j] > half);
    if (!outside) return 0;
    const float *x = radius == LET_RADIUS_NAIVE ? g + 4 : g;
    float d2 = 0.0f;
    for (int j = 0; j < 3; j++) {
        float a = lo[j] - x[j], b = x[j] - hi[j];
        float e = a > b ? a : b;
        e = e > 0.0f ? e : 0.0f;
        d2 += e * e;
    }
    return d2 > mp_open2(g, inv_theta);
}

typedef struct exporter {
    const let_domain *d;
    const float *boxes;
    int32_t n_boxes;
    float inv_theta;
    let_radius radius;
    let_piece *p;
    int64_t cap_cells, cap_bodies;
    /* > 0: opened cells of this level are left as stubs, listed in defer, and their
     * subtrees exported on their own (in parallel) then appended (export_parallel) */
    int32_t defer_level;
    int32_t *defer; /* (node, slot, level) triples */
    int64_t n_defer, cap_defer;
} exporter;

static canopy_status grow(void **a, int64_t *cap, int64_t need, size_t elem) {
    if (need <= *cap) return CANOPY_OK;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    if (c > INT32_MAX) return canopy_fail(CANOPY_ERR_INVALID, "gravity: LET piece too large");
    void *b = NULL;
    canopy_status s = canopy_alloc(&b, (size_t)c, elem);
    if (s) return s;
    if (*a) memcpy(b, *a, (size_t)*cap * elem);
    canopy_free(*a);
    *a = b;
    *cap = c;
    return CANOPY_OK;
}

/* Fills cell `slot` from tree node `node` and, unless pruned, its subtree. The
 * children of an opened cell take consecutive slots, so the piece keeps the tree's
 * child order and a walk over it visits cells in the same order as over the tree. */
static canopy_status put(exporter *x, int32_t node, int32_t slot, int32_t level) {
    const canopy_tree_view *tv = x->d->tv;
    let_piece *p = x->p;
    const canopy_node *h = canopy_tv_node(tv, node);
    let_cell *c = p->cells + slot;
    memcpy(c->g, canopy_tv_geom(tv, node), sizeof c->g);
    if (x->d->quad)
        memcpy(c->quad, x->d->quad + (int64_t)node * MP_QUAD_FLOATS, sizeof c->quad);
    else
        memset(c->quad, 0, sizeof c->quad);
    c->child = -1;
    c->nchild = c->begin = c->end = c->pruned = 0;
    p->depth = level > p->depth ? level : p->depth;
    int all = x->radius != LET_RADIUS_ALL;
    if (x->radius == LET_RADIUS_TOP) {
        all = 0;
        for (int32_t b = 0; !all && b < x->d->n_boxes; b++) all = x->d->box_node[b] == node;
    }
    for (int32_t b = 0; all && x->radius != LET_RADIUS_TOP && b < x->n_boxes; b++)
        all = box_accepts(c->g, x->boxes + 6 * b, x->boxes + 6 * b + 3, x->inv_theta, x->radius);
    if (all) {
        c->pruned = 1;
        return CANOPY_OK;
    }
    canopy_status s;
    if (h->child >= 0 && x->defer_level > 0 && level >= x->defer_level) {
        if ((s = grow((void **)&x->defer, &x->cap_defer, 3 * (x->n_defer + 1), sizeof *x->defer)))
            return s;
        int32_t *d = x->defer + 3 * x->n_defer++;
        d[0] = node;
        d[1] = slot;
        d[2] = level;
        return CANOPY_OK;
    }
    if (h->child < 0) {
        int64_t need = (int64_t)p->n_bodies + (h->end - h->begin);
        if ((s = grow((void **)&p->bodies, &x->cap_bodies, need, sizeof *p->bodies))) return s;
        c = p->cells + slot;
        c->begin = p->n_bodies;
        for (int32_t i = h->begin; i < h->end; i++) {
            let_body *b = p->bodies + p->n_bodies++;
            memcpy(b->x, canopy_tv_point(tv, i), sizeof b->x);
            b->m = tv->weights[i];
            b->id = x->d->gid[tv->ids[i]];
        }
        c->end = p->n_bodies;
        return CANOPY_OK;
    }
    int32_t first = p->n_cells;
    if ((s = grow((void **)&p->cells, &x->cap_cells, (int64_t)first + h->nchild, sizeof *p->cells)))
        return s;
    p->n_cells += h->nchild;
    p->cells[slot].child = first;
    p->cells[slot].nchild = h->nchild;
    for (int32_t k = 0; k < h->nchild; k++)
        if ((s = put(x, h->child + k, first + k, level + 1))) return s;
    return CANOPY_OK;
}

/* The whole tree as a piece (LET_RADIUS_ALL): cell k is tree node k and body i tree
 * point i, so every record is copied independently, in parallel (put() recurses on
 * one thread). Children stay contiguous and in the tree's order, so a walk visits
 * the same cells in the same order as over put()'s layout: the same sums. */
static canopy_status export_all(const let_domain *src, let_piece *out) {
    const canopy_tree_view *tv = src->tv;
    canopy_status s = canopy_alloc((void **)&out->cells, (size_t)tv->n_nodes, sizeof *out->cells);
    if (!s) s = canopy_alloc((void **)&out->bodies, (size_t)tv->n + 1, sizeof *out->bodies);
    if (s) {
        canopy_let_piece_free(out);
        return s;
    }
    out->n_cells = tv->n_nodes;
    out->n_bodies = (int32_t)tv->n;
    out->depth = tv->depth;
#pragma omp parallel num_threads(canopy_threads())
    {
#pragma omp for schedule(static)
        for (int32_t k = 0; k < tv->n_nodes; k++) {
            const canopy_node *h = canopy_tv_node(tv, k);
            let_cell *c = out->cells + k;
            memcpy(c->g, canopy_tv_geom(tv, k), sizeof c->g);
            if (src->quad)
                memcpy(c->quad, src->quad + (int64_t)k * MP_QUAD_FLOATS, sizeof c->quad);
            else
                memset(c->quad, 0, sizeof c->quad);
            c->child = h->child;
            c->nchild = h->child < 0 ? 0 : h->nchild;
            c->begin = h->child < 0 ? h->begin : 0;
            c->end = h->child < 0 ? h->end : 0;
            c->pruned = 0;
        }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < tv->n; i++) {
            let_body *b = out->bodies + i;
            memcpy(b->x, canopy_tv_point(tv, i), sizeof b->x);
            b->m = tv->weights[i];
            b->id = src->gid[tv->ids[i]];
        }
    }
    return CANOPY_OK;
}

/* Levels exported before the subtrees go to the threads (up to 8^2 subtrees). */
enum { LET_DEFER_LEVEL = 3 };

/* put() from the root with the cells of LET_DEFER_LEVEL left as stubs; each stub's
 * subtree is exported into a piece of its own, in parallel, and the pieces are appended
 * in the stubs' order, their indices shifted. Children stay contiguous and in the
 * tree's order, so the walk visits the same cells in the same order as over put()'s
 * one-thread layout: the same sums. */
static canopy_status export_parallel(exporter *x) {
    let_piece *p = x->p;
    x->defer_level = LET_DEFER_LEVEL;
    canopy_status s = put(x, 0, 0, 1);
    int64_t nd = x->n_defer;
    let_piece *sub = NULL;
    if (!s && nd > 0) s = canopy_calloc((void **)&sub, (size_t)nd, sizeof *sub);
    canopy_status failed = CANOPY_OK;
    char why[256] = "";
#pragma omp parallel for schedule(dynamic, 1) num_threads(canopy_threads())
    for (int64_t k = 0; k < nd; k++) {
        if (s) continue;
        const int32_t *d = x->defer + 3 * k;
        exporter y = {x->d, x->boxes, x->n_boxes, x->inv_theta, x->radius, sub + k,
                      0,    0,        0,          NULL,         0,         0};
        sub[k].order = p->order;
        canopy_status e = grow((void **)&sub[k].cells, &y.cap_cells, 1, sizeof *sub[k].cells);
        if (!e) {
            sub[k].n_cells = 1;
            e = put(&y, d[0], 0, d[2]);
        }
        if (e) {
#pragma omp critical(canopy_let_export_parallel_error)
            if (!failed) {
                failed = e;
                snprintf(why, sizeof why, "%s", canopy_last_error());
            }
        }
    }
    if (!s && failed) s = canopy_fail(failed, "%s", why);
    for (int64_t k = 0; !s && k < nd; k++) {
        const let_piece *q = sub + k;
        int32_t base = p->n_cells - 1, bo = p->n_bodies; /* sub cell j > 0 -> base + j */
        s = grow((void **)&p->cells, &x->cap_cells, (int64_t)base + q->n_cells, sizeof *p->cells);
        if (!s)
            s = grow((void **)&p->bodies, &x->cap_bodies, (int64_t)bo + q->n_bodies + 1,
                     sizeof *p->bodies);
        if (s) break;
        for (int32_t j = 0; j < q->n_cells; j++) {
            let_cell c = q->cells[j];
            if (c.child >= 0)
                c.child += base;
            else if (!c.pruned)
                c.begin += bo, c.end += bo;
            p->cells[j == 0 ? x->defer[3 * k + 1] : base + j] = c;
        }
        if (q->n_bodies > 0)
            memcpy(p->bodies + bo, q->bodies, (size_t)q->n_bodies * sizeof *p->bodies);
        p->n_cells = base + q->n_cells;
        p->n_bodies = bo + q->n_bodies;
        p->depth = q->depth > p->depth ? q->depth : p->depth;
    }
    for (int64_t k = 0; sub && k < nd; k++) canopy_let_piece_free(sub + k);
    canopy_free(sub);
    canopy_free(x->defer);
    x->defer = NULL;
    return s;
}

canopy_status canopy_let_export(const let_domain *src, const float *boxes, int32_t n_boxes,
                                float inv_theta, let_radius radius, let_piece *out) {
    memset(out, 0, sizeof *out);
    out->order = src->order;
    if (!src->tree || (n_boxes < 1 && radius != LET_RADIUS_TOP))
        return CANOPY_OK; /* nothing here, or nobody asks */
    if (radius == LET_RADIUS_ALL) return export_all(src, out);
    exporter x = {src, boxes, n_boxes, inv_theta, radius, out, 0, 0, 0, NULL, 0, 0};
    canopy_status s = grow((void **)&out->cells, &x.cap_cells, 1, sizeof *out->cells);
    if (!s) {
        out->n_cells = 1;
        /* the top tree is small: one thread */
        s = radius == LET_RADIUS_TOP ? put(&x, 0, 0, 1) : export_parallel(&x);
    }
    if (s) canopy_let_piece_free(out);
    return s;
}

int canopy_let_top_suffices(const let_piece *top, const float *boxes, int32_t n_boxes,
                            float inv_theta) {
    if (top->n_cells == 0 || n_boxes < 1) return 1; /* nothing there, or nobody asks */
    /* A top tree holds at most LET_MAX_BOXES box cells per level; this stack holds the
     * pending siblings of one path (7 per level, like canopy_let_forces'). */
    int32_t stack[8 * 64], sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const let_cell *c = top->cells + stack[--sp];
        int all = 1;
        for (int32_t b = 0; all && b < n_boxes; b++)
            all = box_accepts(c->g, boxes + 6 * b, boxes + 6 * b + 3, inv_theta,
                              LET_RADIUS_CORRECTED);
        if (all) continue;
        if (c->pruned) return 0; /* a box cell some body may open: its subtree is needed */
        if (sp + c->nchild > (int32_t)(sizeof stack / sizeof *stack)) return 0;
        for (int32_t k = c->nchild - 1; k >= 0; k--) stack[sp++] = c->child + k;
    }
    return 1;
}

void canopy_let_piece_free(let_piece *p) {
    canopy_free(p->cells);
    canopy_free(p->bodies);
    memset(p, 0, sizeof *p);
}

int64_t canopy_let_piece_bytes(const let_piece *p) {
    return (int64_t)p->n_cells * (int64_t)sizeof(let_cell) +
           (int64_t)p->n_bodies * (int64_t)sizeof(let_body);
}

/* One body's walk over one piece with mp_body_truncate's test. */
static void walk_piece(const let_piece *p, const float *q, int64_t qid, float inv_theta, float eps2,
                       int32_t *stack, float *a, float *phi, let_walk_stats *st) {
    if (p->n_cells == 0) return;
    int32_t sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const let_cell *c = p->cells + stack[--sp];
        const float *g = c->g;
        float half = g[7];
        int inside =
            fabsf(q[0] - g[4]) <= half && fabsf(q[1] - g[5]) <= half && fabsf(q[2] - g[6]) <= half;
        if (!inside) {
            float dx = g[0] - q[0], dy = g[1] - q[1], dz = g[2] - q[2];
            if (dx * dx + dy * dy + dz * dz > mp_open2(g, inv_theta)) {
                mp_expand(g, p->order == 2 ? c->quad : NULL, eps2, q, a, phi);
                st->expansions++;
                continue;
            }
        }
        if (c->pruned) {
            st->dropped++;
        } else if (c->child < 0) {
            for (int32_t i = c->begin; i < c->end; i++) {
                const let_body *b = p->bodies + i;
                if (b->id == qid) continue;
                mp_direct(b->x, b->m, eps2, q, a, phi);
                st->direct++;
            }
        } else {
            for (int32_t k = c->nchild - 1; k >= 0; k--) stack[sp++] = c->child + k;
        }
    }
}

canopy_status canopy_let_forces(const let_piece *pieces, int32_t n_pieces, canopy_points q,
                                const int64_t *qid, float inv_theta, float eps2, float *acc,
                                float *pot, int64_t *work, let_walk_stats *stats) {
    int32_t depth = 1;
    for (int32_t k = 0; k < n_pieces; k++)
        depth = pieces[k].depth > depth ? pieces[k].depth : depth;
    int64_t cap = (int64_t)depth * 7 + 1; /* octree: 8 children, 7 left pending per level */
    int64_t e = 0, dd = 0, dr = 0;
    int failed = 0;
#pragma omp parallel num_threads(canopy_threads()) reduction(+ : e, dd, dr) reduction(| : failed)
    {
        int32_t *stack = malloc((size_t)cap * sizeof *stack);
        failed = stack == NULL;
#pragma omp for schedule(dynamic, 64)
        for (int64_t i = 0; i < q.n; i++) {
            if (!stack) continue;
            let_walk_stats st = {0, 0, 0};
            float a[3] = {0.0f, 0.0f, 0.0f}, phi = 0.0f;
            const float *x = canopy_point(q, i);
            for (int32_t k = 0; k < n_pieces; k++)
                walk_piece(pieces + k, x, qid[i], inv_theta, eps2, stack, a, &phi, &st);
            for (int j = 0; j < 3; j++) acc[3 * i + j] = a[j];
            if (pot) pot[i] = phi;
            if (work) work[i] = st.expansions + st.direct;
            e += st.expansions;
            dd += st.direct;
            dr += st.dropped;
        }
        free(stack);
    }
    if (failed) return canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the LET walk");
    if (stats) {
        stats->expansions = e;
        stats->direct = dd;
        stats->dropped = dr;
    }
    return CANOPY_OK;
}

canopy_status canopy_let_split_curve(canopy_points bodies, canopy_schedule curve,
                                     const double *work, int32_t r, int64_t *order,
                                     int64_t *start) {
    if (r < 1) return canopy_fail(CANOPY_ERR_INVALID, "gravity: %d domains", (int)r);
    if (curve != CANOPY_SCHEDULE_MORTON && curve != CANOPY_SCHEDULE_HILBERT)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: domains follow the morton or hilbert curve");
    int64_t n = bodies.n;
    canopy_status s = canopy_schedule_queries(curve, bodies, NULL, order);
    if (s) return s;
    start[0] = 0;
    if (!work) {
        for (int32_t k = 1; k <= r; k++) start[k] = n * k / r;
        return CANOPY_OK;
    }
    double total = 0.0;
    for (int64_t i = 0; i < n; i++) total += work[i] > 0.0 ? work[i] : 0.0;
    double acc = 0.0;
    int64_t i = 0;
    for (int32_t k = 1; k < r; k++) {
        double target = total * k / r;
        for (; i < n; i++) {
            double w = work[order[i]] > 0.0 ? work[order[i]] : 0.0;
            if (acc + w > target) break;
            acc += w;
        }
        start[k] = i;
    }
    start[r] = n;
    return CANOPY_OK;
}
