/* Strategy names, options, argument checks and dispatch. The GPU strategies are
 * named here so the CLI can list them, but this build does not contain them. */
#include "graph/graph.h"

#include <string.h>

static const char *const strategy_names[CANOPY_GRAPH_STRATEGY_COUNT] = {
    "serial",     "omp-flat", "omp-split", "nodp-thread", "nodp-warp",
    "nodp-block", "basic-dp", "cons-warp", "cons-block",  "cons-grid"};

const char *canopy_graph_strategy_name(canopy_graph_strategy s) {
    return (unsigned)s < CANOPY_GRAPH_STRATEGY_COUNT ? strategy_names[s] : "?";
}

int canopy_graph_strategy_is_gpu(canopy_graph_strategy s) {
    return s >= CANOPY_GRAPH_NODP_THREAD && s < CANOPY_GRAPH_STRATEGY_COUNT;
}

canopy_status canopy_graph_strategy_parse(const char *s, canopy_graph_strategy *out) {
    for (int i = 0; s && i < CANOPY_GRAPH_STRATEGY_COUNT; i++)
        if (!strcmp(s, strategy_names[i])) {
            *out = (canopy_graph_strategy)i;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID,
                       "unknown graph strategy '%s' (serial, omp-flat, omp-split; GPU, not built "
                       "yet: nodp-thread, nodp-warp, nodp-block, basic-dp, cons-warp, cons-block, "
                       "cons-grid)",
                       s ? s : "(null)");
}

canopy_graph_options canopy_graph_options_default(void) {
    canopy_graph_options o;
    memset(&o, 0, sizeof o);
    o.strategy = CANOPY_GRAPH_SERIAL;
    o.split_threshold = 1024;
    o.damping = 0.85;
    o.tolerance = 1e-10;
    o.max_iterations = 1000;
    return o;
}

canopy_status graph_check(const canopy_csr *g, const canopy_graph_options *opt, bool square,
                          const char *what) {
    if (!g || !opt) return canopy_fail(CANOPY_ERR_INVALID, "%s: NULL graph or options", what);
    if (g->n_rows < 0 || !g->row_ptr || (g->nnz > 0 && !g->col))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: the graph is not initialised", what);
    if (square && g->n_rows != g->n_cols)
        return canopy_fail(CANOPY_ERR_INVALID, "%s needs a square matrix, not %lld x %lld", what,
                           (long long)g->n_rows, (long long)g->n_cols);
    if ((unsigned)opt->strategy >= CANOPY_GRAPH_STRATEGY_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: unknown strategy %d", what, (int)opt->strategy);
    if (canopy_graph_strategy_is_gpu(opt->strategy))
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: strategy '%s' runs on the GPU, and the GPU graph strategies are "
                           "not built yet (use serial, omp-flat or omp-split)",
                           what, canopy_graph_strategy_name(opt->strategy));
    if (opt->split_threshold < 1)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: split threshold %lld must be >= 1", what,
                           (long long)opt->split_threshold);
    return CANOPY_OK;
}

canopy_status graph_run(const graph_loop *l, const canopy_graph_options *opt,
                        canopy_graph_stats *stats) {
    switch (opt->strategy) {
    case CANOPY_GRAPH_SERIAL:
        return graph_run_serial(l, stats);
    case CANOPY_GRAPH_OMP_FLAT:
        return graph_run_omp_flat(l, stats);
    case CANOPY_GRAPH_OMP_SPLIT:
        return graph_run_omp_split(l, opt->split_threshold, stats);
    default:
        break;
    }
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "graph strategy '%s' is not built",
                       canopy_graph_strategy_name(opt->strategy));
}
