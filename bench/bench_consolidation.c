/* SPDX-License-Identifier: MIT */
/* Figure 7 of Wu, Li & Becchi (2016) on this machine: every GPU graph strategy (flat
 * thread/warp/block, basic-dp, warp/block/grid consolidation) and the CPU OpenMP
 * strategies on one generated input, plus cuSPARSE SpMV on the same matrix; or the
 * GPU and CPU tree strategies on a generated tree. Prints one markdown row per
 * (application, strategy): median and min-max over the repetitions (after one
 * warm-up), of the whole call (uploads included) and of the GPU kernels alone, and
 * the dynamic-parallelism counters; then the speedups the paper reports.
 * "spmv-val" is SpMV on the matrix with its values stored (all 1), so that canopy
 * reads the same bytes as cuSPARSE, which has no pattern-only CSR.
 *   canopy-bench-consolidation graph NAME REPS [APPS [STRATEGIES]]
 *       NAME kron16 or powerlaw434k; APPS a comma list of sssp, spmv, spmv-val,
 *       pagerank, color, bfs-rec (default all); STRATEGIES a comma list of strategy
 *       names, nodp-split-t16, nodp-split-t256, cons-grid-t16 and cons-grid-t256 for
 *       the re-tuned ones (default all)
 *   canopy-bench-consolidation tree NAME REPS     (random1, random2) */
#include "bench_util.h"
#include "canopy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CANOPY_HAVE_CUDA
/* bench/cusparse_spmv.cu: seconds per cuSPARSE CSR SpMV, reps times: between CUDA
 * events around the call, and on the host from the call until the device is done
 * (what canopy's GPU kernel time measures). */
int bench_cusparse_spmv(const canopy_csr *g, const double *x, double *y, int reps, double *events,
                        double *wall);
#endif

enum { MAX_REPS = 64 };

static void die(const char *what) {
    fprintf(stderr, "bench: %s: %s\n", what, canopy_last_error());
    exit(1);
}

/* ------------------------------------------------------------------ graphs -- */

typedef enum {
    APP_SSSP,
    APP_SPMV,
    APP_SPMV_VAL,
    APP_PAGERANK,
    APP_COLOR,
    APP_BFS_REC,
    APP_COUNT
} app_kind;
static const char *const app_names[APP_COUNT] = {"sssp",     "spmv",  "spmv-val",
                                                 "pagerank", "color", "bfs-rec"};

/* 1 when the comma-separated list has `name` as one of its items. */
static int listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, n) && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static canopy_status run_app(app_kind app, const canopy_csr *g, const double *x, double *out_f,
                             int64_t *out_i, const canopy_graph_options *o,
                             canopy_graph_stats *st) {
    switch (app) {
    case APP_SSSP:
        return canopy_sssp(g, 0, o, out_f, st);
    case APP_SPMV:
    case APP_SPMV_VAL:
        return canopy_spmv(g, x, o, out_f, st);
    case APP_PAGERANK:
        return canopy_pagerank(g, o, out_f, st);
    case APP_COLOR:
        return canopy_color(g, o, out_i, st);
    default:
        return canopy_bfs_rec(g, 0, o, out_i, st);
    }
}

/* The strategies in order, then cons-grid re-tuned: a lower threshold with a warp per
 * buffered row (solo-block children of 32 threads), and a higher threshold. */
typedef struct config {
    canopy_graph_strategy s;
    int64_t threshold; /* -1: default */
    int child_threads; /* 0: default */
    const char *label; /* NULL: the strategy's name */
    const char *key;   /* its name in the STRATEGIES list */
} config;
static const config configs[] = {
    {CANOPY_GRAPH_OMP_FLAT, -1, 0, NULL, "omp-flat"},
    {CANOPY_GRAPH_OMP_SPLIT, -1, 0, NULL, "omp-split"},
    {CANOPY_GRAPH_NODP_THREAD, -1, 0, NULL, "nodp-thread"},
    {CANOPY_GRAPH_NODP_WARP, -1, 0, NULL, "nodp-warp"},
    {CANOPY_GRAPH_NODP_BLOCK, -1, 0, NULL, "nodp-block"},
    {CANOPY_GRAPH_NODP_SPLIT, -1, 0, NULL, "nodp-split"},
    {CANOPY_GRAPH_NODP_SPLIT, 16, 0, "nodp-split, threshold 16", "nodp-split-t16"},
    {CANOPY_GRAPH_NODP_SPLIT, 256, 0, "nodp-split, threshold 256", "nodp-split-t256"},
    {CANOPY_GRAPH_BASIC_DP, -1, 0, NULL, "basic-dp"},
    {CANOPY_GRAPH_CONS_WARP, -1, 0, NULL, "cons-warp"},
    {CANOPY_GRAPH_CONS_BLOCK, -1, 0, NULL, "cons-block"},
    {CANOPY_GRAPH_CONS_GRID, -1, 0, NULL, "cons-grid"},
    {CANOPY_GRAPH_CONS_GRID, 16, 32, "cons-grid, threshold 16, 32-thread children",
     "cons-grid-t16"},
    {CANOPY_GRAPH_CONS_GRID, 256, 0, "cons-grid, threshold 256", "cons-grid-t256"},
};
enum { N_CONFIGS = sizeof configs / sizeof configs[0] };

static void bench_graph(const char *name, int reps, const char *only, const char *strategies) {
    canopy_csr g;
    if (canopy_graph_gen(name, 1, &g) != CANOPY_OK) die(name);
    int64_t n = g.n_rows, maxdeg = 0;
    for (int64_t v = 0; v < n; v++)
        if (g.row_ptr[v + 1] - g.row_ptr[v] > maxdeg) maxdeg = g.row_ptr[v + 1] - g.row_ptr[v];
    printf("\n### %s: %lld vertices, %lld entries, max out-degree %lld\n\n", name, (long long)n,
           (long long)g.nnz, (long long)maxdeg);
    printf("| app | strategy | call ms, median (min-max) | GPU kernels ms, median (min-max) | "
           "heavy rows | child launches | buffer high-water |\n|---|---|---|---|---|---|---|\n");
    double *x = malloc(sizeof(double) * (size_t)n), *f = malloc(sizeof(double) * (size_t)n);
    int64_t *iv = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) x[i] = 1.0 + (double)(i % 17) / 17.0;
    canopy_csr gv = g; /* the same matrix with its values stored */
    double *ones = malloc(sizeof(double) * (size_t)(g.nnz ? g.nnz : 1));
    for (int64_t k = 0; k < g.nnz; k++) ones[k] = 1.0;
    gv.val = ones;
    double call[MAX_REPS], kern[MAX_REPS], cusparse_wall = NAN;
    for (int app = 0; app < APP_COUNT; app++) {
        if (only && !listed(only, app_names[app])) continue;
        double best_flat = INFINITY, thread_flat = NAN, basic = NAN, cons[3] = {NAN, NAN, NAN};
        double best_cons = INFINITY, split = NAN;
        for (int ci = 0; ci < N_CONFIGS; ci++) {
            const config *cf = &configs[ci];
            int s = cf->s;
            if (strategies && !listed(strategies, cf->key)) continue;
            canopy_graph_options o = canopy_graph_options_default();
            o.strategy = cf->s;
            if (cf->threshold >= 0) o.dp_threshold = cf->threshold;
            o.child_threads = cf->child_threads;
            /* the slow ones: fewer repetitions */
            int r_n = (s == CANOPY_GRAPH_BASIC_DP || app == APP_COLOR) && reps > 3 ? 3 : reps;
            const char *label = cf->label ? cf->label : canopy_graph_strategy_name(o.strategy);
            canopy_graph_stats st;
            const canopy_csr *m = app == APP_SPMV_VAL ? &gv : &g;
            if (run_app((app_kind)app, m, x, f, iv, &o, &st) != CANOPY_OK) { /* warm-up */
                printf("| %s | %s | failed: %s | | | | |\n", app_names[app], label,
                       canopy_last_error());
                continue;
            }
            for (int r = 0; r < r_n; r++) {
                if (run_app((app_kind)app, m, x, f, iv, &o, &st) != CANOPY_OK) die(app_names[app]);
                call[r] = st.seconds * 1e3;
                kern[r] = st.kernel_seconds * 1e3;
            }
            bench_summary c = bench_summarise(call, r_n), k = bench_summarise(kern, r_n);
            int gpu = canopy_graph_strategy_is_gpu(o.strategy);
            if (gpu)
                printf("| %s | %s | %.3f (%.3f-%.3f) | %.3f (%.3f-%.3f) | %lld | %lld | %lld |\n",
                       app_names[app], label, c.med, c.min, c.max, k.med, k.min, k.max,
                       (long long)st.heavy_items, (long long)st.child_launches,
                       (long long)st.buffer_high_water);
            else
                printf("| %s | %s (CPU, %d threads) | %.2f (%.2f-%.2f) | | | | |\n", app_names[app],
                       label, canopy_threads(), c.med, c.min, c.max);
            /* speedups on kernel time for the GPU (uploads are the same for all) */
            if (s >= CANOPY_GRAPH_NODP_THREAD && s <= CANOPY_GRAPH_NODP_BLOCK && k.med < best_flat)
                best_flat = k.med;
            if (s == CANOPY_GRAPH_NODP_THREAD) thread_flat = k.med;
            if (s == CANOPY_GRAPH_NODP_SPLIT && !cf->label) split = k.med;
            if (s == CANOPY_GRAPH_BASIC_DP) basic = k.med;
            if (s >= CANOPY_GRAPH_CONS_WARP && !cf->label) cons[s - CANOPY_GRAPH_CONS_WARP] = k.med;
            if (s >= CANOPY_GRAPH_CONS_WARP && k.med < best_cons) best_cons = k.med;
        }
        printf("| %s | **speedup** (GPU kernel times) | cons-warp/block/grid over basic-dp: "
               "%.1fx / %.1fx / %.1fx; over the best of nodp-thread/warp/block: %.2fx / %.2fx / "
               "%.2fx (best consolidated setting %.2fx); over nodp-split: %.2fx / %.2fx / %.2fx; "
               "over thread-mapped flat: %.2fx / %.2fx / %.2fx | | | | |\n",
               app_names[app], basic / cons[0], basic / cons[1], basic / cons[2],
               best_flat / cons[0], best_flat / cons[1], best_flat / cons[2], best_flat / best_cons,
               split / cons[0], split / cons[1], split / cons[2], thread_flat / cons[0],
               thread_flat / cons[1], thread_flat / cons[2]);
#ifdef CANOPY_HAVE_CUDA
        if (app == APP_SPMV) {
            double ev[MAX_REPS], wall[MAX_REPS];
            if (bench_cusparse_spmv(&gv, x, f, reps, ev, wall) == 0) {
                for (int r = 0; r < reps; r++) ev[r] *= 1e3, wall[r] *= 1e3;
                bench_summary e = bench_summarise(ev, reps), w = bench_summarise(wall, reps);
                cusparse_wall = w.med;
                printf("| spmv | cuSPARSE (peer; values stored) | | %.3f (%.3f-%.3f) host-timed "
                       "like canopy; %.3f (%.3f-%.3f) between CUDA events | | | |\n",
                       w.med, w.min, w.max, e.med, e.min, e.max);
            } else {
                printf("| spmv | cuSPARSE (peer) | failed | | | | |\n");
            }
        }
#endif
        if (app == APP_SPMV || app == APP_SPMV_VAL)
            printf("| %s | **against cuSPARSE** (host-timed) | nodp-split %.2fx of cuSPARSE's "
                   "time, best of nodp-thread/warp/block %.2fx, cons-grid %.2fx "
                   "| | | | |\n",
                   app_names[app], split / cusparse_wall, best_flat / cusparse_wall,
                   cons[2] / cusparse_wall);
        fflush(stdout);
    }
    free(x), free(f), free(iv), free(ones);
    canopy_csr_release(&g);
}

/* ------------------------------------------------------------------- trees -- */

static void bench_tree(const char *name, int reps) {
    canopy_ptree t;
    if (canopy_ptree_gen(name, 1, &t) != CANOPY_OK) die(name);
    printf("\n### %s: %lld nodes, depth %d\n\n", name, (long long)t.n, (int)t.depth);
    printf("| app | strategy | call ms, median (min-max) | GPU kernels ms, median (min-max) | "
           "launches | levels |\n|---|---|---|---|---|---|\n");
    int64_t *out = malloc(sizeof(int64_t) * (size_t)t.n);
    double call[MAX_REPS], kern[MAX_REPS];
    static const canopy_ptsd_app apps[] = {CANOPY_PTSD_HEIGHTS, CANOPY_PTSD_DESCENDANTS};
    static const char *const names[] = {"heights", "descendants"};
    static const canopy_ptsd_strategy strategies[] = {CANOPY_PTSD_FLAT,     CANOPY_PTSD_CREC,
                                                      CANOPY_PTSD_GPU_REC,  CANOPY_PTSD_GPU_FLAT,
                                                      CANOPY_PTSD_GPU_CREC, CANOPY_PTSD_GPU_HIER};
    for (int a = 0; a < 2; a++) {
        double med[6], kmed[6];
        for (int si = 0; si < 6; si++) {
            canopy_ptsd_stats st;
            med[si] = kmed[si] = NAN;
            int r_n = strategies[si] == CANOPY_PTSD_GPU_REC && reps > 3 ? 3 : reps;
            if (canopy_ptsd_run(&t, apps[a], NULL, NULL, strategies[si], out, &st) != CANOPY_OK) {
                printf("| %s | %s | failed: %s | | | |\n", names[a],
                       canopy_ptsd_strategy_name(strategies[si]), canopy_last_error());
                continue;
            }
            for (int r = 0; r < r_n; r++) {
                if (canopy_ptsd_run(&t, apps[a], NULL, NULL, strategies[si], out, &st) != CANOPY_OK)
                    die(names[a]);
                call[r] = st.seconds * 1e3;
                kern[r] = st.kernel_seconds * 1e3;
            }
            bench_summary c = bench_summarise(call, r_n), k = bench_summarise(kern, r_n);
            med[si] = c.med;
            kmed[si] = k.med;
            if (strategies[si] >= CANOPY_PTSD_GPU_REC)
                printf("| %s | %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %lld | %lld |\n",
                       names[a], canopy_ptsd_strategy_name(strategies[si]), c.med, c.min, c.max,
                       k.med, k.min, k.max, (long long)st.launches, (long long)st.levels);
            else
                printf("| %s | %s (CPU, %d threads) | %.2f (%.2f-%.2f) | | | |\n", names[a],
                       canopy_ptsd_strategy_name(strategies[si]), canopy_threads(), c.med, c.min,
                       c.max);
            fflush(stdout);
        }
        printf("| %s | **speedup** | GPU kernel times: gpu-crec over gpu-rec %.1fx, over gpu-flat "
               "%.2fx; gpu-hier over gpu-rec %.1fx; call times: gpu-crec over CPU crec %.2fx | | "
               "|\n",
               names[a], kmed[2] / kmed[4], kmed[3] / kmed[4], kmed[2] / kmed[5], med[1] / med[4]);
    }
    free(out);
    canopy_ptree_release(&t);
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 6 || (strcmp(argv[1], "graph") && strcmp(argv[1], "tree"))) {
        fprintf(stderr,
                "usage: canopy-bench-consolidation graph|tree NAME REPS [APPS [STRATEGIES]]\n");
        return 2;
    }
    int reps = atoi(argv[3]);
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench: REPS must be 1..%d\n", MAX_REPS);
        return 2;
    }
    if (!strcmp(argv[1], "graph"))
        bench_graph(argv[2], reps, argc >= 5 && strcmp(argv[4], "all") ? argv[4] : NULL,
                    argc == 6 ? argv[5] : NULL);
    else
        bench_tree(argv[2], reps);
    return 0;
}
