// SPDX-License-Identifier: MIT
/* The CPU engines' cache blocking (predict.c, cache_blocks): forests whose nodes
 * outgrow L2 are walked in blocks of trees over spans of rows. Random forests large
 * enough to take that path, at this CPU's widest ISA, must give what a brute-force walk
 * gives (forest_isa.h) for every linked layout, walker and interpreter, and the default
 * options must give it bit for bit on one thread: the blocks change the order of work,
 * not of the sums. */
#define _POSIX_C_SOURCE 200809L
#include "forest_isa.h"

#include <stdlib.h>

/* forest_isa.h's per-ISA driver and the checks this test does not need */
static void (*const unused_helpers[])(void) = {
    (void (*)(void))fi_random, (void (*)(void))fi_fixture, (void (*)(void))forest_isa_main};

static void big_forest(uint64_t seed, int round) {
    canopy_rng g = canopy_rng_make(seed, (uint64_t)round);
    static const int64_t sizes[] = {0, 1, 129, 500, 1100};
    int64_t n = sizes[round % 5];
    /* d = 1 in one round; 1,200 trees of depth <= 8: more than the 512 KB that the
     * blocking assumes when the cache sizes are unknown (the tests' CANOPY_CALIBRATE=off) */
    int32_t nf = round == 1 ? 1 : 1 + (int32_t)canopy_rng_below(&g, 12), nt = 1200;
    int32_t K = round == 3 ? 3 : 1;
    int mean = round == 3;
    fi_tree *trees = calloc((size_t)nt, sizeof *trees);
    for (int32_t t = 0; t < nt; t++) {
        trees[t].output = K == 3 && t % 2 ? -1 : (int32_t)canopy_rng_below(&g, (uint64_t)K);
        trees[t].lt = (int)canopy_rng_below(&g, 2);
        fi_grow(&trees[t], &g, 0, 8, nf);
    }
    float *X = malloc((size_t)(n > 0 ? n : 1) * nf * sizeof *X);
    double nan_share = round % 2 ? 0.0 : 0.05;
    for (int64_t i = 0; i < n * nf; i++) {
        double u = canopy_rng_uniform(&g);
        X[i] = u < nan_share ? NAN : u < 0.7 ? (float)fi_grid(&g) : (float)(u * 2.5 - 1.2);
    }
    if (n > 10) memcpy(X + 7 * nf, X, (size_t)nf * sizeof *X); /* a duplicate row */
    double *want = fi_want(trees, nt, X, n, nf, K, mean);
    char *json = fi_json(trees, nt, nf, K, mean);
    canopy_forest *f = NULL;
    CHECK_OK(canopy_forest_load_mem(json, strlen(json), "big", CANOPY_FOREST_FORMAT_CANOPY, &f));
    if (f) {
        char what[128];
        snprintf(what, sizeof what, "big #%d (%lld rows, %d features, %d outputs)", round,
                 (long long)n, nf, K);
        canopy_points P = {X, n, nf, nf};
        fi_check_engines(f, P, K, want, what);
        /* the default options on one thread: bit for bit, through the blocked path */
        canopy_set_threads(1);
        canopy_predict_options o = canopy_predict_options_default();
        o.output = CANOPY_FOREST_OUTPUT_RAW;
        canopy_predict_stats st;
        double *got = malloc((size_t)(n > 0 ? n : 1) * K * sizeof *got);
        CHECK_OK(canopy_forest_predict(f, P, &o, got, &st));
        int trees_per_block = 0;
        const char *b = strstr(st.note, "blocks of ");
        CHECK_MSG(b && sscanf(b, "blocks of %d trees", &trees_per_block) == 1, "%s: note '%s'",
                  what, st.note);
        CHECK_MSG(trees_per_block > 0 && trees_per_block < nt, "%s: %d trees per block of %d", what,
                  trees_per_block, nt);
        /* tree groups (few rows) and means sum in another order: compared above */
        int64_t bad = 0, exact = !mean && strstr(st.note, " 1 tree group(s)") != NULL;
        for (int64_t j = 0; j < n * K && exact; j++) bad += got[j] != want[j];
        CHECK_MSG(bad == 0, "%s: %lld of %lld sums differ in bits from brute force", what,
                  (long long)bad, (long long)(n * K));
        canopy_set_threads(0);
        free(got);
    }
    canopy_forest_free(f);
    free(json);
    free(want);
    free(X);
    free(trees);
}

int main(void) {
    (void)unused_helpers;
    /* ctest sets this; set it here too, so a direct run does not block by this machine's
     * (possibly larger) measured L2 and skip the path under test */
    setenv("CANOPY_CALIBRATE", "off", 1);
    uint64_t seed = check_seed();
    for (int round = 0; round < 5; round++) big_forest(seed, round);
    return check_finish();
}
