/* SPDX-License-Identifier: MIT */
/* The reference: items in order, each row's inner loop whole, on one thread. */
#include "graph/graph.h"

canopy_status canopy_graph_run_serial(const graph_loop *l, canopy_graph_stats *stats) {
    int64_t edges = 0;
    for (int64_t i = 0; i < l->n_items; i++) edges += graph_loop_run_item(l, i);
    stats->items += l->n_items;
    stats->edges += edges;
    return CANOPY_OK;
}
