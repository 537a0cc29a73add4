/* SPDX-License-Identifier: MIT */
/* canopy/kde.h — kernel density estimates (docs/c-api.md, "Kernel density"),
 * included by canopy.h. The log-density of each query under a kernel of bandwidth h
 * centred on every data point, normalised as scikit-learn's
 * KernelDensity.score_samples: log((1 / n) * sum_j K_h(|q - x_j|)), K_h integrating
 * to 1 over R^d. */
#ifndef CANOPY_KDE_H
#define CANOPY_KDE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels of scikit-learn's KernelDensity, with u = r / h (K is 0 for u >= 1
 * but for gaussian and exponential): gaussian exp(-u^2 / 2), tophat 1,
 * epanechnikov 1 - u^2, exponential exp(-u), linear 1 - u, cosine cos(pi u / 2). */
typedef enum canopy_kde_kernel {
    CANOPY_KDE_GAUSSIAN = 0,
    CANOPY_KDE_TOPHAT,
    CANOPY_KDE_EPANECHNIKOV,
    CANOPY_KDE_EXPONENTIAL,
    CANOPY_KDE_LINEAR,
    CANOPY_KDE_COSINE,
    CANOPY_KDE_KERNEL_COUNT
} canopy_kde_kernel;

const char *canopy_kde_kernel_name(canopy_kde_kernel k);
canopy_status canopy_kde_kernel_parse(const char *s, canopy_kde_kernel *out);

typedef struct canopy_kde_options {
    canopy_kde_kernel kernel; /* default gaussian */
    double bandwidth;         /* h > 0, finite (default 1) */
    /* Tolerances as scikit-learn's: every query's density p (not its log) is within
     * atol + rtol * p of the exact one; both 0 (the default): exact. */
    double atol, rtol;
} canopy_kde_options;
canopy_kde_options canopy_kde_options_default(void);

/* log_density[i] (nq values, -inf where the density is 0) for each point of
 * queries, under the data (n >= 1 points of the same dimension). A dual-tree walk
 * (canopy/pair.h) over kd trees of queries and data: a node pair is pruned or
 * accepted whole when the kernel's range over its distance interval is within its
 * share of the tolerance, leaf pairs are summed exactly. Backends: cpu (variants auto,
 * rec and dr), gpu (variant auto or dr: canopy/pair_cuda.cuh's walk, one warp per node
 * pair; CANOPY_ERR_UNSUPPORTED without the CUDA module or a usable GPU), auto (the GPU
 * from CANOPY_PAIR_GPU_AUTO_MIN_POINTS queries when one is usable, else the CPU); the
 * same bound on every backend. opt->tree must be kd (the default); opt->leaf_size
 * applies to both trees (default 32). */
canopy_status canopy_kde(canopy_points data, canopy_points queries, const canopy_kde_options *ko,
                         const canopy_run_options *opt, double *log_density, canopy_stats *stats);
/* The same over a kd canopy_index's tree (the data are the indexed points; no data
 * tree is built): queries.n == 0 && queries.data == NULL asks for the indexed points
 * themselves. Only the queries' tree is built (leaf size: the index's), its time in
 * stats->schedule_seconds (build_seconds 0, index_reused 1). An index of another kind,
 * queries of another dimension or a freed handle fail with CANOPY_ERR_INVALID. */
struct canopy_index; /* canopy.h's index handle, declared after this section */
canopy_status canopy_index_kde(struct canopy_index *ix, canopy_points queries,
                               const canopy_kde_options *ko, const canopy_run_options *opt,
                               double *log_density, canopy_stats *stats);
/* canopy_kde with the points in device memory (CUDA callers): d_data and d_queries
 * rows .stride floats apart on the device (d_queries may be d_data itself: one tree),
 * d_log_density (nq doubles) device memory. Both kd trees are built on the GPU from
 * the device arrays after the work queued on stream (a cudaStream_t, NULL = legacy
 * default) and on the legacy default stream, copied to the host for the walk's top
 * levels and the push-down, and walked on the device in place (no upload); the
 * densities are written to d_log_density before the call returns. Options as for
 * canopy_kde's GPU backend (backend auto or gpu: cpu fails with CANOPY_ERR_INVALID;
 * variant auto or dr); the same bound, values equal canopy_kde's within float64
 * rounding. Host pointers and non-finite coordinates fail with CANOPY_ERR_INVALID;
 * without the CUDA module or a usable GPU, CANOPY_ERR_UNSUPPORTED. */
canopy_status canopy_kde_device(canopy_points d_data, canopy_points d_queries,
                                const canopy_kde_options *ko, const canopy_run_options *opt,
                                double *d_log_density, void *stream, canopy_stats *stats);
/* The O(n nq) reference: every kernel value, summed in data order. */
canopy_status canopy_kde_brute(canopy_points data, canopy_points queries,
                               const canopy_kde_options *ko, double *log_density);

#ifdef __cplusplus
}
#endif

#endif
