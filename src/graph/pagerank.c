/* SPDX-License-Identifier: MIT */
/* PageRank by power iteration in pull form: rank flows along in-edges (the
 * transpose), so each vertex sums its in-neighbours' contributions without atomics.
 * networkx's convention: start uniform, teleport uniform, the rank of vertices
 * without out-edges spread uniformly over all vertices, stop when the L1 change
 * falls below the tolerance. Edge values are ignored; repeated entries count as
 * repeated edges. Sums over all vertices run serially so results do not depend on
 * the thread count. */
#include "graph/graph.h"

#include <math.h>

typedef struct pr_ctx {
    const canopy_csr *t; /* transpose */
    const double *contrib;
    double *next;
    double base, damping;
} pr_ctx;

static double gather(void *vctx, int64_t v, int64_t lo, int64_t hi) {
    (void)v;
    const pr_ctx *c = vctx;
    double acc = 0.0;
    for (int64_t k = lo; k < hi; k++) acc += c->contrib[c->t->col[k]];
    return acc;
}

static void update(void *vctx, int64_t v, double acc) {
    pr_ctx *c = vctx;
    c->next[v] = c->base + c->damping * acc;
}

canopy_status canopy_pagerank(const canopy_csr *g, const canopy_graph_options *opt, double *rank,
                              canopy_graph_stats *stats) {
    canopy_status s = canopy_graph_check(g, opt, true, "pagerank");
    if (s != CANOPY_OK) return s;
    if (!(opt->damping >= 0.0 && opt->damping < 1.0) || !(opt->tolerance > 0.0) ||
        opt->max_iterations < 1)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "pagerank: damping %g must be in [0, 1), tolerance %g > 0, "
                           "max iterations %d >= 1",
                           opt->damping, opt->tolerance, (int)opt->max_iterations);
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
    const int64_t n = g->n_rows;
    canopy_csr t = {0};
    double *contrib = NULL, *next = NULL;
    if (n == 0) goto done;
    s = canopy_csr_transpose(g, &t);
    if (s == CANOPY_OK && canopy_graph_strategy_is_gpu(opt->strategy)) {
        s = canopy_graph_gpu_pagerank(g, &t, opt, rank, &local);
        goto done;
    }
    if (s == CANOPY_OK) s = canopy_alloc((void **)&contrib, (size_t)n, sizeof(double));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&next, (size_t)n, sizeof(double));
    if (s != CANOPY_OK) goto done;
    for (int64_t v = 0; v < n; v++) rank[v] = 1.0 / (double)n;
    pr_ctx ctx = {&t, contrib, next, 0.0, opt->damping};
    for (;;) {
        double dangling = 0.0;
        for (int64_t u = 0; u < n; u++) {
            int64_t deg = g->row_ptr[u + 1] - g->row_ptr[u];
            if (deg == 0) dangling += rank[u];
            contrib[u] = deg ? rank[u] / (double)deg : 0.0;
        }
        ctx.base = (1.0 - opt->damping) / (double)n + opt->damping * dangling / (double)n;
        graph_loop loop = {t.row_ptr, NULL, n, gather, update, &ctx, true};
        s = canopy_graph_run(&loop, opt, &local);
        if (s != CANOPY_OK) break;
        double change = 0.0;
        for (int64_t v = 0; v < n; v++) {
            change += fabs(next[v] - rank[v]);
            rank[v] = next[v];
        }
        local.iterations++;
        if (change < opt->tolerance) break;
        if (local.iterations >= opt->max_iterations) {
            s = canopy_fail(CANOPY_ERR_INVALID,
                            "pagerank: no convergence in %d iterations (L1 change %g, "
                            "tolerance %g)",
                            (int)opt->max_iterations, change, opt->tolerance);
            break;
        }
    }
done:
    canopy_csr_release(&t);
    canopy_free(contrib);
    canopy_free(next);
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
