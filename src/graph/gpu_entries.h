/* SPDX-License-Identifier: MIT */
/* Internal: graph/'s GPU entry points in the CUDA module (the GPU graph algorithms), its slice
 * "graph" (core/cuda_module.h; forwarders in graph/gpu_forward.c). */
#ifndef CANOPY_GRAPH_GPU_ENTRIES_H
#define CANOPY_GRAPH_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "graph/gpu.h"

#define CANOPY_GRAPH_GPU_ENTRIES(STATUS, OUT, RELEASE)                                             \
    STATUS(canopy_graph_gpu_sssp,                                                                  \
           (const canopy_csr *g, int64_t source, const canopy_graph_options *opt, double *dist,    \
            canopy_graph_stats *stats),                                                            \
           (g, source, opt, dist, stats))                                                          \
    STATUS(canopy_graph_gpu_bfs,                                                                   \
           (const canopy_csr *g, int64_t source, int recursive, const canopy_graph_options *opt,   \
            int64_t *level, canopy_graph_stats *stats),                                            \
           (g, source, recursive, opt, level, stats))                                              \
    STATUS(canopy_graph_gpu_spmv,                                                                  \
           (const canopy_csr *g, const double *x, const canopy_graph_options *opt, double *y,      \
            canopy_graph_stats *stats),                                                            \
           (g, x, opt, y, stats))                                                                  \
    STATUS(canopy_graph_gpu_pagerank,                                                              \
           (const canopy_csr *g, const canopy_csr *t, const canopy_graph_options *opt,             \
            double *rank, canopy_graph_stats *stats),                                              \
           (g, t, opt, rank, stats))                                                               \
    STATUS(canopy_graph_gpu_color,                                                                 \
           (const canopy_csr *sym, const canopy_graph_options *opt, int64_t *color,                \
            canopy_graph_stats *stats),                                                            \
           (sym, opt, color, stats))

CANOPY_CUDA_SLICE_STRUCT(canopy_graph_gpu_entries, CANOPY_GRAPH_GPU_ENTRIES)

#endif
