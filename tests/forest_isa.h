/* SPDX-License-Identifier: MIT */
/* Cross-ISA checks of the forest engines that use SIMD lanes (the interpreter
 * vm_simd and the level-synchronous walker simd), shared by test_forest_avx2.c and
 * test_forest_avx512.c: at the given ISA, every linked layout x SIMD engine x
 * compaction on/off must give what a brute-force walk of the same random trees gives
 * (random shapes, ties at thresholds, NaN inputs, both comparison rules, default
 * directions, scalar and vector leaves, tails of every lane width), and on the
 * framework fixtures what the scalar engine gives. The interpreter's compaction
 * must never take more SIMD steps than its bubbles. A CPU without the ISA skips. */
#ifndef CANOPY_TEST_FOREST_ISA_H
#define CANOPY_TEST_FOREST_ISA_H

#include "check.h"
#include "core/cpu_internal.h"
#include "forest/engine.h"
#include "forest/forest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FI_MAX_NODES = 4096 };

/* One random tree in the canopy JSON schema's terms. */
typedef struct fi_tree {
    int32_t n, output;
    int lt; /* comparison "<" */
    int32_t feature[FI_MAX_NODES], left[FI_MAX_NODES], right[FI_MAX_NODES];
    double thr[FI_MAX_NODES];
    int dl[FI_MAX_NODES];
    double value[FI_MAX_NODES][3];
} fi_tree;

/* Thresholds and inputs share a grid of 8 values, so ties x == t are common. */
static double fi_grid(canopy_rng *g) {
    return (double)canopy_rng_below(g, 8) * 0.25 - 1.0;
}

static int32_t fi_grow(fi_tree *t, canopy_rng *g, int32_t d, int32_t max_depth, int32_t nf) {
    int32_t i = t->n++;
    int leaf = d >= max_depth || t->n + 2 >= FI_MAX_NODES || canopy_rng_uniform(g) < 0.15 * d;
    t->dl[i] = (int)canopy_rng_below(g, 2);
    for (int k = 0; k < 3; k++) t->value[i][k] = canopy_rng_uniform(g) * 2 - 1;
    if (leaf) {
        t->feature[i] = t->left[i] = t->right[i] = -1;
        t->thr[i] = 0;
        return i;
    }
    t->feature[i] = (int32_t)canopy_rng_below(g, (uint64_t)nf);
    t->thr[i] = fi_grid(g);
    t->left[i] = fi_grow(t, g, d + 1, max_depth, nf);
    t->right[i] = fi_grow(t, g, d + 1, max_depth, nf);
    return i;
}

/* The model's rule, written out: NaN takes the default direction; otherwise
 * x < t or x <= t (x in float, t as the importer rounds it: float32 for "<" trees
 * is what XGBoost does, but canopy JSON keeps doubles, so compare in double). */
static const double *fi_leaf(const fi_tree *t, const float *x) {
    int32_t i = 0;
    while (t->feature[i] >= 0) {
        double v = x[t->feature[i]];
        int left = isnan(v) ? t->dl[i] : t->lt ? v < t->thr[i] : v <= t->thr[i];
        i = left ? t->left[i] : t->right[i];
    }
    return t->value[i];
}

/* The raw scores by brute force (fi_json's base score 0.25 added), tree by tree in
 * order, as the engines sum them; a new array of n x K. */
static double *fi_want(const fi_tree *trees, int32_t nt, const float *X, int64_t n, int32_t nf,
                       int32_t K, int mean) {
    double *want = calloc((size_t)(n > 0 ? n : 1) * K, sizeof *want);
    for (int64_t r = 0; r < n; r++) {
        double cnt[3] = {0, 0, 0};
        for (int32_t t = 0; t < nt; t++) {
            const double *v = fi_leaf(&trees[t], X + r * nf);
            for (int32_t k = 0; k < K; k++)
                if (trees[t].output < 0 || trees[t].output == k) {
                    want[r * K + k] += trees[t].output < 0 ? v[k] : v[0];
                    cnt[k]++;
                }
        }
        for (int32_t k = 0; k < K; k++) {
            if (mean && cnt[k] > 0) want[r * K + k] /= cnt[k];
            want[r * K + k] += 0.25;
        }
    }
    return want;
}

static char *fi_json(const fi_tree *trees, int32_t nt, int32_t nf, int32_t K, int mean) {
    size_t cap = 1 << 16, len = 0;
    char *s = malloc(cap);
#define FI_PUT(...)                                                                                \
    do {                                                                                           \
        int need_ = snprintf(NULL, 0, __VA_ARGS__);                                                \
        while (len + (size_t)need_ + 1 > cap) s = realloc(s, cap *= 2);                            \
        len += (size_t)snprintf(s + len, cap - len, __VA_ARGS__);                                  \
    } while (0)
    FI_PUT("{\"format\":\"canopy-forest\",\"version\":1,\"n_features\":%d,\"n_outputs\":%d,"
           "\"aggregation\":\"%s\",\"base_score\":0.25,\"trees\":[",
           nf, K, mean ? "mean" : "sum");
    for (int32_t t = 0; t < nt; t++) {
        const fi_tree *T = &trees[t];
        FI_PUT("%s{\"output\":%d,\"comparison\":\"%s\",", t ? "," : "", T->output,
               T->lt ? "<" : "<=");
        const char *names[4] = {"feature", "left", "right", "default_left"};
        for (int a = 0; a < 4; a++) {
            FI_PUT("\"%s\":[", names[a]);
            for (int32_t i = 0; i < T->n; i++) {
                int32_t v = a == 0   ? T->feature[i]
                            : a == 1 ? T->left[i]
                            : a == 2 ? T->right[i]
                                     : T->dl[i];
                FI_PUT("%s%d", i ? "," : "", v);
            }
            FI_PUT("],");
        }
        FI_PUT("\"threshold\":[");
        for (int32_t i = 0; i < T->n; i++) FI_PUT("%s%.17g", i ? "," : "", T->thr[i]);
        FI_PUT("],\"value\":[");
        for (int32_t i = 0; i < T->n; i++) {
            if (T->output >= 0)
                FI_PUT("%s%.17g", i ? "," : "", T->value[i][0]);
            else {
                FI_PUT("%s[", i ? "," : "");
                for (int32_t k = 0; k < K; k++) FI_PUT("%s%.17g", k ? "," : "", T->value[i][k]);
                FI_PUT("]");
            }
        }
        FI_PUT("]}");
    }
    FI_PUT("]}");
#undef FI_PUT
    return s;
}

static int fi_close(double a, double b) {
    return fabs(a - b) <= 1e-9 * (fabs(b) > 1 ? fabs(b) : 1);
}

/* Runs every linked layout x engine (the scalar ones too: the random trees check
 * them against brute force as well) x compaction at `isa` against want. */
static void fi_check_engines(const canopy_forest *f, canopy_points P, int32_t K, const double *want,
                             const char *what) {
    static const canopy_forest_layout layouts[] = {
        CANOPY_FOREST_LAYOUT_DF,  CANOPY_FOREST_LAYOUT_BF, CANOPY_FOREST_LAYOUT_LL,
        CANOPY_FOREST_LAYOUT_SLL, CANOPY_FOREST_LAYOUT_CC, CANOPY_FOREST_LAYOUT_HYBRID};
    double *got = malloc((size_t)(P.n > 0 ? P.n : 1) * K * sizeof *got);
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (int e = 0; e < 5; e++) {
            canopy_predict_options o = canopy_predict_options_default();
            o.layout = layouts[l];
            o.output = CANOPY_FOREST_OUTPUT_RAW;
            static const canopy_forest_engine engines[] = {
                CANOPY_FOREST_ENGINE_VM_SIMD, CANOPY_FOREST_ENGINE_VM_SIMD,
                CANOPY_FOREST_ENGINE_SIMD, CANOPY_FOREST_ENGINE_SCALAR, CANOPY_FOREST_ENGINE_VM};
            o.engine = engines[e];
            o.compaction = e != 1;
            canopy_set_threads((int)(l % 2) + 1);
            canopy_predict_stats st;
            canopy_status s = canopy_forest_predict(f, P, &o, got, &st);
            CHECK_MSG(s == CANOPY_OK, "%s %s/%s: %s", what, canopy_forest_layout_name(o.layout),
                      canopy_forest_engine_name(o.engine), canopy_last_error());
            if (s) continue;
            canopy_isa lanes = e < 3 ? canopy_cpu_isa() : CANOPY_ISA_SCALAR;
            CHECK_MSG(st.isa == lanes, "%s: ran %s lanes, expected %s", what,
                      canopy_isa_name(st.isa), canopy_isa_name(lanes));
            int64_t bad = 0;
            for (int64_t j = 0; j < P.n * K; j++) bad += !fi_close(got[j], want[j]);
            CHECK_MSG(bad == 0, "%s %s/%s compaction=%d: %lld of %lld values differ", what,
                      canopy_forest_layout_name(o.layout), canopy_forest_engine_name(o.engine),
                      o.compaction, (long long)bad, (long long)(P.n * K));
        }
    canopy_set_threads(0);
    free(got);
}

/* The interpreter alone: compaction gives the same sums in no more SIMD steps. */
static void fi_check_compaction(const canopy_forest *f, canopy_points P, int32_t K, canopy_isa isa,
                                const char *what) {
    cf_layout L;
    cvm_program p;
    if (P.n == 0 || canopy_cf_build_linked(f, CANOPY_FOREST_LAYOUT_LL, 0, NULL, &L)) return;
    CHECK_OK(canopy_cf_vm_compile(&L, &p));
    int64_t rows = P.n < 64 ? P.n : 64;
    size_t q = (size_t)rows * f->n_trees + CVM_PAD;
    int32_t *qr = malloc(q * sizeof *qr), *qp = malloc(q * sizeof *qp);
    double *a = calloc((size_t)rows * K, sizeof *a), *b = calloc((size_t)rows * K, sizeof *b);
    int64_t on =
        canopy_cf_vm_block(&L, &p, isa, 1, P.data, P.stride, 0, rows, 0, f->n_trees, qr, qp, a);
    int64_t off =
        canopy_cf_vm_block(&L, &p, isa, 0, P.data, P.stride, 0, rows, 0, f->n_trees, qr, qp, b);
    CHECK_MSG(on <= off && on > 0, "%s: %lld steps with compaction, %lld without", what,
              (long long)on, (long long)off);
    int64_t bad = 0;
    for (int64_t j = 0; j < rows * K; j++) bad += !fi_close(a[j], b[j]);
    CHECK_MSG(bad == 0, "%s: compaction changes %lld sums", what, (long long)bad);
    free(qr);
    free(qp);
    free(a);
    free(b);
    free(p.code);
    canopy_cf_layout_free(&L);
}

static int fi_complete; /* random rounds whose rows walked complete bf trees (with or
                         * without NaN: the complete trees take missing values too) */

static void fi_random(canopy_isa isa, uint64_t seed, int round) {
    canopy_rng g = canopy_rng_make(seed, (uint64_t)round);
    static const int64_t sizes[] = {0, 1, 7, 15, 17, 33, 300, 1000};
    int64_t n = sizes[round % 8];
    int32_t nf = 1 + (int32_t)canopy_rng_below(&g, 12), nt = 1 + (int32_t)canopy_rng_below(&g, 40);
    int32_t K = round % 3 == 0 ? 3 : 1, max_depth = (int32_t)canopy_rng_below(&g, 11);
    int mean = round % 2;
    fi_tree *trees = calloc((size_t)nt, sizeof *trees);
    for (int32_t t = 0; t < nt; t++) {
        trees[t].output = K == 3 && t % 2 ? -1 : (int32_t)canopy_rng_below(&g, (uint64_t)K);
        trees[t].lt = (int)canopy_rng_below(&g, 2);
        fi_grow(&trees[t], &g, 0, max_depth, nf);
        /* every fourth round (all with NaN) every node defaults right, as XGBoost's do
         * when trained without missing values: bf's complete trees then copy no
         * negated columns */
        if (round % 4 == 0)
            for (int32_t i = 0; i < trees[t].n; i++) trees[t].dl[i] = 0;
    }
    float *X = malloc((size_t)(n > 0 ? n : 1) * nf * sizeof *X);
    /* half the rounds without NaN: the walkers' plain rule and bf's complete trees */
    double nan_share = (round / 2) % 2 ? 0.0 : 0.1;
    for (int64_t i = 0; i < n * nf; i++) {
        double u = canopy_rng_uniform(&g);
        X[i] = u < nan_share ? NAN
               : u < 0.7     ? (float)fi_grid(&g)
                             : (float)(canopy_rng_uniform(&g) * 2.5 - 1.2);
    }
    /* duplicate rows */
    if (n > 10) memcpy(X + 5 * nf, X, (size_t)nf * sizeof *X);
    double *want = fi_want(trees, nt, X, n, nf, K, mean);
    char *json = fi_json(trees, nt, nf, K, mean);
    canopy_forest *f = NULL;
    CHECK_OK(canopy_forest_load_mem(json, strlen(json), "random", CANOPY_FOREST_FORMAT_CANOPY, &f));
    if (f) {
        char what[128];
        snprintf(what, sizeof what, "random #%d (%lld rows, %d trees, depth <= %d, %d outputs)",
                 round, (long long)n, nt, max_depth, K);
        canopy_points P = {X, n, nf, nf};
        fi_check_engines(f, P, K, want, what);
        cf_layout L;
        if (!canopy_cf_build_linked(f, CANOPY_FOREST_LAYOUT_BF, 0, NULL, &L)) {
            if (!canopy_cf_build_sync(f, &L) && L.perf_nodes && n > 0) fi_complete++;
            canopy_cf_layout_free(&L);
        }
        fi_check_compaction(f, P, K, isa, what);
    }
    canopy_forest_free(f);
    free(json);
    free(want);
    free(X);
    free(trees);
}

static void fi_fixture(const char *dir, const char *file) {
    char path[1200], xpath[1200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(xpath, sizeof xpath, "%s/%.*s.X.npy", dir, (int)(strrchr(file, '.') - file), file);
    canopy_forest *f = NULL;
    canopy_array X = {0};
    CHECK_OK(canopy_forest_load(path, CANOPY_FOREST_FORMAT_AUTO, &f));
    CHECK_OK(canopy_npy_read(xpath, &X));
    if (f && X.data) {
        canopy_forest_info info;
        canopy_forest_get_info(f, &info);
        canopy_points P = {X.data, X.shape[0], (int32_t)X.shape[1], X.shape[1]};
        double *want = malloc((size_t)P.n * info.n_outputs * sizeof *want);
        canopy_predict_options o = canopy_predict_options_default();
        o.layout = CANOPY_FOREST_LAYOUT_DF;
        o.engine = CANOPY_FOREST_ENGINE_VM;
        o.output = CANOPY_FOREST_OUTPUT_RAW;
        CHECK_OK(canopy_forest_predict(f, P, &o, want, NULL));
        fi_check_engines(f, P, info.n_outputs, want, file);
        free(want);
    }
    canopy_array_release(&X);
    canopy_forest_free(f);
}

static int forest_isa_main(canopy_isa isa) {
    if (canopy_cpu_isa() < isa) {
        char why[128];
        snprintf(why, sizeof why, "this CPU (or CANOPY_ISA) gives %s, not %s",
                 canopy_isa_name(canopy_cpu_isa()), canopy_isa_name(isa));
        return check_skip(why);
    }
    canopy_cpu_isa_override(isa);
    uint64_t seed = check_seed();
    for (int round = 0; round < 24; round++) fi_random(isa, seed, round);
    CHECK_MSG(fi_complete >= 3, "only %d random rounds walked bf's complete trees", fi_complete);
    const char *d = getenv("CANOPY_TEST_DATA");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/forest", d ? d : "tests/data");
    static const char *const fixtures[] = {"xgb_binary.json", "xgb_multi.json", "lgb_binary.txt",
                                           "lgb_zero.txt",    "lgb_multi.txt",  "sk_rf_clf.json"};
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) fi_fixture(dir, fixtures[i]);
    canopy_cpu_isa_override(-1);
    return check_finish();
}

#endif
