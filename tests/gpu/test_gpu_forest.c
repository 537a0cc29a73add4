/* SPDX-License-Identifier: MIT */
/* Every forest GPU engine x layout x mapping against the CPU scalar engine (one
 * thread, trees summed in order) on the committed framework fixtures and on random
 * forests: stumps, single-leaf trees, deep trees with full 31-slot subtrees, many
 * classes (vector leaves and one output per tree), every comparison / default
 * direction / zero-as-missing flag, NaN and zero rows, and 0 rows.
 * Without a GPU the NVRTC part still runs (the generated enc kernels must compile
 * for sm_90), then the test exits 77 (skipped, visibly).
 * CANOPY_GPU_SMALL=1: fewer rows and seeds (for compute-sanitizer). */
#include "check.h"
#include "core/device.h"
#include "forest/forest.h"
#include "forest/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const fixtures[] = {
    "xgb_binary.json", "xgb_multi.json", "xgb_reg.json",     "xgb_poisson.json", "lgb_binary.txt",
    "lgb_multi.txt",   "lgb_reg.txt",    "lgb_zero.txt",     "lgb_rf.txt",       "sk_rf_clf.json",
    "sk_et_reg.json",  "sk_gb_bin.json", "sk_gb_multi.json", "sk_gb_reg.json",
};

typedef struct config {
    canopy_forest_engine engine;
    canopy_forest_layout layout;
    int32_t depth;
} config;

static config configs[32];
static int n_configs;
static int small;

static void add(canopy_forest_engine e, canopy_forest_layout l, int32_t d) {
    configs[n_configs++] = (config){e, l, d};
}

static void make_configs(void) {
    add(CANOPY_FOREST_ENGINE_GPU_ITER, CANOPY_FOREST_LAYOUT_CSR, 0);
    for (int d = 3; d <= 5; d++) {
        add(CANOPY_FOREST_ENGINE_GPU_ITER, CANOPY_FOREST_LAYOUT_HIER, d);
        add(CANOPY_FOREST_ENGINE_GPU_ENC, CANOPY_FOREST_LAYOUT_HIER, d);
        add(CANOPY_FOREST_ENGINE_GPU_COLLAB, CANOPY_FOREST_LAYOUT_HIER, d);
    }
    for (int l = CANOPY_FOREST_LAYOUT_DF; l <= CANOPY_FOREST_LAYOUT_HYBRID; l++) {
        add(CANOPY_FOREST_ENGINE_GPU_ITER, (canopy_forest_layout)l, 0);
        add(CANOPY_FOREST_ENGINE_GPU_REN, (canopy_forest_layout)l, 0);
    }
}

/* Sums in a different order than the CPU's differ by rounding only. */
static int close_enough(double got, double want) {
    return fabs(got - want) <= 1e-9 * (fabs(want) > 1 ? fabs(want) : 1);
}

/* A class may differ only where the CPU's own scores tie to rounding. */
static int class_ok(const canopy_forest *f, const double *prob, double got, double want) {
    if (got == want) return 1;
    int32_t K = f->n_outputs;
    if (K == 1)
        return close_enough(got, want) || fabs(prob[0] - 0.5) <= 1e-9 || fabs(prob[0]) <= 1e-9;
    if (got < 0 || got >= K) return 0;
    return close_enough(prob[(int)got], prob[(int)want]);
}

/* GPU (config c, mapping m) vs the CPU reference for raw, prob and class. */
static void compare_one(const canopy_forest *f, canopy_points P, const config *c,
                        canopy_forest_mapping m, const double *ref[3], const char *what) {
    int64_t n = P.n;
    int32_t K = f->n_outputs;
    double *got = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * K);
    for (int out = 0; out < 3; out++) {
        canopy_predict_options o = canopy_predict_options_default();
        o.backend = CANOPY_BACKEND_GPU;
        o.engine = c->engine;
        o.layout = c->layout;
        o.hier_depth = c->depth;
        o.mapping = m;
        o.output = (canopy_forest_output)out;
        canopy_predict_stats st;
        canopy_status s = canopy_forest_predict(f, P, &o, got, &st);
        CHECK_MSG(s == CANOPY_OK, "%s %s/%s d=%d %s: %s", what,
                  canopy_forest_engine_name(c->engine), canopy_forest_layout_name(c->layout),
                  c->depth, canopy_forest_mapping_name(m), canopy_last_error());
        if (s) break;
        CHECK_MSG(st.backend == CANOPY_BACKEND_GPU && st.engine == c->engine,
                  "%s: stats name the wrong backend or engine", what);
        int32_t W = out == 2 ? 1 : K;
        int64_t bad = 0;
        for (int64_t r = 0; r < n; r++)
            for (int32_t k = 0; k < W; k++) {
                double g = got[r * W + k], w = ref[out][r * W + k];
                bad += out == 2 ? !class_ok(f, ref[1] + r * K, g, w) : !close_enough(g, w);
            }
        CHECK_MSG(bad == 0, "%s %s/%s d=%d %s output %s: %lld of %lld values differ from the CPU",
                  what, canopy_forest_engine_name(c->engine), canopy_forest_layout_name(c->layout),
                  c->depth, canopy_forest_mapping_name(m),
                  canopy_forest_output_name((canopy_forest_output)out), (long long)bad,
                  (long long)(n * W));
    }
    free(got);
}

static void compare_all(const canopy_forest *f, canopy_points P, const char *what) {
    int32_t K = f->n_outputs;
    size_t rows = (size_t)(P.n > 0 ? P.n : 1);
    double *ref[3];
    canopy_set_threads(1);
    for (int out = 0; out < 3; out++) {
        ref[out] = malloc(sizeof(double) * rows * K);
        canopy_predict_options o = canopy_predict_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        o.layout = CANOPY_FOREST_LAYOUT_CSR;
        o.engine = CANOPY_FOREST_ENGINE_SCALAR;
        o.output = (canopy_forest_output)out;
        CHECK_OK(canopy_forest_predict(f, P, &o, ref[out], NULL));
    }
    canopy_set_threads(0);
    for (int i = 0; i < n_configs; i++) {
        compare_one(f, P, &configs[i], CANOPY_FOREST_MAPPING_ATOMIC, (const double **)ref, what);
        compare_one(f, P, &configs[i], CANOPY_FOREST_MAPPING_ATOMIC_FREE, (const double **)ref,
                    what);
    }
    for (int out = 0; out < 3; out++) free(ref[out]);
}

/* ------------------------------------------------------------ random forests -- */

static uint64_t rng_state;
static uint32_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}
static double unif(void) {
    return rnd() / 2147483648.0;
}

/* Thresholds and data share a grid, so x == t happens and < vs <= matters. */
static float grid_value(void) {
    return (float)((int)(rnd() % 41) - 20) / 8.0f;
}

typedef struct shape {
    const char *name;
    int32_t trees, max_depth, features, outputs, classes;
    double p_split; /* chance that a node above max_depth splits */
    int vector;     /* vector leaves (else tree t feeds output t % outputs) */
} shape;

static canopy_forest *random_forest(const shape *sh) {
    canopy_forest *f = NULL;
    if (canopy_cf_forest_new(&f)) return NULL;
    f->n_features = sh->features;
    f->n_outputs = sh->outputs;
    f->n_classes = sh->classes;
    f->link = (canopy_forest_link)(rnd() % 4);
    if (sh->outputs == 1 && f->link == CANOPY_LINK_SOFTMAX) f->link = CANOPY_LINK_SIGMOID;
    f->aggregation = rnd() % 2 ? CANOPY_AGG_MEAN : CANOPY_AGG_SUM;
    double base[16];
    for (int k = 0; k < sh->outputs; k++) base[k] = unif() - 0.5;
    int32_t cap = 1 << 16;
    int32_t *depth = malloc(sizeof(int32_t) * cap), *split = malloc(sizeof(int32_t) * cap);
    canopy_status s = canopy_cf_set_base(f, base, sh->outputs);
    for (int32_t t = 0; t < sh->trees && !s; t++) {
        /* breadth-first shape: children after parents, as canopy_cf_validate wants */
        int32_t n = 1, done = 0;
        depth[0] = 0;
        int single_leaf = rnd() % 16 == 0;
        while (done < n) {
            int32_t i = done++;
            split[i] = !single_leaf && depth[i] < sh->max_depth && n + 2 <= cap &&
                       (depth[i] < 2 || unif() < sh->p_split);
            if (split[i]) {
                depth[n] = depth[n + 1] = depth[i] + 1;
                n += 2;
            }
        }
        int32_t ti;
        s = canopy_cf_add_tree(f, n, sh->vector ? -1 : t % sh->outputs, &ti);
        int32_t next = 1;
        for (int32_t i = 0; i < n && !s; i++) {
            int64_t g = f->trees[ti].first + i;
            if (split[i]) {
                f->feature[g] = (int32_t)(rnd() % (uint32_t)sh->features);
                f->threshold[g] = grid_value();
                f->left[g] = next;
                f->right[g] = next + 1;
                f->flags[g] = (uint8_t)(rnd() % 8);
                next += 2;
            } else {
                double *v;
                s = canopy_cf_leaf_values(f, ti, i, &v);
                for (int32_t k = 0; !s && k < cf_leaf_width(f, &f->trees[ti]); k++)
                    v[k] = unif() * 2 - 1;
            }
        }
    }
    free(depth);
    free(split);
    if (!s) s = canopy_cf_validate(f, "random forest");
    CHECK_OK(s);
    if (s) {
        canopy_forest_free(f);
        return NULL;
    }
    return f;
}

static float *random_rows(int64_t n, int32_t d) {
    float *X = malloc(sizeof(float) * (size_t)(n * d + 1));
    for (int64_t i = 0; i < n * d; i++) {
        uint32_t u = rnd() % 20;
        X[i] = u == 0   ? NAN
               : u == 1 ? 0.0f
               : u == 2 ? -0.0f
               : u < 12 ? grid_value()
                        : (float)(unif() * 6 - 3);
    }
    return X;
}

static void random_cases(void) {
    static const shape shapes[] = {
        {"stumps", 40, 1, 5, 1, 2, 1.0, 0},   {"binary", 70, 6, 8, 1, 2, 0.8, 0},
        {"deep", 12, 14, 10, 1, 0, 0.97, 0},  {"vector7", 33, 7, 6, 7, 7, 0.7, 1},
        {"outputs5", 45, 5, 9, 5, 5, 0.8, 0}, {"vector2", 20, 8, 4, 2, 2, 0.85, 1},
    };
    int seeds = small ? 1 : 3;
    for (int seed = 0; seed < seeds; seed++)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
            rng_state = check_seed() + 7919u * (uint64_t)seed + i;
            canopy_forest *f = random_forest(&shapes[i]);
            if (!f) continue;
            int64_t n = small ? 70 : 1000 + rnd() % 3000;
            float *X = random_rows(n, shapes[i].features);
            char what[96];
            snprintf(what, sizeof what, "random %s (seed %d)", shapes[i].name, seed);
            compare_all(f, (canopy_points){X, n, shapes[i].features, shapes[i].features}, what);
            if (seed == 0) {
                snprintf(what, sizeof what, "random %s, 0 rows", shapes[i].name);
                compare_all(f, (canopy_points){X, 0, shapes[i].features, shapes[i].features}, what);
            }
            free(X);
            canopy_forest_free(f);
        }
}

/* ren samples its bags on the first call and keeps them: later calls give the same
 * bits on the same rows, a fresh copy of the model sampling the same rows gives them
 * too, and other rows (bags sampled on different data) still match the CPU. */
static void ren_cache_case(void) {
    static const shape sh = {"ren cache", 100, 8, 10, 1, 2, 0.9, 0};
    rng_state = check_seed() + 31;
    canopy_forest *f = random_forest(&sh);
    rng_state = check_seed() + 31;
    canopy_forest *g = random_forest(&sh);
    int64_t n = small ? 300 : 5000;
    float *X1 = random_rows(n, sh.features), *X2 = random_rows(n, sh.features);
    double *a = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    double *c = malloc(sizeof(double) * (size_t)n);
    if (f && g) {
        canopy_predict_options o = canopy_predict_options_default();
        o.backend = CANOPY_BACKEND_GPU;
        o.engine = CANOPY_FOREST_ENGINE_GPU_REN;
        o.layout = CANOPY_FOREST_LAYOUT_BF;
        o.mapping = CANOPY_FOREST_MAPPING_ATOMIC_FREE;
        o.output = CANOPY_FOREST_OUTPUT_RAW;
        canopy_points P1 = {X1, n, sh.features, sh.features},
                      P2 = {X2, n, sh.features, sh.features};
        CHECK_OK(canopy_forest_predict(f, P1, &o, a, NULL));
        CHECK_OK(canopy_forest_predict(f, P1, &o, b, NULL));
        CHECK_OK(canopy_forest_predict(g, P1, &o, c, NULL));
        CHECK_MSG(memcmp(a, b, sizeof(double) * (size_t)n) == 0,
                  "ren: a second call on the same rows changed the sums");
        CHECK_MSG(memcmp(a, c, sizeof(double) * (size_t)n) == 0,
                  "ren: the cached bags differ from a fresh sample of the same rows");
        CHECK_OK(canopy_forest_predict(f, P2, &o, b, NULL));
        o.backend = CANOPY_BACKEND_CPU;
        o.engine = CANOPY_FOREST_ENGINE_SCALAR;
        CHECK_OK(canopy_forest_predict(f, P2, &o, c, NULL));
        int64_t bad = 0;
        for (int64_t r = 0; r < n; r++) bad += !close_enough(b[r], c[r]);
        CHECK_MSG(bad == 0, "ren with bags of other rows: %lld of %lld rows differ from the CPU",
                  (long long)bad, (long long)n);
    }
    free(a);
    free(b);
    free(c);
    free(X1);
    free(X2);
    canopy_forest_free(f);
    canopy_forest_free(g);
}

/* ------------------------------------------------------------------ fixtures -- */

static char data_dir[1024];

static void fixture_case(const char *file) {
    char path[1600], stem[64];
    snprintf(stem, sizeof stem, "%.60s", file);
    *strrchr(stem, '.') = '\0';
    canopy_forest *f = NULL;
    canopy_array X = {0};
    snprintf(path, sizeof path, "%s/%s", data_dir, file);
    CHECK_OK(canopy_forest_load(path, CANOPY_FOREST_FORMAT_AUTO, &f));
    snprintf(path, sizeof path, "%s/%s.X.npy", data_dir, stem);
    CHECK_OK(canopy_npy_read(path, &X));
    if (f && X.data)
        compare_all(f, (canopy_points){X.data, X.shape[0], (int32_t)X.shape[1], X.shape[1]}, stem);
    canopy_array_release(&X);
    canopy_forest_free(f);
}

/* The generated enc sources compile with NVRTC (no GPU needed). */
static void nvrtc_cases(void) {
    rng_state = check_seed();
    static const shape sh = {"nvrtc", 9, 9, 6, 3, 3, 0.9, 0};
    canopy_forest *f = random_forest(&sh);
    if (!f) return;
    for (int d = 3; d <= 5; d++)
        for (int m = CANOPY_FOREST_MAPPING_ATOMIC; m <= CANOPY_FOREST_MAPPING_ATOMIC_FREE; m++) {
            cf_layout L;
            CHECK_OK(canopy_cf_build_hier(f, d, &L));
            char *src = NULL;
            void *cubin = NULL;
            size_t size = 0;
            CHECK_OK(canopy_cf_gpu_enc_source(&L, (canopy_forest_mapping)m, &src));
            if (src) CHECK_OK(canopy_cf_gpu_nvrtc_compile(src, 90, &cubin, &size));
            CHECK_MSG(!src || size > 0, "depth %d: empty cubin", d);
            free(src);
            free(cubin);
            canopy_cf_layout_free(&L);
        }
    canopy_forest_free(f);
}

int main(void) {
    const char *e = getenv("CANOPY_GPU_SMALL");
    small = e && *e && *e != '0';
    make_configs();
    nvrtc_cases();
    if (!canopy_gpu_usable()) {
        if (check_finish() != 0) return 1;
        return check_skip("no usable CUDA device (NVRTC compile checks passed)");
    }
    /* --backend gpu refuses CPU engines and the CPU refuses GPU engines */
    {
        canopy_forest *f = NULL;
        rng_state = 1;
        static const shape sh = {"errors", 3, 3, 3, 1, 0, 0.5, 0};
        f = random_forest(&sh);
        float x[3] = {0, 0, 0};
        double y[1];
        canopy_predict_options o = canopy_predict_options_default();
        o.backend = CANOPY_BACKEND_GPU;
        o.engine = CANOPY_FOREST_ENGINE_VM;
        CHECK_FAILS(canopy_forest_predict(f, (canopy_points){x, 1, 3, 3}, &o, y, NULL),
                    CANOPY_ERR_INVALID, "runs on the CPU");
        o.backend = CANOPY_BACKEND_CPU;
        o.engine = CANOPY_FOREST_ENGINE_GPU_ENC;
        CHECK_FAILS(canopy_forest_predict(f, (canopy_points){x, 1, 3, 3}, &o, y, NULL),
                    CANOPY_ERR_INVALID, "runs on the GPU");
        o.backend = CANOPY_BACKEND_GPU;
        o.layout = CANOPY_FOREST_LAYOUT_CSR;
        CHECK_FAILS(canopy_forest_predict(f, (canopy_points){x, 1, 3, 3}, &o, y, NULL),
                    CANOPY_ERR_UNSUPPORTED, "runs the hier layout");
        o.engine = CANOPY_FOREST_ENGINE_GPU_REN;
        CHECK_FAILS(canopy_forest_predict(f, (canopy_points){x, 1, 3, 3}, &o, y, NULL),
                    CANOPY_ERR_UNSUPPORTED, "linked layouts");
        canopy_forest_free(f);
    }
    const char *d = getenv("CANOPY_TEST_DATA");
    snprintf(data_dir, sizeof data_dir, "%s/forest", d ? d : "tests/data");
    size_t nf = sizeof fixtures / sizeof fixtures[0];
    for (size_t i = 0; i < nf; i += small ? 4 : 1) fixture_case(fixtures[i]);
    random_cases();
    ren_cache_case();
    return check_finish();
}
