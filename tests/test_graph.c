/* SPDX-License-Identifier: MIT */
/* Graph applications: every strategy equals the serial reference on generated
 * graphs (several seeds) and on hand-made corner cases; SSSP also against an
 * independent Bellman-Ford, BFS against unit-weight SSSP, SpMV against a direct
 * loop over the entries, colourings checked for validity, PageRank for its sum. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* The CPU strategies, omp-split twice: with a tiny threshold so small test graphs
 * really get split, and with the default. */
typedef struct variant {
    canopy_graph_strategy strategy;
    int64_t threshold;
    const char *name;
} variant;
static const variant variants[] = {
    {CANOPY_GRAPH_OMP_FLAT, 1024, "omp-flat"},
    {CANOPY_GRAPH_OMP_SPLIT, 3, "omp-split/3"},
    {CANOPY_GRAPH_OMP_SPLIT, 1024, "omp-split/1024"},
};
enum { N_VARIANTS = sizeof variants / sizeof variants[0] };

static canopy_graph_options options_for(const variant *v) {
    canopy_graph_options o = canopy_graph_options_default();
    o.strategy = v->strategy;
    o.split_threshold = v->threshold;
    return o;
}

static canopy_csr from_edges(int64_t n, int64_t m, const int64_t *e, const double *w) {
    int64_t *src = xcalloc((size_t)m, sizeof *src), *dst = xcalloc((size_t)m, sizeof *dst);
    for (int64_t k = 0; k < m; k++) {
        src[k] = e[2 * k];
        dst[k] = e[2 * k + 1];
    }
    canopy_csr g;
    CHECK_OK(canopy_csr_from_coo(n, n, m, src, dst, w, &g));
    free(src);
    free(dst);
    return g;
}

/* A copy of g with weights drawn from the seed: integers 1..9 or uniform (0, 1]. */
static canopy_csr weighted_copy(const canopy_csr *g, uint64_t seed, int integral) {
    canopy_csr w;
    CHECK_OK(canopy_csr_transpose(g, &w));
    canopy_csr back;
    CHECK_OK(canopy_csr_transpose(&w, &back));
    canopy_csr_release(&w);
    back.val = NULL;
    CHECK_OK(canopy_alloc((void **)&back.val, (size_t)(back.nnz ? back.nnz : 1), sizeof(double)));
    canopy_rng r = canopy_rng_make(seed, 7);
    for (int64_t k = 0; k < back.nnz; k++)
        back.val[k] =
            integral ? (double)(1 + canopy_rng_below(&r, 9)) : 1.0 - canopy_rng_uniform(&r);
    return back;
}

/* ------------------------------------------------------------- references -- */

static void bellman_ford(const canopy_csr *g, int64_t s, double *d) {
    for (int64_t v = 0; v < g->n_rows; v++) d[v] = INFINITY;
    d[s] = 0.0;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int64_t u = 0; u < g->n_rows; u++)
            for (int64_t k = g->row_ptr[u]; k < g->row_ptr[u + 1]; k++) {
                double nd = d[u] + (g->val ? g->val[k] : 1.0);
                if (nd < d[g->col[k]]) {
                    d[g->col[k]] = nd;
                    changed = 1;
                }
            }
    }
}

static void check_coloring(const canopy_csr *g, const int64_t *c, const char *what) {
    int64_t bad = 0;
    for (int64_t v = 0; v < g->n_rows; v++) {
        if (c[v] < 0 || c[v] > g->n_rows) bad++;
        for (int64_t k = g->row_ptr[v]; k < g->row_ptr[v + 1]; k++)
            if (g->col[k] != v && c[g->col[k]] == c[v]) bad++;
    }
    CHECK_MSG(bad == 0, "%s: %lld edges join equal colours or colours out of range", what,
              (long long)bad);
}

/* ------------------------------------------------ all apps, all strategies -- */

/* full = 0 skips PageRank and colouring, which ignore weights (for the weighted
 * copies of graphs already checked in full). */
static void check_all(const canopy_csr *g, const char *what, uint64_t seed, int full) {
    const int64_t n = g->n_rows;
    double *ref_d = xcalloc((size_t)n, sizeof(double)), *d = xcalloc((size_t)n, sizeof(double));
    int64_t *ref_l = xcalloc((size_t)n, sizeof(int64_t)), *l = xcalloc((size_t)n, sizeof(int64_t));
    double *ref_pr = xcalloc((size_t)n, sizeof(double)), *pr = xcalloc((size_t)n, sizeof(double));
    double *x = xcalloc((size_t)g->n_cols, sizeof(double));
    double *ref_y = xcalloc((size_t)n, sizeof(double)), *y = xcalloc((size_t)n, sizeof(double));
    int64_t *ref_c = xcalloc((size_t)n, sizeof(int64_t)), *c = xcalloc((size_t)n, sizeof(int64_t));
    canopy_graph_options serial = canopy_graph_options_default();
    canopy_graph_stats st;

    /* Sources: 0 and one drawn from the seed. */
    canopy_rng r = canopy_rng_make(seed, 1);
    int64_t sources[2] = {0, n > 0 ? (int64_t)canopy_rng_below(&r, (uint64_t)n) : 0};
    for (int si = 0; si < 2 && n > 0; si++) {
        int64_t s = sources[si];
        CHECK_OK(canopy_sssp(g, s, &serial, ref_d, &st));
        bellman_ford(g, s, d);
        CHECK_MSG(!memcmp(d, ref_d, (size_t)n * sizeof *d), "%s: sssp from %lld != Bellman-Ford",
                  what, (long long)s);
        CHECK_OK(canopy_bfs(g, s, &serial, ref_l, &st));
        /* BFS levels are the distances under unit weights. */
        canopy_csr unit = *g;
        unit.val = NULL;
        CHECK_OK(canopy_sssp(&unit, s, &serial, d, &st));
        int64_t bad = 0;
        for (int64_t v = 0; v < n; v++) bad += ref_l[v] != (isinf(d[v]) ? -1 : (int64_t)d[v]);
        CHECK_MSG(bad == 0, "%s: bfs from %lld differs from unit sssp at %lld vertices", what,
                  (long long)s, (long long)bad);
        CHECK_OK(canopy_bfs_rec(g, s, &serial, l, &st));
        CHECK_MSG(!memcmp(l, ref_l, (size_t)n * sizeof *l), "%s: serial bfs-rec != bfs", what);
        for (int vi = 0; vi < N_VARIANTS; vi++) {
            canopy_graph_options o = options_for(&variants[vi]);
            CHECK_OK(canopy_sssp(g, s, &o, d, &st));
            CHECK_MSG(!memcmp(d, ref_d, (size_t)n * sizeof *d), "%s: sssp %s != serial", what,
                      variants[vi].name);
            CHECK_OK(canopy_bfs(g, s, &o, l, &st));
            CHECK_MSG(!memcmp(l, ref_l, (size_t)n * sizeof *l), "%s: bfs %s != serial", what,
                      variants[vi].name);
            CHECK_OK(canopy_bfs_rec(g, s, &o, l, &st));
            CHECK_MSG(!memcmp(l, ref_l, (size_t)n * sizeof *l), "%s: bfs-rec %s != serial", what,
                      variants[vi].name);
        }
    }

    double worst = 0.0;
    for (int64_t v = 0; v < g->n_cols; v++) x[v] = canopy_rng_uniform(&r) - 0.5;
    CHECK_OK(canopy_spmv(g, x, &serial, ref_y, &st));
    for (int64_t v = 0; v < n; v++) {
        double direct = 0.0;
        for (int64_t k = g->row_ptr[v]; k < g->row_ptr[v + 1]; k++)
            direct += (g->val ? g->val[k] : 1.0) * x[g->col[k]];
        worst = fmax(worst, fabs(direct - ref_y[v]));
    }
    CHECK_MSG(worst == 0.0, "%s: serial spmv differs from the direct loop by %g", what, worst);
    for (int vi = 0; vi < N_VARIANTS; vi++) {
        canopy_graph_options o = options_for(&variants[vi]);
        CHECK_OK(canopy_spmv(g, x, &o, y, &st));
        worst = 0.0;
        for (int64_t v = 0; v < n; v++)
            worst = fmax(worst, fabs(y[v] - ref_y[v]) / fmax(1.0, fabs(ref_y[v])));
        CHECK_MSG(worst < 1e-12, "%s: spmv %s differs by %g", what, variants[vi].name, worst);
    }
    if (!full) goto done;

    CHECK_OK(canopy_pagerank(g, &serial, ref_pr, &st));
    double sum = 0.0;
    for (int64_t v = 0; v < n; v++) sum += ref_pr[v];
    CHECK_MSG(n == 0 || fabs(sum - 1.0) < 1e-9, "%s: pagerank sums to %.15g", what, sum);

    CHECK_OK(canopy_color(g, &serial, ref_c, &st));
    check_coloring(g, ref_c, what);

    for (int vi = 0; vi < N_VARIANTS; vi++) {
        canopy_graph_options o = options_for(&variants[vi]);
        CHECK_OK(canopy_pagerank(g, &o, pr, &st));
        worst = 0.0;
        for (int64_t v = 0; v < n; v++) worst = fmax(worst, fabs(pr[v] - ref_pr[v]));
        CHECK_MSG(worst < 1e-6, "%s: pagerank %s differs by %g", what, variants[vi].name, worst);
        CHECK_OK(canopy_color(g, &o, c, &st));
        CHECK_MSG(!memcmp(c, ref_c, (size_t)n * sizeof *c), "%s: color %s != serial", what,
                  variants[vi].name);
    }
done:
    free(ref_d), free(d), free(ref_l), free(l), free(ref_pr), free(pr), free(x);
    free(ref_y), free(y), free(ref_c), free(c);
}

/* ------------------------------------------------------------- hand-made -- */

static void test_hand_made(uint64_t seed) {
    /* Isolated vertices (3, 6), self loops (1, 4), two parts, a dangling vertex. */
    static const int64_t e1[] = {0, 1, 1, 1, 1, 2, 2, 0, 4, 4, 4, 5, 5, 4, 2, 5, 7, 8};
    canopy_csr g = from_edges(9, 9, e1, NULL);
    check_all(&g, "small parts", seed, 1);
    canopy_csr w = weighted_copy(&g, seed, 0);
    check_all(&w, "small parts, weighted", seed, 0);
    canopy_csr_release(&w);
    canopy_csr_release(&g);

    /* One giant hub: out to and in from every other vertex, plus a ring. */
    const int64_t n = 1500;
    int64_t *e = xcalloc((size_t)(6 * n), sizeof *e), m = 0;
    for (int64_t v = 1; v < n; v++) {
        e[2 * m] = 0, e[2 * m + 1] = v, m++;
        e[2 * m] = v, e[2 * m + 1] = 0, m++;
        e[2 * m] = v, e[2 * m + 1] = v + 1 < n ? v + 1 : 1, m++;
    }
    g = from_edges(n, m, e, NULL);
    check_all(&g, "hub", seed, 1);
    w = weighted_copy(&g, seed, 1);
    check_all(&w, "hub, weighted", seed, 0);
    canopy_csr_release(&w);
    canopy_csr_release(&g);
    free(e);

    /* A single vertex, with and without a self loop. */
    static const int64_t loop[] = {0, 0};
    g = from_edges(1, 0, loop, NULL);
    check_all(&g, "single vertex", seed, 1);
    canopy_csr_release(&g);
    g = from_edges(1, 1, loop, NULL);
    check_all(&g, "single vertex with a loop", seed, 1);
    int64_t c[1];
    canopy_graph_options o = canopy_graph_options_default();
    CHECK_OK(canopy_color(&g, &o, c, NULL));
    CHECK_MSG(c[0] == 0, "a self loop must not stop colour 0");
    canopy_csr_release(&g);

    /* The empty graph: whole-graph apps succeed, a source cannot exist. */
    g = from_edges(0, 0, loop, NULL);
    check_all(&g, "empty", seed, 1);
    double d[1];
    CHECK_FAILS(canopy_sssp(&g, 0, &o, d, NULL), CANOPY_ERR_INVALID, "source 0");
    canopy_csr_release(&g);
}

static void test_known_values(void) {
    /* 0 -> 1 (1.5), 1 -> 2 (2), 0 -> 2 (4), 2 -> 3 (0.5): the shortcut loses. */
    static const int64_t e[] = {0, 1, 1, 2, 0, 2, 2, 3};
    static const double w[] = {1.5, 2.0, 4.0, 0.5};
    canopy_csr g = from_edges(5, 4, e, w);
    canopy_graph_options o = canopy_graph_options_default();
    double d[5];
    int64_t l[5];
    CHECK_OK(canopy_sssp(&g, 0, &o, d, NULL));
    CHECK(d[0] == 0.0 && d[1] == 1.5 && d[2] == 3.5 && d[3] == 4.0 && isinf(d[4]));
    CHECK_OK(canopy_bfs(&g, 0, &o, l, NULL));
    CHECK(l[0] == 0 && l[1] == 1 && l[2] == 1 && l[3] == 2 && l[4] == -1);
    canopy_csr_release(&g);

    /* A 2-cycle: both ranks 1/2. */
    static const int64_t cyc[] = {0, 1, 1, 0};
    g = from_edges(2, 2, cyc, NULL);
    double pr[2];
    CHECK_OK(canopy_pagerank(&g, &o, pr, NULL));
    CHECK(fabs(pr[0] - 0.5) < 1e-12 && fabs(pr[1] - 0.5) < 1e-12);
    canopy_csr_release(&g);
    g = from_edges(2, 1, cyc, NULL);
    CHECK_OK(canopy_pagerank(&g, &o, pr, NULL));
    /* 0 -> 1 with 1 dangling, solved by hand: r0 = a + b r1 and
     * r1 = a + 0.85 r0 + b r1, with a = 0.15 / 2 and b = 0.85 / 2. */
    double a = 0.075, b = 0.425, r0 = (a + b * a / (1 - b)) / (1 - b * 0.85 / (1 - b));
    double r1 = (a + 0.85 * r0) / (1 - b);
    CHECK_MSG(fabs(pr[0] - r0) < 1e-9 && fabs(pr[1] - r1) < 1e-9, "pagerank %g %g, want %g %g",
              pr[0], pr[1], r0, r1);
    canopy_csr_release(&g);
}

static void test_errors(void) {
    static const int64_t e[] = {0, 1, 1, 0};
    static const double neg[] = {1.0, -2.0};
    canopy_csr g = from_edges(2, 2, e, neg);
    canopy_graph_options o = canopy_graph_options_default();
    double d[2];
    CHECK_FAILS(canopy_sssp(&g, 0, &o, d, NULL), CANOPY_ERR_INVALID, "weights must be >= 0");
    CHECK_FAILS(canopy_sssp(&g, 2, &o, d, NULL), CANOPY_ERR_INVALID, "source 2");
    /* Without a GPU the GPU strategies are refused (tests/gpu runs them where one is). */
    int have_gpu = canopy_gpu_info(NULL, 0, NULL) == CANOPY_OK;
    for (int s = CANOPY_GRAPH_NODP_THREAD; !have_gpu && s < CANOPY_GRAPH_STRATEGY_COUNT; s++) {
        o.strategy = (canopy_graph_strategy)s;
        CHECK_FAILS(canopy_pagerank(&g, &o, d, NULL), CANOPY_ERR_UNSUPPORTED, "runs on the GPU");
    }
    o.strategy = CANOPY_GRAPH_CONS_GRID;
    o.child_threads = 33;
    CHECK_FAILS(canopy_pagerank(&g, &o, d, NULL), CANOPY_ERR_INVALID, "child threads 33");
    o.child_threads = 0;
    o.dp_threshold = -1;
    CHECK_FAILS(canopy_pagerank(&g, &o, d, NULL), CANOPY_ERR_INVALID, "threshold -1");
    o = canopy_graph_options_default();
    canopy_child_form form;
    CHECK_OK(canopy_child_form_parse("grid", &form));
    CHECK(form == CANOPY_CHILD_GRID && !strcmp(canopy_child_form_name(form), "grid"));
    CHECK_FAILS(canopy_child_form_parse("warp", &form), CANOPY_ERR_INVALID, "thread, block");
    canopy_graph_strategy st;
    CHECK_OK(canopy_graph_strategy_parse("cons-grid", &st));
    CHECK(st == CANOPY_GRAPH_CONS_GRID && canopy_graph_strategy_is_gpu(st));
    CHECK_FAILS(canopy_graph_strategy_parse("warp", &st), CANOPY_ERR_INVALID, "omp-split");
    canopy_csr_release(&g);
    int64_t bad_src[] = {0}, bad_dst[] = {5};
    CHECK_FAILS(canopy_csr_from_coo(2, 2, 1, bad_src, bad_dst, NULL, &g), CANOPY_ERR_INVALID,
                "outside");
    CHECK_FAILS(canopy_graph_gen("kron99", 1, &g), CANOPY_ERR_INVALID, "kron16");
}

/* ------------------------------------------------------------ generators -- */

static int sorted_distinct_no_loops(const canopy_csr *g) {
    for (int64_t v = 0; v < g->n_rows; v++)
        for (int64_t k = g->row_ptr[v]; k < g->row_ptr[v + 1]; k++)
            if (g->col[k] == v || (k > g->row_ptr[v] && g->col[k] <= g->col[k - 1])) return 0;
    return 1;
}

static int same_csr(const canopy_csr *a, const canopy_csr *b) {
    return a->n_rows == b->n_rows && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, (size_t)(a->n_rows + 1) * sizeof(int64_t)) &&
           !memcmp(a->col, b->col, (size_t)a->nnz * sizeof(int32_t));
}

static void test_kron(uint64_t seed) {
    canopy_csr a, b, t;
    canopy_set_threads(1);
    CHECK_OK(canopy_gen_kron(9, 16, seed, &a));
    canopy_set_threads(3);
    CHECK_OK(canopy_gen_kron(9, 16, seed, &b));
    canopy_set_threads(0);
    CHECK_MSG(same_csr(&a, &b), "kron: 1 and 3 threads differ");
    CHECK(a.n_rows == 512 && a.nnz > 512 * 16 && a.nnz <= 2 * 512 * 16 && !a.val);
    CHECK_MSG(sorted_distinct_no_loops(&a), "kron: self loop or repeated edge");
    CHECK_OK(canopy_csr_transpose(&a, &t));
    CHECK_MSG(same_csr(&a, &t), "kron: not symmetric");
    int64_t max_deg = 0;
    for (int64_t v = 0; v < a.n_rows; v++)
        if (a.row_ptr[v + 1] - a.row_ptr[v] > max_deg) max_deg = a.row_ptr[v + 1] - a.row_ptr[v];
    CHECK_MSG(max_deg > 8 * a.nnz / a.n_rows, "kron: max degree %lld is not skewed",
              (long long)max_deg);
    check_all(&a, "kron9", seed, 1);
    canopy_csr w = weighted_copy(&a, seed, 1);
    check_all(&w, "kron9, weighted", seed, 0);
    canopy_csr_release(&w);
    canopy_csr_release(&a);
    canopy_csr_release(&b);
    canopy_csr_release(&t);
}

static void test_powerlaw(uint64_t seed) {
    canopy_csr a, b;
    canopy_set_threads(1);
    CHECK_OK(canopy_gen_powerlaw(3000, 1, 400, 1.2318, seed, &a));
    canopy_set_threads(2);
    CHECK_OK(canopy_gen_powerlaw(3000, 1, 400, 1.2318, seed, &b));
    canopy_set_threads(0);
    CHECK_MSG(same_csr(&a, &b), "powerlaw: 1 and 2 threads differ");
    CHECK_MSG(sorted_distinct_no_loops(&a), "powerlaw: self loop or repeated target");
    int64_t lo = INT64_MAX, hi = 0;
    for (int64_t v = 0; v < a.n_rows; v++) {
        int64_t d = a.row_ptr[v + 1] - a.row_ptr[v];
        lo = d < lo ? d : lo;
        hi = d > hi ? d : hi;
    }
    CHECK_MSG(lo >= 1 && hi <= 400 && hi > 100, "powerlaw: degrees %lld..%lld", (long long)lo,
              (long long)hi);
    check_all(&a, "powerlaw3000", seed, 1);
    canopy_csr w = weighted_copy(&a, seed, 0);
    check_all(&w, "powerlaw3000, weighted", seed, 0);
    canopy_csr_release(&w);
    canopy_csr_release(&a);
    canopy_csr_release(&b);
    CHECK_FAILS(canopy_gen_powerlaw(10, 1, 10, 1.0, seed, &a), CANOPY_ERR_INVALID, "n-1");
}

/* omp-split must not depend on the thread count (partials summed in chunk order). */
static void test_thread_independence(uint64_t seed) {
    canopy_csr g;
    CHECK_OK(canopy_gen_kron(8, 16, seed, &g));
    canopy_graph_options o = canopy_graph_options_default();
    o.strategy = CANOPY_GRAPH_OMP_SPLIT;
    o.split_threshold = 8;
    double *a = xcalloc((size_t)g.n_rows, sizeof(double)),
           *b = xcalloc((size_t)g.n_rows, sizeof(double));
    canopy_graph_stats st;
    canopy_set_threads(1);
    CHECK_OK(canopy_pagerank(&g, &o, a, &st));
    CHECK_MSG(st.split_items > 0 && st.split_chunks > st.split_items,
              "omp-split did not split (%lld items, %lld chunks)", (long long)st.split_items,
              (long long)st.split_chunks);
    canopy_set_threads(3);
    CHECK_OK(canopy_pagerank(&g, &o, b, &st));
    canopy_set_threads(0);
    CHECK_MSG(!memcmp(a, b, (size_t)g.n_rows * sizeof *a),
              "pagerank omp-split: 1 and 3 threads differ");
    free(a);
    free(b);
    canopy_csr_release(&g);
}

int main(void) {
    uint64_t seed = check_seed();
    test_known_values();
    test_errors();
    test_hand_made(seed);
    for (int i = 0; i < 2; i++) {
        test_kron(seed + (uint64_t)i);
        test_powerlaw(seed + (uint64_t)i);
    }
    test_thread_independence(seed);
    return check_finish();
}
