/* SPDX-License-Identifier: MIT */
/* Every GPU graph strategy x application against the CPU serial reference, on
 * generated graphs (small Kronecker and power-law graphs, several seeds) and
 * hand-made ones (isolated vertices, self loops, one giant hub whose row forces child
 * launches, rows at the edges of the chunks and of warps and lanes, runs of empty
 * rows, a graph without edges, an empty graph); colourings must be valid and equal the CPU's;
 * PageRank within 1e-6. Then the GPU PTSD strategies against the CPU rec. Exits 77 (skipped,
 * visibly) without a GPU. CANOPY_GPU_SMALL=1 runs only small cases (for
 * compute-sanitizer); CANOPY_GPU_NO_DP=1 leaves out the strategies that launch from
 * the device (racecheck does not support dynamic parallelism). */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int small, no_dp;

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

/* A weighted copy of g: weight of entry k drawn in [0.5, 4.5) from the seed. */
static canopy_csr weighted(const canopy_csr *g, uint64_t seed) {
    int64_t *src = xmalloc(sizeof(int64_t) * (size_t)g->nnz);
    int64_t *dst = xmalloc(sizeof(int64_t) * (size_t)g->nnz);
    double *w = xmalloc(sizeof(double) * (size_t)g->nnz);
    canopy_rng r = canopy_rng_make(seed, 99);
    for (int64_t u = 0; u < g->n_rows; u++)
        for (int64_t k = g->row_ptr[u]; k < g->row_ptr[u + 1]; k++) {
            src[k] = u;
            dst[k] = g->col[k];
            w[k] = 0.5 + 4.0 * canopy_rng_uniform(&r);
        }
    canopy_csr out;
    CHECK_OK(canopy_csr_from_coo(g->n_rows, g->n_cols, g->nnz, src, dst, w, &out));
    free(src), free(dst), free(w);
    return out;
}

/* n vertices: a hub (vertex 0) joined both ways to every other vertex, a self loop on
 * every 7th vertex, a ring among vertices 1 .. n/2, and the rest only on the hub. */
static canopy_csr hub_graph(int64_t n) {
    int64_t cap = 4 * n + 8, m = 0;
    int64_t *src = xmalloc(sizeof(int64_t) * (size_t)cap),
            *dst = xmalloc(sizeof(int64_t) * (size_t)cap);
    for (int64_t v = 1; v < n; v++) {
        src[m] = 0, dst[m++] = v;
        src[m] = v, dst[m++] = 0;
        if (v % 7 == 0) src[m] = v, dst[m++] = v;
        if (v < n / 2) src[m] = v, dst[m++] = v + 1 < n / 2 ? v + 1 : 1;
    }
    canopy_csr g;
    CHECK_OK(canopy_csr_from_coo(n, n, m, src, dst, NULL, &g));
    free(src), free(dst);
    return g;
}

/* Rows whose lengths sit at the edges of the GPU's thread-mapped rows (16) and of
 * its 256-entry chunks: vertex v < 12 has the first lens[v] other vertices as
 * out-neighbours, vertex v >= 12 one edge back to v - 12 (n >= 1100). */
static canopy_csr chunk_edges_graph(int64_t n) {
    static const int64_t lens[12] = {0, 1, 16, 17, 255, 256, 257, 511, 512, 513, 1000, 1099};
    int64_t cap = n + 5000, m = 0;
    int64_t *src = xmalloc(sizeof(int64_t) * (size_t)cap),
            *dst = xmalloc(sizeof(int64_t) * (size_t)cap);
    for (int64_t v = 0; v < 12; v++)
        for (int64_t k = 0, w = 0; k < lens[v]; w++)
            if (w != v) src[m] = v, dst[m++] = w, k++;
    for (int64_t v = 12; v < n; v++) src[m] = v, dst[m++] = v - 12;
    canopy_csr g;
    CHECK_OK(canopy_csr_from_coo(n, n, m, src, dst, NULL, &g));
    free(src), free(dst);
    return g;
}

/* Rows at the edges of what a thread (16 entries), a warp and a chunk (256) take: 40
 * empty rows first, then `cycles` runs of the lengths below (rows of 8 +- 1 and
 * 256 +- 1 entries, runs of empty rows, one row of `big` entries spanning many
 * warps), every other row empty; v's neighbours are v + 1, v + 2, ... (mod n). */
static canopy_csr slice_edges_graph(int64_t n, int cycles, int64_t big) {
    static const int64_t lens[] = {0,  0,   0, 7, 8, 9, 1, 255, 256, 257, 0, -1,
                                   16, 512, 0, 0, 0, 0, 0, 0,   0,   0,   3, 2048};
    enum { N_LENS = sizeof lens / sizeof lens[0] };
    int64_t cap = (int64_t)cycles * (big + 3500), m = 0;
    int64_t *src = xmalloc(sizeof(int64_t) * (size_t)cap),
            *dst = xmalloc(sizeof(int64_t) * (size_t)cap);
    for (int64_t v = 40; v < 40 + (int64_t)cycles * N_LENS && v < n; v++) {
        int64_t len = lens[(v - 40) % N_LENS];
        if (len < 0) len = big;
        for (int64_t j = 0; j < len; j++) src[m] = v, dst[m++] = (v + 1 + j) % n;
    }
    canopy_csr g;
    CHECK_OK(canopy_csr_from_coo(n, n, m, src, dst, NULL, &g));
    free(src), free(dst);
    return g;
}

/* n vertices, edges only among the first half: the rest are isolated. */
static canopy_csr isolated_graph(int64_t n, uint64_t seed) {
    canopy_csr half, g;
    CHECK_OK(canopy_gen_powerlaw(n / 2, 1, 40, 1.5, seed, &half));
    int64_t *src = xmalloc(sizeof(int64_t) * (size_t)(half.nnz + 1));
    int64_t *dst = xmalloc(sizeof(int64_t) * (size_t)(half.nnz + 1));
    for (int64_t u = 0; u < half.n_rows; u++)
        for (int64_t k = half.row_ptr[u]; k < half.row_ptr[u + 1]; k++)
            src[k] = u, dst[k] = half.col[k];
    CHECK_OK(canopy_csr_from_coo(n, n, half.nnz, src, dst, NULL, &g));
    free(src), free(dst);
    canopy_csr_release(&half);
    return g;
}

static int colouring_valid(const canopy_csr *g, const int64_t *c) {
    for (int64_t u = 0; u < g->n_rows; u++) {
        if (c[u] < 0) return 0;
        for (int64_t k = g->row_ptr[u]; k < g->row_ptr[u + 1]; k++)
            if (g->col[k] != u && c[g->col[k]] == c[u]) return 0;
    }
    return 1;
}

typedef struct variant {
    canopy_graph_strategy s;
    int64_t threshold; /* -1: default */
    canopy_child_form form;
} variant;

static const variant variants[] = {
    {CANOPY_GRAPH_NODP_THREAD, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_NODP_WARP, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_NODP_BLOCK, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_NODP_SPLIT, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_NODP_SPLIT, 0, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_NODP_SPLIT, 300, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_BASIC_DP, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_BASIC_DP, 4, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_CONS_WARP, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_CONS_WARP, 0, CANOPY_CHILD_THREAD},
    {CANOPY_GRAPH_CONS_WARP, 0, CANOPY_CHILD_CHUNK},
    {CANOPY_GRAPH_CONS_BLOCK, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_CONS_BLOCK, 2, CANOPY_CHILD_BLOCK},
    {CANOPY_GRAPH_CONS_BLOCK, 20, CANOPY_CHILD_CHUNK},
    {CANOPY_GRAPH_CONS_GRID, -1, CANOPY_CHILD_AUTO},
    {CANOPY_GRAPH_CONS_GRID, 0, CANOPY_CHILD_GRID},
    {CANOPY_GRAPH_CONS_GRID, 8, CANOPY_CHILD_THREAD},
    {CANOPY_GRAPH_CONS_GRID, 8, CANOPY_CHILD_BLOCK},
    {CANOPY_GRAPH_CONS_GRID, 0, CANOPY_CHILD_CHUNK},
};
enum { N_VARIANTS = sizeof variants / sizeof variants[0] };

static canopy_graph_options options(const variant *v) {
    canopy_graph_options o = canopy_graph_options_default();
    o.strategy = v->s;
    if (v->threshold >= 0) o.dp_threshold = v->threshold;
    o.child_form = v->form;
    return o;
}

/* Every application on g (square), each variant against serial. */
static void check_graph(const char *what, const canopy_csr *g, int64_t source) {
    const int64_t n = g->n_rows;
    size_t b = sizeof(double) * (size_t)(n + 1);
    double *rd = xmalloc(b), *gd = xmalloc(b), *x = xmalloc(b), *ry = xmalloc(b), *gy = xmalloc(b);
    double *rp = xmalloc(b), *gp = xmalloc(b);
    int64_t *rl = xmalloc(b), *gl = xmalloc(b), *rc = xmalloc(b), *gc = xmalloc(b);
    for (int64_t i = 0; i < n; i++) x[i] = 1.0 + (double)(i % 13) * 0.25;
    canopy_graph_options ref = canopy_graph_options_default();
    int has_source = source < n;
    if (has_source) CHECK_OK(canopy_sssp(g, source, &ref, rd, NULL));
    if (has_source) CHECK_OK(canopy_bfs(g, source, &ref, rl, NULL));
    CHECK_OK(canopy_spmv(g, x, &ref, ry, NULL));
    CHECK_OK(canopy_pagerank(g, &ref, rp, NULL));
    CHECK_OK(canopy_color(g, &ref, rc, NULL));
    CHECK_MSG(colouring_valid(g, rc), "%s: CPU colouring invalid", what);
    for (int vi = 0; vi < N_VARIANTS; vi++) {
        const variant *v = &variants[vi];
        if (no_dp && v->s >= CANOPY_GRAPH_BASIC_DP) continue;
        canopy_graph_options o = options(v);
        char name[96];
        snprintf(name, sizeof name, "%s %s (threshold %lld, %s)", what,
                 canopy_graph_strategy_name(v->s), (long long)o.dp_threshold,
                 canopy_child_form_name(v->form));
        canopy_graph_stats st;
        if (has_source) {
            CHECK_OK(canopy_sssp(g, source, &o, gd, &st));
            CHECK_MSG(!memcmp(rd, gd, sizeof(double) * (size_t)n), "%s: sssp differs", name);
            CHECK_MSG(st.launch_fallbacks == 0, "%s: %lld launches failed", name,
                      (long long)st.launch_fallbacks);
            CHECK_OK(canopy_bfs(g, source, &o, gl, NULL));
            CHECK_MSG(!memcmp(rl, gl, sizeof(int64_t) * (size_t)n), "%s: bfs differs", name);
            CHECK_OK(canopy_bfs_rec(g, source, &o, gl, NULL));
            CHECK_MSG(!memcmp(rl, gl, sizeof(int64_t) * (size_t)n), "%s: bfs-rec differs", name);
        }
        CHECK_OK(canopy_spmv(g, x, &o, gy, &st));
        double worst = 0.0;
        for (int64_t i = 0; i < n; i++)
            worst = fmax(worst, fabs(gy[i] - ry[i]) / fmax(1.0, fabs(ry[i])));
        CHECK_MSG(worst <= 1e-12, "%s: spmv differs by %g", name, worst);
        if (v->s == CANOPY_GRAPH_NODP_SPLIT) {
            /* Rows longer than the threshold are the ones cut into chunks. */
            int64_t cut = 0;
            for (int64_t i = 0; i < n; i++)
                cut += g->row_ptr[i + 1] - g->row_ptr[i] > o.dp_threshold;
            CHECK_MSG(st.heavy_items == cut, "%s: spmv cut %lld rows, want %lld", name,
                      (long long)st.heavy_items, (long long)cut);
        }
        if (v->s >= CANOPY_GRAPH_BASIC_DP && n > 0) {
            /* Heavy rows are exactly the rows longer than the threshold. */
            int64_t heavy = 0;
            for (int64_t i = 0; i < n; i++)
                heavy += g->row_ptr[i + 1] - g->row_ptr[i] > o.dp_threshold;
            CHECK_MSG(st.heavy_items == heavy, "%s: spmv buffered %lld heavy rows, want %lld", name,
                      (long long)st.heavy_items, (long long)heavy);
            CHECK_MSG(heavy == 0 || st.child_launches > 0, "%s: %lld heavy rows, no launch", name,
                      (long long)heavy);
            if (v->s == CANOPY_GRAPH_BASIC_DP)
                CHECK_MSG(st.child_launches == heavy,
                          "%s: basic-dp made %lld launches for %lld rows", name,
                          (long long)st.child_launches, (long long)heavy);
            if (v->s == CANOPY_GRAPH_CONS_GRID)
                CHECK_MSG(st.child_launches <= 1 && st.buffer_high_water == heavy,
                          "%s: grid level made %lld launches, high water %lld", name,
                          (long long)st.child_launches, (long long)st.buffer_high_water);
        }
        CHECK_OK(canopy_pagerank(g, &o, gp, NULL));
        worst = 0.0;
        for (int64_t i = 0; i < n; i++) worst = fmax(worst, fabs(gp[i] - rp[i]));
        CHECK_MSG(worst <= 1e-6, "%s: pagerank differs by %g", name, worst);
        CHECK_OK(canopy_color(g, &o, gc, NULL));
        CHECK_MSG(colouring_valid(g, gc), "%s: colouring invalid", name);
        CHECK_MSG(!memcmp(rc, gc, sizeof(int64_t) * (size_t)n), "%s: colouring differs from CPU",
                  name);
    }
    free(rd), free(gd), free(x), free(ry), free(gy), free(rp), free(gp);
    free(rl), free(gl), free(rc), free(gc);
}

static void test_graphs(uint64_t seed) {
    canopy_csr g, w;
    char what[64];
    for (int i = 0; i < (small ? 1 : 3); i++) {
        CHECK_OK(canopy_gen_kron(small ? 7 : 10, 16, seed + (uint64_t)i, &g));
        w = weighted(&g, seed + (uint64_t)i);
        snprintf(what, sizeof what, "kron (seed %llu)", (unsigned long long)(seed + (uint64_t)i));
        check_graph(what, &w, (int64_t)(seed % (uint64_t)g.n_rows));
        canopy_csr_release(&g), canopy_csr_release(&w);
        CHECK_OK(canopy_gen_powerlaw(small ? 300 : 4000, 1, small ? 100 : 1199, 1.2318,
                                     seed + (uint64_t)i, &g));
        snprintf(what, sizeof what, "powerlaw (seed %llu)",
                 (unsigned long long)(seed + (uint64_t)i));
        check_graph(what, &g, 0);
        canopy_csr_release(&g);
    }
    g = hub_graph(small ? 300 : 5000);
    check_graph("hub", &g, 3);
    canopy_csr_release(&g);
    g = chunk_edges_graph(1100);
    canopy_csr cw = weighted(&g, seed);
    check_graph("rows at the chunk edges", &cw, 11);
    canopy_csr_release(&g), canopy_csr_release(&cw);
    g = isolated_graph(small ? 200 : 2000, seed);
    check_graph("isolated vertices", &g, 1);
    canopy_csr_release(&g);
    g = slice_edges_graph(small ? 2600 : 6000, small ? 2 : 5, small ? 1500 : 5000);
    cw = weighted(&g, seed + 1);
    check_graph("rows at the slice edges", &cw, 43);
    canopy_csr_release(&g), canopy_csr_release(&cw);
    CHECK_OK(canopy_csr_from_coo(small ? 300 : 3000, small ? 300 : 3000, 0, NULL, NULL, NULL, &g));
    check_graph("no edges", &g, 0);
    canopy_csr_release(&g);
    CHECK_OK(canopy_csr_from_coo(0, 0, 0, NULL, NULL, NULL, &g));
    check_graph("empty", &g, 0);
    canopy_csr_release(&g);
}

/* ----------------------------------------------------------------- PTSD -- */

static void check_tree(const char *what, const canopy_ptree *t, uint64_t seed) {
    const int64_t n = t->n;
    int64_t *rh = xmalloc(8 * (size_t)n), *rd = xmalloc(8 * (size_t)n);
    int64_t *gh = xmalloc(8 * (size_t)n), *gd = xmalloc(8 * (size_t)n);
    double *mass = xmalloc(8 * (size_t)n), *pos = xmalloc(24 * (size_t)n);
    double *rm = xmalloc(32 * (size_t)n), *gm = xmalloc(32 * (size_t)n);
    canopy_rng r = canopy_rng_make(seed, 5);
    for (int64_t i = 0; i < n; i++) {
        mass[i] = 0.5 + canopy_rng_uniform(&r);
        for (int j = 0; j < 3; j++) pos[3 * i + j] = canopy_rng_uniform(&r);
    }
    canopy_ptsd_strategy ref = t->depth <= 10000 ? CANOPY_PTSD_REC : CANOPY_PTSD_CREC;
    CHECK_OK(canopy_ptsd_heights(t, ref, rh, NULL));
    CHECK_OK(canopy_ptsd_descendants(t, ref, rd, NULL));
    CHECK_OK(canopy_ptsd_mass(t, mass, pos, ref, rm, NULL));
    for (int s = CANOPY_PTSD_GPU_REC; s < CANOPY_PTSD_STRATEGY_COUNT; s++) {
        const char *name = canopy_ptsd_strategy_name((canopy_ptsd_strategy)s);
        if (no_dp && s == CANOPY_PTSD_GPU_REC) continue;
        if (s == CANOPY_PTSD_GPU_REC && t->depth > 22) {
            CHECK_FAILS(canopy_ptsd_heights(t, CANOPY_PTSD_GPU_REC, gh, NULL),
                        CANOPY_ERR_UNSUPPORTED, "at most 22");
            continue;
        }
        canopy_ptsd_stats st;
        CHECK_OK(
            canopy_ptsd_run(t, CANOPY_PTSD_HEIGHTS, NULL, NULL, (canopy_ptsd_strategy)s, gh, &st));
        CHECK_MSG(!memcmp(rh, gh, 8 * (size_t)n), "%s: heights %s differ", what, name);
        CHECK_MSG(st.launches >= 1, "%s: %s counted no launch", what, name);
        if (s == CANOPY_PTSD_GPU_REC) {
            int64_t internal = 0;
            for (int64_t v = 0; v < n; v++) internal += t->child_ptr[v] != t->child_ptr[v + 1];
            /* a node launch and a tail launch per internal node below the root's host launch */
            CHECK_MSG(n == 1 || st.launches == 2 * internal,
                      "%s: gpu-rec made %lld launches, %lld internal", what, (long long)st.launches,
                      (long long)internal);
        }
        CHECK_OK(canopy_ptsd_descendants(t, (canopy_ptsd_strategy)s, gd, NULL));
        CHECK_MSG(!memcmp(rd, gd, 8 * (size_t)n), "%s: descendants %s differ", what, name);
        CHECK_OK(canopy_ptsd_mass(t, mass, pos, (canopy_ptsd_strategy)s, gm, NULL));
        double worst = 0.0;
        for (int64_t i = 0; i < 4 * n; i++)
            worst = fmax(worst, fabs(gm[i] - rm[i]) / fmax(1.0, fabs(rm[i])));
        /* Folds in child order (rec, hier, thread-mapped crec) are exact; flat and
         * block-mapped crec add in another order. */
        int exact = s == CANOPY_PTSD_GPU_REC || s == CANOPY_PTSD_GPU_HIER;
        CHECK_MSG(exact ? worst == 0.0 : worst < 1e-12, "%s: mass %s differs by %g", what, name,
                  worst);
    }
    free(rh), free(rd), free(gh), free(gd), free(mass), free(pos), free(rm), free(gm);
}

static void test_trees(uint64_t seed) {
    canopy_ptree t;
    char what[64];
    for (int i = 0; i < (small ? 1 : 3); i++) {
        uint64_t s = seed + (uint64_t)i;
        CHECK_OK(canopy_gen_ptree(small ? 5 : 8, 4, 8, 0.5, small ? 2000 : 200000, s, &t));
        snprintf(what, sizeof what, "random1-like (seed %llu)", (unsigned long long)s);
        check_tree(what, &t, s);
        canopy_ptree_release(&t);
        CHECK_OK(canopy_gen_ptree(small ? 3 : 5, 32, 64, 0.125, small ? 3000 : 300000, s, &t));
        snprintf(what, sizeof what, "random2-like (seed %llu)", (unsigned long long)s);
        check_tree(what, &t, s);
        canopy_ptree_release(&t);
    }
    int64_t one[] = {-1};
    CHECK_OK(canopy_ptree_from_parents(one, 1, &t));
    check_tree("single node", &t, seed);
    canopy_ptree_release(&t);
    /* a star (block-mapped crec level) with a chain below its last leaf */
    int64_t n = small ? 300 : 3000;
    int64_t *parent = xmalloc(8 * (size_t)(n + 40));
    parent[0] = -1;
    for (int64_t i = 1; i < n; i++) parent[i] = 0;
    for (int64_t i = n; i < n + 30; i++) parent[i] = i - 1;
    CHECK_OK(canopy_ptree_from_parents(parent, n + 30, &t));
    check_tree("star and chain (depth 32)", &t, seed);
    canopy_ptree_release(&t);
    free(parent);
}

int main(void) {
    char name[256];
    if (canopy_gpu_info(name, sizeof name, NULL) != CANOPY_OK) return check_skip("no usable GPU");
    small = getenv("CANOPY_GPU_SMALL") != NULL;
    no_dp = getenv("CANOPY_GPU_NO_DP") != NULL;
    uint64_t seed = check_seed();
    printf("GPU: %s%s\n", name, small ? " (small cases)" : "");
    test_graphs(seed);
    test_trees(seed);
    return check_finish();
}
