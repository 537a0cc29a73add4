// SPDX-License-Identifier: MIT
/* canopy_gl_gravity: tree build (octree or binary, level-synchronous so node numbering
 * does not depend on threads), moments, per-bucket interaction lists and the
 * vectorised force kernels (gravity/gravity_lists.h). */
#include "gravity/gravity_lists.h"

#include "gravity/ewald.h"
#include "gravity/multipole_terms.h"
#include "gravity/pm.h"
#include "core/cpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Walk record: 32 bytes, all the opening test and the descent read. */
typedef struct gl_hot {
    float c[3]; /* centre of mass */
    float r2;   /* squared opening radius */
    int32_t child, nchild, begin, end;
} gl_hot;

/* Moments, read only when a cell is listed: mass, then the packed multipole
 * (gravity/multipole_terms.h), 1 + mp_pack_count(order) floats per cell. */
static int cold_floats(int32_t order) {
    return 1 + mp_pack_count(order);
}

typedef struct gl_tree {
    int64_t n;
    float *x, *y, *z, *m; /* tree order */
    int64_t *ids;         /* caller index of each tree-order body */
    int32_t nn, cap, depth;
    gl_hot *hot; /* built here; copied into the walk layout at the end */
    float *box;  /* per node: tight bounding box lo[3], hi[3] */
    float *cube; /* octree: per node cell centre[3], half width */
    double *mom; /* per node: com[3], then mp_mono_count(order) monomial sums about it */
    int32_t order, nmom;
    char *walk;    /* records the walk reads (gl_hot, each followed by its cold record
                      when fused) */
    size_t stride; /* bytes between walk records */
    const char *cold_base;
    size_t cold_stride;
    int32_t *leaves; /* sink groups in body order */
    int32_t n_leaves;
    int32_t *walk_box; /* periodic: per sink group, the node whose box it walks with */
    int32_t borrowed; /* a received piece (canopy_gl_piece_open): its arrays are the caller's */
    float period;     /* > 0: bodies wrapped into the periodic cube [0, period)^3 */
    float group_side; /* periodic: the longest sink group, in boxes */
    float *q2;        /* periodic: per node the second moments sum m x_a x_b about the
                         centre of mass (xx yy zz xy xz yz), for the cells' Ewald terms */
    float inv_theta;  /* kept for canopy_gl_tree_refit */
    int32_t par_lo, par_hi; /* the level whose subtrees' moments are summed in parallel */
} gl_tree;

enum { GL_MAX_DEPTH = 61 }; /* levels; deeper nodes stay leaves */

static void tree_free(gl_tree *t) {
    free(t->x), free(t->y), free(t->z), free(t->m), free(t->ids);
    free(t->hot), free(t->box), free(t->cube), free(t->mom), free(t->walk), free(t->leaves);
    free(t->q2), free(t->walk_box);
}

static int grow_nodes(gl_tree *t, int32_t need) {
    if (need <= t->cap) return 0;
    int64_t cap = t->cap * 2 > need ? (int64_t)t->cap * 2 : need;
    if (cap > INT32_MAX) return 1;
    void *a = realloc(t->hot, (size_t)cap * sizeof *t->hot);
    if (a) t->hot = a;
    void *b = realloc(t->box, (size_t)cap * 6 * sizeof *t->box);
    if (b) t->box = b;
    void *c = realloc(t->cube, (size_t)cap * 4 * sizeof *t->cube);
    if (c) t->cube = c;
    if (!a || !b || !c) return 1;
    t->cap = (int32_t)cap;
    return 0;
}

/* The top of the tree is split with its bodies in chunks of this many, in parallel
 * (nodes of more than GL_BIG bodies, one at a time); smaller nodes take one thread
 * each and no OpenMP call (a region per small node costs more than its work). Which
 * path a node takes depends on its size alone, and neither depends on the threads, so
 * the tree and its bodies' order are the same for any number of threads. */
enum { GL_CHUNK = 16384, GL_BIG = 4 * GL_CHUNK };

/* Work on bodies [i0, i1), chunk c of a node. */
typedef void (*gl_chunk_fn)(gl_tree *t, void *arg, int32_t i0, int32_t i1, int32_t c);

static int32_t n_chunks(const gl_hot *h, int par) {
    int64_t len = h->end - h->begin;
    return par && len > GL_CHUNK ? (int32_t)((len + GL_CHUNK - 1) / GL_CHUNK) : 1;
}

static void for_chunks(gl_tree *t, const gl_hot *h, int32_t nch, gl_chunk_fn fn, void *arg) {
    if (nch == 1) {
        fn(t, arg, h->begin, h->end, 0);
        return;
    }
#pragma omp parallel for num_threads(canopy_threads())
    for (int32_t c = 0; c < nch; c++) {
        int32_t i0 = h->begin + c * GL_CHUNK;
        fn(t, arg, i0, h->end - i0 < GL_CHUNK ? h->end : i0 + GL_CHUNK, c);
    }
}

static void box_chunk(gl_tree *t, void *arg, int32_t i0, int32_t i1, int32_t c) {
    float *b = (float *)arg + 6 * (int64_t)c;
    for (int k = 0; k < 3; k++) b[k] = INFINITY, b[3 + k] = -INFINITY;
    for (int32_t i = i0; i < i1; i++) {
        float p[3] = {t->x[i], t->y[i], t->z[i]};
        for (int k = 0; k < 3; k++) {
            b[k] = p[k] < b[k] ? p[k] : b[k];
            b[3 + k] = p[k] > b[3 + k] ? p[k] : b[3 + k];
        }
    }
}

/* Tight box of node v's bodies; returns the longest side. */
static float node_box(gl_tree *t, int32_t v, int par) {
    const gl_hot *h = t->hot + v;
    int32_t nch = n_chunks(h, par);
    float one[6], *part = nch > 1 ? malloc((size_t)nch * 6 * sizeof *part) : one;
    if (!part) nch = 1, part = one;
    for_chunks(t, h, nch, box_chunk, part);
    float *b = t->box + 6 * (int64_t)v, side = 0.0f;
    for (int k = 0; k < 6; k++) b[k] = part[k];
    for (int32_t c = 1; c < nch; c++)
        for (int k = 0; k < 3; k++) {
            const float *q = part + 6 * (int64_t)c;
            b[k] = q[k] < b[k] ? q[k] : b[k];
            b[3 + k] = q[3 + k] > b[3 + k] ? q[3 + k] : b[3 + k];
        }
    for (int k = 0; k < 3; k++) side = b[3 + k] - b[k] > side ? b[3 + k] - b[k] : side;
    if (part != one) free(part);
    return side;
}

/* One split: the key rule, the keys, per-chunk counts (then destination offsets)
 * and the scratch arrays. */
typedef struct gl_split {
    int binary, axis;
    float mid;
    const float *cube;
    uint8_t *key;
    int32_t *off; /* 8 per chunk */
    float *sx, *sy, *sz, *sm;
    int64_t *sid;
} gl_split;

static void key_chunk(gl_tree *t, void *arg, int32_t i0, int32_t i1, int32_t c) {
    gl_split *p = arg;
    int32_t *n = p->off + 8 * (int64_t)c;
    const float *cu = p->cube;
    memset(n, 0, 8 * sizeof *n);
    for (int32_t i = i0; i < i1; i++) {
        uint8_t k;
        if (p->binary) {
            float x = p->axis == 0 ? t->x[i] : p->axis == 1 ? t->y[i] : t->z[i];
            k = x > p->mid;
        } else {
            k = (uint8_t)((t->x[i] > cu[0]) | (t->y[i] > cu[1]) << 1 | (t->z[i] > cu[2]) << 2);
        }
        p->key[i] = k;
        n[k]++;
    }
}

static void scatter_chunk(gl_tree *t, void *arg, int32_t i0, int32_t i1, int32_t c) {
    gl_split *p = arg;
    int32_t *d = p->off + 8 * (int64_t)c;
    for (int32_t i = i0; i < i1; i++) {
        int32_t j = d[p->key[i]]++;
        p->sx[j] = t->x[i], p->sy[j] = t->y[i], p->sz[j] = t->z[i], p->sm[j] = t->m[i];
        p->sid[j] = t->ids[i];
    }
}

static void copy_back_chunk(gl_tree *t, void *arg, int32_t i0, int32_t i1, int32_t c) {
    gl_split *p = arg;
    size_t len = (size_t)(i1 - i0);
    (void)c;
    memcpy(t->x + i0, p->sx + i0, len * sizeof(float));
    memcpy(t->y + i0, p->sy + i0, len * sizeof(float));
    memcpy(t->z + i0, p->sz + i0, len * sizeof(float));
    memcpy(t->m + i0, p->sm + i0, len * sizeof(float));
    memcpy(t->ids + i0, p->sid + i0, len * sizeof(int64_t));
}

static inline void swap_bodies(gl_tree *t, int32_t i, int32_t j) {
    float f;
    f = t->x[i], t->x[i] = t->x[j], t->x[j] = f;
    f = t->y[i], t->y[i] = t->y[j], t->y[j] = f;
    f = t->z[i], t->z[i] = t->z[j], t->z[j] = f;
    f = t->m[i], t->m[i] = t->m[j], t->m[j] = f;
    int64_t d = t->ids[i];
    t->ids[i] = t->ids[j], t->ids[j] = d;
}

/* A binary split by one thread: the bodies at most mid on the axis first, partitioned in
 * place from both ends (one pass, no scratch arrays and no copy back: the keyed scatter's
 * three passes were ~60 % of building 1M Plummer bodies' tree). Not stable, but which
 * nodes take this path depends on their size alone, so the order is the same for any
 * number of threads. Returns the groups used, as split_node. */
static int split_in_place(gl_tree *t, const gl_hot *h, int axis, float mid, int32_t cnt[8]) {
    const float *c = axis == 0 ? t->x : axis == 1 ? t->y : t->z;
    int32_t i = h->begin, j = h->end - 1;
    for (;;) {
        while (i <= j && !(c[i] > mid)) i++;
        while (i <= j && c[j] > mid) j--;
        if (i >= j) break;
        swap_bodies(t, i++, j--);
    }
    memset(cnt, 0, 8 * sizeof *cnt);
    cnt[0] = i - h->begin;
    cnt[1] = h->end - i;
    return cnt[0] > 0 && cnt[1] > 0 ? 2 : 0;
}

/* A big binary split in place: where the keys (1: right) say a body lies on the wrong
 * side of bound, its index goes to wr (right bodies before bound) or wl (left bodies from
 * bound on), chunk c's from ofs[2c] and ofs[2c + 1] on; the k-th of each then swap. */
typedef struct gl_misplaced {
    const uint8_t *key;
    int32_t bound;
    const int32_t *ofs;
    int32_t *wr, *wl;
} gl_misplaced;

static void misplaced_chunk(gl_tree *t, void *arg, int32_t i0, int32_t i1, int32_t c) {
    gl_misplaced *p = arg;
    int32_t r = p->ofs[2 * c], l = p->ofs[2 * c + 1];
    (void)t;
    for (int32_t i = i0; i < i1; i++)
        if (i < p->bound) {
            if (p->key[i]) p->wr[r++] = i;
        } else if (!p->key[i]) {
            p->wl[l++] = i;
        }
}

/* The keyed binary split of a big node (left: cnt[0] bodies; per chunk, counts in off[8c],
 * off[8c + 1]) by swapping each misplaced right body with a misplaced left one, paired in
 * index order: the swaps touch only the misplaced bodies, where the stable scatter and
 * its copy back moved every body twice (a Plummer sphere's outliers make ~16 big splits
 * of nearly all of its bodies). The pairing depends on the chunks, not on the threads.
 * wr, wl: room for half the node's bodies each. */
static void swap_misplaced(gl_tree *t, const gl_hot *h, gl_split *p, int32_t nch, int32_t left,
                           int32_t *wr, int32_t *wl) {
    /* chunk c's offsets overwrite entries 2c, 2c + 1 of the counts, read by then */
    int32_t *ofs = p->off;
    gl_misplaced q = {p->key, h->begin + left, ofs, wr, wl};
    int32_t nr = 0, nl = 0;
    for (int32_t c = 0; c < nch; c++) {
        int32_t i0 = h->begin + c * GL_CHUNK, i1 = h->end - i0 < GL_CHUNK ? h->end : i0 + GL_CHUNK;
        int32_t r = 0, l = 0;
        if (i1 <= q.bound) {
            r = p->off[8 * (int64_t)c + 1];
        } else if (i0 >= q.bound) {
            l = p->off[8 * (int64_t)c];
        } else {
            for (int32_t i = i0; i < i1; i++) {
                r += i < q.bound && p->key[i];
                l += i >= q.bound && !p->key[i];
            }
        }
        ofs[2 * c] = nr, ofs[2 * c + 1] = nl;
        nr += r, nl += l;
    }
    for_chunks(t, h, nch, misplaced_chunk, &q);
#pragma omp parallel for schedule(static) num_threads(canopy_threads()) if (nr > GL_CHUNK)
    for (int32_t k = 0; k < nr; k++) swap_bodies(t, wr[k], wl[k]);
}

/* Splits node v's bodies into up to 8 (octree) or 2 (binary) groups; cnt receives each
 * group's size. Returns the number of groups used (0: keep v a leaf). With par, chunks
 * of bodies are keyed and counted in parallel, then the octree's scattered stably through
 * the scratch arrays (each chunk's destinations following the chunks before it), the
 * binary tree's misplaced bodies swapped (swap_misplaced); without, one thread splits. */
static int split_node(gl_tree *t, int32_t v, int binary, float *sx, float *sy, float *sz, float *sm,
                      int64_t *sid, uint8_t *key, int32_t cnt[8], int par) {
    const gl_hot *h = t->hot + v;
    const float *b = t->box + 6 * (int64_t)v;
    gl_split p = {binary, 0, 0.0f, t->cube + 4 * (int64_t)v, key, NULL, sx, sy, sz, sm, sid};
    if (binary) {
        for (int k = 1; k < 3; k++)
            if (b[3 + k] - b[k] > b[3 + p.axis] - b[p.axis]) p.axis = k;
        p.mid = b[p.axis] + 0.5f * (b[3 + p.axis] - b[p.axis]);
        if (!par) return split_in_place(t, h, p.axis, p.mid, cnt);
    }
    int32_t nch = n_chunks(h, par), one[8];
    p.off = nch > 1 ? malloc((size_t)nch * 8 * sizeof *p.off) : one;
    if (!p.off) nch = 1, p.off = one;
    for_chunks(t, h, nch, key_chunk, &p);
    memset(cnt, 0, 8 * sizeof *cnt);
    for (int32_t c = 0; c < nch; c++)
        for (int k = 0; k < 8; k++) cnt[k] += p.off[8 * (int64_t)c + k];
    int nonempty = 0, groups = binary ? 2 : 8;
    for (int k = 0; k < groups; k++) nonempty += cnt[k] > 0;
    if (binary && nonempty >= 2) {
        /* the scratch arrays of n floats hold the misplaced bodies' indices */
        swap_misplaced(t, h, &p, nch, cnt[0], (int32_t *)(void *)sx, (int32_t *)(void *)sy);
    } else if (!binary) {
        int32_t o = h->begin;
        for (int k = 0; k < 8; k++)
            for (int32_t c = 0; c < nch; c++) {
                int32_t m = p.off[8 * (int64_t)c + k];
                p.off[8 * (int64_t)c + k] = o, o += m;
            }
        for_chunks(t, h, nch, scatter_chunk, &p);
        for_chunks(t, h, nch, copy_back_chunk, &p);
    }
    if (p.off != one) free(p.off);
    return !binary || nonempty >= 2 ? groups : 0;
}

/* Box, leaf decision and split of node v of a level. */
static int level_split(gl_tree *t, int32_t v, int level, const gl_config *cfg, float *sx, float *sy,
                       float *sz, float *sm, int64_t *sid, uint8_t *key, int32_t cnt[8], int par) {
    float side = level ? node_box(t, v, par) : t->cube[3] * 2.0f;
    const gl_hot *h = t->hot + v;
    int leaf = h->end - h->begin <= cfg->bucket || !(side > 0.0f) || level >= GL_MAX_DEPTH - 1;
    return leaf ? 0 : split_node(t, v, cfg->binary, sx, sy, sz, sm, sid, key, cnt, par);
}

/* Centre of mass and monomial moments about it of node v: from its bodies (leaf) or
 * its children (binomial shift), in float64. */
static void node_moments(gl_tree *t, int32_t v) {
    const gl_hot *h = t->hot + v;
    double *C = t->mom + (int64_t)t->nmom * v, *M = C + 3;
    memset(C, 0, (size_t)t->nmom * sizeof *C);
    double mass = 0.0, c[3] = {0, 0, 0};
    if (h->nchild == 0) {
        for (int32_t i = h->begin; i < h->end; i++) {
            double w = t->m[i];
            mass += w, c[0] += w * t->x[i], c[1] += w * t->y[i], c[2] += w * t->z[i];
        }
    } else {
        for (int32_t k = h->child; k < h->child + h->nchild; k++) {
            const double *K = t->mom + (int64_t)t->nmom * k;
            mass += K[3];
            for (int j = 0; j < 3; j++) c[j] += K[3] * K[j];
        }
    }
    const float *b = t->box + 6 * (int64_t)v;
    int point = b[0] == b[3] && b[1] == b[4] && b[2] == b[5];
    /* Coincident bodies: their point exactly (a rounded weighted mean would move it off
     * them), so the leaf's opening radius is 0 (point_leaf). */
    for (int j = 0; j < 3; j++)
        c[j] = mass > 0.0 && !point ? c[j] / mass : 0.5 * ((double)b[j] + b[3 + j]);
    for (int j = 0; j < 3; j++) C[j] = c[j];
    if (h->nchild == 0)
        for (int32_t i = h->begin; i < h->end; i++)
            canopy_mp_mono_add_body(M, t->order, t->m[i], t->x[i] - c[0], t->y[i] - c[1],
                                    t->z[i] - c[2]);
    else
        for (int32_t k = h->child; k < h->child + h->nchild; k++) {
            const double *K = t->mom + (int64_t)t->nmom * k;
            canopy_mp_mono_add_shifted(M, t->order, K + 3, K[0] - c[0], K[1] - c[1], K[2] - c[2]);
        }
}

/* Moments of the subtree under v, children first. */
static void subtree_moments(gl_tree *t, int32_t v) {
    const gl_hot *h = t->hot + v;
    for (int32_t k = h->child; k < h->child + h->nchild; k++) subtree_moments(t, k);
    node_moments(t, v);
}

/* Opening radius: Barnes' offset criterion side / theta + |com - box centre|, and
 * never less than the distance from the centre of mass to the box's farthest
 * corner, so an accepted cell never holds a point of the walking bucket. */
static void node_finish(gl_tree *t, int32_t v, float inv_theta, float *cold) {
    gl_hot *h = t->hot + v;
    const double *C = t->mom + (int64_t)t->nmom * v;
    const float *b = t->box + 6 * (int64_t)v;
    double side = 0.0, off2 = 0.0, far2 = 0.0;
    for (int j = 0; j < 3; j++) {
        double ext = (double)b[3 + j] - b[j], o = C[j] - 0.5 * ((double)b[j] + b[3 + j]);
        double f = fabs(o) + 0.5 * ext;
        side = ext > side ? ext : side;
        off2 += o * o;
        far2 += f * f;
        h->c[j] = (float)C[j];
    }
    double r = side * inv_theta + sqrt(off2), far = sqrt(far2);
    r = (r > far ? r : far) * (1.0 + 1e-5);
    h->r2 = (float)(r * r);
    cold[0] = (float)C[3];
    canopy_mp_mono_pack(C + 3, t->order, cold + 1, 1);
    for (int e = 0; t->q2 && e < 6; e++) t->q2[6 * (int64_t)v + e] = (float)C[3 + 4 + e];
}

/* The longest side of node v's box. */
static inline float node_side(const gl_tree *t, int32_t v) {
    const float *b = t->box + 6 * (int64_t)v;
    float s = b[3] - b[0];
    s = b[4] - b[1] > s ? b[4] - b[1] : s;
    return b[5] - b[2] > s ? b[5] - b[2] : s;
}

/* Periodic: the longest sink group, in boxes. Its Ewald correction is a Taylor series
 * about its centre, whose remainder grows as the fourth power of the group's size over
 * the distance to the nearest other lattice point (at least half a box): at 100k
 * uniform bodies, 0.2 and 0.1 give median errors 2.7e-4 and 2.0e-4 (theta 0.5, order
 * 4), 0.2 in 40% of the time (fewer, larger groups walk). */
static const float gl_group_side = 0.2f;
/* ... on the octree, where 0.2 left 1e-5 (7e-4 of a neighbour's pull) on
 * tests/test_ewald.c's 8^3 lattice. */
static const float gl_group_side_oct = 0.1f;

/* x moved by a multiple of box into [0, box). */
static float wrap_into(float x, float box) {
    float w = x - box * floorf(x / box);
    return w >= box ? w - box : w < 0.0f ? 0.0f : w;
}

/* Sink groups in body order (depth first, so neighbours run together): the largest
 * nodes of at most cfg->group bodies, and leaves. Periodic: also no longer than
 * t->group_side boxes, each walking with the box of the group it would have been part
 * of with open boundaries (t->walk_box), so the opening tests are as strict. Returns 1
 * when out of memory. */
static int sink_groups(gl_tree *t, const gl_config *cfg, float period) {
    t->group_side = cfg->binary ? gl_group_side : gl_group_side_oct;
    int32_t sp = 0, *stack = malloc(((size_t)t->depth * 16 + 16) * sizeof *stack);
    if (period > 0.0f) t->walk_box = malloc((size_t)t->nn * sizeof *t->walk_box);
    if (!stack || (period > 0.0f && !t->walk_box)) {
        free(stack);
        return 1;
    }
    stack[sp++] = 0, stack[sp++] = -1; /* node, the open-boundary group above it (or -1) */
    while (sp) {
        int32_t w = stack[--sp], v = stack[--sp];
        const gl_hot *h = t->hot + v;
        int small = h->end - h->begin <= cfg->group;
        w = w < 0 && small ? v : w;
        int fits = small && (period == 0.0f || node_side(t, v) <= t->group_side * period);
        if (h->nchild == 0 || (!cfg->per_body && fits)) {
            if (h->end > h->begin) {
                if (t->walk_box) t->walk_box[t->n_leaves] = w < 0 ? v : w;
                t->leaves[t->n_leaves++] = v;
            }
            continue;
        }
        for (int32_t c = h->child + h->nchild - 1; c >= h->child; c--)
            stack[sp++] = c, stack[sp++] = w;
    }
    free(stack);
    return 0;
}

/* Moments of every node bottom-up, then the walk and cold records. */
static void tree_moments(gl_tree *t) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(canopy_threads())
    for (int32_t v = t->par_lo; v < t->par_hi; v++) subtree_moments(t, v);
    for (int32_t v = t->par_lo - 1; v >= 0; v--) node_moments(t, v);
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t v = 0; v < t->nn; v++) {
        float *c = (float *)(void *)((char *)t->cold_base + (size_t)v * t->cold_stride);
        node_finish(t, v, t->inv_theta, c);
        memcpy(t->walk + (size_t)v * t->stride, t->hot + v, sizeof(gl_hot));
    }
}

static canopy_status build(gl_tree *t, canopy_points bodies, const float *mass, float inv_theta,
                           int32_t order, const gl_config *cfg, float period) {
    int64_t n = bodies.n;
    t->n = n;
    size_t fs = (size_t)n * sizeof(float);
    float *sx = malloc(fs), *sy = malloc(fs), *sz = malloc(fs), *sm = malloc(fs);
    int64_t *sid = malloc((size_t)n * sizeof *sid);
    uint8_t *key = malloc((size_t)n);
    t->x = malloc(fs), t->y = malloc(fs), t->z = malloc(fs), t->m = malloc(fs);
    t->ids = malloc((size_t)n * sizeof *t->ids);
    int32_t *cnt = NULL, *ng = NULL;
    int64_t est = 4 * (n / (cfg->bucket > 0 ? cfg->bucket : 1)) + 64;
    canopy_status s = CANOPY_OK;
    if (!sx || !sy || !sz || !sm || !sid || !key || !t->x || !t->y || !t->z || !t->m || !t->ids ||
        grow_nodes(t, (int32_t)(est < INT32_MAX / 2 ? est : INT32_MAX / 2))) {
        s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory building the tree");
        goto done;
    }
    t->period = period;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) {
        const float *p = canopy_point(bodies, i);
        t->x[i] = p[0], t->y[i] = p[1], t->z[i] = p[2], t->m[i] = mass[i], t->ids[i] = i;
        if (t->period > 0.0f)
            t->x[i] = wrap_into(p[0], t->period), t->y[i] = wrap_into(p[1], t->period),
            t->z[i] = wrap_into(p[2], t->period);
    }
    t->hot[0] = (gl_hot){{0, 0, 0}, 0, -1, 0, 0, (int32_t)n};
    t->nn = 1;
    {
        float side = node_box(t, 0, 1);
        const float *b = t->box;
        for (int k = 0; k < 3; k++) t->cube[k] = b[k] + 0.5f * (b[3 + k] - b[k]);
        t->cube[3] = 0.5f * side;
    }
    int32_t lo = 0, hi = 1, level_start[GL_MAX_DEPTH + 2] = {0, 1};
    for (int level = 0; lo < hi; level++) {
        int32_t width = hi - lo;
        free(cnt), free(ng);
        cnt = malloc((size_t)width * 8 * sizeof *cnt);
        ng = malloc((size_t)width * sizeof *ng);
        if (!cnt || !ng) {
            s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory building the tree");
            goto done;
        }
        for (int32_t v = lo; v < hi; v++) /* the top: one node at a time, in parallel */
            if (t->hot[v].end - t->hot[v].begin > GL_BIG)
                ng[v - lo] = level_split(t, v, level, cfg, sx, sy, sz, sm, sid, key,
                                         cnt + 8 * (int64_t)(v - lo), 1);
#pragma omp parallel for schedule(dynamic, 1) num_threads(canopy_threads())
        for (int32_t v = lo; v < hi; v++)
            if (t->hot[v].end - t->hot[v].begin <= GL_BIG)
                ng[v - lo] = level_split(t, v, level, cfg, sx, sy, sz, sm, sid, key,
                                         cnt + 8 * (int64_t)(v - lo), 0);
        int64_t add = 0;
        for (int32_t v = lo; v < hi; v++)
            for (int k = 0; k < ng[v - lo]; k++) add += cnt[8 * (int64_t)(v - lo) + k] > 0;
        if ((int64_t)t->nn + add > INT32_MAX / 2 || grow_nodes(t, t->nn + (int32_t)add)) {
            s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory building the tree");
            goto done;
        }
        for (int32_t v = lo; v < hi; v++) {
            gl_hot *h = t->hot + v;
            h->child = ng[v - lo] ? t->nn : -1;
            h->nchild = 0;
            int32_t begin = h->begin;
            const float *cu = t->cube + 4 * (int64_t)v;
            for (int k = 0; k < ng[v - lo]; k++) {
                int32_t c = cnt[8 * (int64_t)(v - lo) + k];
                if (!c) continue;
                int32_t u = t->nn++;
                t->hot[u] = (gl_hot){{0, 0, 0}, 0, -1, 0, begin, begin + c};
                float *cc = t->cube + 4 * (int64_t)u, q = 0.5f * cu[3];
                for (int j = 0; j < 3; j++) cc[j] = cu[j] + ((k >> j) & 1 ? q : -q);
                cc[3] = q;
                begin += c;
                h->nchild++;
            }
        }
        t->depth = level + 1;
        level_start[level + 1] = t->nn;
        lo = hi;
        hi = t->nn;
    }
    /* Moments bottom-up, a level at a time (children are on the next level). */
    t->order = order;
    t->nmom = 3 + mp_mono_count(order);
    t->mom = malloc((size_t)t->nn * (size_t)t->nmom * sizeof *t->mom);
    size_t cold = (size_t)cold_floats(order) * sizeof(float);
    size_t rec = sizeof(gl_hot) + (cfg->fused ? cold : 0);
    t->walk = malloc((size_t)t->nn * rec + (cfg->fused ? 0 : (size_t)t->nn * cold));
    t->leaves = malloc((size_t)t->nn * sizeof *t->leaves);
    if (period > 0.0f) t->q2 = malloc((size_t)t->nn * 6 * sizeof *t->q2);
    if (!t->mom || !t->walk || !t->leaves || (period > 0.0f && !t->q2)) {
        s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the tree moments");
        goto done;
    }
    /* Subtrees of the first level with enough nodes to share out run in parallel (one
     * parallel region: a barrier per level costs much where threads outnumber free
     * cores); the levels above them follow bottom-up. */
    int top = 0;
    while (top + 1 < t->depth && level_start[top + 1] - level_start[top] < 64) top++;
    t->par_lo = level_start[top], t->par_hi = level_start[top + 1];
    t->inv_theta = inv_theta;
    t->stride = rec;
    t->cold_base = cfg->fused ? t->walk + sizeof(gl_hot) : t->walk + (size_t)t->nn * rec;
    t->cold_stride = cfg->fused ? rec : cold;
    tree_moments(t);
    if (sink_groups(t, cfg, period))
        s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the tree moments");
done:
    free(sx), free(sy), free(sz), free(sm), free(sid), free(key), free(cnt), free(ng);
    return s;
}

/* ------------------------------------------------------------------ walk -- */

typedef struct gl_lists {
    int32_t *cells, *opened, *stack;
    unsigned char *mark; /* periodic: per node of src[0], listed as a cell (group_ewald) */
    int32_t *cend, *oend;          /* per source tree: end of its entries in cells and opened */
    float *cb; /* gathered cells in blocks of GL_LANES (cell_rows(order) rows of GL_LANES
                  floats: x, y, z, mass, then the packed moments): a block is one
                  contiguous read for the kernel, whatever the list's length */
    float *bx, *by, *bz, *bm;      /* gathered bodies */
    float g[3];                    /* periodic: the sink group's centre; every source is
                                      listed at its image nearest it */
    float corr[EWALD_NDER];        /* periodic: the sources' summed Ewald correction and its
                                      derivatives at g (unit box, gravity/ewald.h's order) */
    float *es;                     /* periodic: the group's Ewald sources queued for the
                                      vector sum, in blocks of GL_LANES (GL_EWALD_ROWS rows) */
    int64_t ne, ecap;
    double eacc[EWALD_NDER]; /* periodic: the sources that took the scalar path */
    int64_t cell_cap, body_cap;
    int32_t nc, nl, np, npc; /* cells, opened leaves, bodies, padded counts */
    int32_t npt;             /* the blocks before npt: cells taken without their trace terms */
} gl_lists;

/* A periodic evaluation: the box (and its inverse powers), the longest cell accepted
 * and the Ewald table of its grid. */
typedef struct gl_per {
    float box, inv_box, inv_box2;
    float corr_side; /* the longest cell accepted */
    float fine_side; /* the longest cell whose Ewald terms are taken whole */
    const float *table;
    int32_t grid;
    /* TreePM (alpha > 0): the walk lists only what lies within sqrt(rcut2) of a sink, the
     * kernels take the short-range part erfc(alpha r) / r of 1 / r, no Ewald terms */
    float alpha, rcut2;
    float cell_far2; /* TreePM: squared distance beyond which no cell is taken */
} gl_per;

enum { GL_LANES = 16 };
/* Rows of a block of gathered cells: position, mass and the packed moments. */
static inline int cell_rows(int order) {
    return 4 + mp_pack_count(order);
}
/* Periodic: the longest cell the lists accept, in boxes. Under half a box, a cell is
 * never an ancestor of the sink group taken at another image. Periodic forces on
 * uniform bodies are small (they cancel), so the same opening gives a larger relative
 * error than open boundaries; the periodic accuracy table (multipole_calib_list_periodic.inc)
 * pays for it with theta and order rather than with this limit (0.1 made lists 2-16x
 * longer than open ones). */
static const float GL_CORR_SIDE = 0.3f;
/* ... on the octree (not the default), whose cubes of 8 lattice points at 0.3 L gave
 * 2% of a neighbour's pull on tests/test_ewald.c's lattices (the binary tree 1e-4). */
static const float GL_CORR_SIDE_OCT = 0.1f;
/* TreePM: the lists take cells only up to GL_TREEPM_CELL split scales long and within
 * GL_TREEPM_NEAR split scales of the sink group's box; farther, the short-range kernel
 * changes over a split scale, so a cell's quadrupole misses much of its force (at 400k
 * uniform bodies, theta 0.8: median error 1.65e-3 with any cell, 5e-4 with cells up to
 * 2; a 10^3 lattice: residual forces of 6% of a neighbour's pull with cells anywhere
 * within the cut, 7e-6 with cells within 2). Near the sinks the kernel is nearly
 * Newtonian, and there the clusters' cells keep their cost down. */
static const float GL_TREEPM_CELL = 2.0f, GL_TREEPM_NEAR = 2.0f;
/* Periodic: the longest node whose Ewald terms are its monopole and quadrupole at one
 * point, in boxes: a series in the node's size over the distance to the next lattice
 * point (at least half a box). On the binary tree 0.13 (its cells of 1/8 box) costs a
 * third of 0.1's correction time at 100k uniform bodies, at the same median error;
 * 0.2 (also its 1/4-by-1/8 cells) left 7e-4 near the direct limit on 300 bodies
 * (tests/test_ewald.c: < 5e-4 wanted). The octree keeps 0.1 (2-point cells of the
 * tests' 8^3 lattice). */
static const float GL_FINE_SIDE = 0.13f, GL_FINE_SIDE_OCT = 0.1f;
/* A cell whose centre of mass lies at least sqrt(eps^2 / GL_TRACE_FREE) from every sink
 * of the group is taken without the trace terms of its moments (mp_cell_terms' traces,
 * ~a tenth of an order-4 cell's operations): they are a fraction eps^2 / R^2 <=
 * GL_TRACE_FREE of its order 2-4 terms, themselves a small part of its force. */
static const float GL_TRACE_FREE = 1e-3f;

/* Squared distance from box [lo, hi] to point c. The export (canopy_gl_export) and the walk
 * share it: a cell accepted for a box is accepted for every box inside it. */
static inline float box_d2(const float *lo, const float *hi, const float *c) {
    float d2 = 0.0f;
    for (int k = 0; k < 3; k++) {
        float a = lo[k] - c[k], b = c[k] - hi[k];
        float e = a > b ? a : b;
        e = e > 0.0f ? e : 0.0f;
        d2 += e * e;
    }
    return d2;
}

/* x rounded to the nearest integer (ties to even, as rintf) for |x| < 2^22: adding
 * 1.5 * 2^23 leaves no fraction bits. Two additions, where gcc's inline rintf without
 * SSE4.1 tests the magnitude, branches and restores the sign (the list walk's hot
 * path). Offsets between wrapped positions in box units are under 2. */
static inline float round_small(float x) {
    const float shift = 0x1.8p23f;
    return (x + shift) - shift;
}

/* The image of c nearest the periodic sink group's centre g. */
static inline float image_near(float c, float g, const gl_per *P) {
    return c + P->box * round_small((g - c) * P->inv_box);
}

/* Whether node v of t, moved to put its centre of mass at c, reaches half a box or more
 * from g along some axis: then its bodies' images nearest g differ, and the lists may
 * hold parts of it at different images. */
static inline int straddles(const gl_tree *t, int32_t v, const float *c, const float *g,
                            const gl_per *P) {
    const float *b = t->box + 6 * (int64_t)v;
    const gl_hot *h = (const gl_hot *)(t->walk + (size_t)v * t->stride);
    int out = 0;
    for (int k = 0; k < 3; k++) {
        float sh = c[k] - h->c[k], half = 0.5f * P->box;
        out |= b[k] + sh <= g[k] - half || b[3 + k] + sh >= g[k] + half;
    }
    return out;
}

/* TreePM: whether node v of t, moved to put its centre of mass at c, lies wholly
 * farther than the cut from the sink box [lo, hi]: its short-range terms are negligible. */
static inline int beyond_cut(const gl_tree *t, int32_t v, const float *c, const float *lo,
                             const float *hi, const gl_per *P) {
    const float *b = t->box + 6 * (int64_t)v;
    const gl_hot *h = (const gl_hot *)(t->walk + (size_t)v * t->stride);
    float d2 = 0.0f;
    for (int k = 0; k < 3; k++) {
        float sh = c[k] - h->c[k], a = b[k] + sh - hi[k], e = lo[k] - (b[3 + k] + sh);
        float gap = a > e ? a : e;
        gap = gap > 0.0f ? gap : 0.0f;
        d2 += gap * gap;
    }
    return d2 > P->rcut2;
}

/* Appends to the lists for a sink box [lo, hi] the cells of t it accepts, and the
 * leaves it opens outside the sink group's own bodies [gb, ge) (those are always
 * listed first, by gather); L->cend[src] and L->oend[src] mark where t's entries end.
 * In a periodic box (P not NULL) every cell is tested at its image nearest the group's
 * centre L->g, as in the open case, and accepted only up to P->corr_side; its Newtonian
 * terms and its Ewald correction are then both taken at that image, which is exact
 * for any image (the correction stands for all the others). */
static int64_t walk(const gl_tree *t, int src, const gl_per *P, const float *lo, const float *hi,
                    int32_t gb, int32_t ge, gl_lists *L) {
    int32_t sp = 0, nc = L->nc, nl = L->nl;
    int64_t tests = 0;
    L->stack[sp++] = 0;
    while (sp) {
        int32_t v = L->stack[--sp];
        const gl_hot *h = (const gl_hot *)(t->walk + (size_t)v * t->stride);
        if (gb < ge && h->begin >= gb && h->end <= ge) continue; /* the group's: gathered */
        tests++;
        int accept;
        if (P) {
            float c[3];
            for (int k = 0; k < 3; k++) c[k] = image_near(h->c[k], L->g[k], P);
            if (P->alpha > 0.0f && beyond_cut(t, v, c, lo, hi, P)) continue;
            float d2 = box_d2(lo, hi, c);
            accept = d2 > h->r2 && node_side(t, v) <= P->corr_side &&
                     (P->alpha == 0.0f || d2 <= P->cell_far2);
        } else {
            accept = box_d2(lo, hi, h->c) > h->r2;
        }
        if (accept)
            L->cells[nc++] = v;
        else if (h->nchild == 0)
            L->opened[nl++] = v;
        else
            for (int32_t c = h->child + h->nchild - 1; c >= h->child; c--) L->stack[sp++] = c;
    }
    L->nc = L->cend[src] = nc;
    L->nl = L->oend[src] = nl;
    return tests;
}

static int reserve(float **p, int64_t cap, int n_arrays) {
    void *q = realloc(*p, (size_t)cap * (size_t)n_arrays * sizeof(float));
    if (!q) return 1;
    *p = q;
    return 0;
}

/* The walk record of entry k of list `list` (cells or opened), of source tree *s
 * (advanced past the sources whose entries end at or before k). */
static inline const gl_hot *listed(const gl_tree *const *src, const int32_t *end, int *s,
                                   const int32_t *list, int32_t k) {
    while (k >= end[*s]) ++*s;
    return (const gl_hot *)(src[*s]->walk + (size_t)list[k] * src[*s]->stride);
}

/* A leaf of several bodies at one point (its box has zero size, so node_finish gave it
 * opening radius 0): gathered as one body of the leaf's mass, which is exact. */
static inline int point_leaf(const gl_hot *h) {
    return h->nchild == 0 && h->r2 == 0.0f && h->end - h->begin > 1;
}

static inline float cold_mass(const gl_tree *t, int32_t v) {
    return ((const float *)(const void *)(t->cold_base + (size_t)v * t->cold_stride))[0];
}

/* Periodic: the shift that takes a leaf (walk record h) whole to the image of its
 * centre of mass nearest the group's centre. */
static inline void leaf_shift(const gl_per *P, const gl_lists *L, const gl_hot *h, float sh[3]) {
    for (int k = 0; k < 3; k++) sh[k] = image_near(h->c[k], L->g[k], P) - h->c[k];
}

/* Where a listed cell (walk record h) sits for the sinks: periodic,
 * at the image of its centre of mass nearest the group's centre, as the walk tested it. */
static inline void cell_at(const gl_per *P, const gl_lists *L, const gl_hot *h, float c[3]) {
    for (int a = 0; a < 3; a++) c[a] = P ? image_near(h->c[a], L->g[a], P) : h->c[a];
}

/* Whether the listed cell h may leave out its trace terms for every sink in [lo, hi]. */
static inline int trace_free(const gl_per *P, const gl_lists *L, const gl_hot *h, float eps2,
                             const float *lo, const float *hi) {
    float c[3];
    cell_at(P, L, h, c);
    return eps2 <= GL_TRACE_FREE * box_d2(lo, hi, c);
}

/* Copies the listed cells' moments and the opened leaves' bodies of the source trees
 * (src[0] holds the sink group) into padded structure-of-arrays buffers (padding:
 * mass 0, a copy of a real position). The cells far enough from the sinks [lo, hi] to
 * leave out their trace terms (trace_free) come first, padded to whole blocks, then the
 * rest. own (-1: none): the sink group is this point leaf of src[0], its bodies
 * gathered as one. Periodic (P not NULL): each cell (cell_at) and each opened leaf whole
 * at the image of its centre of mass nearest the group's centre; the group's own bodies
 * where they are. */
static int gather(const gl_tree *const *src, const gl_per *P, int32_t gb, int32_t ge, int32_t own,
                  float eps2, const float *lo, const float *hi, gl_lists *L) {
    const gl_tree *t = src[0];
    int32_t nt = 0;
    int sc = 0;
    for (int32_t k = 0; k < L->nc; k++)
        nt += trace_free(P, L, listed(src, L->cend, &sc, L->cells, k), eps2, lo, hi);
    int64_t npt = (nt + GL_LANES - 1) / GL_LANES * GL_LANES;
    int64_t npc = npt + (L->nc - nt + GL_LANES - 1) / GL_LANES * GL_LANES;
    int64_t np = own >= 0 ? 1 : ge - gb;
    int so = 0;
    for (int32_t k = 0; k < L->nl; k++) {
        const gl_hot *h = listed(src, L->oend, &so, L->opened, k);
        np += point_leaf(h) ? 1 : h->end - h->begin;
    }
    int64_t npp = (np + GL_LANES - 1) / GL_LANES * GL_LANES;
    if (npc > L->cell_cap) {
        int64_t cap = npc * 2;
        if (reserve(&L->cb, cap, cell_rows(t->order))) return 1;
        L->cell_cap = cap;
    }
    if (npp > L->body_cap) {
        int64_t cap = npp * 2;
        if (reserve(&L->bx, cap, 1) || reserve(&L->by, cap, 1) || reserve(&L->bz, cap, 1) ||
            reserve(&L->bm, cap, 1))
            return 1;
        L->body_cap = cap;
    }
    int rows = cell_rows(t->order);
    int64_t kt = 0, kf = npt; /* the next slot of each part */
    sc = 0;
    for (int32_t k = 0; k < L->nc; k++) {
        int32_t v = L->cells[k];
        const gl_hot *h = listed(src, L->cend, &sc, L->cells, k);
        const gl_tree *u = src[sc];
        const float *c = (const float *)(const void *)(u->cold_base + (size_t)v * u->cold_stride);
        int64_t slot = trace_free(P, L, h, eps2, lo, hi) ? kt++ : kf++;
        float *b = L->cb + slot / GL_LANES * GL_LANES * rows + slot % GL_LANES, at[3];
        cell_at(P, L, h, at);
        for (int a = 0; a < 3; a++) b[a * GL_LANES] = at[a];
        for (int e = 0; e < rows - 3; e++) b[(3 + e) * GL_LANES] = c[e];
    }
    for (int part = 0; part < 2; part++) /* padding: the rest of each part's last block */
        for (int64_t k = part ? kf : kt; k < (part ? npc : npt); k++) {
            float *b = L->cb + k / GL_LANES * GL_LANES * rows + k % GL_LANES;
            for (int e = 0; e < rows; e++) b[e * GL_LANES] = 0.0f;
        }
    int64_t j = 0;
    so = 0;
    for (int32_t k = -1; k < L->nl; k++) {
        const gl_hot *h = k < 0 ? NULL : listed(src, L->oend, &so, L->opened, k);
        const gl_tree *u = src[k < 0 ? 0 : so];
        int32_t b = h ? h->begin : gb, e = h ? h->end : ge, v = h ? L->opened[k] : own;
        if (h ? point_leaf(h) : own >= 0) {
            L->bx[j] = u->x[b], L->by[j] = u->y[b], L->bz[j] = u->z[b];
            if (P && h) {
                float sh[3];
                leaf_shift(P, L, h, sh);
                L->bx[j] += sh[0], L->by[j] += sh[1], L->bz[j] += sh[2];
            }
            L->bm[j++] = cold_mass(u, v);
            continue;
        }
        size_t len = (size_t)(e - b);
        if (P && P->alpha > 0.0f) { /* TreePM: each body (the group's too) at its own
                                     * image nearest the group's centre */
            for (int32_t i = b; i < e; i++, j++)
                L->bx[j] = image_near(u->x[i], L->g[0], P),
                L->by[j] = image_near(u->y[i], L->g[1], P),
                L->bz[j] = image_near(u->z[i], L->g[2], P), L->bm[j] = u->m[i];
            continue;
        }
        if (P && h) {
            float sh[3];
            leaf_shift(P, L, h, sh);
            for (int32_t i = b; i < e; i++, j++)
                L->bx[j] = u->x[i] + sh[0], L->by[j] = u->y[i] + sh[1], L->bz[j] = u->z[i] + sh[2],
                L->bm[j] = u->m[i];
            continue;
        }
        memcpy(L->bx + j, u->x + b, len * sizeof(float));
        memcpy(L->by + j, u->y + b, len * sizeof(float));
        memcpy(L->bz + j, u->z + b, len * sizeof(float));
        memcpy(L->bm + j, u->m + b, len * sizeof(float));
        j += (int64_t)len;
    }
    for (; j < npp; j++) L->bx[j] = L->by[j] = L->bz[j] = L->bm[j] = 0.0f;
    L->np = (int32_t)np;
    L->npc = (int32_t)npc;
    L->npt = (int32_t)npt;
    return 0;
}

/* Adds to acc the Ewald terms at g - x (unit box) of a source at x of mass m and second
 * moments S (NULL: a body): psi's Taylor coefficients in the sink's offset from g,
 * where a cell adds its quadrupole's terms 1/2 S_ab d_ab (psi, its gradient and its
 * Hessian; the third derivatives' would need the fifth). */
static inline void ewald_source(const gl_per *P, const float *g, float x, float y, float z, float m,
                                const float *S, int64_t ss, double acc[EWALD_NDER]) {
    float u[3] = {(g[0] - x) * P->inv_box, (g[1] - y) * P->inv_box, (g[2] - z) * P->inv_box};
    float d[EWALD_NDER];
    ewald_derivs_at(P->table, P->grid, u, d);
    for (int q = 0; q < EWALD_NDER; q++) acc[q] += (double)m * d[q];
    if (!S) return;
    static const int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    for (int e = 0; e < 6; e++) { /* off-diagonal moments count twice, halves once */
        float w = (e < 3 ? 0.5f : 1.0f) * S[e * ss] * P->inv_box2;
        int a = ab[e][0], b = ab[e][1];
        for (int q = 0; q < 10; q++) /* psi, its gradient and Hessian: d_q,ab */
            acc[q] += (double)(w * d[EWALD_UP[EWALD_UP[q][a]][b]]);
    }
}

/* A queued Ewald source: position, mass, second moments (zero for a body). */
enum { GL_EWALD_ROWS = 10 };

/* Queues a source at x of mass m and second moments S (NULL: a body) for the group's
 * vector sum (ewald_sum_body). One whose offset from the centre leaves the unit cell
 * (a body of a straddling leaf or listed cell) needs its images' Newtonian difference
 * (ewald_derivs_at) and takes the scalar path into L->eacc. Returns 1 when out of
 * memory. */
static int ewald_queue(const gl_per *P, gl_lists *L, float x, float y, float z, float m,
                       const float *S) {
    float p[3] = {x, y, z};
    for (int k = 0; k < 3; k++)
        if (round_small((L->g[k] - p[k]) * P->inv_box) != 0.0f) {
            ewald_source(P, L->g, x, y, z, m, S, 1, L->eacc);
            return 0;
        }
    if (L->ne == L->ecap) {
        int64_t cap = L->ecap ? 2 * L->ecap : 64 * GL_LANES;
        if (reserve(&L->es, cap, GL_EWALD_ROWS)) return 1;
        L->ecap = cap;
    }
    float *b = L->es + L->ne / GL_LANES * GL_LANES * GL_EWALD_ROWS + L->ne % GL_LANES;
    for (int k = 0; k < 3; k++) b[k * GL_LANES] = p[k];
    b[3 * GL_LANES] = m;
    for (int e = 0; e < 6; e++) b[(4 + e) * GL_LANES] = S ? S[e] : 0.0f;
    L->ne++;
    return 0;
}

/* Queues the Ewald terms of node u of t (walk record h) and its subtree, all moved by
 * sh: u itself when no longer than P->fine_side, else its children (a leaf: its
 * bodies), so each term's series converges fast. Uses L->stack from sp on. */
static int ewald_subtree(const gl_per *P, const gl_tree *t, int32_t u, const float *sh, gl_lists *L,
                         int32_t sp) {
    int32_t top = sp;
    int failed = 0;
    L->stack[sp++] = u;
    while (sp > top) {
        int32_t w = L->stack[--sp];
        const gl_hot *h = (const gl_hot *)(t->walk + (size_t)w * t->stride);
        if (node_side(t, w) <= P->fine_side)
            failed |= ewald_queue(P, L, h->c[0] + sh[0], h->c[1] + sh[1], h->c[2] + sh[2],
                                  cold_mass(t, w), t->q2 + 6 * (int64_t)w);
        else if (h->nchild == 0)
            for (int32_t i = h->begin; i < h->end; i++)
                failed |= ewald_queue(P, L, t->x[i] + sh[0], t->y[i] + sh[1], t->z[i] + sh[2],
                                      t->m[i], NULL);
        else
            for (int32_t k = h->child; k < h->child + h->nchild; k++) L->stack[sp++] = k;
    }
    return failed;
}

/* The sources' Ewald correction about the sink group's centre (L->corr), by a walk of
 * its own over t, each node at the image the lists hold its contents at: a node that
 * does not straddle half a box from the centre at the image of its centre of mass
 * nearest it (everything inside is there), a listed cell and an opened leaf whole at
 * that image too, the group's own node v where it is. Taken whole when no longer than
 * P->fine_side (monopole and quadrupole terms), else by parts (ewald_subtree). Once per
 * group, so it costs a group's worth of sinks less than the Newtonian terms. The
 * sources are queued, then summed by the vector kernel (gl_ewald_fn). L->stack is free
 * after the list walk; L->mark flags the listed cells. Returns 1 when out of memory. */
static int group_ewald(const gl_per *P, const gl_tree *t, int32_t v, gl_lists *L) {
    int failed = 0;
    memset(L->eacc, 0, sizeof L->eacc);
    L->ne = 0;
    for (int32_t k = 0; k < L->nc; k++) L->mark[L->cells[k]] = 1;
    int32_t sp = 0;
    L->stack[sp++] = 0;
    while (sp) {
        int32_t u = L->stack[--sp];
        const gl_hot *h = (const gl_hot *)(t->walk + (size_t)u * t->stride);
        float sh[3] = {0.0f, 0.0f, 0.0f}, c[3];
        for (int k = 0; k < 3 && u != v; k++) sh[k] = image_near(h->c[k], L->g[k], P) - h->c[k];
        for (int k = 0; k < 3; k++) c[k] = h->c[k] + sh[k];
        if (u == v || L->mark[u] || h->nchild == 0 || !straddles(t, u, c, L->g, P))
            failed |= ewald_subtree(P, t, u, sh, L, sp);
        else
            for (int32_t k = h->child; k < h->child + h->nchild; k++) L->stack[sp++] = k;
    }
    for (int32_t k = 0; k < L->nc; k++) L->mark[L->cells[k]] = 0;
    /* padding: massless sources at the centre */
    for (; !failed && L->ne % GL_LANES; L->ne++) {
        float *b = L->es + L->ne / GL_LANES * GL_LANES * GL_EWALD_ROWS + L->ne % GL_LANES;
        for (int r = 0; r < GL_EWALD_ROWS; r++) b[r * GL_LANES] = r < 3 ? L->g[r] : 0.0f;
    }
    return failed;
}

/* Adds the group's Ewald correction (L->corr) to a sink at (x, y, z): psi's Taylor
 * series in the offset from the group's centre, to fourth order (its gradient to
 * third). */
static inline void ewald_sink(const gl_per *P, const gl_lists *L, float x, float y, float z,
                              float out[4]) {
    float e[3] = {(x - L->g[0]) * P->inv_box, (y - L->g[1]) * P->inv_box,
                  (z - L->g[2]) * P->inv_box},
          d[EWALD_NDER];
    ewald_shift(L->corr, e, d);
    for (int a = 0; a < 3; a++) out[a] -= d[1 + a] * P->inv_box2;
    out[3] += d[0] * P->inv_box;
}

/* ---------------------------------------------------------------- kernels -- */

/* Lane sums in a fixed pairwise order, so the result is the same whatever the
 * vector width the compiler chose. */
static inline __attribute__((always_inline)) float lane_sum(const float *a) {
    float s[GL_LANES / 2];
    for (int l = 0; l < GL_LANES / 2; l++) s[l] = a[l] + a[l + GL_LANES / 2];
    for (int w = GL_LANES / 4; w >= 1; w /= 2)
        for (int l = 0; l < w; l++) s[l] += s[l + w];
    return s[0];
}

/* The gathered cells [j0, j1) (whole blocks) on sink (xi, yi, zi), lane l into
 * ax[l].. (sink_kernel); traces as mp_cell_terms', a constant where this is inlined. */
static inline __attribute__((always_inline)) void
cell_blocks(const gl_lists *L, int order, int traces, int pot, float eps2, int32_t j0, int32_t j1,
            float xi, float yi, float zi, float *ax, float *ay, float *az, float *ph) {
    const int rows = cell_rows(order);
    for (int32_t j = j0; j < j1; j += GL_LANES) {
        const float *b = L->cb + (int64_t)j * rows;
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++) {
            float p = 0.0f, dx = xi - b[l], dy = yi - b[GL_LANES + l],
                  dz = zi - b[2 * GL_LANES + l];
            mp_cell_terms(order, traces, b[3 * GL_LANES + l], dx, dy, dz, eps2,
                          b + 4 * GL_LANES + l, GL_LANES, &ax[l], &ay[l], &az[l], &p);
            if (pot) ph[l] -= p;
        }
    }
}

/* Acceleration and potential of sink (xi, yi, zi), body `self` of the gathered
 * bodies, from the lists, with r = sink - source; lane l takes every GL_LANES-th
 * entry. Coincident points (r^2 = 0, only with zero softening) contribute nothing.
 * order and pot (whether the potential is wanted: its terms cost 2-3 operations of
 * ~20) are constants where this is inlined (sink_kernel_order). Periodic boxes use it
 * as it is: the lists hold each source at one image (gather). */
static inline __attribute__((always_inline)) void sink_kernel(const gl_lists *L, int order, int pot,
                                                              float eps2, int32_t self, float xi,
                                                              float yi, float zi, float out[4]) {
    float ax[GL_LANES] = {0}, ay[GL_LANES] = {0}, az[GL_LANES] = {0}, ph[GL_LANES] = {0};
    cell_blocks(L, order, 0, pot, eps2, 0, L->npt, xi, yi, zi, ax, ay, az, ph);
    cell_blocks(L, order, 1, pot, eps2, L->npt, L->npc, xi, yi, zi, ax, ay, az, ph);
    int32_t npp = (L->np + GL_LANES - 1) / GL_LANES * GL_LANES;
    for (int32_t j = 0; j < npp; j += GL_LANES) {
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++) {
            int32_t k = j + l;
            float dx = xi - L->bx[k], dy = yi - L->by[k], dz = zi - L->bz[k];
            float r2 = dx * dx + dy * dy + dz * dz + eps2;
            float inv = 1.0f / sqrtf(r2 > 0.0f ? r2 : 1.0f); /* selects: they vectorise */
            inv = r2 > 0.0f && k != self ? inv : 0.0f;
            float mi = L->bm[k] * inv, f = mi * inv * inv;
            ax[l] -= f * dx, ay[l] -= f * dy, az[l] -= f * dz;
            if (pot) ph[l] -= mi;
        }
    }
    out[0] = lane_sum(ax), out[1] = lane_sum(ay), out[2] = lane_sum(az), out[3] = lane_sum(ph);
}

/* One copy of the kernel per order and potential or not, so each has only its own
 * terms. */
#define GL_ORDER_CASES(pot)                                                                        \
    switch (order) {                                                                               \
    case 0:                                                                                        \
        sink_kernel(L, 0, pot, eps2, self, xi, yi, zi, out);                                       \
        break;                                                                                     \
    case 2:                                                                                        \
        sink_kernel(L, 2, pot, eps2, self, xi, yi, zi, out);                                       \
        break;                                                                                     \
    case 3:                                                                                        \
        sink_kernel(L, 3, pot, eps2, self, xi, yi, zi, out);                                       \
        break;                                                                                     \
    default:                                                                                       \
        sink_kernel(L, 4, pot, eps2, self, xi, yi, zi, out);                                       \
        break;                                                                                     \
    }
static inline __attribute__((always_inline)) void
sink_kernel_order(const gl_lists *L, int order, int pot, float eps2, int32_t self, float xi,
                  float yi, float zi, float out[4]) {
    if (pot)
        GL_ORDER_CASES(1)
    else
        GL_ORDER_CASES(0)
}
#undef GL_ORDER_CASES

/* e^x for x <= 0 (below -87: a denormal-free ~0): 2^n times a degree-6 polynomial on
 * [-ln 2 / 2, ln 2 / 2], relative error ~2e-7; no libm call, so the TreePM kernels
 * vectorise. */
static inline __attribute__((always_inline)) float exp_nonpositive(float x) {
    x = x > -87.0f ? x : -87.0f;
    float n = round_small(x * 1.44269504f);
    float r = (x - n * 0.693145752f) - n * 1.42860677e-6f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6.0f +
                                                  r * (1.0f / 24.0f + r * (1.0f / 120.0f +
                                                                           r * (1.0f / 720.0f))))));
    union {
        int32_t i;
        float f;
    } two = {((int32_t)n + 127) << 23};
    return p * two.f;
}

/* erfc(y) for y >= 0 given e = exp(-y^2): Abramowitz and Stegun 7.1.26, absolute error
 * under 1.5e-7. */
static inline __attribute__((always_inline)) float erfc_with(float y, float e) {
    float t = 1.0f / (1.0f + 0.3275911f * y);
    return t *
           (0.254829592f +
            t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f)))) *
           e;
}

/* TreePM's short range: as sink_kernel with 1 / r replaced by erfc(alpha r) / r, the
 * cells' quadrupoles (order 2; 0: monopoles) with the derivatives of that kernel: with
 * B0 = erfc(alpha R) / R and B_n = ((2n - 1) B_{n-1} + (2 alpha^2)^n exp(-alpha^2 R^2) /
 * (alpha sqrt(pi))) / R^2 (R^2 = r^2 + eps^2), a cell of mass M, traceless quadrupole Q
 * and trace T at r adds (S = (Q + T 1) / 3 its second moments)
 *   -phi = M B0 + B2 r.S.r / 2 - B1 T / 2,  a = -M B1 r - B3 (r.S.r) r / 2 + B2 S r + B2 T r / 2,
 * which for alpha = 0 are mp_cell_terms' order-2 terms. */
static inline __attribute__((always_inline)) void
sink_kernel_short(const gl_lists *L, int order, int pot, float eps2, float alpha, float rcut2,
                  int32_t self, float xi, float yi, float zi, float out[4]) {
    float ax[GL_LANES] = {0}, ay[GL_LANES] = {0}, az[GL_LANES] = {0}, ph[GL_LANES] = {0};
    const float two_a2 = 2.0f * alpha * alpha, c0 = 1.12837917f * alpha; /* 2 alpha / sqrt pi */
    const int rows = cell_rows(order);
    for (int32_t j = 0; j < L->npc; j += GL_LANES) {
        const float *b = L->cb + (int64_t)j * rows;
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++) {
            float dx = xi - b[l], dy = yi - b[GL_LANES + l], dz = zi - b[2 * GL_LANES + l];
            float r2 = dx * dx + dy * dy + dz * dz, R2 = r2 + eps2;
            float inv = 1.0f / sqrtf(R2 > 0.0f ? R2 : 1.0f);
            inv = R2 > 0.0f ? inv : 0.0f;
            float inv2 = inv * inv, y = alpha * R2 * inv, e = exp_nonpositive(-y * y);
            float m = b[3 * GL_LANES + l], c1 = c0 * e;
            float B0 = erfc_with(y, e) * inv, B1 = (B0 + c1) * inv2;
            float fx = -m * B1 * dx, fy = -m * B1 * dy, fz = -m * B1 * dz, pp = m * B0;
            if (order >= 2) {
                const float *q = b + 4 * GL_LANES + l;
                float c2 = two_a2 * c1, B2 = (3.0f * B1 + c2) * inv2;
                float B3 = (5.0f * B2 + two_a2 * c2) * inv2, T = q[6 * GL_LANES];
                float qx = q[0] * dx + q[3 * GL_LANES] * dy + q[4 * GL_LANES] * dz;
                float qy = q[3 * GL_LANES] * dx + q[GL_LANES] * dy + q[5 * GL_LANES] * dz;
                float qz = q[4 * GL_LANES] * dx + q[5 * GL_LANES] * dy + q[2 * GL_LANES] * dz;
                float rsr = (dx * qx + dy * qy + dz * qz + T * r2) * (1.0f / 3.0f);
                float rad = -0.5f * B3 * rsr + (1.0f / 3.0f + 0.5f) * B2 * T;
                float b23 = B2 * (1.0f / 3.0f);
                fx += rad * dx + b23 * qx, fy += rad * dy + b23 * qy, fz += rad * dz + b23 * qz;
                pp += 0.5f * (B2 * rsr - B1 * T);
            }
            ax[l] += fx, ay[l] += fy, az[l] += fz;
            if (pot) ph[l] -= pp;
        }
    }
    int32_t npp = (L->np + GL_LANES - 1) / GL_LANES * GL_LANES;
    for (int32_t j = 0; j < npp; j += GL_LANES) {
        /* most listed bodies lie beyond the cut (the group's and the leaves' extent):
         * a block with none within it is skipped, and beyond it a body adds nothing */
        int near = 0;
#pragma omp simd reduction(| : near)
        for (int l = 0; l < GL_LANES; l++) {
            float dx = xi - L->bx[j + l], dy = yi - L->by[j + l], dz = zi - L->bz[j + l];
            near |= dx * dx + dy * dy + dz * dz < rcut2;
        }
        if (!near) continue;
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++) {
            int32_t k = j + l;
            float dx = xi - L->bx[k], dy = yi - L->by[k], dz = zi - L->bz[k];
            float d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + eps2;
            float inv = 1.0f / sqrtf(r2 > 0.0f ? r2 : 1.0f);
            inv = r2 > 0.0f && k != self && d2 < rcut2 ? inv : 0.0f;
            float y = alpha * r2 * inv, e = exp_nonpositive(-y * y), erfc_y = erfc_with(y, e);
            float mi = L->bm[k] * inv, f = mi * inv * inv * (erfc_y + 1.12837917f * y * e);
            ax[l] -= f * dx, ay[l] -= f * dy, az[l] -= f * dz;
            if (pot) ph[l] -= mi * erfc_y;
        }
    }
    out[0] = lane_sum(ax), out[1] = lane_sum(ay), out[2] = lane_sum(az), out[3] = lane_sum(ph);
}

static inline __attribute__((always_inline)) void
sink_kernel_short_order(const gl_lists *L, int order, int pot, float eps2, const gl_per *P,
                        int32_t self, float xi, float yi, float zi, float out[4]) {
    float a = P->alpha, c2 = P->rcut2;
    if (order == 0 && pot)
        sink_kernel_short(L, 0, 1, eps2, a, c2, self, xi, yi, zi, out);
    else if (order == 0)
        sink_kernel_short(L, 0, 0, eps2, a, c2, self, xi, yi, zi, out);
    else if (pot)
        sink_kernel_short(L, 2, 1, eps2, a, c2, self, xi, yi, zi, out);
    else
        sink_kernel_short(L, 2, 0, eps2, a, c2, self, xi, yi, zi, out);
}

/* The sinks [b, e) of the group starting at body gb against the lists, written at
 * ids[i] (ids NULL: at i - b); periodic (P not NULL): plus the group's Ewald terms, or
 * TreePM's short range alone. */
#define GL_SINKS_BODY                                                                              \
    for (int32_t i = b; i < e; i++) {                                                              \
        float o[4];                                                                                \
        if (P && P->alpha > 0.0f) {                                                                \
            sink_kernel_short_order(L, order, pot != NULL, eps2, P, i - gb, t->x[i], t->y[i],      \
                                    t->z[i], o);                                                   \
        } else {                                                                                   \
            sink_kernel_order(L, order, pot != NULL, eps2, i - gb, t->x[i], t->y[i], t->z[i], o);  \
            if (P) ewald_sink(P, L, t->x[i], t->y[i], t->z[i], o);                                 \
        }                                                                                          \
        int64_t id = ids ? ids[i] : i - b;                                                         \
        for (int k = 0; k < 3; k++) acc[3 * id + k] = o[k];                                        \
        if (pot) pot[id] = o[3];                                                                   \
    }

typedef void (*gl_sinks_fn)(const gl_tree *t, const gl_lists *L, int32_t gb, int32_t b, int32_t e,
                            int order, const gl_per *P, float eps2, const int64_t *ids, float *acc,
                            float *pot);

static void sinks_generic(const gl_tree *t, const gl_lists *L, int32_t gb, int32_t b, int32_t e,
                          int order, const gl_per *P, float eps2, const int64_t *ids, float *acc,
                          float *pot) {
    GL_SINKS_BODY
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static void
sinks_avx2(const gl_tree *t, const gl_lists *L, int32_t gb, int32_t b, int32_t e, int order,
           const gl_per *P, float eps2, const int64_t *ids, float *acc, float *pot) {
    GL_SINKS_BODY
}
/* gcc keeps 256-bit vectors on AVX-512 unless told; clang has no such target option. */
#ifdef __clang__
#define GL_AVX512_TARGET "avx512f,avx512vl,avx512dq,fma"
#else
#define GL_AVX512_TARGET "avx512f,avx512vl,avx512dq,fma,prefer-vector-width=512"
#endif
__attribute__((target(GL_AVX512_TARGET))) static void
sinks_avx512(const gl_tree *t, const gl_lists *L, int32_t gb, int32_t b, int32_t e, int order,
             const gl_per *P, float eps2, const int64_t *ids, float *acc, float *pot) {
    GL_SINKS_BODY
}
#endif

/* The group's queued Ewald sources (a whole number of blocks, group_ewald) summed
 * with the scalar path's into L->corr: ewald_source's terms, with ewald_table_at's
 * lookup and Taylor shift (ewald_shift) written lane-innermost so that each step is
 * one vector operation over GL_LANES sources (per source, the compilers left the index
 * tables scalar). The lanes' sums meet in float64. */
static inline __attribute__((always_inline)) void ewald_sum_body(const gl_per *P, gl_lists *L) {
    static const int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    float D[EWALD_NDER][GL_LANES] = {{0}}, C[EWALD_NDER][GL_LANES], A1[20][GL_LANES],
          A2[10][GL_LANES], A3[4][GL_LANES], e[3][GL_LANES], W[6][GL_LANES];
    int32_t at[GL_LANES], neg[GL_LANES];
    float sc = 2.0f * (float)P->grid;
    int32_t n = P->grid, m1 = n + 1;
    for (int64_t j = 0; j < L->ne; j += GL_LANES) {
        const float *s = L->es + j * GL_EWALD_ROWS;
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++) { /* the nearest grid point, the octant */
            int32_t ix[3], ng = 0;
            for (int k = 0; k < 3; k++) {
                float u = (L->g[k] - s[k * GL_LANES + l]) * P->inv_box, g = fabsf(u) * sc;
                int32_t i = (int32_t)(g + 0.5f);
                ix[k] = i < n ? i : n;
                e[k][l] = fabsf(u) - (float)ix[k] / sc;
                ng |= (u < 0.0f) << k;
            }
            at[l] = EWALD_NDER * ((ix[0] * m1 + ix[1]) * m1 + ix[2]), neg[l] = ng;
        }
        for (int l = 0; l < GL_LANES; l++)
            for (int q = 0; q < EWALD_NDER; q++) C[q][l] = P->table[at[l] + q];
        for (int q = 0; q < 20; q++) {
            const unsigned char *up = EWALD_UP[q];
#pragma omp simd
            for (int l = 0; l < GL_LANES; l++)
                A1[q][l] = C[up[0]][l] * e[0][l] + C[up[1]][l] * e[1][l] + C[up[2]][l] * e[2][l];
        }
        for (int q = 0; q < 10; q++) {
            const unsigned char *up = EWALD_UP[q];
#pragma omp simd
            for (int l = 0; l < GL_LANES; l++)
                A2[q][l] = A1[up[0]][l] * e[0][l] + A1[up[1]][l] * e[1][l] + A1[up[2]][l] * e[2][l];
        }
        for (int q = 0; q < 4; q++) {
            const unsigned char *up = EWALD_UP[q];
#pragma omp simd
            for (int l = 0; l < GL_LANES; l++)
                A3[q][l] = A2[up[0]][l] * e[0][l] + A2[up[1]][l] * e[1][l] + A2[up[2]][l] * e[2][l];
        }
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++) /* ewald_shift's fourth-order term of psi */
            C[0][l] += (A3[1][l] * e[0][l] + A3[2][l] * e[1][l] + A3[3][l] * e[2][l]) / 24.0f;
        for (int q = 0; q < EWALD_NDER; q++) {
            float f1 = q < 20, f2 = q < 10 ? 0.5f : 0.0f, f3 = q < 4 ? 1.0f / 6.0f : 0.0f;
            int q1 = q < 20 ? q : 0, q2 = q < 10 ? q : 0, q3 = q < 4 ? q : 0;
            int odd = EWALD_ODD[q];
#pragma omp simd
            for (int l = 0; l < GL_LANES; l++) {
                float d = C[q][l] + f1 * A1[q1][l] + f2 * A2[q2][l] + f3 * A3[q3][l];
                /* the octant's sign: the parity of the odd axes that are negative */
                C[q][l] = (0x96 >> (odd & neg[l])) & 1 ? -d : d;
            }
        }
#pragma omp simd
        for (int l = 0; l < GL_LANES; l++)
            for (int k = 0; k < 6; k++) /* off-diagonal moments count twice, halves once */
                W[k][l] = (k < 3 ? 0.5f : 1.0f) * s[(4 + k) * GL_LANES + l] * P->inv_box2;
        for (int q = 0; q < EWALD_NDER; q++)
#pragma omp simd
            for (int l = 0; l < GL_LANES; l++) D[q][l] += s[3 * GL_LANES + l] * C[q][l];
        for (int k = 0; k < 6; k++)
            for (int q = 0; q < 10; q++) {
                int i = EWALD_UP[EWALD_UP[q][ab[k][0]]][ab[k][1]];
#pragma omp simd
                for (int l = 0; l < GL_LANES; l++) D[q][l] += W[k][l] * C[i][l];
            }
    }
    for (int q = 0; q < EWALD_NDER; q++) {
        double sum = L->eacc[q];
        for (int l = 0; l < GL_LANES; l++) sum += D[q][l];
        L->corr[q] = (float)sum;
    }
}

typedef void (*gl_ewald_fn)(const gl_per *P, gl_lists *L);

static void ewald_sum_generic(const gl_per *P, gl_lists *L) {
    ewald_sum_body(P, L);
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2,fma"))) static void ewald_sum_avx2(const gl_per *P, gl_lists *L) {
    ewald_sum_body(P, L);
}
__attribute__((target(GL_AVX512_TARGET))) static void ewald_sum_avx512(const gl_per *P,
                                                                       gl_lists *L) {
    ewald_sum_body(P, L);
}
#endif

/* The sink and Ewald kernels for this CPU. */
static void pick_kernels(gl_sinks_fn *sinks, gl_ewald_fn *ewald) {
    *sinks = sinks_generic, *ewald = ewald_sum_generic;
#if defined(__x86_64__) && defined(__GNUC__)
    const unsigned avx512 = CANOPY_CPU_AVX512F | CANOPY_CPU_AVX512VL | CANOPY_CPU_AVX512DQ,
                   avx2 = CANOPY_CPU_AVX2 | CANOPY_CPU_FMA;
    unsigned f = canopy_cpu_features();
    if ((f & avx512) == avx512)
        *sinks = sinks_avx512, *ewald = ewald_sum_avx512;
    else if ((f & avx2) == avx2)
        *sinks = sinks_avx2, *ewald = ewald_sum_avx2;
#endif
}

static void lists_free(gl_lists *L) {
    free(L->cells), free(L->opened), free(L->stack), free(L->cend), free(L->oend), free(L->mark);
    free(L->es);
    free(L->cb);
    free(L->bx), free(L->by), free(L->bz), free(L->bm);
}

/* The sink group point leaf v of t: every sink sits at one point and sees the same
 * lists (the group gathered as one body, excluded as self), so the kernel runs once.
 * The group adds no force and, softened, the potential -(M - m_i) / eps (the Plummer
 * kernel at r = 0), M the leaf's mass. */
static void point_sinks(const gl_tree *t, const gl_lists *L, gl_sinks_fn sinks, int32_t v,
                        const unsigned char *active, int order, float eps2, float *acc,
                        float *pot) {
    const gl_hot *h = t->hot + v;
    float a[3], p[1] = {0.0f};
    sinks(t, L, h->begin, h->begin, h->begin + 1, order, NULL, eps2, NULL, a, pot ? p : NULL);
    double M = 0.0, inv = eps2 > 0.0f ? 1.0 / sqrt((double)eps2) : 0.0;
    for (int32_t i = h->begin; i < h->end; i++) M += t->m[i];
    for (int32_t i = h->begin; i < h->end; i++) {
        int64_t id = t->ids[i];
        if (active && !active[id]) continue;
        for (int k = 0; k < 3; k++) acc[3 * id + k] = a[k];
        if (pot) pot[id] = (float)((double)p[0] - (M - t->m[i]) * inv);
    }
}

/* The number of active sinks in the bucket [gb, ge) (all of them without a mask). */
static int32_t count_active(const gl_tree *t, const unsigned char *active, int32_t gb, int32_t ge) {
    if (!active) return ge - gb;
    int32_t c = 0;
    for (int32_t i = gb; i < ge; i++) c += active[t->ids[i]] != 0;
    return c;
}

/* Forces on the bodies of src[0] from the bodies of all nsrc source trees: each sink
 * group (or body, per_body) walks every tree into one set of lists, then the kernel
 * runs once over them. active (may be NULL): only the bodies it marks are sinks.
 * work (may be NULL): each body's interaction count. */
static canopy_status evaluate(const gl_tree *const *src, int nsrc, int per_body, const gl_per *P,
                              const unsigned char *active, float eps2, float *acc, float *pot,
                              double *work, gl_counts *cnt) {
    const gl_tree *tp = src[0];
    int32_t order = tp->order;
    int64_t cells = 0;
    int32_t depth = 0;
    for (int s = 0; s < nsrc; s++) {
        cells += src[s]->nn;
        depth = src[s]->depth > depth ? src[s]->depth : depth;
    }
    gl_sinks_fn sinks;
    gl_ewald_fn ewald_sum;
    pick_kernels(&sinks, &ewald_sum);
    int failed = 0;
    int64_t walks = 0, tests = 0, pp = 0, pc = 0;
#pragma omp parallel num_threads(canopy_threads()) reduction(+ : walks, tests, pp, pc)             \
    reduction(| : failed)
    {
        gl_lists L;
        memset(&L, 0, sizeof L);
        L.cells = malloc((size_t)cells * sizeof *L.cells);
        L.opened = malloc((size_t)cells * sizeof *L.opened);
        L.stack = malloc(((size_t)depth * 16 + 16) * sizeof *L.stack);
        L.mark = P && P->alpha == 0.0f ? calloc((size_t)tp->nn, 1) : NULL; /* group_ewald's */
        L.cend = malloc((size_t)nsrc * sizeof *L.cend);
        L.oend = malloc((size_t)nsrc * sizeof *L.oend);
        failed |= !L.cells || !L.opened || !L.stack || !L.cend || !L.oend ||
                  (P && P->alpha == 0.0f && !L.mark);
#pragma omp for schedule(dynamic, 4)
        for (int32_t k = 0; k < tp->n_leaves; k++) {
            if (failed) continue;
            const gl_hot *h = tp->hot + tp->leaves[k];
            int32_t gb = h->begin, ge = h->end, na = count_active(tp, active, gb, ge);
            if (na == 0) continue;
            /* per body: each sink alone; per bucket (and coincident sinks): the group's
             * box once */
            /* coincident sinks in a periodic box take the general path (their images
             * would need their own correction), and so does each body of a leaf too
             * large for its Ewald correction's Taylor series about its centre */
            /* TreePM: a group whose images nearest its centre may not be each sink's
             * within the cut walks per body */
            int ewald = P && P->alpha == 0.0f;
            int big = ewald ? node_side(tp, tp->leaves[k]) > tp->group_side * P->box
                            : P && node_side(tp, tp->leaves[k]) > P->box - 2.0f * sqrtf(P->rcut2);
            int point = !P && point_leaf(h), pb = (per_body || big) && !point;
            for (int32_t i = gb; i < (pb ? ge : gb + 1) && !failed; i++) {
                if (pb && active && !active[tp->ids[i]]) continue;
                float p[3] = {tp->x[i], tp->y[i], tp->z[i]};
                const float *b = tp->box + 6 * (int64_t)tp->leaves[k];
                const float *lo = pb ? p : b, *hi = pb ? p : b + 3, *slo = lo, *shi = hi;
                L.nc = L.nl = 0;
                for (int k3 = 0; k3 < 3; k3++) L.g[k3] = 0.5f * (lo[k3] + hi[k3]);
                if (ewald && !per_body) /* the Ewald terms about g, the tests as if open */
                    lo = tp->box + 6 * (int64_t)tp->walk_box[k], hi = lo + 3;
                for (int s = 0; s < nsrc; s++) /* other trees hold none of the group */
                    tests += walk(src[s], s, P, lo, hi, s ? 0 : gb, s ? 0 : ge, &L);
                walks++;
                if (gather(src, P, gb, ge, point ? tp->leaves[k] : -1, eps2, slo, shi, &L)) {
                    failed = 1;
                    break;
                }
                if (ewald && group_ewald(P, tp, tp->leaves[k], &L)) {
                    failed = 1;
                    break;
                }
                if (ewald) ewald_sum(P, &L);
                if (point) {
                    point_sinks(tp, &L, sinks, tp->leaves[k], active, order, eps2, acc, pot);
                    pc += L.nc, pp += L.np - 1;
                    for (int32_t j = gb; work && j < ge; j++)
                        work[tp->ids[j]] = (double)L.nc + (double)(L.np - 1);
                    continue;
                }
                int32_t e = pb ? i + 1 : ge, m = pb ? 1 : na;
                if (m == e - i)
                    sinks(tp, &L, gb, i, e, order, P, eps2, tp->ids, acc, pot);
                else /* the bucket's whole box walked: its lists serve any of its bodies */
                    for (int32_t j = i; j < e; j++)
                        if (active[tp->ids[j]])
                            sinks(tp, &L, gb, j, j + 1, order, P, eps2, tp->ids, acc, pot);
                pc += (int64_t)m * L.nc;
                pp += (int64_t)m * (L.np - 1);
                for (int32_t j = i; work && j < e; j++)
                    work[tp->ids[j]] = (double)L.nc + (double)(L.np - 1);
            }
        }
        lists_free(&L);
    }
    cnt->walks = walks, cnt->tests = tests, cnt->pp = pp, cnt->pc = pc;
    if (failed)
        return canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the interaction lists");
    return CANOPY_OK;
}

static canopy_status check_size(int64_t n) {
    if (n >= INT32_MAX / 2)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: the list engine takes fewer than %d bodies (got %lld)",
                           INT32_MAX / 2, (long long)n);
    return CANOPY_OK;
}

canopy_status canopy_gl_gravity(canopy_points bodies, const float *mass, float theta, int32_t order,
                                float eps2, const gl_config *cfg, float *acc, float *pot,
                                gl_counts *counts) {
    return canopy_gl_gravity_active(bodies, mass, theta, order, eps2, cfg, NULL, acc, pot, counts);
}

canopy_status canopy_gl_gravity_active(canopy_points bodies, const float *mass, float theta,
                                       int32_t order, float eps2, const gl_config *cfg,
                                       const unsigned char *active, float *acc, float *pot,
                                       gl_counts *counts) {
    return canopy_gl_gravity_periodic(bodies, mass, theta, order, eps2, cfg, NULL, active, acc, pot,
                                      counts);
}

canopy_status canopy_gl_gravity_periodic(canopy_points bodies, const float *mass, float theta,
                                         int32_t order, float eps2, const gl_config *cfg,
                                         const gl_periodic *per, const unsigned char *active,
                                         float *acc, float *pot, gl_counts *counts) {
    canopy_status s = check_size(bodies.n);
    if (s) return s;
    gl_tree t;
    memset(&t, 0, sizeof t);
    gl_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    double t0 = canopy_now();
    s = build(&t, bodies, mass, 1.0f / theta, order, cfg, per ? per->box : 0.0f);
    if (s) {
        tree_free(&t);
        return s;
    }
    cnt.nodes = t.nn;
    cnt.leaves = t.n_leaves;
    cnt.depth = t.depth;
    double t1 = canopy_now();
    cnt.build_seconds = t1 - t0;
    const gl_tree *src = &t;
    gl_per P = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, NULL, 0, 0.0f, 0.0f, 0.0f};
    int treepm = per && per->pm_grid > 0;
    if (per) {
        double rs = per->pm_rs * per->box, rcut = per->pm_cut * rs;
        P = (gl_per){per->box,
                     1.0f / per->box,
                     1.0f / (per->box * per->box),
                     treepm ? (float)(GL_TREEPM_CELL * rs)
                            : (cfg->binary ? GL_CORR_SIDE : GL_CORR_SIDE_OCT) * per->box,
                     (cfg->binary ? GL_FINE_SIDE : GL_FINE_SIDE_OCT) * per->box,
                     NULL,
                     per->grid,
                     treepm ? (float)(0.5 / rs) : 0.0f,
                     treepm ? (float)(rcut * rcut) : 0.0f,
                     (float)(GL_TREEPM_NEAR * GL_TREEPM_NEAR * rs * rs)};
        if (treepm && (order != 0 && order != 2))
            s = canopy_fail(CANOPY_ERR_INVALID,
                            "gravity: TreePM's cells are of order 0 or 2 "
                            "(got %d)",
                            (int)order);
        else if (!treepm)
            s = canopy_ewald_table(per->grid, &P.table);
    }
    if (!s)
        s = evaluate(&src, 1, cfg->per_body, per ? &P : NULL, active, eps2, acc, pot, NULL, &cnt);
    if (!s && treepm)
        s = canopy_pm_long_range(t.x, t.y, t.z, t.m, t.ids, t.n, per->box, per->pm_grid, per->pm_rs,
                                 active, acc, pot);
    cnt.walk_seconds = canopy_now() - t1;
    tree_free(&t);
    if (counts) *counts = cnt;
    return s;
}

/* ----------------------------------------------- kept trees (nbody.c) -- */

/* Leaf boxes from their bodies, then each parent's as the union of its children's
 * (children are numbered after their parents): the tight boxes build gives the same
 * bodies, min and max being exact. */
static void refit_boxes(gl_tree *t) {
#pragma omp parallel for schedule(dynamic, 256) num_threads(canopy_threads())
    for (int32_t v = 0; v < t->nn; v++) {
        const gl_hot *h = t->hot + v;
        if (h->nchild) continue;
        float *b = t->box + 6 * (int64_t)v;
        for (int k = 0; k < 3; k++) b[k] = INFINITY, b[3 + k] = -INFINITY;
        for (int32_t i = h->begin; i < h->end; i++) {
            float p[3] = {t->x[i], t->y[i], t->z[i]};
            for (int k = 0; k < 3; k++) {
                b[k] = p[k] < b[k] ? p[k] : b[k];
                b[3 + k] = p[k] > b[3 + k] ? p[k] : b[3 + k];
            }
        }
    }
    for (int32_t v = t->nn - 1; v >= 0; v--) {
        const gl_hot *h = t->hot + v;
        float *b = t->box + 6 * (int64_t)v;
        for (int32_t c = h->child; c < h->child + h->nchild; c++) {
            const float *q = t->box + 6 * (int64_t)c;
            for (int k = 0; k < 3; k++) {
                b[k] = c == h->child || q[k] < b[k] ? q[k] : b[k];
                b[3 + k] = c == h->child || q[3 + k] > b[3 + k] ? q[3 + k] : b[3 + k];
            }
        }
    }
}

canopy_status canopy_gl_tree_refit(gl_tree *t, canopy_points bodies) {
    if (t->borrowed || t->period > 0.0f || bodies.n != t->n)
        return canopy_fail(CANOPY_ERR_INTERNAL,
                           "gravity: refit needs an open-boundary tree of the same %lld bodies",
                           (long long)t->n);
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < t->n; i++) {
        const float *p = canopy_point(bodies, t->ids[i]);
        t->x[i] = p[0], t->y[i] = p[1], t->z[i] = p[2];
    }
    refit_boxes(t);
    tree_moments(t);
    return CANOPY_OK;
}

canopy_status canopy_gl_tree_forces_active(const gl_tree *t, const unsigned char *active,
                                           float eps2, float *acc, float *pot, gl_counts *counts) {
    gl_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    cnt.nodes = t->nn, cnt.leaves = t->n_leaves, cnt.depth = t->depth;
    double t0 = canopy_now();
    canopy_status s = evaluate(&t, 1, 0, NULL, active, eps2, acc, pot, NULL, &cnt);
    cnt.walk_seconds = canopy_now() - t0;
    if (counts) *counts = cnt;
    return s;
}

/* -------------------------------------------------------- pieces (dist/) -- */

canopy_status canopy_gl_tree_build(canopy_points bodies, const float *mass, float theta,
                                   int32_t order, const gl_config *cfg, gl_tree **out) {
    *out = NULL;
    canopy_status s = bodies.n < 1 ? canopy_fail(CANOPY_ERR_INVALID,
                                                 "gravity: a list tree needs at least one body")
                                   : check_size(bodies.n);
    gl_tree *t = NULL;
    if (!s) s = canopy_calloc((void **)&t, 1, sizeof *t);
    if (!s) s = build(t, bodies, mass, 1.0f / theta, order, cfg, 0.0f);
    if (s) {
        canopy_gl_tree_free(t);
        return s;
    }
    *out = t;
    return CANOPY_OK;
}

void canopy_gl_tree_free(gl_tree *t) {
    if (!t) return;
    if (!t->borrowed) tree_free(t);
    canopy_free(t);
}

void canopy_gl_tree_box(const gl_tree *t, float box[6]) {
    memcpy(box, t->box, 6 * sizeof *box);
}

/* A piece: this header, n_nodes walk records, n_nodes cold records, then the bodies'
 * x, y, z and m arrays; every part is whole 4-byte words. */
typedef struct gl_piece_head {
    int32_t n_nodes, n_bodies, order, depth;
} gl_piece_head;

static int64_t piece_bytes(int32_t n_nodes, int32_t n_bodies, int32_t order) {
    return (int64_t)sizeof(gl_piece_head) +
           (int64_t)n_nodes * (int64_t)(sizeof(gl_hot) + (size_t)cold_floats(order) * 4) +
           (int64_t)n_bodies * 16;
}

canopy_status canopy_gl_export(const gl_tree *t, const float box[6], void **out, int64_t *bytes) {
    *out = NULL;
    *bytes = 0;
    /* Breadth first, so the children of an opened node land next to each other: q[i]
     * is the node at the piece's position i, kids[i] where its children start
     * (-1: accepted for the whole box, sent as a childless cell). */
    int32_t *q = NULL, *kids = NULL, nq = 1, nb = 0;
    canopy_status s = canopy_alloc((void **)&q, (size_t)t->nn, sizeof *q);
    if (!s) s = canopy_alloc((void **)&kids, (size_t)t->nn, sizeof *kids);
    if (s) goto done;
    q[0] = 0;
    for (int32_t i = 0; i < nq; i++) {
        const gl_hot *h = t->hot + q[i];
        kids[i] = -1;
        if (box_d2(box, box + 3, h->c) > h->r2) continue;
        if (h->nchild == 0) {
            nb += h->end - h->begin;
            continue;
        }
        kids[i] = nq;
        for (int32_t c = h->child; c < h->child + h->nchild; c++) q[nq++] = c;
    }
    int64_t size = piece_bytes(nq, nb, t->order);
    char *buf = NULL;
    if ((s = canopy_alloc((void **)&buf, (size_t)size, 1))) goto done;
    gl_piece_head head = {nq, nb, t->order, t->depth};
    memcpy(buf, &head, sizeof head);
    gl_hot *hot = (gl_hot *)(void *)(buf + sizeof head);
    float *cold = (float *)(void *)(hot + nq), *bx = cold + (size_t)nq * cold_floats(t->order);
    float *by = bx + nb, *bz = by + nb, *bm = bz + nb;
    int32_t j = 0;
    size_t cf = (size_t)cold_floats(t->order);
    for (int32_t i = 0; i < nq; i++) {
        const gl_hot *h = t->hot + q[i];
        const float *c =
            (const float *)(const void *)(t->cold_base + (size_t)q[i] * t->cold_stride);
        gl_hot o = {{h->c[0], h->c[1], h->c[2]}, h->r2, -1, 0, 0, 0};
        memcpy(cold + i * cf, c, cf * sizeof *c);
        if (kids[i] >= 0) {
            o.child = kids[i];
            o.nchild = h->nchild;
        } else if (h->nchild == 0 && !(box_d2(box, box + 3, h->c) > h->r2)) {
            size_t len = (size_t)(h->end - h->begin);
            memcpy(bx + j, t->x + h->begin, len * sizeof *bx);
            memcpy(by + j, t->y + h->begin, len * sizeof *by);
            memcpy(bz + j, t->z + h->begin, len * sizeof *bz);
            memcpy(bm + j, t->m + h->begin, len * sizeof *bm);
            o.begin = j;
            o.end = j += (int32_t)len;
        }
        hot[i] = o;
    }
    *out = buf;
    *bytes = size;
done:
    canopy_free(q);
    canopy_free(kids);
    return s;
}

canopy_status canopy_gl_piece_open(const void *buf, int64_t bytes, gl_tree **out) {
    *out = NULL;
    gl_piece_head h;
    if (bytes < (int64_t)sizeof h)
        return canopy_fail(CANOPY_ERR_INTERNAL, "gravity: a list piece of %lld bytes is truncated",
                           (long long)bytes);
    memcpy(&h, buf, sizeof h);
    if (h.n_nodes < 1 || h.n_bodies < 0 || h.depth < 1 || h.depth > GL_MAX_DEPTH + 1 ||
        (h.order != 0 && (h.order < 2 || h.order > MP_ORDER_MAX)) ||
        piece_bytes(h.n_nodes, h.n_bodies, h.order) != bytes)
        return canopy_fail(CANOPY_ERR_INTERNAL, "gravity: a list piece's header is malformed");
    const gl_hot *hot = (const gl_hot *)(const void *)((const char *)buf + sizeof h);
    /* children after their parent and inside the piece: no cycles, no stray reads */
    for (int32_t i = 0; i < h.n_nodes; i++) {
        const gl_hot *v = hot + i;
        int bad = v->nchild > 0
                      ? v->child <= i || v->nchild > 8 || v->child > h.n_nodes - v->nchild
                      : v->nchild < 0 || v->begin < 0 || v->end < v->begin || v->end > h.n_bodies;
        if (bad)
            return canopy_fail(CANOPY_ERR_INTERNAL, "gravity: node %d of a list piece is malformed",
                               (int)i);
    }
    gl_tree *t = NULL;
    canopy_status s = canopy_calloc((void **)&t, 1, sizeof *t);
    if (s) return s;
    size_t cf = (size_t)cold_floats(h.order);
    t->borrowed = 1;
    t->nn = h.n_nodes;
    t->depth = h.depth;
    t->order = h.order;
    t->walk = (char *)(uintptr_t)hot;
    t->stride = sizeof(gl_hot);
    t->cold_base = (const char *)(hot + h.n_nodes);
    t->cold_stride = cf * sizeof(float);
    t->x = (float *)(uintptr_t)(t->cold_base + (size_t)h.n_nodes * t->cold_stride);
    t->y = t->x + h.n_bodies;
    t->z = t->y + h.n_bodies;
    t->m = t->z + h.n_bodies;
    *out = t;
    return CANOPY_OK;
}

canopy_status canopy_gl_forces(const gl_tree *local, const gl_tree *const *remote, int n_remote,
                               float eps2, float *acc, float *pot, double *work,
                               gl_counts *counts) {
    const gl_tree **src = NULL;
    canopy_status s = canopy_alloc((void **)&src, (size_t)n_remote + 1, sizeof *src);
    if (s) return s;
    src[0] = local;
    for (int r = 0; r < n_remote; r++) {
        if (remote[r]->order != local->order) {
            s = canopy_fail(CANOPY_ERR_INTERNAL, "gravity: a piece of order %d, the tree's %d",
                            (int)remote[r]->order, (int)local->order);
            break;
        }
        src[r + 1] = remote[r];
    }
    gl_counts cnt;
    memset(&cnt, 0, sizeof cnt);
    cnt.nodes = local->nn, cnt.leaves = local->n_leaves, cnt.depth = local->depth;
    double t0 = canopy_now();
    if (!s) s = evaluate(src, n_remote + 1, 0, NULL, NULL, eps2, acc, pot, work, &cnt);
    cnt.walk_seconds = canopy_now() - t0;
    if (counts) *counts = cnt;
    canopy_free(src);
    return s;
}
