/* SPDX-License-Identifier: MIT */
/* canopy_predictor: what "compile once, predict many" buys for small batches.
 * A synthetic 2,000-tree boosted model (canopy JSON, depth-8 trees over 28 features)
 * is predicted one row at a time three ways: canopy_forest_predict (the layout built
 * in every call), a compiled predictor, and a predictor saved and loaded back by mmap.
 * Reports medians with min-max over the repetitions (bench/results/predictor.md).
 *
 * usage: canopy-bench-predictor [trees=2000] [reps=200] [file=/tmp/canopy-bench.cpf] */
#include "bench_util.h"
#include "canopy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_FEATURES = 28, DEPTH = 8 };

/* Appends printf output to a growing buffer. */
typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;
static void put(sbuf *b, const char *s) {
    size_t l = strlen(s);
    if (b->n + l + 1 > b->cap) {
        b->cap = (b->n + l + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) exit(1);
    }
    memcpy(b->p + b->n, s, l + 1);
    b->n += l;
}

/* A complete tree of depth DEPTH in breadth-first order: node i has children 2i+1, 2i+2. */
static void tree_json(sbuf *b, canopy_rng *r, int first) {
    int nodes = (1 << (DEPTH + 1)) - 1, internal = (1 << DEPTH) - 1;
    char tmp[64];
    put(b, first ? "{\"output\":0," : ",{\"output\":0,");
    const char *keys[] = {"feature", "threshold", "left", "right", "value"};
    for (int k = 0; k < 5; k++) {
        snprintf(tmp, sizeof tmp, "%s\"%s\":[", k ? "," : "", keys[k]);
        put(b, tmp);
        for (int i = 0; i < nodes; i++) {
            int leaf = i >= internal;
            switch (k) {
            case 0:
                snprintf(tmp, sizeof tmp, "%d", leaf ? -1 : (int)canopy_rng_below(r, N_FEATURES));
                break;
            case 1:
                snprintf(tmp, sizeof tmp, "%.4f", leaf ? 0.0 : canopy_rng_uniform(r));
                break;
            case 2:
            case 3:
                snprintf(tmp, sizeof tmp, "%d", leaf ? -1 : 2 * i + (k == 2 ? 1 : 2));
                break;
            default:
                snprintf(tmp, sizeof tmp, "%.5f", leaf ? canopy_rng_uniform(r) * 0.02 - 0.01 : 0.0);
            }
            put(b, tmp);
            if (i + 1 < nodes) put(b, ",");
        }
        put(b, "]");
    }
    put(b, "}");
}

static int fail(const char *what) {
    fprintf(stderr, "bench_predictor: %s: %s\n", what, canopy_last_error());
    return 1;
}

int main(int argc, char **argv) {
    int trees = argc > 1 ? atoi(argv[1]) : 2000, reps = argc > 2 ? atoi(argv[2]) : 200;
    const char *path = argc > 3 ? argv[3] : "/tmp/canopy-bench.cpf";
    if (trees < 1 || reps < 1) return fprintf(stderr, "usage: see the source\n"), 2;
    sbuf b = {0};
    put(&b, "{\"format\":\"canopy-forest\",\"version\":1,\"n_features\":28,\"link\":\"sigmoid\","
            "\"n_classes\":2,\"trees\":[");
    canopy_rng r = canopy_rng_make(42, 0);
    for (int t = 0; t < trees; t++) tree_json(&b, &r, t == 0);
    put(&b, "]}");

    double t0 = canopy_now();
    canopy_forest *f = NULL;
    if (canopy_forest_load_mem(b.p, b.n, "synthetic", CANOPY_FOREST_FORMAT_CANOPY, &f))
        return fail("load model");
    double parse = canopy_now() - t0;
    float x[N_FEATURES];
    for (int j = 0; j < N_FEATURES; j++) x[j] = (float)canopy_rng_uniform(&r);
    canopy_points row = canopy_points_make(x, 1, N_FEATURES);
    canopy_predict_options o = canopy_predict_options_default();
    o.backend = CANOPY_BACKEND_CPU;
    o.output = CANOPY_FOREST_OUTPUT_PROB;
    double *fresh = malloc(sizeof(double) * (size_t)reps), *comp = malloc(sizeof(double) * reps),
           *loaded = malloc(sizeof(double) * reps), *load = malloc(sizeof(double) * reps);
    double want = 0, got = 0;

    for (int i = 0; i < reps; i++) {
        double s = canopy_now();
        if (canopy_forest_predict(f, row, &o, &want, NULL)) return fail("predict");
        fresh[i] = canopy_now() - s;
    }
    canopy_predictor *p = NULL;
    t0 = canopy_now();
    if (canopy_predictor_compile(f, &o, &p)) return fail("compile");
    double compile = canopy_now() - t0;
    for (int i = 0; i < reps; i++) {
        double s = canopy_now();
        if (canopy_predictor_predict(p, row, o.output, &got, NULL)) return fail("predictor");
        comp[i] = canopy_now() - s;
    }
    if (got != want) return fprintf(stderr, "bench_predictor: predictions differ\n"), 1;
    if (canopy_predictor_save(p, path)) return fail("save");
    canopy_predictor *q = NULL;
    for (int i = 0; i < reps && i < 50; i++) {
        canopy_predictor_free(q);
        double s = canopy_now();
        if (canopy_predictor_load(path, &q)) return fail("load");
        load[i] = canopy_now() - s;
    }
    for (int i = 0; i < reps; i++) {
        double s = canopy_now();
        if (canopy_predictor_predict(q, row, o.output, &got, NULL)) return fail("loaded");
        loaded[i] = canopy_now() - s;
    }
    if (got != want) return fprintf(stderr, "bench_predictor: loaded predictions differ\n"), 1;

    canopy_forest_info info;
    canopy_forest_get_info(f, &info);
    printf("model: %d trees, %lld nodes, depth %d, %d features; %d threads; %d reps\n",
           info.n_trees, (long long)info.n_nodes, info.max_depth, info.n_features, canopy_threads(),
           reps);
    printf("model JSON parse: %.2f ms; compile (layout build): %.2f ms\n", parse * 1e3,
           compile * 1e3);
    bench_summary s = bench_summarise(load, reps < 50 ? reps : 50);
    printf("predictor load (mmap + checks + layout): median %.3f ms (%.3f-%.3f)\n", s.med * 1e3,
           s.min * 1e3, s.max * 1e3);
    const char *names[3] = {"canopy_forest_predict, 1 row (layout per call)",
                            "compiled predictor, 1 row", "loaded predictor, 1 row"};
    double *v[3] = {fresh, comp, loaded};
    for (int k = 0; k < 3; k++) {
        s = bench_summarise(v[k], reps);
        printf("%-48s median %.4f ms (%.4f-%.4f)\n", names[k], s.med * 1e3, s.min * 1e3,
               s.max * 1e3);
    }
    canopy_predictor_free(q);
    canopy_predictor_free(p);
    canopy_forest_free(f);
    free(fresh);
    free(comp);
    free(loaded);
    free(load);
    free(b.p);
    remove(path);
    return 0;
}
