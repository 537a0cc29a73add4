/* SPDX-License-Identifier: MIT */
/* Strategy names, options, argument checks and dispatch of the CPU strategies (the
 * GPU strategies run whole applications on the device: gpu_run.cu). */
#include "core/device.h"
#include "graph/graph.h"

#include <string.h>

static const char *const strategy_names[CANOPY_GRAPH_STRATEGY_COUNT] = {
    "serial",     "omp-flat", "omp-split", "nodp-thread", "nodp-warp", "nodp-block",
    "nodp-split", "basic-dp", "cons-warp", "cons-block",  "cons-grid"};

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
                       "unknown graph strategy '%s' (serial, omp-flat, omp-split; GPU: "
                       "nodp-thread, nodp-warp, nodp-block, nodp-split, basic-dp, cons-warp, "
                       "cons-block, cons-grid)",
                       s ? s : "(null)");
}

static const char *const form_names[] = {"auto", "thread", "block", "grid", "chunk"};

const char *canopy_child_form_name(canopy_child_form f) {
    return (unsigned)f <= CANOPY_CHILD_CHUNK ? form_names[f] : "?";
}

canopy_status canopy_child_form_parse(const char *s, canopy_child_form *out) {
    for (int i = 0; s && i <= CANOPY_CHILD_CHUNK; i++)
        if (!strcmp(s, form_names[i])) {
            *out = (canopy_child_form)i;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID,
                       "unknown child form '%s' (auto, thread, block, grid, chunk)",
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
    o.dp_threshold = 64;
    return o;
}

canopy_status canopy_graph_check(const canopy_csr *g, const canopy_graph_options *opt, bool square,
                                 const char *what) {
    if (!g || !opt) return canopy_fail(CANOPY_ERR_INVALID, "%s: NULL graph or options", what);
    if (g->n_rows < 0 || !g->row_ptr || (g->nnz > 0 && !g->col))
        return canopy_fail(CANOPY_ERR_INVALID, "%s: the graph is not initialised", what);
    if (square && g->n_rows != g->n_cols)
        return canopy_fail(CANOPY_ERR_INVALID, "%s needs a square matrix, not %lld x %lld", what,
                           (long long)g->n_rows, (long long)g->n_cols);
    if ((unsigned)opt->strategy >= CANOPY_GRAPH_STRATEGY_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: unknown strategy %d", what, (int)opt->strategy);
    if (opt->split_threshold < 1)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: split threshold %lld must be >= 1", what,
                           (long long)opt->split_threshold);
    if (opt->dp_threshold < 0 || opt->child_blocks < 0 || opt->kc < 0 ||
        (unsigned)opt->child_form > CANOPY_CHILD_CHUNK ||
        (opt->child_threads != 0 &&
         (opt->child_threads < 32 || opt->child_threads > 1024 || opt->child_threads % 32)))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: dynamic-parallelism options out of range (threshold %lld >= 0, "
                           "child threads %d a multiple of 32 in 32..1024 or 0, child blocks %d "
                           ">= 0, kc %d >= 0)",
                           what, (long long)opt->dp_threshold, (int)opt->child_threads,
                           (int)opt->child_blocks, (int)opt->kc);
    if (canopy_graph_strategy_is_gpu(opt->strategy) && !canopy_gpu_usable())
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: strategy '%s' runs on the GPU, and %s (use serial, omp-flat or "
                           "omp-split)",
                           what, canopy_graph_strategy_name(opt->strategy), canopy_gpu_why_not());
    return CANOPY_OK;
}

canopy_status canopy_graph_check_source(const canopy_csr *g, const canopy_graph_options *opt,
                                        int64_t source, const char *what) {
    canopy_status s = canopy_graph_check(g, opt, true, what);
    if (s == CANOPY_OK && (source < 0 || source >= g->n_rows))
        s = canopy_fail(CANOPY_ERR_INVALID, "%s: source %lld is not a vertex (0..%lld)", what,
                        (long long)source, (long long)g->n_rows - 1);
    return s;
}

canopy_status canopy_graph_run(const graph_loop *l, const canopy_graph_options *opt,
                               canopy_graph_stats *stats) {
    switch (opt->strategy) {
    case CANOPY_GRAPH_SERIAL:
        return canopy_graph_run_serial(l, stats);
    case CANOPY_GRAPH_OMP_FLAT:
        return canopy_graph_run_omp_flat(l, stats);
    case CANOPY_GRAPH_OMP_SPLIT:
        return canopy_graph_run_omp_split(l, opt->split_threshold, stats);
    default:
        break;
    }
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "graph strategy '%s' is not built",
                       canopy_graph_strategy_name(opt->strategy));
}
