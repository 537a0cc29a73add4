/* SPDX-License-Identifier: MIT */
/* Single-source shortest paths by rounds of relaxation (data-driven Bellman-Ford):
 * the outer loop runs over the vertices whose distance fell in the last round, the
 * inner loop relaxes their out-edges with an atomic min. Every order of relaxation
 * reaches the same fixed point (the least left-to-right float sum over paths, as
 * a + w is monotone in a), so all strategies give bit-identical distances. */
#include "graph/graph.h"

#include <math.h>

typedef struct sssp_ctx {
    graph_frontier f;
    const canopy_csr *g;
    double *dist;
} sssp_ctx;

static double relax(void *vctx, int64_t u, int64_t lo, int64_t hi) {
    sssp_ctx *c = vctx;
    double du = atomic_load_f64(&c->dist[u]);
    for (int64_t k = lo; k < hi; k++) {
        int32_t v = c->g->col[k];
        double nd = du + (c->g->val ? c->g->val[k] : 1.0);
        if (atomic_min_nonneg(&c->dist[v], nd) && flag_claim(c->f.queued, v))
            worklist_push(c->f.next, v);
    }
    return 0.0;
}

canopy_status canopy_sssp(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                          double *dist, canopy_graph_stats *stats) {
    canopy_status s = canopy_graph_check_source(g, opt, source, "sssp");
    if (s != CANOPY_OK) return s;
    if (g->val)
        for (int64_t k = 0; k < g->nnz; k++)
            if (!(g->val[k] >= 0.0))
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "sssp: edge %lld has weight %g; weights must be >= 0",
                                   (long long)k, g->val[k]);
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
    if (canopy_graph_strategy_is_gpu(opt->strategy)) {
        s = canopy_graph_gpu_sssp(g, source, opt, dist, &local);
        local.seconds = canopy_now() - t0;
        if (stats) *stats = local;
        return s;
    }
    for (int64_t v = 0; v < g->n_rows; v++) dist[v] = INFINITY;
    dist[source] = 0.0;
    sssp_ctx ctx = {{0}, g, dist};
    s = canopy_graph_frontier_rounds(g, source, true, relax, &ctx, &ctx.f, opt, &local);
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
