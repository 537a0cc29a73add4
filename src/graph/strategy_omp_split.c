/* SPDX-License-Identifier: MIT */
/* The CPU counterpart of workload consolidation. Light rows run whole, as in
 * omp-flat; a heavy row (inner loop longer than the threshold) is not run by the
 * thread that meets it: its chunks of `threshold` entries go to one shared buffer
 * (the consolidation buffer) that all threads then drain, the way one consolidated
 * child grid serves the heavy items of a whole grid. A heavy row's post-work runs
 * once all its chunks are done, on the sum of their partials taken in chunk order,
 * so results do not depend on the thread count. */
#include "graph/graph.h"

typedef struct chunk {
    int64_t row, lo, hi;
} chunk;

canopy_status canopy_graph_run_omp_split(const graph_loop *l, int64_t threshold,
                                         canopy_graph_stats *stats) {
    if (!l->splittable || threshold < 1) return canopy_graph_run_omp_flat(l, stats);
    int64_t n_heavy = 0, n_chunks = 0;
    for (int64_t i = 0; i < l->n_items; i++) {
        int64_t row = graph_loop_row(l, i), len = l->row_ptr[row + 1] - l->row_ptr[row];
        if (len > threshold) {
            n_heavy++;
            n_chunks += (len + threshold - 1) / threshold;
        }
    }
    if (n_heavy == 0 || !graph_loop_worth_parallel(l)) return canopy_graph_run_omp_flat(l, stats);

    chunk *buf = NULL;
    double *partial = NULL;
    int64_t *heavy = NULL, *first_chunk = NULL;
    canopy_status s = canopy_alloc((void **)&buf, (size_t)n_chunks, sizeof *buf);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&partial, (size_t)n_chunks, sizeof *partial);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&heavy, (size_t)n_heavy, sizeof *heavy);
    if (s == CANOPY_OK)
        s = canopy_alloc((void **)&first_chunk, (size_t)n_heavy + 1, sizeof *first_chunk);
    if (s != CANOPY_OK) goto done;

    int64_t h = 0, c = 0;
    for (int64_t i = 0; i < l->n_items; i++) {
        int64_t row = graph_loop_row(l, i), lo = l->row_ptr[row], hi = l->row_ptr[row + 1];
        if (hi - lo <= threshold) continue;
        heavy[h] = row;
        first_chunk[h++] = c;
        for (int64_t a = lo; a < hi; a += threshold)
            buf[c++] = (chunk){row, a, a + threshold < hi ? a + threshold : hi};
    }
    first_chunk[h] = c;

    int64_t edges = 0;
#pragma omp parallel reduction(+ : edges) num_threads(canopy_threads())
    {
        /* Light rows first; threads that finish early move on to the chunks. */
#pragma omp for schedule(dynamic, 64) nowait
        for (int64_t i = 0; i < l->n_items; i++) {
            int64_t row = graph_loop_row(l, i);
            if (l->row_ptr[row + 1] - l->row_ptr[row] > threshold) continue;
            edges += graph_loop_run_item(l, i);
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t k = 0; k < n_chunks; k++) {
            partial[k] = l->inner(l->ctx, buf[k].row, buf[k].lo, buf[k].hi);
            edges += buf[k].hi - buf[k].lo;
        }
        if (l->post) {
#pragma omp for schedule(static)
            for (int64_t j = 0; j < n_heavy; j++) {
                double acc = 0.0;
                for (int64_t k = first_chunk[j]; k < first_chunk[j + 1]; k++) acc += partial[k];
                l->post(l->ctx, heavy[j], acc);
            }
        }
    }
    stats->items += l->n_items;
    stats->edges += edges;
    stats->split_items += n_heavy;
    stats->split_chunks += n_chunks;
done:
    canopy_free(buf);
    canopy_free(partial);
    canopy_free(heavy);
    canopy_free(first_chunk);
    return s;
}
