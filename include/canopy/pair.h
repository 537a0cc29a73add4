/* SPDX-License-Identifier: MIT */
/* canopy/pair.h — write your own pair traversal: two trees (or one tree against
 * itself) walked node pair by node pair (docs/c-api.md, "Pair traversals"; the
 * test tests/test_pair.c is a complete user-written example).
 *
 * A pair descriptor says what happens at a node pair; the engines
 * (canopy/pair_cpu.h, canopy/pair_cuda.cuh) decide how the pairs are walked. It
 * supplies, as static inline functions (CANOPY_HD, so a GPU can run them too):
 *
 *   test(ctx, acc, ta, a, tb, b, sym)   CANOPY_PAIR_DONE: nothing below the pair
 *                        (a of ta, b of tb) is visited, either because no pair of
 *                        points can matter (prune) or because the descriptor
 *                        accounted for all of them at once into its accumulator
 *                        (accept whole, e.g. every distance falls in one bin);
 *                        CANOPY_PAIR_DESCEND: go on below.
 *   visit_leaves(ctx, acc, ta, a, tb, b, sym)  both nodes are leaves and test said
 *                        descend: process every point pair of the two buckets.
 *   merge(ctx, acc)      add one thread's accumulator to the result (serial).
 *   merge_all(ctx, accs, n)  optional, instead of merge: every thread's accumulator
 *                        at once (accs[0..n), serial), so that a large result can be
 *                        summed a block at a time across them (paircount's 10^6 bins
 *                        go to a file that way with no array of 8 MB).
 *
 * The rules every engine keeps:
 * - Each node pair reached is tested exactly once; a pair of leaves that is not
 *   done is visited once; below a pair that is not done the engine goes on with its
 *   child pairs: when both are internal and equal (a == b of a symmetric walk) both
 *   are split; otherwise the node with more points is split (ties: a), a leaf never.
 * - Symmetric walks (tb is ta): the engine visits each *unordered* node pair once:
 *   a pair with a != b stands for both (a, b) and (b, a), and its nodes are
 *   disjoint subtrees; a pair with a == b stands for the point pairs inside one
 *   subtree (i, j both of a, the descriptor decides whether i == j counts). `sym` is
 *   1 in such a walk, 0 in a cross walk (every ordered pair (i of ta, j of tb) once).
 * - No order between node pairs is promised: pairs run on several threads, each
 *   with its own accumulator (acc_size bytes, zeroed by the engine, 64-aligned),
 *   and merge is called once per accumulator after the walk (or merge_all once). A descriptor's
 * result must therefore not depend on the order (sums of counts or weights do not).
 *
 * Approximations with error bounds fit the same two verbs: a kernel density
 * estimate accepts a node pair whole when the kernel's range over the pair's
 * distance interval [min, max] is within the tolerance (adding the midpoint value
 * times the weight of the pair), and descends otherwise; a leaf pair sums exactly.
 *
 * The bound of a kd node pair (canopy_pair_box_bounds) is exact under float
 * rounding: it never exceeds (min) or falls below (max) the squared distance
 * canopy_dist2 computes between any point of a and any point of b. */
#ifndef CANOPY_PAIR_H
#define CANOPY_PAIR_H

#include "canopy/traverse.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { CANOPY_PAIR_DESCEND = 0, CANOPY_PAIR_DONE = 1 };

typedef int (*canopy_pair_test_fn)(const void *ctx, void *acc, const canopy_tree_view *ta,
                                   int32_t a, const canopy_tree_view *tb, int32_t b, int sym);
typedef void (*canopy_pair_visit_fn)(const void *ctx, void *acc, const canopy_tree_view *ta,
                                     int32_t a, const canopy_tree_view *tb, int32_t b, int sym);
typedef void (*canopy_pair_merge_fn)(const void *ctx, const void *acc);
typedef void (*canopy_pair_merge_all_fn)(const void *ctx, const void *const *accs, int n);

/* A pair descriptor as the CPU engines take it; declare it `static const` so that
 * every (engine, descriptor) pair compiles to direct calls. */
typedef struct canopy_pair_app {
    const char *name; /* for messages */
    canopy_pair_test_fn test;
    canopy_pair_visit_fn visit_leaves;
    canopy_pair_merge_fn merge;
    canopy_pair_merge_all_fn merge_all; /* NULL: merge each accumulator */
} canopy_pair_app;

/* One pair walk: tb == ta (the same view) and sym = 1 for a symmetric walk. */
typedef struct canopy_pair_job {
    const void *ctx;
    const canopy_tree_view *ta, *tb;
    int sym;
    size_t acc_size; /* bytes of one accumulator */
} canopy_pair_job;

/* Counters the engines fill. */
typedef struct canopy_pair_counters {
    int64_t tests;       /* node pairs tested */
    int64_t leaf_pairs;  /* leaf pairs visited */
    int64_t tasks;       /* node pairs handed out to threads (or warps) */
    int64_t point_pairs; /* point pairs in the visited leaf pairs (each unordered pair once) */
} canopy_pair_counters;

typedef struct canopy_pair {
    int32_t a, b;
} canopy_pair;

CANOPY_HD canopy_pair canopy_pair_make(int32_t a, int32_t b) {
    canopy_pair p;
    p.a = a;
    p.b = b;
    return p;
}

/* Which node of a pair the walk splits (not a leaf pair, not a node with itself): a,
 * unless b alone has children or b holds more points. */
CANOPY_HD int canopy_pair_splits_a(const canopy_node *ha, const canopy_node *hb) {
    return hb->child < 0 || (ha->child >= 0 && ha->end - ha->begin >= hb->end - hb->begin);
}

/* Child pair number c of p (nodes ha, hb) in canopy_pair_children's order, into *out
 * when c is below the count, which it returns: one lane of a GPU warp takes one child
 * pair without the whole list (a list indexed by lane lives in local memory). */
CANOPY_HD int32_t canopy_pair_child(const canopy_node *ha, const canopy_node *hb, int sym,
                                    canopy_pair p, int32_t c, canopy_pair *out) {
    if (sym && p.a == p.b) {
        int32_t n = 0;
        for (int32_t i = 0; i < ha->nchild; i++)
            for (int32_t j = i; j < ha->nchild; j++, n++)
                if (n == c) *out = canopy_pair_make(ha->child + i, ha->child + j);
        return n;
    }
    if (canopy_pair_splits_a(ha, hb)) {
        if (c < ha->nchild) *out = canopy_pair_make(ha->child + c, p.b);
        return ha->nchild;
    }
    if (c < hb->nchild) *out = canopy_pair_make(p.a, hb->child + c);
    return hb->nchild;
}

/* Child pairs of pair p that is not done and not two leaves, in canonical order
 * (the rule above); out needs CANOPY_MAX_CHILDREN^2 entries. Returns their number. */
CANOPY_HD int32_t canopy_pair_children(const canopy_tree_view *ta, const canopy_tree_view *tb,
                                       int sym, canopy_pair p, canopy_pair *out) {
    const canopy_node *ha = canopy_tv_node(ta, p.a), *hb = canopy_tv_node(tb, p.b);
    int32_t n = 0;
    if (sym && p.a == p.b) {
        for (int32_t i = 0; i < ha->nchild; i++)
            for (int32_t j = i; j < ha->nchild; j++)
                out[n++] = canopy_pair_make(ha->child + i, ha->child + j);
        return n;
    }
    if (canopy_pair_splits_a(ha, hb))
        for (int32_t i = 0; i < ha->nchild; i++) out[n++] = canopy_pair_make(ha->child + i, p.b);
    else
        for (int32_t j = 0; j < hb->nchild; j++) out[n++] = canopy_pair_make(p.a, hb->child + j);
    return n;
}

/* Stack entries a depth-first pair walk needs at most: each split adds at most
 * CANOPY_MAX_CHILDREN^2 - 1 pending pairs and a pair is split at most
 * depth_a + depth_b times below the task it starts from. */
CANOPY_HD int64_t canopy_pair_stack_capacity(const canopy_tree_view *ta,
                                             const canopy_tree_view *tb) {
    int64_t f =
        (int64_t)(ta->max_children > tb->max_children ? ta->max_children : tb->max_children);
    f = f < 2 ? 2 : f;
    return (int64_t)(ta->depth + tb->depth) * (f * f - 1) + 1;
}

/* Bounds [*mn, *mx] on the squared distance between any point of kd box ga and any
 * point of kd box gb (canopy/traverse.h's geometry: lo[d], hi[d]), minimum image in
 * a periodic box of side `box` (0: none; coordinates in [0, box)). Per axis fl(p - q)
 * for p in [loa, hia], q in [lob, hib] lies in [fl(loa - hib), fl(hia - lob)]
 * (rounding is monotone), so |p - q| lies in [umin, umax] and fl(box - |p - q|) in
 * [fl(box - umax), fl(box - umin)]; sums of squares of non-negative floats are
 * monotone, so the bounds hold for the distances canopy computes, with no margin.
 * Distances per axis are computed as |p - q|, then min(that, box - that).
 * canopy_pair_axis_bounds adds one axis's squared bounds, given the rounded
 * differences' range [lo, hi], to *l2 and *h2 (a point is a box with lo = hi). */
CANOPY_HD void canopy_pair_axis_bounds(float lo, float hi, float box, float *l2, float *h2) {
    float fa = fabsf(lo), fb = fabsf(hi);
    float l = lo <= 0.0f && hi >= 0.0f ? 0.0f : (fa < fb ? fa : fb);
    float h = fa > fb ? fa : fb;
    if (box > 0.0f) {
        float vmin = box - h, vmax = box - l;
        l = vmin < l ? vmin : l;
        h = vmax < h ? vmax : h;
    }
    *l2 += l * l;
    *h2 += h * h;
}

CANOPY_HD void canopy_pair_box_bounds(const float *ga, const float *gb, int32_t d, float box,
                                      float *mn, float *mx) {
    float smin = 0.0f, smax = 0.0f;
    for (int32_t j = 0; j < d; j++)
        canopy_pair_axis_bounds(ga[j] - gb[d + j], ga[d + j] - gb[j], box, &smin, &smax);
    *mn = smin;
    *mx = smax;
}

/* The CPU engines' frontier: the walk is expanded breadth-first from the root pair on
 * one thread (the tests account into acc) until many more pairs are pending than there
 * are threads to take them (the GPU engine expands on the device by the same rule:
 * canopy_pair_level_kernel). */
static inline int canopy_pair_is_leaves(const canopy_pair_job *job, canopy_pair p) {
    return canopy_tv_node(job->ta, p.a)->child < 0 && canopy_tv_node(job->tb, p.b)->child < 0;
}

/* One pair of a frontier level into out: itself when both are leaves, else those of
 * its children that the test leaves to walk (each test counted in *tests). Returns how
 * many it wrote, at most CANOPY_MAX_CHILDREN^2. */
static inline int32_t canopy_pair_expand(const canopy_pair_app *app, const canopy_pair_job *job,
                                         void *acc, canopy_pair p, canopy_pair *out,
                                         int64_t *tests) {
    if (canopy_pair_is_leaves(job, p)) {
        out[0] = p;
        return 1;
    }
    canopy_pair kids[CANOPY_MAX_CHILDREN * CANOPY_MAX_CHILDREN];
    int32_t k = canopy_pair_children(job->ta, job->tb, job->sym, p, kids), m = 0;
    *tests += k;
    for (int32_t c = 0; c < k; c++)
        if (!app->test(job->ctx, acc, job->ta, kids[c].a, job->tb, kids[c].b, job->sym))
            out[m++] = kids[c];
    return m;
}

/* The pairs still to walk after testing breadth-first from the root with accumulator
 * acc until at least `want` are pending or none can be split: *out (canopy_free it)
 * holds *n pairs, each tested and not done. */
static inline canopy_status canopy_pair_frontier(const canopy_pair_app *app,
                                                 const canopy_pair_job *job, void *acc,
                                                 int64_t want, canopy_pair **out, int64_t *n,
                                                 canopy_pair_counters *cnt) {
    canopy_pair *cur = NULL, *next = NULL;
    int64_t cap = want + CANOPY_MAX_CHILDREN * CANOPY_MAX_CHILDREN, nc = 0;
    canopy_status s = canopy_alloc((void **)&cur, (size_t)cap, sizeof *cur);
    if (!s) s = canopy_alloc((void **)&next, (size_t)cap, sizeof *next);
    *out = NULL;
    *n = 0;
    if (s) {
        canopy_free(cur);
        return s;
    }
    cnt->tests++;
    if (!app->test(job->ctx, acc, job->ta, 0, job->tb, 0, job->sym))
        cur[nc++] = canopy_pair_make(0, 0);
    int split = 1;
    while (split && nc < want) {
        split = 0;
        int64_t nn = 0;
        for (int64_t i = 0; i < nc; i++) {
            /* a level that would overflow keeps the rest as they are */
            if (split && nn + (nc - i) + CANOPY_MAX_CHILDREN * CANOPY_MAX_CHILDREN > cap) {
                next[nn++] = cur[i];
                continue;
            }
            const int64_t tests = cnt->tests;
            nn += canopy_pair_expand(app, job, acc, cur[i], next + nn, &cnt->tests);
            split |= cnt->tests != tests;
        }
        canopy_pair *t = cur;
        cur = next;
        next = t;
        nc = nn;
    }
    canopy_free(next);
    *out = cur;
    *n = nc;
    cnt->tasks += nc;
    return CANOPY_OK;
}

/* --------------------------------------------------------------- running -- */

/* One instantiated CPU engine (CANOPY_PAIR_CPU_INSTANTIATE makes a table of them,
 * indexed by canopy_variant: rec and dr). */
typedef canopy_status (*canopy_pair_cpu_runner)(const canopy_pair_job *job,
                                                canopy_pair_counters *cnt);

/* The GPU side of a pair walk, from the descriptor's CUDA file (canopy/pair_cuda.cuh):
 * uploads its context, runs the walk and adds its result to the caller's. */
typedef canopy_status (*canopy_pair_gpu_runner)(const void *ctx, const canopy_tree_view *ta,
                                                const canopy_tree_view *tb, int sym,
                                                canopy_pair_counters *cnt,
                                                struct canopy_gpu_report *rep);

typedef struct canopy_pair_traversal {
    const char *name;
    const canopy_pair_app *app;
    const canopy_pair_cpu_runner *cpu; /* CANOPY_VARIANT_COUNT entries */
    canopy_pair_gpu_runner gpu;        /* NULL: CPU only */
    const void *ctx;
    size_t acc_size;
} canopy_pair_traversal;

/* Walks the pairs of ta x tb (tb NULL: ta against itself, symmetric) under opt
 * (NULL = defaults): backend auto takes the GPU when there is a runner and a usable
 * device and ta has at least CANOPY_PAIR_GPU_AUTO_MIN_POINTS points; variant auto
 * is dr, rec and dr run on the CPU, dr on the GPU; the schedule is ignored (pairs are
 * handed out dynamically). stats (may be NULL): variant, backend, traverse time,
 * nodes_per_query = node pairs tested per point of ta, note. */
enum { CANOPY_PAIR_GPU_AUTO_MIN_POINTS = 50000 };
canopy_status canopy_pair_traverse(const canopy_tree *ta, const canopy_tree *tb,
                                   const canopy_pair_traversal *tr, const canopy_run_options *opt,
                                   canopy_pair_counters *cnt, canopy_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
