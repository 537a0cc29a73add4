/* SPDX-License-Identifier: MIT */
/* BFS, canopy_bfs and canopy_bfs_rec. Level-synchronous BFS (here): the outer loop
 * runs over the frontier of level L, the inner loop claims unvisited neighbours for
 * level L + 1 with a compare-and-swap, so each vertex joins exactly one frontier.
 * The recursive form's CPU algorithm is in bfs_rec.c. */
#include "graph/graph.h"

typedef struct bfs_ctx {
    graph_frontier f; /* round r expands level r */
    const canopy_csr *g;
    int64_t *level;
} bfs_ctx;

static double expand(void *vctx, int64_t u, int64_t lo, int64_t hi) {
    (void)u;
    bfs_ctx *c = vctx;
    const int64_t next_level = c->f.round + 1;
    for (int64_t k = lo; k < hi; k++) {
        int32_t v = c->g->col[k];
        int64_t unseen = -1;
        if (__atomic_load_n(&c->level[v], __ATOMIC_RELAXED) == -1 &&
            __atomic_compare_exchange_n(&c->level[v], &unseen, next_level, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            worklist_push(c->f.next, v);
    }
    return 0.0;
}

/* The level-synchronous form on the CPU. */
static canopy_status bfs_levels(const canopy_csr *g, int64_t source,
                                const canopy_graph_options *opt, int64_t *level,
                                canopy_graph_stats *stats) {
    for (int64_t v = 0; v < g->n_rows; v++) level[v] = -1;
    level[source] = 0;
    bfs_ctx ctx = {{0}, g, level};
    return canopy_graph_frontier_rounds(g, source, false, expand, &ctx, &ctx.f, opt, stats);
}

/* Both forms of BFS, which differ only in how they run (same checks, same result). */
static canopy_status bfs(const canopy_csr *g, int64_t source, int recursive,
                         const canopy_graph_options *opt, int64_t *level,
                         canopy_graph_stats *stats) {
    canopy_status s = canopy_graph_check_source(g, opt, source, "bfs");
    if (s != CANOPY_OK) return s;
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
    if (canopy_graph_strategy_is_gpu(opt->strategy))
        s = canopy_graph_gpu_bfs(g, source, recursive, opt, level, &local);
    else
        s = recursive ? canopy_graph_bfs_rec_cpu(g, source, opt, level, &local)
                      : bfs_levels(g, source, opt, level, &local);
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}

canopy_status canopy_bfs(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                         int64_t *level, canopy_graph_stats *stats) {
    return bfs(g, source, 0, opt, level, stats);
}

canopy_status canopy_bfs_rec(const canopy_csr *g, int64_t source, const canopy_graph_options *opt,
                             int64_t *level, canopy_graph_stats *stats) {
    return bfs(g, source, 1, opt, level, stats);
}
