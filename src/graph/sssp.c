/* Single-source shortest paths by rounds of relaxation (data-driven Bellman-Ford):
 * the outer loop runs over the vertices whose distance fell in the last round, the
 * inner loop relaxes their out-edges with an atomic min. Every order of relaxation
 * reaches the same fixed point (the least left-to-right float sum over paths, as
 * a + w is monotone in a), so all strategies give bit-identical distances. */
#include "graph/graph.h"

#include <math.h>

typedef struct sssp_ctx {
    const canopy_csr *g;
    double *dist;
    unsigned char *queued;
    worklist *next;
} sssp_ctx;

static double relax(void *vctx, int64_t u, int64_t lo, int64_t hi) {
    sssp_ctx *c = vctx;
    double du = atomic_load_f64(&c->dist[u]);
    for (int64_t k = lo; k < hi; k++) {
        int32_t v = c->g->col[k];
        double nd = du + (c->g->val ? c->g->val[k] : 1.0);
        if (atomic_min_nonneg(&c->dist[v], nd) && flag_claim(c->queued, v))
            worklist_push(c->next, v);
    }
    return 0.0;
}

canopy_status canopy_sssp(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                          double *dist, canopy_graph_stats *stats) {
    canopy_status s = graph_check(g, opt, true, "sssp");
    if (s != CANOPY_OK) return s;
    if (source < 0 || source >= g->n_rows)
        return canopy_fail(CANOPY_ERR_INVALID, "sssp: source %lld is not a vertex (0..%lld)",
                           (long long)source, (long long)g->n_rows - 1);
    if (g->val)
        for (int64_t k = 0; k < g->nnz; k++)
            if (!(g->val[k] >= 0.0))
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "sssp: edge %lld has weight %g; weights must be >= 0",
                                   (long long)k, g->val[k]);
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
#ifdef CANOPY_HAVE_CUDA
    if (canopy_graph_strategy_is_gpu(opt->strategy)) {
        s = graph_gpu_sssp(g, source, opt, dist, &local);
        local.seconds = canopy_now() - t0;
        if (stats) *stats = local;
        return s;
    }
#endif
    const int64_t n = g->n_rows;
    worklist cur = {0}, next = {0};
    unsigned char *queued = NULL;
    s = canopy_alloc((void **)&cur.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&next.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_calloc((void **)&queued, (size_t)n, 1);
    if (s != CANOPY_OK) goto done;
    for (int64_t v = 0; v < n; v++) dist[v] = INFINITY;
    dist[source] = 0.0;
    cur.items[0] = source;
    cur.n = 1;
    sssp_ctx ctx = {g, dist, queued, &next};
    while (cur.n > 0 && s == CANOPY_OK) {
        graph_loop loop = {g->row_ptr, cur.items, cur.n, relax, NULL, &ctx, true};
        next.n = 0;
        s = graph_run(&loop, opt, &local);
        for (int64_t i = 0; i < next.n; i++) queued[next.items[i]] = 0;
        worklist t = cur;
        cur = next;
        next = t;
        ctx.next = &next;
        local.iterations++;
    }
done:
    canopy_free(cur.items);
    canopy_free(next.items);
    canopy_free(queued);
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
