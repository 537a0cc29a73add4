/* SPDX-License-Identifier: MIT */
/* canopy graph: SSSP, BFS, PageRank, SpMV and colouring over a CSR graph read from
 * a file or generated, with a choice of nested-loop strategy. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define CMD "graph"

enum {
    OPT_GRAPH = OPT_FIRST_LOCAL,
    OPT_GEN,
    OPT_SOURCE,
    OPT_VECTOR,
    OPT_STRATEGY,
    OPT_BACKEND,
    OPT_SPLIT,
    OPT_RECURSIVE,
    OPT_SAVE_GRAPH,
    OPT_DP_THRESHOLD,
    OPT_CHILD_FORM,
    OPT_CHILD_THREADS,
    OPT_CHILD_BLOCKS,
    OPT_KC
};

typedef enum { APP_SSSP, APP_BFS, APP_PAGERANK, APP_SPMV, APP_COLOR, APP_COUNT } app_kind;
static const char *const app_names[APP_COUNT] = {"sssp", "bfs", "pagerank", "spmv", "color"};

static void usage(FILE *f) {
    fprintf(f, "usage: canopy graph APP (--graph FILE | --gen NAME [--seed S]) -o OUT.npy\n"
               "                    [--source V] [--vector X.npy] [--recursive]\n"
               "                    [--strategy S] [--backend auto|cpu|gpu] [--threads T]\n"
               "                    [--split-threshold N] [--save-graph G.mtx] [--stats]\n"
               "                    [--dp-threshold N] [--child-form F] [--child-threads T]\n"
               "                    [--child-blocks B] [--kc X]\n\n"
               "Runs a graph algorithm; the outer loop over vertices has inner loops of very\n"
               "different lengths, and --strategy says how that irregular nesting is run.\n\n"
               "Applications and their output (.npy, one entry per vertex / row):\n"
               "  sssp      float64 shortest distances from --source (default 0), inf where\n"
               "            unreachable; weights from the file (1 for pattern files), >= 0\n"
               "  bfs       int64 levels (hops) from --source, -1 where unreachable;\n"
               "            --recursive runs the recursive (BFS-Rec) form, same result\n"
               "  pagerank  float64 ranks of the unweighted graph (values ignored), damping\n"
               "            0.85, rank of vertices without out-edges spread uniformly,\n"
               "            until the L1 change < 1e-10 (networkx convention); sums to 1\n"
               "  spmv      float64 y = A x for --vector X.npy (1-D, one entry per column)\n"
               "  color     int64 colours from 0; no edge (either direction) joins equal\n"
               "            colours; self loops ignored\n\n"
               "Input (one of):\n"
               "  --graph FILE   .mtx Matrix Market coordinate (real/integer/pattern,\n"
               "                 general/symmetric, 1-based), .gr DIMACS shortest path\n"
               "                 ('p sp N M', 'a U V W'), anything else an edge list ('U V [W]'\n"
               "                 per line, 0-based, '#' comments)\n"
               "  --gen NAME     kron16 (Graph500 Kronecker, 65,536 vertices, ~4.9 M directed\n"
               "                 entries) or powerlaw434k (434,102 vertices, out-degree\n"
               "                 1..1,199, mean ~74, ~32 M entries); --seed S (default 1)\n\n"
               "Strategies (--strategy; default omp-split, or nodp-split with --backend gpu):\n"
               "  serial       one thread, the reference\n"
               "  omp-flat     OpenMP over the outer loop, dynamic schedule, rows whole\n"
               "  omp-split    rows longer than --split-threshold (default 1024) are cut\n"
               "               into chunks that all threads share (CPU consolidation)\n"
               "  nodp-thread  GPU flat kernel, a thread per vertex/row\n"
               "  nodp-warp    GPU flat kernel, a warp per vertex/row\n"
               "  nodp-block   GPU flat kernel, a block per vertex/row\n"
               "  nodp-split   GPU flat kernels: rows up to --dp-threshold entries inline (a\n"
               "               thread up to 16, else a warp), longer ones cut into 256-entry\n"
               "               chunks, a warp per chunk (spmv, pagerank, color: chunks\n"
               "               planned once per graph, one kernel a round; sssp, bfs: a\n"
               "               second kernel per round)\n"
               "  basic-dp     GPU, a child kernel launch per heavy row (longer than\n"
               "               --dp-threshold, default 64): the dynamic-parallelism baseline\n"
               "  cons-warp    GPU, heavy rows buffered and one child launched per warp,\n"
               "  cons-block   per block,\n"
               "  cons-grid    or per grid (workload consolidation)\n\n"
               "Consolidated children (cons-*):\n"
               "  --child-form F       auto (= chunk, default), thread, block, grid or chunk: a\n"
               "                       thread, a block or the whole child grid per buffered\n"
               "                       row, or a warp per 256-entry chunk of one\n"
               "  --child-threads T    threads per child block (default 128)\n"
               "  --child-blocks B     blocks per child (default: the KC_X rule, the\n"
               "                       occupancy-optimal block count / X)\n"
               "  --kc X               X of KC_X (default 32 warp, 16 block, 1 grid)\n\n"
               "Other options:\n"
               "  -o OUT.npy           the result (written atomically)\n"
               "  --backend B          auto or cpu (the CPU strategies), gpu (needs a GPU;\n"
               "                       without --strategy runs nodp-split)\n"
               "  --threads T          CPU threads\n"
               "  --save-graph G.mtx   also write the graph (e.g. a generated one) as .mtx\n"
               "  --stats              per-phase times, rounds, items, split items; GPU:\n"
               "                       heavy rows, child launches, buffer high-water mark\n"
               "                       (stderr)\n"
               "  -h, --help           this help\n\n"
               "Example: canopy graph pagerank --gen kron16 -o pr.npy --stats\n"
               "Exit codes: 0 success, 1 runtime error, 2 usage error. See docs/graphs.md.\n");
}

/* Loads --vector as float64 of length n. */
static canopy_status load_vector(const char *path, int64_t n, canopy_array *x) {
    canopy_status s = canopy_array_load(path, x);
    if (s != CANOPY_OK) return s;
    if (x->ndim != 1 || x->shape[0] != n) {
        int64_t len = x->ndim == 1 ? x->shape[0] : -1;
        canopy_array_release(x);
        if (len < 0)
            return canopy_fail(CANOPY_ERR_INVALID, "%s: --vector must be 1-D (length %lld)", path,
                               (long long)n);
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: --vector has %lld entries, the matrix has %lld columns", path,
                           (long long)len, (long long)n);
    }
    return canopy_array_convert(x, CANOPY_F64);
}

static canopy_status run_app(app_kind app, const canopy_csr *g, int64_t source, const double *x,
                             int recursive, const canopy_graph_options *opt, canopy_array *out,
                             canopy_graph_stats *st) {
    int64_t n = g->n_rows;
    canopy_dtype t = (app == APP_BFS || app == APP_COLOR) ? CANOPY_I64 : CANOPY_F64;
    canopy_status s = canopy_array_alloc(out, t, 1, &n);
    if (s != CANOPY_OK) return s;
    switch (app) {
    case APP_SSSP:
        return canopy_sssp(g, source, opt, out->data, st);
    case APP_BFS:
        return recursive ? canopy_bfs_rec(g, source, opt, out->data, st)
                         : canopy_bfs(g, source, opt, out->data, st);
    case APP_PAGERANK:
        return canopy_pagerank(g, opt, out->data, st);
    case APP_SPMV:
        return canopy_spmv(g, x, opt, out->data, st);
    default:
        return canopy_color(g, opt, out->data, st);
    }
}

static const struct option graph_long_opts[] = {
    {"help", no_argument, NULL, OPT_HELP},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"stats", no_argument, NULL, OPT_STATS},
    {"graph", required_argument, NULL, OPT_GRAPH},
    {"gen", required_argument, NULL, OPT_GEN},
    {"source", required_argument, NULL, OPT_SOURCE},
    {"vector", required_argument, NULL, OPT_VECTOR},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"split-threshold", required_argument, NULL, OPT_SPLIT},
    {"recursive", no_argument, NULL, OPT_RECURSIVE},
    {"save-graph", required_argument, NULL, OPT_SAVE_GRAPH},
    {"dp-threshold", required_argument, NULL, OPT_DP_THRESHOLD},
    {"child-form", required_argument, NULL, OPT_CHILD_FORM},
    {"child-threads", required_argument, NULL, OPT_CHILD_THREADS},
    {"child-blocks", required_argument, NULL, OPT_CHILD_BLOCKS},
    {"kc", required_argument, NULL, OPT_KC},
    {NULL, 0, NULL, 0}};

/* The command line, once parsed; have_* says the option was given. */
typedef struct graph_args {
    const char *graph_path, *gen, *vector, *out_path, *save_path;
    int64_t source;
    int have_source, have_strategy, recursive, have_dp, have_threshold;
    canopy_backend backend;
    canopy_graph_options opt;
} graph_args;

/* Option c (argument optarg) of graph's own: 0, or the exit code after a usage error. */
static int graph_option(graph_args *a, int c) {
    int rc = 0;
    int64_t v = 0;
    switch (c) {
    case OPT_GRAPH:
        a->graph_path = optarg;
        break;
    case OPT_GEN:
        a->gen = optarg;
        break;
    case OPT_SOURCE:
        rc = cli_parse_i64(CMD, "--source", optarg, 0, INT32_MAX, &a->source);
        a->have_source = 1;
        break;
    case OPT_VECTOR:
        a->vector = optarg;
        break;
    case OPT_STRATEGY:
        if (canopy_graph_strategy_parse(optarg, &a->opt.strategy))
            return cli_usage_error(CMD, "%s", canopy_last_error());
        a->have_strategy = 1;
        break;
    case OPT_BACKEND:
        if (canopy_backend_parse(optarg, &a->backend))
            return cli_usage_error(CMD, "--backend: '%s' is not auto, cpu or gpu", optarg);
        break;
    case OPT_SPLIT:
        rc = cli_parse_i64(CMD, "--split-threshold", optarg, 1, INT64_MAX, &a->opt.split_threshold);
        break;
    case OPT_RECURSIVE:
        a->recursive = 1;
        break;
    case OPT_SAVE_GRAPH:
        a->save_path = optarg;
        break;
    case OPT_DP_THRESHOLD:
        rc = cli_parse_i64(CMD, "--dp-threshold", optarg, 0, INT64_MAX, &a->opt.dp_threshold);
        a->have_threshold = 1;
        break;
    case OPT_CHILD_FORM: {
        canopy_child_form f;
        if (canopy_child_form_parse(optarg, &f))
            return cli_usage_error(CMD, "%s", canopy_last_error());
        a->opt.child_form = f;
        a->have_dp = 1;
        break;
    }
    case OPT_CHILD_THREADS:
        rc = cli_parse_i64(CMD, "--child-threads", optarg, 32, 1024, &v);
        if (!rc && v % 32) return cli_usage_error(CMD, "--child-threads must be a multiple of 32");
        a->opt.child_threads = (int32_t)v;
        a->have_dp = 1;
        break;
    case OPT_CHILD_BLOCKS:
        rc = cli_parse_i64(CMD, "--child-blocks", optarg, 1, INT32_MAX, &v);
        a->opt.child_blocks = (int32_t)v;
        a->have_dp = 1;
        break;
    case OPT_KC:
        rc = cli_parse_i64(CMD, "--kc", optarg, 1, 1024, &v);
        a->opt.kc = (int32_t)v;
        a->have_dp = 1;
        break;
    case 'o':
        a->out_path = optarg;
        break;
    }
    return rc;
}

/* Options that contradict each other or the application are mistakes, not no-ops; sets
 * the GPU strategy --backend gpu implies. */
static int check_args(graph_args *a, int app, int have_seed) {
    if (!a->graph_path == !a->gen)
        return cli_usage_error(CMD, "give exactly one of --graph and --gen");
    if (have_seed && !a->gen) return cli_usage_error(CMD, "--seed applies only to --gen");
    if (a->have_source && app != APP_SSSP && app != APP_BFS)
        return cli_usage_error(CMD, "--source applies only to sssp and bfs");
    if (app == APP_SPMV && !a->vector) return cli_usage_error(CMD, "spmv needs --vector X.npy");
    if (a->vector && app != APP_SPMV) return cli_usage_error(CMD, "--vector applies only to spmv");
    if (a->recursive && app != APP_BFS)
        return cli_usage_error(CMD, "--recursive applies only to bfs");
    if (!a->out_path) return cli_usage_error(CMD, "missing -o OUT.npy");
    int gpu_strategy = canopy_graph_strategy_is_gpu(a->opt.strategy);
    if (a->backend == CANOPY_BACKEND_CPU && gpu_strategy)
        return cli_usage_error(CMD, "--backend cpu conflicts with GPU strategy '%s'",
                               canopy_graph_strategy_name(a->opt.strategy));
    if (a->backend == CANOPY_BACKEND_GPU && a->have_strategy && !gpu_strategy)
        return cli_usage_error(CMD, "--backend gpu conflicts with CPU strategy '%s'",
                               canopy_graph_strategy_name(a->opt.strategy));
    if (a->backend == CANOPY_BACKEND_GPU && !a->have_strategy)
        a->opt.strategy = CANOPY_GRAPH_NODP_SPLIT;
    if (a->have_dp && a->opt.strategy < CANOPY_GRAPH_BASIC_DP)
        return cli_usage_error(CMD, "--child-* and --kc apply only to basic-dp and cons-*");
    if (a->have_threshold && a->opt.strategy < CANOPY_GRAPH_NODP_SPLIT)
        return cli_usage_error(CMD, "--dp-threshold applies only to nodp-split, basic-dp "
                                    "and cons-*");
    if (a->gen) {
        const char *const *names = canopy_graph_gen_names();
        int known = 0;
        for (int i = 0; names[i]; i++) known |= !strcmp(a->gen, names[i]);
        if (!known)
            return cli_usage_error(CMD, "unknown --gen '%s' (kron16, powerlaw434k)", a->gen);
    }
    return 0;
}

/* What --stats reports of one run. */
typedef struct graph_report {
    const graph_args *a;
    const canopy_csr *g;
    const canopy_graph_stats *st;
    int app, gpu_strategy;
    double t_load, t_write;
} graph_report;

static void print_stats_json(const graph_report *r) {
    cli_json *j = cli_json_begin(CMD);
    cli_json_seconds(j, "load", r->t_load);
    cli_json_seconds(j, "run", r->st->seconds);
    cli_json_seconds(j, "write", r->t_write);
    if (r->gpu_strategy) {
        cli_json_seconds(j, "upload", r->st->upload_seconds);
        cli_json_seconds(j, "kernel", r->st->kernel_seconds);
        cli_json_seconds(j, "download", r->st->download_seconds);
    }
    cli_json_count(j, "vertices", (double)r->g->n_rows);
    cli_json_count(j, "entries", (double)r->g->nnz);
    cli_json_count(j, "iterations", (double)r->st->iterations);
    cli_json_count(j, "items", (double)r->st->items);
    if (!r->gpu_strategy) cli_json_count(j, "inner_iterations", (double)r->st->edges);
    cli_json_choice(j, "app", app_names[r->app]);
    cli_json_choice(j, "strategy", canopy_graph_strategy_name(r->a->opt.strategy));
    cli_json_choice(j, "backend", r->gpu_strategy ? "gpu" : "cpu");
    cli_json_emit(j, "");
}

static void print_stats_text(const graph_report *r) {
    fprintf(stderr,
            "graph stats:\n"
            "  %s: %lld vertices, %lld entries%s; app %s%s, strategy %s, threads %d\n"
            "  load %.4f s, run %.4f s, write %.4f s\n"
            "  iterations %lld, outer items %lld",
            r->a->gen ? r->a->gen : r->a->graph_path, (long long)r->g->n_rows, (long long)r->g->nnz,
            r->g->val ? "" : " (pattern)", app_names[r->app], r->a->recursive ? " (recursive)" : "",
            canopy_graph_strategy_name(r->a->opt.strategy),
            r->a->opt.strategy == CANOPY_GRAPH_SERIAL ? 1 : canopy_threads(), r->t_load,
            r->st->seconds, r->t_write, (long long)r->st->iterations, (long long)r->st->items);
    /* The GPU strategies do not count inner iterations (it would cost a reduction). */
    if (r->gpu_strategy)
        fprintf(stderr, "\n");
    else
        fprintf(stderr, ", inner iterations %lld\n", (long long)r->st->edges);
    if (r->a->opt.strategy == CANOPY_GRAPH_OMP_SPLIT)
        fprintf(stderr, "  split items %lld into %lld chunks (threshold %lld)\n",
                (long long)r->st->split_items, (long long)r->st->split_chunks,
                (long long)r->a->opt.split_threshold);
    if (r->gpu_strategy)
        fprintf(stderr,
                "  gpu: upload %.4f s, kernels %.4f s, download %.4f s\n"
                "  heavy rows %lld, child launches %lld (failed, run inline: %lld), buffer "
                "high-water %lld descriptors\n",
                r->st->upload_seconds, r->st->kernel_seconds, r->st->download_seconds,
                (long long)r->st->heavy_items, (long long)r->st->child_launches,
                (long long)r->st->launch_fallbacks, (long long)r->st->buffer_high_water);
}

int cmd_graph(int argc, char **argv) {
    graph_args a;
    memset(&a, 0, sizeof a);
    a.backend = CANOPY_BACKEND_AUTO;
    a.opt = canopy_graph_options_default();
    a.opt.strategy = CANOPY_GRAPH_OMP_SPLIT;
    cli_parser p = cli_parser_start(CMD, "ho:", graph_long_opts, usage, NULL, NULL);
    int c, rc = 0;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        if (c == CLI_STOP) return p.rc;
        if ((rc = graph_option(&a, c))) return rc;
    }
    int app = cli_app_operand(CMD, argc, argv, app_names, APP_COUNT);
    if (app < 0) return CLI_USAGE;
    if ((rc = check_args(&a, app, p.have_seed))) return rc;
    int gpu_strategy = canopy_graph_strategy_is_gpu(a.opt.strategy);
    canopy_csr g = {0};
    canopy_array x = {0}, out = {0};
    canopy_graph_stats st = {0};
    const char *ins[] = {a.graph_path, a.vector}, *outs[] = {a.save_path, a.out_path};
    if (cli_check_paths(CMD, ins, 2, outs, 2)) return CLI_ERROR;
    if (cli_check_array_outputs(CMD, 1, &a.out_path)) return CLI_USAGE;

    double t0 = canopy_now();
    uint64_t seed = p.have_seed ? p.seed : 1;
    canopy_status s =
        a.gen ? canopy_graph_gen(a.gen, seed, &g) : canopy_graph_load(a.graph_path, &g);
    if (s == CANOPY_OK && a.vector) s = load_vector(a.vector, g.n_cols, &x);
    double t_load = canopy_now() - t0;
    if (s == CANOPY_OK && (app == APP_SSSP || app == APP_BFS) && a.source >= g.n_rows)
        s = canopy_fail(CANOPY_ERR_INVALID, "--source %lld is not a vertex of %s (0..%lld)",
                        (long long)a.source, a.gen ? a.gen : a.graph_path, (long long)g.n_rows - 1);
    if (s == CANOPY_OK)
        s = run_app((app_kind)app, &g, a.source, x.data, a.recursive, &a.opt, &out, &st);
    double t_write = canopy_now();
    if (s == CANOPY_OK && a.save_path) s = canopy_mtx_write(a.save_path, &g);
    if (s == CANOPY_OK) s = cli_write_array(a.out_path, &out);
    t_write = canopy_now() - t_write;
    rc = s == CANOPY_OK ? CLI_OK : cli_runtime_error(CMD);
    if (rc == CLI_OK)
        cli_summary("graph %s: %lld vertices, %lld entries, %lld iterations, %.3f s -> %s",
                    app_names[app], (long long)g.n_rows, (long long)g.nnz, (long long)st.iterations,
                    st.seconds, a.out_path);
    graph_report r = {&a, &g, &st, app, gpu_strategy, t_load, t_write};
    if (rc == CLI_OK && p.stats == CLI_STATS_JSON)
        print_stats_json(&r);
    else if (rc == CLI_OK && p.stats)
        print_stats_text(&r);
    canopy_csr_release(&g);
    canopy_array_release(&x);
    canopy_array_release(&out);
    return rc;
}
