/* SPDX-License-Identifier: MIT */
/* The hybrid (inspector-executor) schedule on the host: plan the top tree, profile
 * every query in it, sort the queries by their profile keys (profile.h). */
#include "traverse/inspect.h"

#include "canopy/traverse_cpu.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Unguided keys hold a bit per top-tree leaf and guided ones 10-bit steps: both stay
 * within CANOPY_PROFILE_MAX_WORDS words with at most MAX_COLS leaves. The automatic
 * cut has up to AUTO_COLS leaves: Liu's "a third of the height" assumes one point
 * per leaf, and with our buckets a third of the height leaves a few dozen top-tree
 * leaves, too coarse to order queries well (measured on clust2: work expansion 3.6
 * with 32 leaves, 1.45 with 512, 1.18 for the tree order). */
enum { MAX_COLS = 64 * CANOPY_PROFILE_MAX_WORDS, AUTO_COLS = 256, GUIDED_WORDS = 2 };

/* auto's coherence sample profiles in a coarser top tree: cheap, and still enough
 * columns to tell windows of neighbours from windows of strangers. */
enum { SAMPLE_COLS = 32 };

static int32_t bits_for(int32_t v) {
    int32_t b = 1;
    while (((int64_t)1 << b) <= v) b++;
    return b;
}

/* Top-tree leaves of the cut at each depth: nodes at that level plus shallower
 * leaves. Parents precede children in both linearizations, so one pass in index
 * order knows each node's level. */
static void count_columns(const canopy_tree_view *t, int32_t *level, int64_t *cols,
                          int32_t *widest) {
    int32_t height = t->depth - 1;
    for (int32_t l = 0; l <= height + 1; l++) cols[l] = 0;
    for (int32_t l = 0; l <= height + 1; l++) widest[l] = 1;
    level[0] = 0;
    for (int32_t i = 0; i < t->n_nodes; i++) {
        const canopy_node *h = canopy_tv_node(t, i);
        cols[level[i]]++;
        if (h->child < 0) {
            for (int32_t l = level[i] + 1; l <= height; l++) cols[l]++; /* stays a column */
            continue;
        }
        if (h->nchild > widest[level[i] + 1]) widest[level[i] + 1] = h->nchild;
        for (int32_t c = 0; c < h->nchild; c++) level[h->child + c] = level[i] + 1;
    }
    for (int32_t l = 1; l <= height; l++) /* widest fan-out above each cut */
        widest[l] = widest[l] > widest[l - 1] ? widest[l] : widest[l - 1];
}

static int fits(int64_t cols, int32_t depth, int32_t widest, int32_t max_cols) {
    return cols <= max_cols && (int64_t)depth * (widest - 1) + 1 <= CANOPY_PROFILE_STACK;
}

/* A frontier node of the automatic cut: its index, level and point count. */
typedef struct frontier_node {
    int32_t node, level;
    int64_t size;
} frontier_node;

static void heap_push(frontier_node *h, int32_t *n, frontier_node x) {
    int32_t i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].size < x.size) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = x;
}

static frontier_node heap_pop(frontier_node *h, int32_t *n) {
    frontier_node top = h[0], x = h[--(*n)];
    int32_t i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].size > h[c].size) c++;
        if (h[c].size <= x.size) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
    return top;
}

static int cmp_node(const void *a, const void *b) {
    int32_t x = ((const frontier_node *)a)->node, y = ((const frontier_node *)b)->node;
    return (x > y) - (x < y);
}

/* The automatic cut: starting from the root, split the frontier node holding the
 * most points while the frontier stays within max_cols nodes and the walk's stack
 * within CANOPY_PROFILE_STACK. Unlike a cut at one level it follows the points, so
 * a skewed tree (a Plummer sphere's octree) is cut deep where its points are. */
static canopy_status frontier_cut(const canopy_tree_view *t, int32_t max_cols, int32_t *col,
                                  int32_t *n_cols, int32_t *depth) {
    frontier_node *heap, *done;
    int32_t cap = max_cols + 64, nh = 0, nd = 0, deepest = 0, widest = 1;
    canopy_status s = canopy_alloc((void **)&heap, (size_t)cap, sizeof *heap);
    if (!s) s = canopy_alloc((void **)&done, (size_t)cap, sizeof *done);
    if (s) {
        canopy_free(heap);
        return s;
    }
    const canopy_node *root = canopy_tv_node(t, 0);
    heap_push(heap, &nh, (frontier_node){0, 0, root->end - root->begin});
    while (nh > 0) {
        frontier_node f = heap_pop(heap, &nh);
        const canopy_node *h = canopy_tv_node(t, f.node);
        int32_t w = h->nchild > widest ? h->nchild : widest;
        int32_t lv = f.level + 1 > deepest ? f.level + 1 : deepest;
        int split = h->child >= 0 && nh + nd + h->nchild <= max_cols &&
                    (int64_t)lv * (w - 1) + 1 <= CANOPY_PROFILE_STACK;
        if (!split) {
            done[nd++] = f;
            continue;
        }
        widest = w;
        deepest = lv;
        for (int32_t c = 0; c < h->nchild; c++) {
            const canopy_node *k = canopy_tv_node(t, h->child + c);
            heap_push(heap, &nh, (frontier_node){h->child + c, f.level + 1, k->end - k->begin});
        }
    }
    qsort(done, (size_t)nd, sizeof *done, cmp_node); /* columns in tree order */
    for (int32_t i = 0; i < t->n_nodes; i++) col[i] = -1;
    for (int32_t i = 0; i < nd; i++) {
        col[done[i].node] = i;
        deepest = done[i].level > deepest ? done[i].level : deepest;
    }
    *n_cols = nd;
    *depth = deepest > 0 ? deepest : 1;
    canopy_free(heap);
    canopy_free(done);
    return CANOPY_OK;
}

/* The cut at one level, for an explicit --profile-depth. */
static canopy_status level_cut(const canopy_tree_view *t, int32_t *depth, int32_t *col,
                               int32_t *n_cols) {
    int32_t height = t->depth - 1 > 1 ? t->depth - 1 : 1;
    int32_t *level = NULL, *widest = NULL;
    int64_t *cols = NULL;
    canopy_status s = canopy_alloc((void **)&level, (size_t)t->n_nodes + 1, sizeof *level);
    if (!s) s = canopy_alloc((void **)&cols, (size_t)height + 2, sizeof *cols);
    if (!s) s = canopy_alloc((void **)&widest, (size_t)height + 2, sizeof *widest);
    if (!s) {
        count_columns(t, level, cols, widest);
        if (*depth > height) *depth = height; /* deeper cuts add no columns */
        int32_t d = *depth;
        if (!fits(cols[d], d, widest[d], MAX_COLS))
            s = canopy_fail(CANOPY_ERR_INVALID,
                            "profile depth %d: the top tree would have %lld leaves (at most %d) "
                            "or need a deeper stack than %d entries; use a smaller "
                            "--profile-depth",
                            (int)d, (long long)cols[d], MAX_COLS, CANOPY_PROFILE_STACK);
    }
    if (!s) {
        *n_cols = 0;
        for (int32_t i = 0; i < t->n_nodes; i++) {
            int top_leaf =
                level[i] == *depth || (level[i] < *depth && canopy_tv_node(t, i)->child < 0);
            col[i] = top_leaf ? (*n_cols)++ : -1;
        }
    }
    canopy_free(level);
    canopy_free(cols);
    canopy_free(widest);
    return s;
}

static canopy_status plan_make(const canopy_tree_view *t, int guided, int32_t depth,
                               int32_t auto_cols, canopy_profile_plan *p) {
    memset(p, 0, sizeof *p);
    if (depth < 0)
        return canopy_fail(CANOPY_ERR_INVALID, "profile depth must be >= 0 (0 = automatic), got %d",
                           (int)depth);
    int32_t n_cols = 0;
    canopy_status s = canopy_alloc((void **)&p->col, (size_t)t->n_nodes + 1, sizeof *p->col);
    if (!s && t->n_nodes == 0) {
        p->col[0] = -1;
        depth = 1;
    } else if (!s) {
        s = depth ? level_cut(t, &depth, p->col, &n_cols)
                  : frontier_cut(t, auto_cols, p->col, &n_cols, &depth);
    }
    if (s) {
        canopy_profile_plan_free(p);
        return s;
    }
    p->depth = depth;
    p->n_cols = n_cols;
    p->step_bits = guided ? bits_for(n_cols) : 0;
    p->words = guided ? GUIDED_WORDS : (n_cols + 63) / 64 > 0 ? (n_cols + 63) / 64 : 1;
    return CANOPY_OK;
}

canopy_status canopy_profile_plan_make(const canopy_tree_view *t, int guided, int32_t depth,
                                       canopy_profile_plan *p) {
    return plan_make(t, guided, depth, AUTO_COLS, p);
}

void canopy_profile_plan_free(canopy_profile_plan *p) {
    canopy_free(p->col);
    p->col = NULL;
}

int64_t canopy_profile_cpu(const canopy_app *app, const void *ctx, const canopy_tree_view *t,
                           const canopy_profile_plan *p, const int64_t *queries, int64_t q0,
                           int64_t nq, uint64_t *keys) {
    int64_t tests = 0;
    int threads = canopy_threads_for((double)nq * p->depth);
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : tests) num_threads(threads)
    for (int64_t i = 0; i < nq; i++) {
        _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
        int64_t q = queries ? queries[i] : q0 + i;
        app->init(ctx, state, q);
        tests += canopy_profile_walk(app, ctx, state, t, p, keys + i * p->words);
    }
    return tests;
}

canopy_status canopy_sort_by_keys(const uint64_t *keys, int32_t words, int64_t n, int64_t *perm) {
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    if (n < 2) return CANOPY_OK;
    canopy_keyed *k;
    canopy_status s = canopy_alloc((void **)&k, (size_t)n, sizeof *k);
    for (int32_t w = words - 1; w >= 0 && !s; w--) { /* least significant word first */
        for (int64_t i = 0; i < n; i++) k[i] = (canopy_keyed){keys[perm[i] * words + w], perm[i]};
        s = canopy_sort_keyed(k, n);
        for (int64_t i = 0; !s && i < n; i++) perm[i] = k[i].idx;
    }
    canopy_free(k);
    return s;
}

canopy_status canopy_schedule_hybrid(const canopy_app *app, const void *ctx,
                                     const canopy_tree_view *t, int32_t depth, int64_t nq,
                                     int64_t *order, canopy_profile_info *info) {
    canopy_profile_plan p;
    canopy_status s = canopy_profile_plan_make(t, app->guided, depth, &p);
    if (s) return s;
    int64_t chunk = canopy_profile_chunk(p.words);
    int64_t cn = nq < chunk ? nq : chunk;
    uint64_t *keys = NULL;
    int64_t *perm = NULL;
    s = canopy_alloc((void **)&keys, (size_t)(cn > 0 ? cn : 1) * (size_t)p.words, sizeof *keys);
    if (!s) s = canopy_alloc((void **)&perm, (size_t)(cn > 0 ? cn : 1), sizeof *perm);
    int64_t tests = 0, chunks = 0;
    for (int64_t q0 = 0; !s && q0 < nq; q0 += chunk, chunks++) {
        int64_t n = nq - q0 < chunk ? nq - q0 : chunk;
        tests += canopy_profile_cpu(app, ctx, t, &p, NULL, q0, n, keys);
        s = canopy_sort_by_keys(keys, p.words, n, perm);
        for (int64_t i = 0; !s && i < n; i++) order[q0 + i] = q0 + perm[i];
    }
    if (info) *info = (canopy_profile_info){p.depth, p.n_cols, chunks, tests};
    canopy_free(keys);
    canopy_free(perm);
    canopy_profile_plan_free(&p);
    return s;
}

/* Sample sizes: windows of WINDOW queries (as many spread ones again), and WALKS
 * queries walked in full: enough to tell sorted from shuffled and to place the work
 * within a factor of two of auto's thresholds, at about a millisecond. */
enum { WINDOW = 32, WINDOWS = 8, WALKS = 32 };

/* Per window of WINDOW keys: unguided, the number of top-tree leaves reached together
 * (and, added to *reached, by each query); guided, the share of queries whose first
 * leaf is the window's most common one. */
static double window_stat(const canopy_profile_plan *p, const uint64_t *keys, double *reached) {
    if (p->step_bits == 0) {
        uint64_t all[CANOPY_PROFILE_MAX_WORDS] = {0};
        int64_t together = 0;
        for (int32_t i = 0; i < WINDOW; i++)
            for (int32_t w = 0; w < p->words; w++) {
                all[w] |= keys[i * p->words + w];
                *reached += __builtin_popcountll(keys[i * p->words + w]);
            }
        for (int32_t w = 0; w < p->words; w++) together += __builtin_popcountll(all[w]);
        return (double)together;
    }
    int32_t best = 0;
    for (int32_t i = 0; i < WINDOW; i++) {
        uint64_t first = keys[i * p->words] >> (64 - p->step_bits);
        int32_t same = 0;
        for (int32_t j = 0; j < WINDOW; j++)
            same += keys[j * p->words] >> (64 - p->step_bits) == first;
        best = same > best ? same : best;
    }
    return (double)best / WINDOW;
}

static double clamp01(double x) {
    return x < 0.0 ? 0.0 : x > 1.0 ? 1.0 : x;
}

canopy_status canopy_inspect_coherence(const canopy_app *app, const void *ctx,
                                       const canopy_tree_view *t, int64_t nq, canopy_sample *out) {
    out->coherence = 1.0;
    out->windows = 0;
    int64_t windows = nq / WINDOW < WINDOWS ? nq / WINDOW : WINDOWS;
    if (windows < 2 || t->n_nodes == 0) return CANOPY_OK;
    canopy_profile_plan p;
    canopy_status s = plan_make(t, app->guided, 0, SAMPLE_COLS, &p);
    if (s) return s;
    uint64_t *keys = NULL;
    s = canopy_alloc((void **)&keys, (size_t)(2 * windows * WINDOW) * (size_t)p.words,
                     sizeof *keys);
    if (!s) {
        /* windows of consecutive queries, and as many "spread" windows whose members
         * lie far apart in the caller's order: how much closer the former are than
         * the latter is the coherence, whatever the tree and the application */
        int threads = canopy_threads_for((double)(2 * windows * WINDOW) * p.depth);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
        for (int64_t k = 0; k < 2 * windows * WINDOW; k++) {
            _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
            int64_t w = k / WINDOW % windows, i = k % WINDOW;
            int64_t q = k < windows * WINDOW ? (nq - WINDOW) * w / (windows - 1) + i
                                             : (w + i * windows) * nq / (windows * WINDOW);
            app->init(ctx, state, q);
            canopy_profile_walk(app, ctx, state, t, &p, keys + k * p.words);
        }
        double con = 0.0, spread = 0.0, reached = 0.0, unused = 0.0;
        for (int64_t w = 0; w < windows; w++) {
            con += window_stat(&p, keys + w * WINDOW * p.words, &reached);
            spread += window_stat(&p, keys + (windows + w) * WINDOW * p.words, &unused);
        }
        con /= (double)windows;
        spread /= (double)windows;
        reached /= (double)(windows * WINDOW);
        if (p.step_bits == 0) /* unions: from the spread windows' size down to one query's */
            out->coherence = spread > reached ? clamp01((spread - con) / (spread - reached)) : 1.0;
        else /* shares of the common first leaf: from the spread windows' up to 1 */
            out->coherence = spread < 1.0 ? clamp01((con - spread) / (1.0 - spread)) : 1.0;
        out->windows = windows;
    }
    canopy_free(keys);
    canopy_profile_plan_free(&p);
    return s;
}

canopy_status canopy_inspect_work(const canopy_app *app, const void *ctx, const canopy_tree_view *t,
                                  int64_t nq, canopy_sample *out) {
    out->queries = 0;
    out->nodes_per_query = 0.0;
    if (nq == 0 || t->n_nodes == 0) return CANOPY_OK;
    int64_t walks = nq < WALKS ? nq : WALKS, tests = 0;
    size_t cap = (size_t)canopy_tree_stack_capacity(t);
    /* the sample's own size is unknown until walked: a descent and back per walk */
    int threads = canopy_threads_for((double)walks * 2.0 * t->depth);
    int32_t *stacks;
    canopy_status s = canopy_alloc((void **)&stacks, cap * (size_t)threads, sizeof *stacks);
    if (s) return s;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : tests) num_threads(threads)
    for (int64_t i = 0; i < walks; i++) {
        _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
        int64_t q = i * (nq / walks); /* spread over the set, first query included */
        app->init(ctx, state, q);
        tests += canopy_dr_walk(app, ctx, state, t, stacks + cap * (size_t)omp_get_thread_num());
    }
    canopy_free(stacks);
    out->queries = walks;
    out->nodes_per_query = (double)tests / (double)walks;
    return CANOPY_OK;
}

canopy_status canopy_inspect_sample(const canopy_app *app, const void *ctx,
                                    const canopy_tree_view *t, int64_t nq, canopy_sample *out) {
    memset(out, 0, sizeof *out);
    canopy_status s = canopy_inspect_work(app, ctx, t, nq, out);
    return s ? s : canopy_inspect_coherence(app, ctx, t, nq, out);
}
