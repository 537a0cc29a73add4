/* SPDX-License-Identifier: MIT */
/* y = A x, one row per outer item; a split row's partial sums are added in chunk
 * order, so omp-split agrees with serial to rounding, not bit for bit. */
#include "graph/graph.h"

typedef struct spmv_ctx {
    const canopy_csr *g;
    const double *x;
    double *y;
} spmv_ctx;

static double dot(void *vctx, int64_t row, int64_t lo, int64_t hi) {
    (void)row;
    const spmv_ctx *c = vctx;
    double acc = 0.0;
    if (c->g->val)
        for (int64_t k = lo; k < hi; k++) acc += c->g->val[k] * c->x[c->g->col[k]];
    else
        for (int64_t k = lo; k < hi; k++) acc += c->x[c->g->col[k]];
    return acc;
}

static void store(void *vctx, int64_t row, double acc) {
    spmv_ctx *c = vctx;
    c->y[row] = acc;
}

canopy_status canopy_spmv(const canopy_csr *g, const double *x, const canopy_graph_options *opt,
                          double *y, canopy_graph_stats *stats) {
    canopy_status s = canopy_graph_check(g, opt, false, "spmv");
    if (s != CANOPY_OK) return s;
    if ((g->n_cols > 0 && !x) || (g->n_rows > 0 && !y))
        return canopy_fail(CANOPY_ERR_INVALID, "spmv: x or y is NULL");
    canopy_graph_stats local = {0};
    double t0 = canopy_now();
    if (canopy_graph_strategy_is_gpu(opt->strategy)) {
        s = canopy_graph_gpu_spmv(g, x, opt, y, &local);
        local.seconds = canopy_now() - t0;
        if (stats) *stats = local;
        return s;
    }
    spmv_ctx ctx = {g, x, y};
    graph_loop loop = {g->row_ptr, NULL, g->n_rows, dot, store, &ctx, true};
    s = canopy_graph_run(&loop, opt, &local);
    local.iterations = 1;
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return s;
}
