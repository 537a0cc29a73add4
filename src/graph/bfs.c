/* Level-synchronous BFS: the outer loop runs over the frontier of level L, the
 * inner loop claims unvisited neighbours for level L + 1 with a compare-and-swap,
 * so each vertex joins exactly one frontier. */
#include "graph/graph.h"

typedef struct bfs_ctx {
    const canopy_csr *g;
    int64_t *level;
    int64_t next_level;
    worklist *next;
} bfs_ctx;

static double expand(void *vctx, int64_t u, int64_t lo, int64_t hi) {
    (void)u;
    bfs_ctx *c = vctx;
    for (int64_t k = lo; k < hi; k++) {
        int32_t v = c->g->col[k];
        int64_t unseen = -1;
        if (__atomic_load_n(&c->level[v], __ATOMIC_RELAXED) == -1 &&
            __atomic_compare_exchange_n(&c->level[v], &unseen, c->next_level, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            worklist_push(c->next, v);
    }
    return 0.0;
}

canopy_status canopy_bfs(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                         int64_t *level, canopy_graph_stats *stats) {
    canopy_status s = graph_check(g, opt, true, "bfs");
    if (s != CANOPY_OK) return s;
    if (source < 0 || source >= g->n_rows)
        return canopy_fail(CANOPY_ERR_INVALID, "bfs: source %lld is not a vertex (0..%lld)",
                           (long long)source, (long long)g->n_rows - 1);
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
#ifdef CANOPY_HAVE_CUDA
    if (canopy_graph_strategy_is_gpu(opt->strategy)) {
        s = graph_gpu_bfs(g, source, 0, opt, level, &local);
        local.seconds = canopy_now() - t0;
        if (stats) *stats = local;
        return s;
    }
#endif
    const int64_t n = g->n_rows;
    worklist cur = {0}, next = {0};
    s = canopy_alloc((void **)&cur.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&next.items, (size_t)n, sizeof(int64_t));
    if (s != CANOPY_OK) goto done;
    for (int64_t v = 0; v < n; v++) level[v] = -1;
    level[source] = 0;
    cur.items[0] = source;
    cur.n = 1;
    bfs_ctx ctx = {g, level, 1, &next};
    while (cur.n > 0 && s == CANOPY_OK) {
        graph_loop loop = {g->row_ptr, cur.items, cur.n, expand, NULL, &ctx, true};
        next.n = 0;
        s = graph_run(&loop, opt, &local);
        worklist t = cur;
        cur = next;
        next = t;
        ctx.next = &next;
        ctx.next_level++;
        local.iterations++;
    }
done:
    canopy_free(cur.items);
    canopy_free(next.items);
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
