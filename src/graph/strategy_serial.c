/* The reference: items in order, each row's inner loop whole, on one thread. */
#include "graph/graph.h"

canopy_status graph_run_serial(const graph_loop *l, canopy_graph_stats *stats) {
    int64_t edges = 0;
    for (int64_t i = 0; i < l->n_items; i++) {
        int64_t row = graph_loop_row(l, i), lo = l->row_ptr[row], hi = l->row_ptr[row + 1];
        double acc = l->inner(l->ctx, row, lo, hi);
        if (l->post) l->post(l->ctx, row, acc);
        edges += hi - lo;
    }
    stats->items += l->n_items;
    stats->edges += edges;
    return CANOPY_OK;
}
