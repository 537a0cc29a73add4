/* SPDX-License-Identifier: MIT */
/* Tree builders of every kind: structural invariants (ids, ranges, contiguous
 * children, layout order, ropes, parents, levels, leaf sizes), each node's geometry
 * against its points, the distance bounds of canopy/traverse_geom.h against canopy_dist2,
 * octree masses, determinism across thread counts, and argument errors. Inputs
 * are fresh each run over sizes, dimensions and degenerate sets (duplicates, ties
 * on a grid, all points equal, empty). */
#include "canopy/traverse_geom.h"
#include "check.h"
#include "core/cpu_internal.h"
#include "tree/tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------------ inputs -- */

typedef enum { IN_UNIFORM, IN_CLUSTERS, IN_DUPS, IN_GRID, IN_EQUAL, IN_COUNT } input_kind;
static const char *const input_name[IN_COUNT] = {"uniform", "clusters", "duplicates", "grid",
                                                 "all-equal"};

/* n x d points with the given row stride (>= d; the padding is NaN, which a
 * builder reading it would reject or propagate). */
static float *make_points(input_kind k, int64_t n, int32_t d, int64_t stride, uint64_t seed) {
    float *dense = xcalloc((size_t)(n * d), sizeof(float));
    canopy_rng r = canopy_rng_make(seed, 12345);
    switch (k) {
    case IN_UNIFORM:
        if (n > 0) CHECK_OK(canopy_gen_uniform(dense, n, d, 0.0, 1.0, seed));
        break;
    case IN_CLUSTERS:
        if (n > 0) CHECK_OK(canopy_gen_clusters(dense, NULL, n, d, 4, 0.01, seed));
        break;
    case IN_DUPS: {
        /* Half the points on one spot, a quarter on two others, the rest fresh. */
        float pool[3][16];
        for (int c = 0; c < 3; c++)
            for (int32_t j = 0; j < d; j++) pool[c][j] = (float)canopy_rng_uniform(&r);
        for (int64_t i = 0; i < n; i++) {
            uint64_t u = canopy_rng_below(&r, 4);
            for (int32_t j = 0; j < d; j++)
                dense[i * d + j] = u < 2   ? pool[0][j]
                                   : u < 3 ? pool[1 + canopy_rng_below(&r, 2)][j]
                                           : (float)canopy_rng_uniform(&r);
        }
        break;
    }
    case IN_GRID:
        for (int64_t i = 0; i < n * d; i++) dense[i] = (float)canopy_rng_below(&r, 3);
        break;
    case IN_EQUAL:
        for (int64_t i = 0; i < n * d; i++) dense[i] = 0.375f;
        break;
    case IN_COUNT:
        break;
    }
    if (stride == d) return dense;
    float *x = xcalloc((size_t)(n * stride), sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        memcpy(x + i * stride, dense + i * d, sizeof(float) * (size_t)d);
        for (int64_t j = d; j < stride; j++) x[i * stride + j] = NAN;
    }
    free(dense);
    return x;
}

/* ------------------------------------------------------------------ checks -- */

static int bad;        /* failures in the current tree; the first few are printed */
static int curve_tree; /* the tree checked is a kd curve tree (splits at key bits) */
static char what[200]; /* the tree being checked, for messages */

#define T(cond, ...)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (bad++ < 3) {                                                                       \
                char msg_[256];                                                                    \
                snprintf(msg_, sizeof msg_, __VA_ARGS__);                                          \
                CHECK_MSG(0, "%s: %s (%s)", what, msg_, #cond);                                    \
            }                                                                                      \
        }                                                                                          \
    } while (0)

static double dist_d(const float *a, const float *b, int32_t d) {
    double s = 0.0;
    for (int32_t j = 0; j < d; j++) {
        double t = (double)a[j] - b[j];
        s += t * t;
    }
    return sqrt(s);
}

static int same_point(const float *a, const float *b, int32_t d) {
    return memcmp(a, b, sizeof(float) * (size_t)d) == 0;
}

static int all_identical(const canopy_tree_view *tv, const canopy_node *h) {
    for (int32_t i = h->begin + 1; i < h->end; i++)
        if (!same_point(canopy_tv_point(tv, i), canopy_tv_point(tv, h->begin), tv->d)) return 0;
    return 1;
}

static int32_t expected_geom_stride(canopy_tree_kind k, int32_t d) {
    switch (k) {
    case CANOPY_TREE_KD:
        return 2 * d + 1;
    case CANOPY_TREE_BALL:
        return d + 1;
    case CANOPY_TREE_VP:
        return d + 3;
    case CANOPY_TREE_OCT:
        return 8;
    case CANOPY_TREE_BST:
        return 2;
    }
    return -1;
}

static void check_structure(const canopy_tree *t, canopy_points pts, const canopy_tree_options *o,
                            const float *w) {
    const canopy_tree_view *tv = &t->view;
    int64_t n = pts.n;
    int32_t d = pts.d, nn = tv->n_nodes;
    T(tv->n == n && tv->d == d && tv->kind == (int32_t)o->kind, "header");
    T(nn >= 1 && nn <= 2 * n + 1, "%d nodes for %lld points", nn, (long long)n);
    T(tv->max_children == (o->kind == CANOPY_TREE_OCT ? 8 : 2), "max_children %d",
      tv->max_children);
    T(tv->geom_stride == expected_geom_stride(o->kind, d), "geom_stride %d", tv->geom_stride);
    T(tv->hot_stride % 16 == 0 &&
          tv->hot_stride >= (int32_t)(sizeof(canopy_node) + 4 * (size_t)tv->geom_stride),
      "hot_stride %d", tv->hot_stride);
    if (o->leaf_size > 0) T(t->leaf_size == o->leaf_size, "leaf size %d", t->leaf_size);
    if (bad) return;

    /* Points in tree order: a permutation of the input, copied with their weights. */
    unsigned char *seen = xcalloc((size_t)n, 1);
    for (int64_t i = 0; i < n; i++) {
        int64_t id = tv->ids[i];
        T(id >= 0 && id < n && !seen[id], "ids[%lld] = %lld", (long long)i, (long long)id);
        if (id < 0 || id >= n) continue;
        seen[id] = 1;
        T(same_point(canopy_tv_point(tv, i), canopy_point(pts, id), d), "point %lld copied",
          (long long)i);
        if (w) T(tv->weights[i] == w[id], "weight %lld copied", (long long)i);
    }
    if (!w) T(tv->weights == NULL, "weights without input weights");
    free(seen);

    /* Topology: contiguous non-empty children covering the parent's range, parents
     * before children, each node the child of exactly one parent, ropes, levels. */
    const canopy_node *root = canopy_tv_node(tv, 0);
    T(root->begin == 0 && root->end == n, "root range [%d, %d)", root->begin, root->end);
    T(t->rope[0] == -1 && t->parent[0] == -1 && t->level[0] == 0, "root rope/parent/level");
    int32_t *refs = xcalloc((size_t)nn, sizeof(int32_t));
    int32_t *cover = xcalloc((size_t)n, sizeof(int32_t));
    int32_t max_level = 0;
    int32_t leaf_size = t->leaf_size;
    for (int32_t v = 0; v < nn && !bad; v++) {
        const canopy_node *h = canopy_tv_node(tv, v);
        int32_t count = h->end - h->begin;
        T(h->begin >= 0 && h->begin <= h->end && h->end <= n, "node %d range [%d, %d)", v, h->begin,
          h->end);
        if (t->level[v] > max_level) max_level = t->level[v];
        if (h->child < 0) {
            T(h->nchild == 0, "leaf %d has nchild %d", v, h->nchild);
            T(v == 0 || count > 0, "empty leaf %d", v);
            /* Only an octree leaf whose points cannot be separated may be oversized. */
            int oversize_ok = o->kind == CANOPY_TREE_OCT &&
                              (all_identical(tv, h) ||
                               canopy_tv_geom(tv, v)[7] <= canopy_tv_geom(tv, 0)[7] * 0x1p-30f);
            T(count <= leaf_size || oversize_ok, "leaf %d holds %d > %d points", v, count,
              leaf_size);
            for (int32_t i = h->begin; i < h->end; i++) cover[i]++;
            continue;
        }
        T(count > leaf_size, "node %d with %d <= %d points was split", v, count, leaf_size);
        T(h->nchild >= 2 && h->nchild <= tv->max_children, "node %d has %d children", v, h->nchild);
        T(h->child > v && h->child + h->nchild <= nn, "node %d: children at %d", v, h->child);
        if (bad) break;
        int32_t pos = h->begin;
        for (int32_t c = 0; c < h->nchild; c++) {
            int32_t ch = h->child + c;
            const canopy_node *k = canopy_tv_node(tv, ch);
            refs[ch]++;
            T(k->begin == pos && k->end > k->begin, "child %d of %d: [%d, %d) from %d", ch, v,
              k->begin, k->end, pos);
            pos = k->end;
            T(t->parent[ch] == v && t->level[ch] == t->level[v] + 1, "child %d parent/level", ch);
            T(t->rope[ch] == (c + 1 < h->nchild ? ch + 1 : t->rope[v]), "rope of %d is %d", ch,
              t->rope[ch]);
        }
        T(pos == h->end, "children of %d end at %d, not %d", v, pos, h->end);
    }
    for (int32_t v = 0; v < nn && !bad; v++)
        T(refs[v] == (v > 0), "node %d is the child of %d parents", v, refs[v]);
    for (int64_t i = 0; i < n && !bad; i++)
        T(cover[i] == 1, "point %lld in %d leaves", (long long)i, cover[i]);
    T(tv->depth == max_level + 1, "depth %d, deepest level %d", tv->depth, max_level);
    free(refs);
    free(cover);
    if (bad) return;

    /* Layout: child groups numbered in the requested order of the groups. */
    int32_t *q = xcalloc((size_t)nn, sizeof(int32_t));
    int32_t next = 1, head = 0, tail = 0;
    q[tail++] = 0;
    while (head < tail && !bad) {
        int32_t v = o->order == CANOPY_ORDER_BREADTH_FIRST ? q[head++] : q[--tail];
        const canopy_node *h = canopy_tv_node(tv, v);
        if (h->child < 0) continue;
        T(h->child == next, "%s order: children of %d at %d, expected %d",
          o->order == CANOPY_ORDER_BREADTH_FIRST ? "breadth-first" : "depth-first", v, h->child,
          next);
        next += h->nchild;
        if (o->order == CANOPY_ORDER_BREADTH_FIRST)
            for (int32_t c = 0; c < h->nchild; c++) q[tail++] = h->child + c;
        else
            for (int32_t c = h->nchild - 1; c >= 0; c--) q[tail++] = h->child + c;
    }
    T(bad || next == nn, "layout numbers %d of %d nodes", next, nn);
    free(q);
}

/* vp split key: the distance from v as the builder computes and rounds it. */
static float vp_key(const float *v, const float *x, int32_t d) {
    return (float)dist_d(v, x, d);
}

static void check_geometry(const canopy_tree *t, const float *w) {
    const canopy_tree_view *tv = &t->view;
    int32_t d = tv->d;
    double total_w = 0.0;
    for (int64_t i = 0; i < tv->n; i++) total_w += w ? w[tv->ids[i]] : 1.0;
    for (int32_t v = 0; v < tv->n_nodes && !bad; v++) {
        const canopy_node *h = canopy_tv_node(tv, v);
        const float *g = canopy_tv_geom(tv, v);
        int32_t m = h->end - h->begin;
        if (m == 0) continue;
        switch ((canopy_tree_kind)tv->kind) {
        case CANOPY_TREE_KD:
        case CANOPY_TREE_BST: {
            /* A tight box; bst children ordered by key. */
            int32_t dd = tv->kind == CANOPY_TREE_BST ? 1 : d;
            for (int32_t j = 0; j < dd; j++) {
                float lo = INFINITY, hi = -INFINITY;
                for (int32_t i = h->begin; i < h->end; i++) {
                    float x = canopy_tv_point(tv, i)[j];
                    lo = x < lo ? x : lo;
                    hi = x > hi ? x : hi;
                }
                T(g[j] == lo && g[dd + j] == hi, "node %d box [%g, %g], points [%g, %g]", v, g[j],
                  g[dd + j], lo, hi);
            }
            if (tv->kind == CANOPY_TREE_BST && h->child >= 0)
                T(canopy_tv_geom(tv, h->child)[1] <= canopy_tv_geom(tv, h->child + 1)[0],
                  "bst node %d: children keys overlap", v);
            if (tv->kind == CANOPY_TREE_KD && h->child >= 0 && curve_tree) {
                /* halves of any size, apart along the split dimension */
                int32_t dim = (int32_t)g[2 * d];
                const float *gl = canopy_tv_geom(tv, h->child);
                const float *gr = canopy_tv_geom(tv, h->child + 1);
                T(dim >= 0 && dim < d && gl[d + dim] <= gr[dim],
                  "kd curve node %d: split dim %d, left max %g right min %g", v, dim,
                  gl[d + (dim & 3) % d], gr[(dim & 3) % d]);
            } else if (tv->kind == CANOPY_TREE_KD && h->child >= 0) {
                /* split on the widest side (the first of equals) at the median: halves of
                 * m / 2 and the rest, apart along it, ties at the median on either side */
                int32_t dim = (int32_t)g[2 * d], widest = 0;
                for (int32_t j = 1; j < d; j++)
                    if (g[d + j] - g[j] > g[d + widest] - g[widest]) widest = j;
                const float *gl = canopy_tv_geom(tv, h->child);
                const float *gr = canopy_tv_geom(tv, h->child + 1);
                const canopy_node *l = canopy_tv_node(tv, h->child);
                T(dim == widest && l->end - l->begin == m / 2 && gl[d + dim] <= gr[dim],
                  "kd node %d: split dim %d (widest %d), left %d of %d, left max %g right min %g",
                  v, dim, widest, l->end - l->begin, m, gl[d + dim], gr[dim]);
            }
            break;
        }
        case CANOPY_TREE_BALL: {
            /* Centre = mean; radius bounds every exact distance and is tight. */
            double far = 0.0;
            for (int32_t j = 0; j < d; j++) {
                double s = 0.0;
                for (int32_t i = h->begin; i < h->end; i++) s += canopy_tv_point(tv, i)[j];
                s /= m;
                T(fabs(g[j] - s) <= 1e-6 * (1.0 + fabs(s)), "ball %d centre[%d] %g, mean %g", v, j,
                  g[j], s);
            }
            for (int32_t i = h->begin; i < h->end; i++) {
                double r = dist_d(canopy_tv_point(tv, i), g, d);
                T(r <= g[d], "ball %d: point %d at %.9g > radius %.9g", v, i, r, g[d]);
                far = r > far ? r : far;
            }
            T(g[d] <= far * (1 + 1e-6) + 1e-30, "ball %d radius %g, farthest %g", v, g[d], far);
            break;
        }
        case CANOPY_TREE_VP: {
            /* v is one of the node's points; [lo, hi] bounds (tightly) the distances
             * from v; children split at mu (inside <=, outside >) unless all keys tie. */
            const float *mu = g + d, *lo = g + d + 1, *hi = g + d + 2;
            int is_point = 0;
            double dmin = INFINITY, dmax = 0.0;
            float kmin = INFINITY, kmax = -INFINITY;
            for (int32_t i = h->begin; i < h->end; i++) {
                const float *x = canopy_tv_point(tv, i);
                is_point |= same_point(x, g, d);
                double r = dist_d(x, g, d);
                T(*lo <= r && r <= *hi, "vp %d: distance %.9g outside [%.9g, %.9g]", v, r, *lo,
                  *hi);
                dmin = r < dmin ? r : dmin;
                dmax = r > dmax ? r : dmax;
                float k = vp_key(g, x, d);
                kmin = k < kmin ? k : kmin;
                kmax = k > kmax ? k : kmax;
            }
            T(is_point, "vp %d: vantage point is not one of its points", v);
            T(*hi <= dmax * (1 + 1e-6) + 1e-30 && *lo >= dmin * (1 - 1e-6) - 1e-30,
              "vp %d: loose shell [%g, %g] for [%g, %g]", v, *lo, *hi, dmin, dmax);
            if (h->child >= 0 && kmin != kmax) {
                for (int32_t c = 0; c < 2; c++) {
                    const canopy_node *k = canopy_tv_node(tv, h->child + c);
                    for (int32_t i = k->begin; i < k->end; i++) {
                        float key = vp_key(g, canopy_tv_point(tv, i), d);
                        T(c == 0 ? key <= *mu : key > *mu, "vp %d: child %d has key %g, mu %g", v,
                          c, key, *mu);
                    }
                }
            }
            break;
        }
        case CANOPY_TREE_OCT: {
            /* Points inside the cube (exactly), mass and weighted centre of mass. */
            const float *com = g, *c = g + 4;
            float half = g[7];
            double ws = 0.0, wx[3] = {0, 0, 0};
            for (int32_t i = h->begin; i < h->end; i++) {
                const float *x = canopy_tv_point(tv, i);
                double wi = w ? w[tv->ids[i]] : 1.0;
                ws += wi;
                for (int j = 0; j < 3; j++) {
                    wx[j] += wi * x[j];
                    T(fabs((double)x[j] - c[j]) <= half, "oct %d: point %d outside its cell", v, i);
                }
            }
            double mass = w ? ws : ws / total_w;
            T(fabs(g[3] - mass) <= 1e-5 * mass, "oct %d mass %g, expected %g", v, g[3], mass);
            for (int j = 0; j < 3; j++)
                T(fabs(com[j] - wx[j] / ws) <= 1e-5 * (half + fabs(c[j])),
                  "oct %d com[%d] %g, expected %g", v, j, com[j], wx[j] / ws);
            if (v == 0) T(fabs(g[3] - (w ? total_w : 1.0)) <= 1e-5 * g[3], "root mass %g", g[3]);
            if (h->child < 0) break;
            /* Children: masses add up, cells nest, octant order (x bit 0) where each
             * child's side of the centre is determined by its points. */
            double child_mass = 0.0;
            int prev = -1;
            for (int32_t ci = 0; ci < h->nchild; ci++) {
                const canopy_node *k = canopy_tv_node(tv, h->child + ci);
                const float *kg = canopy_tv_geom(tv, h->child + ci);
                child_mass += kg[3];
                /* Up to rounding: the half widths absorb the centres' rounding. */
                double slack = 1e-6 * (half + fabs(c[0]) + fabs(c[1]) + fabs(c[2]));
                for (int j = 0; j < 3; j++)
                    T(fabs((double)kg[4 + j] - c[j]) + kg[7] <= half + slack,
                      "oct %d: child cell %d (%.9g +- %.9g) outside (%.9g +- %.9g)", v,
                      h->child + ci, kg[4 + j], kg[7], c[j], half);
                int code = 0, known = 1;
                for (int j = 0; j < 3; j++) {
                    int below = 1, above = 1;
                    for (int32_t i = k->begin; i < k->end; i++) {
                        float x = canopy_tv_point(tv, i)[j];
                        below &= x <= c[j];
                        above &= x >= c[j];
                    }
                    T(below || above, "oct %d: child %d straddles the centre", v, h->child + ci);
                    if (below == above) known = 0;
                    code |= above << j;
                }
                if (known) {
                    T(code > prev, "oct %d: child %d octant %d after %d", v, ci, code, prev);
                    prev = code;
                }
            }
            T(fabs(child_mass - g[3]) <= 1e-5 * g[3], "oct %d: children mass %g of %g", v,
              child_mass, g[3]);
            break;
        }
        }
    }
}

/* A point the geometry is anchored at: box centre, ball centre, vantage point,
 * cell centre. */
static void anchor(const canopy_tree_view *tv, int32_t v, float *a) {
    const float *g = canopy_tv_geom(tv, v);
    int32_t d = tv->d;
    for (int32_t j = 0; j < d; j++) {
        switch ((canopy_tree_kind)tv->kind) {
        case CANOPY_TREE_KD:
        case CANOPY_TREE_BST:
            a[j] = 0.5f * (g[j] + g[d + j]);
            break;
        case CANOPY_TREE_OCT:
            a[j] = g[4 + j];
            break;
        default:
            a[j] = g[j];
            break;
        }
    }
}

/* min <= canopy_dist2 <= max for every point of the node, over queries that hit
 * the bounds' weak spots: on and next to the node's points, pushed just past them
 * along the line from the geometry's anchor, at the anchor, and far away. */
static void check_bounds(const canopy_tree *t, int32_t v, canopy_rng *r) {
    const canopy_tree_view *tv = &t->view;
    const canopy_node *h = canopy_tv_node(tv, v);
    int32_t d = tv->d, m = h->end - h->begin;
    if (m == 0) return;
    float q[16], a[16];
    anchor(tv, v, a);
    for (int trial = 0; trial < 12 && !bad; trial++) {
        const float *p = canopy_tv_point(tv, h->begin + (int32_t)canopy_rng_below(r, (uint64_t)m));
        static const float push[] = {1e-7f, 1e-6f, 1e-5f, 1e-3f, -1e-6f};
        for (int32_t j = 0; j < d; j++) {
            switch (trial) {
            case 0:
                q[j] = p[j];
                break;
            case 1:
                q[j] = a[j];
                break;
            case 2:
                q[j] = 1000.0f + (float)canopy_rng_uniform(r);
                break;
            case 3:
            case 4:
                q[j] = p[j] + (float)(canopy_rng_uniform(r) - 0.5) * 1e-6f;
                break;
            case 5:
            case 6:
                q[j] = (float)(canopy_rng_uniform(r) * 2.0 - 0.5);
                break;
            default:
                q[j] = a[j] + (p[j] - a[j]) * (1.0f + push[trial - 7]);
                break;
            }
        }
        float lo = canopy_node_min_dist2(tv, v, q), hi = canopy_node_max_dist2(tv, v, q);
        T(lo >= 0.0f && lo <= hi, "node %d: bounds [%g, %g]", v, lo, hi);
        if (trial == 2) T(lo > 0.0f, "node %d: no lower bound for a far query", v);
        for (int32_t i = h->begin; i < h->end; i++) {
            float d2 = canopy_dist2(q, canopy_tv_point(tv, i), d);
            T(lo <= d2 && d2 <= hi, "node %d, query %d: dist2 %.9g outside [%.9g, %.9g]", v, trial,
              d2, lo, hi);
        }
    }
}

static void check_tree(const canopy_tree *t, canopy_points pts, const canopy_tree_options *o,
                       const float *w, canopy_rng *r) {
    bad = 0;
    check_structure(t, pts, o, w);
    if (!bad) check_geometry(t, w);
    int32_t nn = t->view.n_nodes;
    for (int32_t v = 0; v < nn && !bad; v++)
        if (nn <= 40 || v == 0 || canopy_rng_below(r, (uint64_t)nn) < 12) check_bounds(t, v, r);
    CHECK_MSG(bad == 0, "%s: %d failures", what, bad);
}

/* ------------------------------------------------------------------- tests -- */

static const canopy_tree_kind kinds[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP,
                                         CANOPY_TREE_OCT, CANOPY_TREE_BST};

static int allows(canopy_tree_kind k, int32_t d) {
    return k == CANOPY_TREE_OCT ? d == 3 : k == CANOPY_TREE_BST ? d == 1 : 1;
}

static void test_matrix(uint64_t seed) {
    static const int64_t sizes[] = {0, 1, 2, 7, 100, 10000};
    static const int32_t dims[] = {1, 2, 3, 7, 16};
    canopy_rng r = canopy_rng_make(seed, 1);
    for (size_t ki = 0; ki < sizeof kinds / sizeof *kinds; ki++)
        for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
            int32_t d = dims[di];
            if (!allows(kinds[ki], d)) continue;
            for (size_t ni = 0; ni < sizeof sizes / sizeof *sizes; ni++)
                for (int in = 0; in < IN_COUNT; in++) {
                    int64_t n = sizes[ni];
                    int64_t stride = in == IN_GRID ? d + 2 : d;
                    uint64_t s = seed + 7919 * (ni + 10 * (di + 10 * (size_t)in));
                    float *x = make_points((input_kind)in, n, d, stride, s);
                    float *w = xcalloc((size_t)n, sizeof(float));
                    for (int64_t i = 0; i < n; i++) w[i] = (float)(0.5 + canopy_rng_uniform(&r));
                    canopy_points pts = {x, n, d, stride};
                    static const int32_t leaves[] = {0, 1, 3};
                    int nleaves = n <= 100 ? 3 : 1;
                    for (int li = 0; li < nleaves; li++)
                        for (int order = 0; order < 2; order++) {
                            canopy_tree_options o = canopy_tree_options_default(kinds[ki]);
                            o.leaf_size = leaves[li];
                            o.order = (canopy_tree_order)order;
                            o.weights = (order + li + in) % 2 ? w : NULL;
                            snprintf(what, sizeof what,
                                     "%s tree, n %lld, d %d, %s, leaf %d, %s, %s weights",
                                     canopy_tree_kind_name(kinds[ki]), (long long)n, d,
                                     input_name[in], o.leaf_size, order ? "bfs" : "dfs",
                                     o.weights ? "with" : "no");
                            canopy_tree *t = NULL;
                            canopy_status st = canopy_tree_build(pts, &o, &t);
                            CHECK_MSG(st == CANOPY_OK, "%s: build: %s", what, canopy_last_error());
                            if (t) check_tree(t, pts, &o, o.weights, &r);
                            canopy_tree_free(t);
                        }
                    free(w);
                    free(x);
                }
        }
}

/* The same input gives byte-identical trees on 1 and 3 threads; from 65,536 rows the kd
 * builder shares a node's box and scatter out on the team (150,000 points: kd only; quick:
 * 70,000, past that threshold at the root only). */
static void test_determinism(uint64_t seed) {
    const int64_t big_n = check_quick() ? 70000 : 150000;
    for (int big = 0; big < 2; big++)
        for (size_t ki = 0; ki < sizeof kinds / sizeof *kinds; ki++) {
            const int64_t n = big ? big_n : 20000;
            int32_t d = kinds[ki] == CANOPY_TREE_BST ? 1 : 3 - big;
            if (big && kinds[ki] != CANOPY_TREE_KD) continue;
            for (int in = 0; in < IN_COUNT; in++) {
                float *x = make_points((input_kind)in, n, d, d, seed + (uint64_t)in);
                canopy_points pts = canopy_points_make(x, n, d);
                canopy_tree_options o = canopy_tree_options_default(kinds[ki]);
                canopy_tree *a = NULL, *b = NULL;
                canopy_set_threads(1);
                CHECK_OK(canopy_tree_build(pts, &o, &a));
                canopy_set_threads(3);
                CHECK_OK(canopy_tree_build(pts, &o, &b));
                canopy_set_threads(1);
                if (a && b) {
                    const canopy_tree_view *va = &a->view, *vb = &b->view;
                    CHECK_MSG(va->n_nodes == vb->n_nodes &&
                                  memcmp(va->hot, vb->hot,
                                         (size_t)va->n_nodes * (size_t)va->hot_stride) == 0 &&
                                  memcmp(va->ids, vb->ids, sizeof(int64_t) * (size_t)n) == 0 &&
                                  memcmp(va->points, vb->points, sizeof(float) * (size_t)(n * d)) ==
                                      0,
                              "%s tree on %s input, n %lld, differs between 1 and 3 threads",
                              canopy_tree_kind_name(kinds[ki]), input_name[in], (long long)n);
                }
                canopy_tree_free(a);
                canopy_tree_free(b);
                free(x);
            }
        }
}

/* The kd builder's median paths on large nodes: the sampled bracket (uniform, sorted,
 * duplicates, d = 2 and 3 with their own row loops) and its fallback where the sample
 * misses the median (every sampled row far above the rest), at several leaf sizes. */
static void test_kd_median_paths(uint64_t seed) {
    enum { N = 16384, SAMPLE_STEP = 16 }; /* the root samples rows 8, 24, 40, ... */
    canopy_rng r = canopy_rng_make(seed, 3);
    for (int c = 0; c < 5; c++) {
        int32_t d = c == 3 ? 3 : c == 4 ? 1 : 2;
        int64_t n = c == 1 ? 40000 : N;
        float *x = c == 2 ? make_points(IN_DUPS, n, d, d, seed + 5) : xcalloc((size_t)(n * d), 4);
        for (int64_t i = 0; c != 2 && i < n; i++)
            for (int32_t j = 0; j < d; j++) {
                float u = (float)canopy_rng_uniform(&r);
                x[i * d + j] = c == 1 && j == 0 ? (float)i / (float)n /* sorted */
                               : j == 0 && i % SAMPLE_STEP == SAMPLE_STEP / 2 && c != 3
                                   ? 2.0f + u /* the sample's rows: the bracket misses */
                                   : u * (j == 0 ? 1.0f : 0.5f);
            }
        canopy_points pts = canopy_points_make(x, n, d);
        static const int32_t leaves[] = {1, 16, 64};
        for (int li = 0; li < 3; li++) {
            canopy_tree_options o = canopy_tree_options_default(CANOPY_TREE_KD);
            o.leaf_size = leaves[li];
            snprintf(what, sizeof what, "kd median case %d, n %lld, d %d, leaf %d", c, (long long)n,
                     d, o.leaf_size);
            canopy_tree *t = NULL;
            CHECK_OK(canopy_tree_build(pts, &o, &t));
            if (t) check_tree(t, pts, &o, NULL, &r);
            canopy_tree_free(t);
        }
        free(x);
    }
}

/* Byte-identical trees: points, ids and node records. */
static int same_tree(const canopy_tree *a, const canopy_tree *b) {
    const canopy_tree_view *va = &a->view, *vb = &b->view;
    return va->n_nodes == vb->n_nodes && va->n == vb->n &&
           memcmp(va->hot, vb->hot, (size_t)va->n_nodes * (size_t)va->hot_stride) == 0 &&
           memcmp(va->ids, vb->ids, sizeof(int64_t) * (size_t)va->n) == 0 &&
           memcmp(va->points, vb->points, sizeof(float) * (size_t)(va->n * va->d)) == 0;
}

/* The kd selection's AVX-512 partition (where the CPU has it) gives the scalar one's
 * trees byte for byte, on ties, duplicates and mixes of +0 and -0; and builds of
 * growing, shrinking and again growing sizes, which reuse the builder's kept scratch
 * block, still pass every check. */
static void test_kd_isa_and_reuse(uint64_t seed) {
    canopy_rng r = canopy_rng_make(seed, 11);
    static const int64_t sizes[] = {40000, 3000, 70000, 17, 25000};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++)
        for (int c = 0; c < 3; c++) {
            const int64_t n = sizes[si];
            const int32_t d = 1 + c;
            float *x = make_points(c == 0   ? IN_DUPS
                                   : c == 1 ? IN_GRID
                                            : IN_UNIFORM,
                                   n, d, d, seed + si * 7 + (uint64_t)c);
            for (int64_t i = 0; c == 1 && i < n * d; i++) /* the grid's zeros get both signs */
                if (x[i] == 0.0f && canopy_rng_below(&r, 2)) x[i] = -0.0f;
            canopy_points pts = canopy_points_make(x, n, d);
            canopy_tree_options o = canopy_tree_options_default(CANOPY_TREE_KD);
            o.leaf_size = c == 2 ? 5 : 0;
            canopy_tree *a = NULL, *b = NULL;
            canopy_cpu_isa_override(CANOPY_ISA_AVX2);
            CHECK_OK(canopy_tree_build(pts, &o, &a));
            canopy_cpu_isa_override(-1);
            CHECK_OK(canopy_tree_build(pts, &o, &b));
            snprintf(what, sizeof what, "kd isa/reuse case %d, n %lld, d %d", c, (long long)n, d);
            if (a && b) {
                CHECK_MSG(same_tree(a, b),
                          "%s: the %s partition's tree differs from the scalar one", what,
                          canopy_isa_name(canopy_cpu_isa()));
                check_tree(b, pts, &o, NULL, &r);
            }
            canopy_tree_free(a);
            canopy_tree_free(b);
            free(x);
        }
}

/* The kd curve build (splits at Morton-key bits, d <= 3): every structural and geometric
 * check, children apart along their split dimension, on every input kind, row strides,
 * both orders and with weights; clusters far too dense for the first grid (keyed again
 * over their own boxes), coincident points mixed with +-0, n below the leaf size; the
 * same trees on 1 and 3 threads; and its argument errors. */
static void test_kd_curve(uint64_t seed) {
    /* quick: the largest (the one built on 3 threads) still keys and gathers in a
     * taskloop (past 4 x TASK_MIN = 16,384 rows) and splits its subtrees into tasks */
    const int64_t big = check_quick() ? 20000 : 70000;
    const int64_t sizes[] = {0, 1, 2, 31, 33, 100, 10000, big};
    canopy_rng r = canopy_rng_make(seed, 17);
    curve_tree = 1;
    for (int32_t d = 1; d <= 3; d++)
        for (size_t ni = 0; ni < sizeof sizes / sizeof *sizes; ni++)
            for (int in = 0; in <= IN_COUNT; in++) {
                int64_t n = sizes[ni], stride = in == IN_GRID ? d + 1 : d;
                float *x = make_points(in == IN_COUNT ? IN_CLUSTERS : (input_kind)in, n, d, stride,
                                       seed + 31 * ni + (uint64_t)in);
                /* the last input: clusters 1e-6 wide and one point 1e6 away, so the first
                 * grid's cells each hold whole clusters; zeros of both signs */
                for (int64_t i = 0; in == IN_COUNT && i < n; i++)
                    for (int32_t j = 0; j < d; j++) {
                        float *c = x + i * stride + j;
                        *c = i == n / 2 ? -1e6f : *c * 1e-4f;
                        if (i % 7 == 3) *c = canopy_rng_below(&r, 2) ? 0.0f : -0.0f;
                    }
                float *w = xcalloc((size_t)n, sizeof(float));
                for (int64_t i = 0; i < n; i++) w[i] = (float)canopy_rng_uniform(&r);
                canopy_points pts = {x, n, d, stride};
                static const int32_t leaves[] = {0, 1, 5, 16};
                for (int li = 0; li < 4; li++) {
                    canopy_tree_options o = canopy_tree_options_default(CANOPY_TREE_KD);
                    o.leaf_size = leaves[li];
                    o.order = (canopy_tree_order)(li % 2);
                    o.weights = li == 2 ? w : NULL;
                    snprintf(what, sizeof what, "kd curve tree, n %lld, d %d, %s, leaf %d",
                             (long long)n, d, in == IN_COUNT ? "dense clusters" : input_name[in],
                             o.leaf_size);
                    canopy_tree *t = NULL;
                    canopy_set_threads(1 + 2 * (n == big && li == 0));
                    canopy_status st = canopy_tree_build_kd_curve(pts, &o, &t);
                    CHECK_MSG(st == CANOPY_OK, "%s: build: %s", what, canopy_last_error());
                    if (t && li == 0)
                        CHECK_MSG(t->leaf_size == CANOPY_KD_CURVE_LEAF, "%s: default leaf %d", what,
                                  t->leaf_size);
                    if (t) check_tree(t, pts, &o, o.weights, &r);
                    if (t && n == big && li == 0) { /* built on 3 threads: as on one */
                        canopy_tree *one = NULL;
                        canopy_set_threads(1);
                        CHECK_OK(canopy_tree_build_kd_curve(pts, &o, &one));
                        CHECK_MSG(one && same_tree(t, one), "%s: 3 threads differ from one", what);
                        canopy_tree_free(one);
                    }
                    canopy_set_threads(1);
                    canopy_tree_free(t);
                }
                free(w);
                free(x);
            }
    curve_tree = 0;
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    canopy_tree *t = NULL;
    canopy_tree_options o = canopy_tree_options_default(CANOPY_TREE_KD);
    CHECK_FAILS(canopy_tree_build_kd_curve(canopy_points_make(x, 2, 4), &o, &t), CANOPY_ERR_INVALID,
                "dimension 4 is not 1, 2 or 3");
    o.kind = CANOPY_TREE_BALL;
    CHECK_FAILS(canopy_tree_build_kd_curve(canopy_points_make(x, 4, 2), &o, &t), CANOPY_ERR_INVALID,
                "kind ball is not kd");
    x[3] = NAN;
    o.kind = CANOPY_TREE_KD;
    CHECK_FAILS(canopy_tree_build_kd_curve(canopy_points_make(x, 4, 2), &o, &t), CANOPY_ERR_INVALID,
                "tree points");
    CHECK(t == NULL);
}

static void test_errors(void) {
    float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    float w[6] = {1, 1, 1, 1, 1, 1};
    canopy_tree *t = NULL;
    canopy_tree_options o = canopy_tree_options_default(CANOPY_TREE_OCT);
    CHECK_FAILS(canopy_tree_build(canopy_points_make(x, 6, 2), &o, &t), CANOPY_ERR_INVALID,
                "oct tree needs d = 3 (got d = 2)");
    CHECK(t == NULL);
    o.kind = CANOPY_TREE_BST;
    CHECK_FAILS(canopy_tree_build(canopy_points_make(x, 4, 3), &o, &t), CANOPY_ERR_INVALID,
                "bst tree needs d = 1 (got d = 3)");
    o.kind = CANOPY_TREE_VP;
    w[4] = NAN;
    o.weights = w;
    CHECK_FAILS(canopy_tree_build(canopy_points_make(x, 6, 2), &o, &t), CANOPY_ERR_INVALID,
                "weight 4 is not finite");
    o.weights = NULL;
    x[5] = INFINITY;
    CHECK_FAILS(canopy_tree_build(canopy_points_make(x, 6, 2), &o, &t), CANOPY_ERR_INVALID,
                "tree points");
    o.kind = (canopy_tree_kind)99;
    x[5] = 5;
    CHECK_FAILS(canopy_tree_build(canopy_points_make(x, 6, 2), &o, &t), CANOPY_ERR_INVALID,
                "unknown tree kind");
}

int main(void) {
    uint64_t seed = check_seed();
    test_errors();
    /* One thread for the many small builds (a contended parallel region costs
     * more than they do); test_determinism shows threads change nothing. */
    canopy_set_threads(1);
    for (uint64_t s = 0; s < 2; s++) test_matrix(seed + s * 1000003);
    test_determinism(seed);
    test_kd_median_paths(seed);
    test_kd_isa_and_reuse(seed);
    test_kd_curve(seed);
    return check_finish();
}
