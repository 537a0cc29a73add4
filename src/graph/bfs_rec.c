/* Recursive BFS (the paper's BFS-Rec): when a vertex's level falls, it recurses
 * into its neighbours to lower theirs, and a vertex may be lowered (and recurse)
 * more than once. Run literally depth-first, the recursion can redo work
 * exponentially often, so on the CPU every strategy runs it consolidated: all the
 * recursive calls one round makes become the next round's outer loop, with an
 * atomic min on the levels. It differs from level-synchronous BFS in exactly what
 * the GPU versions will differ in: re-relaxation instead of claim-once. All
 * strategies reach the same fixed point, the hop distances. */
#include "graph/graph.h"

typedef struct rec_ctx {
    const canopy_csr *g;
    int64_t *level; /* INT64_MAX = not reached */
    unsigned char *queued;
    worklist *next;
} rec_ctx;

static double relax(void *vctx, int64_t u, int64_t lo, int64_t hi) {
    rec_ctx *c = vctx;
    int64_t lu = __atomic_load_n(&c->level[u], __ATOMIC_RELAXED) + 1;
    for (int64_t k = lo; k < hi; k++) {
        int32_t v = c->g->col[k];
        if (atomic_min_i64(&c->level[v], lu) && flag_claim(c->queued, v)) worklist_push(c->next, v);
    }
    return 0.0;
}

canopy_status canopy_bfs_rec(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
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
        s = graph_gpu_bfs(g, source, 1, opt, level, &local);
        local.seconds = canopy_now() - t0;
        if (stats) *stats = local;
        return s;
    }
#endif
    const int64_t n = g->n_rows;
    for (int64_t v = 0; v < n; v++) level[v] = INT64_MAX;
    level[source] = 0;
    worklist cur = {0}, next = {0};
    unsigned char *queued = NULL;
    s = canopy_alloc((void **)&cur.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&next.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_calloc((void **)&queued, (size_t)n, 1);
    cur.n = s == CANOPY_OK;
    if (s == CANOPY_OK) cur.items[0] = source;
    rec_ctx ctx = {g, level, queued, &next};
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
    canopy_free(cur.items);
    canopy_free(next.items);
    canopy_free(queued);
    for (int64_t v = 0; v < n; v++)
        if (level[v] == INT64_MAX) level[v] = -1;
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
