/* SPDX-License-Identifier: MIT */
/* The GPU side of the graph applications, called from their C entry points once
 * the shared checks passed and the CPU preprocessing (transpose, symmetrisation) is
 * done. Each runs every round of its application on the device with the strategy
 * opt->strategy. Built only with CUDA. */
#ifndef CANOPY_GRAPH_GPU_H
#define CANOPY_GRAPH_GPU_H

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

canopy_status canopy_graph_gpu_sssp(const canopy_csr *g, int64_t source,
                                    const canopy_graph_options *opt, double *dist,
                                    canopy_graph_stats *stats);
/* recursive: BFS-Rec (re-relaxation with atomic min) instead of claim-once. */
canopy_status canopy_graph_gpu_bfs(const canopy_csr *g, int64_t source, int recursive,
                                   const canopy_graph_options *opt, int64_t *level,
                                   canopy_graph_stats *stats);
canopy_status canopy_graph_gpu_spmv(const canopy_csr *g, const double *x,
                                    const canopy_graph_options *opt, double *y,
                                    canopy_graph_stats *stats);
/* t: the transpose of g (in-edges as rows). */
canopy_status canopy_graph_gpu_pagerank(const canopy_csr *g, const canopy_csr *t,
                                        const canopy_graph_options *opt, double *rank,
                                        canopy_graph_stats *stats);
/* sym: g symmetrised, without self loops or repeated entries. */
canopy_status canopy_graph_gpu_color(const canopy_csr *sym, const canopy_graph_options *opt,
                                     int64_t *color, canopy_graph_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
