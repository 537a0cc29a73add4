/* Figure 7 of Wu, Li & Becchi (2016) on this machine: every GPU graph strategy (flat
 * thread/warp/block, basic-dp, warp/block/grid consolidation) and the CPU OpenMP
 * strategies on one generated input, plus cuSPARSE SpMV on the same matrix; or the
 * GPU and CPU tree strategies on a generated tree. Prints one markdown row per
 * (application, strategy): median and min-max over the repetitions (after one
 * warm-up), of the whole call (uploads included) and of the GPU kernels alone, and
 * the dynamic-parallelism counters; then the speedups the paper reports.
 *   canopy-bench-consolidation graph NAME REPS [APPS]   (kron16, powerlaw434k; APPS a
 *                                                        comma list, default all)
 *   canopy-bench-consolidation tree NAME REPS     (random1, random2) */
#include "canopy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CANOPY_HAVE_CUDA
/* bench/cusparse_spmv.cu: seconds per cuSPARSE CSR SpMV (kernel only), reps times. */
int bench_cusparse_spmv(const canopy_csr *g, const double *x, double *y, int reps, double *secs);
#endif

enum { MAX_REPS = 64 };

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct summary {
    double med, lo, hi;
} summary;

static summary summarise(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    summary s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1]};
    return s;
}

static void die(const char *what) {
    fprintf(stderr, "bench: %s: %s\n", what, canopy_last_error());
    exit(1);
}

/* ------------------------------------------------------------------ graphs -- */

typedef enum { APP_SSSP, APP_SPMV, APP_PAGERANK, APP_COLOR, APP_BFS_REC, APP_COUNT } app_kind;
static const char *const app_names[APP_COUNT] = {"sssp", "spmv", "pagerank", "color", "bfs-rec"};

static canopy_status run_app(app_kind app, const canopy_csr *g, const double *x, double *out_f,
                             int64_t *out_i, const canopy_graph_options *o,
                             canopy_graph_stats *st) {
    switch (app) {
    case APP_SSSP:
        return canopy_sssp(g, 0, o, out_f, st);
    case APP_SPMV:
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
    const char *label;
} config;
static const config configs[] = {
    {CANOPY_GRAPH_OMP_FLAT, -1, 0, NULL},
    {CANOPY_GRAPH_OMP_SPLIT, -1, 0, NULL},
    {CANOPY_GRAPH_NODP_THREAD, -1, 0, NULL},
    {CANOPY_GRAPH_NODP_WARP, -1, 0, NULL},
    {CANOPY_GRAPH_NODP_BLOCK, -1, 0, NULL},
    {CANOPY_GRAPH_BASIC_DP, -1, 0, NULL},
    {CANOPY_GRAPH_CONS_WARP, -1, 0, NULL},
    {CANOPY_GRAPH_CONS_BLOCK, -1, 0, NULL},
    {CANOPY_GRAPH_CONS_GRID, -1, 0, NULL},
    {CANOPY_GRAPH_CONS_GRID, 16, 32, "cons-grid, threshold 16, 32-thread children"},
    {CANOPY_GRAPH_CONS_GRID, 256, 0, "cons-grid, threshold 256"},
};
enum { N_CONFIGS = sizeof configs / sizeof configs[0] };

static void bench_graph(const char *name, int reps, const char *only) {
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
    double call[MAX_REPS], kern[MAX_REPS];
    for (int app = 0; app < APP_COUNT; app++) {
        if (only && !strstr(only, app_names[app])) continue;
        double best_flat = INFINITY, thread_flat = NAN, basic = NAN, cons[3] = {NAN, NAN, NAN};
        double best_cons = INFINITY;
        for (int ci = 0; ci < N_CONFIGS; ci++) {
            const config *cf = &configs[ci];
            int s = cf->s;
            canopy_graph_options o = canopy_graph_options_default();
            o.strategy = cf->s;
            if (cf->threshold >= 0) o.dp_threshold = cf->threshold;
            o.child_threads = cf->child_threads;
            /* the slow ones: fewer repetitions */
            int r_n = (s == CANOPY_GRAPH_BASIC_DP || app == APP_COLOR) && reps > 3 ? 3 : reps;
            const char *label = cf->label ? cf->label : canopy_graph_strategy_name(o.strategy);
            canopy_graph_stats st;
            if (run_app((app_kind)app, &g, x, f, iv, &o, &st) != CANOPY_OK) { /* warm-up */
                printf("| %s | %s | failed: %s | | | | |\n", app_names[app], label,
                       canopy_last_error());
                continue;
            }
            for (int r = 0; r < r_n; r++) {
                if (run_app((app_kind)app, &g, x, f, iv, &o, &st) != CANOPY_OK) die(app_names[app]);
                call[r] = st.seconds * 1e3;
                kern[r] = st.kernel_seconds * 1e3;
            }
            summary c = summarise(call, r_n), k = summarise(kern, r_n);
            int gpu = canopy_graph_strategy_is_gpu(o.strategy);
            if (gpu)
                printf("| %s | %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %lld | %lld | %lld |\n",
                       app_names[app], label, c.med, c.lo, c.hi, k.med, k.lo, k.hi,
                       (long long)st.heavy_items, (long long)st.child_launches,
                       (long long)st.buffer_high_water);
            else
                printf("| %s | %s (CPU, %d threads) | %.2f (%.2f-%.2f) | | | | |\n", app_names[app],
                       label, canopy_threads(), c.med, c.lo, c.hi);
            /* speedups on kernel time for the GPU (uploads are the same for all) */
            if (s >= CANOPY_GRAPH_NODP_THREAD && s <= CANOPY_GRAPH_NODP_BLOCK && k.med < best_flat)
                best_flat = k.med;
            if (s == CANOPY_GRAPH_NODP_THREAD) thread_flat = k.med;
            if (s == CANOPY_GRAPH_BASIC_DP) basic = k.med;
            if (s >= CANOPY_GRAPH_CONS_WARP && !cf->label) cons[s - CANOPY_GRAPH_CONS_WARP] = k.med;
            if (s >= CANOPY_GRAPH_CONS_WARP && k.med < best_cons) best_cons = k.med;
        }
        printf("| %s | **speedup** (GPU kernel times) | cons-warp/block/grid over basic-dp: "
               "%.1fx / %.1fx / %.1fx; over the best flat kernel: %.2fx / %.2fx / %.2fx (best "
               "consolidated setting %.2fx); over thread-mapped flat: %.2fx / %.2fx / %.2fx | | | "
               "| |\n",
               app_names[app], basic / cons[0], basic / cons[1], basic / cons[2],
               best_flat / cons[0], best_flat / cons[1], best_flat / cons[2], best_flat / best_cons,
               thread_flat / cons[0], thread_flat / cons[1], thread_flat / cons[2]);
        fflush(stdout);
#ifdef CANOPY_HAVE_CUDA
        if (app == APP_SPMV) {
            double secs[MAX_REPS];
            if (bench_cusparse_spmv(&g, x, f, reps, secs) == 0) {
                for (int r = 0; r < reps; r++) secs[r] *= 1e3;
                summary k = summarise(secs, reps);
                printf("| spmv | cuSPARSE (peer) | | %.2f (%.2f-%.2f) | | | |\n", k.med, k.lo,
                       k.hi);
            } else {
                printf("| spmv | cuSPARSE (peer) | failed | | | | |\n");
            }
        }
#endif
    }
    free(x), free(f), free(iv);
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
            summary c = summarise(call, r_n), k = summarise(kern, r_n);
            med[si] = c.med;
            kmed[si] = k.med;
            if (strategies[si] >= CANOPY_PTSD_GPU_REC)
                printf("| %s | %s | %.2f (%.2f-%.2f) | %.2f (%.2f-%.2f) | %lld | %lld |\n",
                       names[a], canopy_ptsd_strategy_name(strategies[si]), c.med, c.lo, c.hi,
                       k.med, k.lo, k.hi, (long long)st.launches, (long long)st.levels);
            else
                printf("| %s | %s (CPU, %d threads) | %.2f (%.2f-%.2f) | | | |\n", names[a],
                       canopy_ptsd_strategy_name(strategies[si]), canopy_threads(), c.med, c.lo,
                       c.hi);
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
    if (argc < 4 || argc > 5 || (strcmp(argv[1], "graph") && strcmp(argv[1], "tree"))) {
        fprintf(stderr, "usage: canopy-bench-consolidation graph|tree NAME REPS [APPS]\n");
        return 2;
    }
    int reps = atoi(argv[3]);
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bench: REPS must be 1..%d\n", MAX_REPS);
        return 2;
    }
    if (!strcmp(argv[1], "graph"))
        bench_graph(argv[2], reps, argc == 5 ? argv[4] : NULL);
    else
        bench_tree(argv[2], reps);
    return 0;
}
