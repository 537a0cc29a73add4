/* SPDX-License-Identifier: MIT */
/* Greedy colouring in a fixed pseudo-random priority order, computed the
 * Jones-Plassmann way: a vertex is coloured once all its higher-priority
 * neighbours are, taking the smallest colour none of them has. That is exactly
 * what sequential greedy in priority order gives, so every strategy returns the same
 * colouring. Both edge directions count (the graph is symmetrised first) and self
 * loops are ignored. Per round: colour the ready vertices (a loop that needs each
 * row whole), then let them release their lower-priority neighbours with atomic
 * decrements (a splittable loop). */
#include "graph/graph.h"

#include <omp.h>

typedef struct color_ctx {
    const canopy_csr *s; /* symmetrised, no self loops */
    int64_t *color;
    int64_t *wait; /* uncoloured higher-priority neighbours */
    int64_t *mark; /* per thread, max degree + 1 stamps */
    int64_t mark_len;
    worklist *next;
} color_ctx;

static uint64_t priority(int64_t v) {
    uint64_t z = (uint64_t)v * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Higher priority: larger hash, ties to the larger index. */
static bool before(int64_t a, int64_t b) {
    uint64_t pa = priority(a), pb = priority(b);
    return pa > pb || (pa == pb && a > b);
}

static double count_higher(void *vctx, int64_t v, int64_t lo, int64_t hi) {
    const color_ctx *c = vctx;
    int64_t n = 0;
    for (int64_t k = lo; k < hi; k++) n += before(c->s->col[k], v);
    return (double)n;
}

static void set_wait(void *vctx, int64_t v, double acc) {
    color_ctx *c = vctx;
    c->wait[v] = (int64_t)acc;
}

/* The smallest colour unused by v's (all coloured) higher-priority neighbours. */
static double pick(void *vctx, int64_t v, int64_t lo, int64_t hi) {
    color_ctx *c = vctx;
    int64_t *mark = c->mark + (int64_t)omp_get_thread_num() * c->mark_len;
    for (int64_t k = lo; k < hi; k++) {
        int32_t w = c->s->col[k];
        if (before(w, v) && c->color[w] <= hi - lo) mark[c->color[w]] = v + 1;
    }
    int64_t col = 0;
    while (mark[col] == v + 1) col++;
    c->color[v] = col;
    return 0.0;
}

static double release(void *vctx, int64_t v, int64_t lo, int64_t hi) {
    color_ctx *c = vctx;
    for (int64_t k = lo; k < hi; k++) {
        int32_t w = c->s->col[k];
        if (before(v, w) && __atomic_sub_fetch(&c->wait[w], 1, __ATOMIC_RELAXED) == 0)
            worklist_push(c->next, w);
    }
    return 0.0;
}

static canopy_status symmetrise(const canopy_csr *g, canopy_csr *out) {
    int64_t *src = NULL, *dst = NULL, m = 0;
    canopy_status s = canopy_alloc((void **)&src, (size_t)(2 * g->nnz + 1), sizeof *src);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&dst, (size_t)(2 * g->nnz + 1), sizeof *dst);
    if (s == CANOPY_OK) {
        for (int64_t u = 0; u < g->n_rows; u++)
            for (int64_t k = g->row_ptr[u]; k < g->row_ptr[u + 1]; k++) {
                if (g->col[k] == u) continue;
                src[m] = u;
                dst[m++] = g->col[k];
                src[m] = g->col[k];
                dst[m++] = u;
            }
        s = canopy_csr_from_coo(g->n_rows, g->n_rows, m, src, dst, NULL, out);
    }
    if (s == CANOPY_OK) canopy_graph_csr_dedupe(out);
    canopy_free(src);
    canopy_free(dst);
    return s;
}

canopy_status canopy_color(const canopy_csr *g, const canopy_graph_options *opt, int64_t *color,
                           canopy_graph_stats *stats) {
    canopy_status s = canopy_graph_check(g, opt, true, "color");
    if (s != CANOPY_OK) return s;
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
    const int64_t n = g->n_rows;
    canopy_csr sym = {0};
    worklist cur = {0}, next = {0};
    color_ctx ctx = {&sym, color, NULL, NULL, 0, &next};
    s = symmetrise(g, &sym);
    if (s == CANOPY_OK && canopy_graph_strategy_is_gpu(opt->strategy)) {
        s = canopy_graph_gpu_color(&sym, opt, color, &local);
        goto done;
    }
    int64_t max_deg = 0;
    for (int64_t v = 0; s == CANOPY_OK && v < n; v++)
        if (sym.row_ptr[v + 1] - sym.row_ptr[v] > max_deg)
            max_deg = sym.row_ptr[v + 1] - sym.row_ptr[v];
    ctx.mark_len = max_deg + 1;
    if (s == CANOPY_OK) s = canopy_alloc((void **)&ctx.wait, (size_t)n + 1, sizeof(int64_t));
    if (s == CANOPY_OK)
        s = canopy_calloc((void **)&ctx.mark, (size_t)canopy_threads() * (size_t)ctx.mark_len,
                          sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&cur.items, (size_t)n + 1, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&next.items, (size_t)n + 1, sizeof(int64_t));
    if (s != CANOPY_OK) goto done;

    graph_loop init = {sym.row_ptr, NULL, n, count_higher, set_wait, &ctx, true};
    s = canopy_graph_run(&init, opt, &local);
    for (int64_t v = 0; v < n; v++)
        if (ctx.wait[v] == 0) cur.items[cur.n++] = v;
    int64_t done_count = 0;
    while (cur.n > 0 && s == CANOPY_OK) {
        graph_loop colour = {sym.row_ptr, cur.items, cur.n, pick, NULL, &ctx, false};
        s = canopy_graph_run(&colour, opt, &local);
        if (s != CANOPY_OK) break;
        next.n = 0;
        graph_loop rel = {sym.row_ptr, cur.items, cur.n, release, NULL, &ctx, true};
        s = canopy_graph_run(&rel, opt, &local);
        done_count += cur.n;
        worklist t = cur;
        cur = next;
        next = t;
        ctx.next = &next;
        local.iterations++;
    }
    if (s == CANOPY_OK && done_count != n)
        s = canopy_fail(CANOPY_ERR_INTERNAL, "color: %lld of %lld vertices coloured",
                        (long long)done_count, (long long)n);
done:
    canopy_csr_release(&sym);
    canopy_free(ctx.wait);
    canopy_free(ctx.mark);
    canopy_free(cur.items);
    canopy_free(next.items);
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
