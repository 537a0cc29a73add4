/* SPDX-License-Identifier: MIT */
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
    graph_frontier f;
    const canopy_csr *g;
    int64_t *level; /* INT64_MAX = not reached */
} rec_ctx;

static double relax(void *vctx, int64_t u, int64_t lo, int64_t hi) {
    rec_ctx *c = vctx;
    int64_t lu = __atomic_load_n(&c->level[u], __ATOMIC_RELAXED) + 1;
    for (int64_t k = lo; k < hi; k++) {
        int32_t v = c->g->col[k];
        if (atomic_min_i64(&c->level[v], lu) && flag_claim(c->f.queued, v))
            worklist_push(c->f.next, v);
    }
    return 0.0;
}

canopy_status canopy_graph_bfs_rec_cpu(const canopy_csr *g, int64_t source,
                                       const canopy_graph_options *opt, int64_t *level,
                                       canopy_graph_stats *stats) {
    const int64_t n = g->n_rows;
    for (int64_t v = 0; v < n; v++) level[v] = INT64_MAX;
    level[source] = 0;
    rec_ctx ctx = {{0}, g, level};
    canopy_status s =
        canopy_graph_frontier_rounds(g, source, true, relax, &ctx, &ctx.f, opt, stats);
    for (int64_t v = 0; v < n; v++)
        if (level[v] == INT64_MAX) level[v] = -1;
    return s;
}
