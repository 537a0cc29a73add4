/* SPDX-License-Identifier: MIT */
/* The round loop of the CPU frontier applications (BFS, BFS-Rec, SSSP): two
 * worklists swapped each round, the current one the outer loop of the strategy. */
#include "graph/graph.h"

canopy_status
canopy_graph_frontier_rounds(const canopy_csr *g, int64_t source, bool queued,
                             double (*inner)(void *ctx, int64_t row, int64_t lo, int64_t hi),
                             void *ctx, graph_frontier *f, const canopy_graph_options *opt,
                             canopy_graph_stats *stats) {
    const int64_t n = g->n_rows;
    worklist cur = {0}, next = {0};
    f->queued = NULL;
    canopy_status s = canopy_alloc((void **)&cur.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&next.items, (size_t)n, sizeof(int64_t));
    if (s == CANOPY_OK && queued) s = canopy_calloc((void **)&f->queued, (size_t)n, 1);
    if (s != CANOPY_OK) goto done;
    cur.items[0] = source;
    cur.n = 1;
    for (f->round = 0; cur.n > 0 && s == CANOPY_OK; f->round++) {
        graph_loop loop = {g->row_ptr, cur.items, cur.n, inner, NULL, ctx, true};
        next.n = 0;
        f->next = &next;
        s = canopy_graph_run(&loop, opt, stats);
        if (queued)
            for (int64_t i = 0; i < next.n; i++) f->queued[next.items[i]] = 0;
        worklist t = cur;
        cur = next;
        next = t;
        stats->iterations++;
    }
done:
    canopy_free(cur.items);
    canopy_free(next.items);
    canopy_free(f->queued);
    f->queued = NULL;
    return s;
}
