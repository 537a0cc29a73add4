/* SPDX-License-Identifier: MIT */
/* OpenMP over the outer loop with a dynamic schedule: each thread runs whole rows,
 * so one heavy row still sits on one thread (the CPU form of a thread-mapped flat
 * kernel). */
#include "graph/graph.h"

canopy_status canopy_graph_run_omp_flat(const graph_loop *l, canopy_graph_stats *stats) {
    int64_t edges = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : edges) num_threads(canopy_threads()) \
    if (graph_loop_worth_parallel(l))
    for (int64_t i = 0; i < l->n_items; i++) edges += graph_loop_run_item(l, i);
    stats->items += l->n_items;
    stats->edges += edges;
    return CANOPY_OK;
}
