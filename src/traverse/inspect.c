/* The hybrid (inspector-executor) schedule on the host: plan the top tree, profile
 * every query in it, sort the queries by their profile keys (profile.h). */
#include "traverse/inspect.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Unguided keys hold a bit per top-tree leaf and guided ones 10-bit steps: both stay
 * within CANOPY_PROFILE_MAX_WORDS words with at most MAX_COLS leaves. The automatic
 * cut is the deepest one with at most AUTO_COLS leaves: Liu's "a third of the height"
 * assumes one point per leaf, and with our buckets a third of the height leaves a
 * few dozen top-tree leaves, too coarse to order queries well (measured on clust2:
 * work expansion 3.6 with 32 leaves, 1.45 with 512, 1.18 for the tree order). */
enum { MAX_COLS = 64 * CANOPY_PROFILE_MAX_WORDS, AUTO_COLS = 256, GUIDED_WORDS = 2 };

/* auto's coherence sample uses a coarse cut: with few columns a sorted window shares
 * most of them and a shuffled one reaches most of them, so one threshold separates
 * the two whatever the tree (tests/test_hybrid.c). */
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

static canopy_status plan_make(const canopy_tree_view *t, int guided, int32_t depth,
                               int32_t auto_cols, canopy_profile_plan *p) {
    memset(p, 0, sizeof *p);
    if (depth < 0)
        return canopy_fail(CANOPY_ERR_INVALID, "profile depth must be >= 0 (0 = automatic), got %d",
                           (int)depth);
    int32_t height = t->depth - 1 > 1 ? t->depth - 1 : 1;
    int32_t *level = NULL, *widest = NULL;
    int64_t *cols = NULL;
    canopy_status s = canopy_alloc((void **)&level, (size_t)t->n_nodes + 1, sizeof *level);
    if (!s) s = canopy_alloc((void **)&cols, (size_t)height + 2, sizeof *cols);
    if (!s) s = canopy_alloc((void **)&widest, (size_t)height + 2, sizeof *widest);
    if (!s) s = canopy_alloc((void **)&p->col, (size_t)t->n_nodes + 1, sizeof *p->col);
    if (!s) {
        count_columns(t, level, cols, widest);
        if (depth == 0) {
            depth = 1;
            for (int32_t d = height; d >= 1; d--)
                if (fits(cols[d], d, widest[d], auto_cols)) {
                    depth = d;
                    break;
                }
        }
        if (depth > height) depth = height; /* deeper cuts add no columns */
        if (!fits(cols[depth], depth, widest[depth], MAX_COLS))
            s = canopy_fail(CANOPY_ERR_INVALID,
                            "profile depth %d: the top tree would have %lld leaves (at most %d) "
                            "or need a deeper stack than %d entries; use a smaller "
                            "--profile-depth",
                            (int)depth, (long long)cols[depth], MAX_COLS, CANOPY_PROFILE_STACK);
    }
    if (!s) {
        int32_t n_cols = 0;
        for (int32_t i = 0; i < t->n_nodes; i++) {
            int top_leaf =
                level[i] == depth || (level[i] < depth && canopy_tv_node(t, i)->child < 0);
            p->col[i] = top_leaf && level[i] <= depth ? n_cols++ : -1;
        }
        p->depth = depth;
        p->n_cols = n_cols;
        p->step_bits = guided ? bits_for(n_cols) : 0;
        p->words = guided ? GUIDED_WORDS : (n_cols + 63) / 64 > 0 ? (n_cols + 63) / 64 : 1;
    }
    canopy_free(level);
    canopy_free(cols);
    canopy_free(widest);
    if (s) canopy_profile_plan_free(p);
    return s;
}

canopy_status canopy_profile_plan_make(const canopy_tree_view *t, int guided, int32_t depth,
                                       canopy_profile_plan *p) {
    return plan_make(t, guided, depth, AUTO_COLS, p);
}

void canopy_profile_plan_free(canopy_profile_plan *p) {
    canopy_free(p->col);
    p->col = NULL;
}

int64_t canopy_profile_chunk(int32_t words) {
    int64_t limit = (int64_t)256 << 20;
    const char *env = getenv("CANOPY_PROFILE_MAX_BYTES");
    if (env && atoll(env) > 0) limit = atoll(env);
    int64_t chunk = limit / ((int64_t)words * (int64_t)sizeof(uint64_t));
    return chunk < 32 ? 32 : chunk;
}

int64_t canopy_profile_cpu(const canopy_app *app, const void *ctx, const canopy_tree_view *t,
                           const canopy_profile_plan *p, const int64_t *queries, int64_t q0,
                           int64_t nq, uint64_t *keys) {
    int64_t tests = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : tests) num_threads(canopy_threads())
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

enum { WINDOW = 32, MAX_WINDOWS = 64, MAX_WALKS = 256 };

static double window_coherence(const canopy_profile_plan *p, const uint64_t *keys) {
    if (p->step_bits == 0) {
        uint64_t all[CANOPY_PROFILE_MAX_WORDS] = {0};
        int64_t reached = 0, together = 0;
        for (int32_t i = 0; i < WINDOW; i++)
            for (int32_t w = 0; w < p->words; w++) {
                all[w] |= keys[i * p->words + w];
                reached += __builtin_popcountll(keys[i * p->words + w]);
            }
        for (int32_t w = 0; w < p->words; w++) together += __builtin_popcountll(all[w]);
        return together ? (double)reached / WINDOW / (double)together : 1.0;
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

canopy_status canopy_inspect_sample(const canopy_app *app, const void *ctx,
                                    const canopy_tree_view *t, int64_t nq, canopy_cpu_runner runner,
                                    canopy_sample *out) {
    memset(out, 0, sizeof *out);
    out->coherence = 1.0;
    if (nq == 0) return CANOPY_OK;
    canopy_profile_plan p;
    canopy_status s = plan_make(t, app->guided, 0, SAMPLE_COLS, &p);
    if (s) return s;
    int64_t windows = nq / WINDOW < MAX_WINDOWS ? nq / WINDOW : MAX_WINDOWS;
    int64_t walks = nq < MAX_WALKS ? nq : MAX_WALKS;
    int64_t *picked = NULL;
    uint64_t *keys = NULL;
    s = canopy_alloc((void **)&picked, (size_t)(windows * WINDOW + walks), sizeof *picked);
    if (!s)
        s = canopy_alloc((void **)&keys, (size_t)(windows * WINDOW + 1) * p.words, sizeof *keys);
    if (!s) {
        /* windows spread evenly over the queries, walks at evenly strided queries */
        for (int64_t w = 0; w < windows; w++) {
            int64_t start = (nq - WINDOW) * w / (windows > 1 ? windows - 1 : 1);
            for (int32_t i = 0; i < WINDOW; i++) picked[w * WINDOW + i] = start + i;
        }
        int64_t *walk = picked + windows * WINDOW;
        for (int64_t i = 0; i < walks; i++) walk[i] = i * nq / walks;
        canopy_profile_cpu(app, ctx, t, &p, picked, 0, windows * WINDOW, keys);
        double sum = 0.0;
        for (int64_t w = 0; w < windows; w++)
            sum += window_coherence(&p, keys + w * WINDOW * p.words);
        if (windows) out->coherence = sum / (double)windows;
        out->windows = windows;
        canopy_trav_job job = {ctx, t, walk, walks};
        canopy_trav_counters cnt = {0, 0, 0, 0};
        s = runner(&job, &cnt);
        out->queries = walks;
        out->nodes_per_query = (double)cnt.nodes / (double)walks;
    }
    canopy_free(picked);
    canopy_free(keys);
    canopy_profile_plan_free(&p);
    return s;
}
