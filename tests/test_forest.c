/* SPDX-License-Identifier: MIT */
/* Forest inference against the frameworks' own predictions (fixtures made by
 * tests/forest/make_fixtures.py with XGBoost, LightGBM and scikit-learn), over
 * every layout x engine, plus malformed-model errors. */
#include "check.h"
#include "core/device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fixtures[] = {
    "xgb_binary.json", "xgb_multi.json", "xgb_reg.json",     "xgb_poisson.json", "lgb_binary.txt",
    "lgb_multi.txt",   "lgb_reg.txt",    "lgb_zero.txt",     "lgb_rf.txt",       "sk_rf_clf.json",
    "sk_et_reg.json",  "sk_gb_bin.json", "sk_gb_multi.json", "sk_gb_reg.json",
};

typedef struct config {
    canopy_forest_layout layout;
    canopy_forest_engine engine;
    int32_t hier_depth, switch_level, compaction;
} config;

static char data_dir[1024];

static const char *path_of(const char *name, const char *suffix) {
    static char buf[2][1600];
    static int k;
    k ^= 1;
    snprintf(buf[k], sizeof buf[k], "%s/%s%s", data_dir, name, suffix);
    return buf[k];
}

static int close_enough(double got, double want) {
    double tol = 1e-5 * (fabs(want) > 1 ? fabs(want) : 1);
    return fabs(got - want) <= tol;
}

/* Compares predictions with the framework's; returns the number of bad rows. */
static int64_t compare(const double *got, int32_t w, const canopy_array *want, int64_t n) {
    int32_t ew = want->ndim == 2 ? (int32_t)want->shape[1] : 1;
    int64_t bad = 0;
    for (int64_t r = 0; r < n; r++) {
        int ok = 1;
        for (int32_t k = 0; k < w; k++) {
            /* scikit-learn's binary predict_proba has two columns; canopy gives P(1) */
            int32_t ek = ew == w ? k : ew - 1;
            ok &= close_enough(got[r * w + k], ((double *)want->data)[r * ew + ek]);
        }
        bad += !ok;
    }
    return bad;
}

static void run_fixture(const char *file) {
    char stem[64];
    snprintf(stem, sizeof stem, "%.60s", file);
    *strrchr(stem, '.') = '\0';
    canopy_forest *f = NULL;
    canopy_array X = {0}, raw = {0}, prob = {0};
    CHECK_OK(canopy_forest_load(path_of(file, ""), CANOPY_FOREST_FORMAT_AUTO, &f));
    CHECK_OK(canopy_npy_read(path_of(stem, ".X.npy"), &X));
    CHECK_OK(canopy_npy_read(path_of(stem, ".raw.npy"), &raw));
    CHECK_OK(canopy_npy_read(path_of(stem, ".prob.npy"), &prob));
    if (!f || !X.data || !raw.data || !prob.data) goto out;
    canopy_forest_info info;
    canopy_forest_get_info(f, &info);
    int64_t n = X.shape[0];
    canopy_points P = {X.data, n, (int32_t)X.shape[1], X.shape[1]};
    int32_t K = info.n_outputs;
    double *got = malloc((size_t)n * K * sizeof *got), *first = malloc((size_t)n * K * sizeof *got);
    double *cls = malloc((size_t)n * sizeof *cls);
    config cfgs[64];
    int nc = 0;
    for (int l = CANOPY_FOREST_LAYOUT_AUTO; l < CANOPY_FOREST_LAYOUT_COUNT; l++) {
        if (l == CANOPY_FOREST_LAYOUT_HIER) {
            for (int d = 3; d <= 5; d++)
                cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_SCALAR, d, 0, 1};
            continue;
        }
        if (l == CANOPY_FOREST_LAYOUT_HYBRID) {
            for (int x = 1; x <= 3; x++) {
                cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_SCALAR, 0, x, 1};
                cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_VM_SIMD, 0, x, 1};
                cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_SIMD, 0, x, 1};
            }
            continue;
        }
        cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_SCALAR, 0, 0, 1};
        if (l == CANOPY_FOREST_LAYOUT_CSR) continue;
        cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_VM, 0, 0, 1};
        cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_VM_SIMD, 0, 0, 1};
        cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_VM_SIMD, 0, 0, 0};
        cfgs[nc++] = (config){l, CANOPY_FOREST_ENGINE_SIMD, 0, 0, 1};
    }
    /* LightGBM's raw_score of an average_output (rf) model is the unaveraged sum;
     * canopy's raw is the aggregated margin, so only prob is compared there. */
    int check_raw = strcmp(stem, "lgb_rf") != 0;
    for (int i = 0; i < nc; i++) {
        canopy_predict_options o = canopy_predict_options_default();
        o.layout = cfgs[i].layout;
        o.engine = cfgs[i].engine;
        o.hier_depth = cfgs[i].hier_depth;
        o.switch_level = cfgs[i].switch_level;
        o.compaction = cfgs[i].compaction;
        canopy_set_threads(i % 3 + 1); /* 1..3 threads: tree groups and row blocks vary */
        char what[256];
        snprintf(what, sizeof what, "%s %s/%s hier=%d x=%d compaction=%d", stem,
                 canopy_forest_layout_name(o.layout), canopy_forest_engine_name(o.engine),
                 o.hier_depth, o.switch_level, o.compaction);
        o.output = CANOPY_FOREST_OUTPUT_RAW;
        canopy_status s = canopy_forest_predict(f, P, &o, got, NULL);
        CHECK_MSG(s == CANOPY_OK, "%s raw: %s", what, canopy_last_error());
        if (s) continue;
        if (check_raw) {
            int64_t bad = compare(got, K, &raw, n);
            CHECK_MSG(bad == 0, "%s: %lld of %lld raw rows differ from the framework", what,
                      (long long)bad, (long long)n);
        }
        /* every layout x engine agrees with the first to rounding */
        if (i == 0)
            memcpy(first, got, (size_t)n * K * sizeof *got);
        else {
            int64_t diff = 0;
            for (int64_t j = 0; j < n * K; j++) diff += !close_enough(got[j], first[j]);
            CHECK_MSG(diff == 0, "%s: %lld values differ from %s", what, (long long)diff,
                      canopy_forest_layout_name(cfgs[0].layout));
        }
        o.output = CANOPY_FOREST_OUTPUT_PROB;
        s = canopy_forest_predict(f, P, &o, got, NULL);
        CHECK_MSG(s == CANOPY_OK, "%s prob: %s", what, canopy_last_error());
        if (s) continue;
        int64_t bad = compare(got, K, &prob, n);
        CHECK_MSG(bad == 0, "%s: %lld of %lld prob rows differ from the framework", what,
                  (long long)bad, (long long)n);
        if (i == 0 && info.n_classes > 0) {
            o.output = CANOPY_FOREST_OUTPUT_CLASS;
            CHECK_OK(canopy_forest_predict(f, P, &o, cls, NULL));
            int64_t wrong = 0;
            for (int64_t r = 0; r < n; r++) {
                int32_t best = 0;
                if (K == 1)
                    best = got[r] > 0.5;
                else
                    for (int32_t k = 1; k < K; k++)
                        if (got[r * K + k] > got[r * K + best]) best = k;
                wrong += cls[r] != best;
            }
            CHECK_MSG(wrong == 0, "%s: class output disagrees with prob on %lld rows", stem,
                      (long long)wrong);
        }
    }
    canopy_set_threads(0);
    free(got);
    free(first);
    free(cls);
out:
    canopy_array_release(&X);
    canopy_array_release(&raw);
    canopy_array_release(&prob);
    canopy_forest_free(f);
}

static canopy_status load_text(const char *text, canopy_forest_format fmt) {
    canopy_forest *f = NULL;
    canopy_status s = canopy_forest_load_mem(text, strlen(text), "m", fmt, &f);
    canopy_forest_free(f);
    return s;
}

/* Reads a fixture, applies a substitution, loads the result from memory. */
static canopy_status load_edited(const char *file, const char *from, const char *to,
                                 size_t truncate_at) {
    FILE *fp = fopen(path_of(file, ""), "rb");
    if (!fp) return canopy_fail(CANOPY_ERR_IO, "cannot open %s", file);
    static char buf[1 << 20], out[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = '\0';
    if (truncate_at) buf[truncate_at < n ? truncate_at : n] = '\0';
    char *p = from ? strstr(buf, from) : NULL;
    if (from && !p) return canopy_fail(CANOPY_ERR_INTERNAL, "'%s' not in %s", from, file);
    if (p) {
        size_t pre = (size_t)(p - buf);
        snprintf(out, sizeof out, "%.*s%s%s", (int)pre, buf, to, p + strlen(from));
    } else
        snprintf(out, sizeof out, "%s", buf);
    canopy_forest *f = NULL;
    canopy_status s = canopy_forest_load_mem(out, strlen(out), file, CANOPY_FOREST_FORMAT_AUTO, &f);
    canopy_forest_free(f);
    return s;
}

static void malformed(void) {
    CHECK_FAILS(load_text("", CANOPY_FOREST_FORMAT_AUTO), CANOPY_ERR_FORMAT, "not a recognised");
    CHECK_FAILS(load_text("hello", CANOPY_FOREST_FORMAT_AUTO), CANOPY_ERR_FORMAT,
                "not a recognised");
    CHECK_FAILS(load_edited("xgb_binary.json", NULL, NULL, 3000), CANOPY_ERR_FORMAT,
                "truncated JSON");
    CHECK_FAILS(load_edited("xgb_binary.json", "\"learner_model_param\"", "\"lmp\"", 0),
                CANOPY_ERR_FORMAT, "learner_model_param");
    CHECK_FAILS(load_edited("xgb_binary.json", "\"split_conditions\"", "\"sc\"", 0),
                CANOPY_ERR_FORMAT, "split_conditions");
    CHECK_FAILS(load_edited("xgb_binary.json", "\"split_type\":[0", "\"split_type\":[1", 0),
                CANOPY_ERR_UNSUPPORTED, "categorical split on feature");
    CHECK_FAILS(load_edited("xgb_binary.json", "binary:logistic", "survival:cox", 0),
                CANOPY_ERR_UNSUPPORTED, "survival:cox");
    CHECK_FAILS(load_edited("xgb_binary.json", "\"gbtree\"", "\"gblinear\"", 0),
                CANOPY_ERR_UNSUPPORTED, "gblinear");
    CHECK_FAILS(load_edited("lgb_binary.txt", "decision_type=8 ", "decision_type=9 ", 0),
                CANOPY_ERR_UNSUPPORTED, "categorical split on feature");
    CHECK_FAILS(load_edited("lgb_binary.txt", "end of trees", "", 0), CANOPY_ERR_FORMAT,
                "truncated");
    CHECK_FAILS(load_edited("lgb_binary.txt", "is_linear=0", "is_linear=1", 0),
                CANOPY_ERR_UNSUPPORTED, "linear tree");
    CHECK_FAILS(load_edited("lgb_binary.txt", "\nleaf_value=", "\nleaf_valu=", 0),
                CANOPY_ERR_FORMAT, "leaf_value");
    /* canopy JSON: structure errors */
    const char *head = "{\"format\":\"canopy-forest\",\"version\":1,\"n_features\":2,";
    char m[1024];
    snprintf(m, sizeof m,
             "%s\"trees\":[{\"output\":0,\"feature\":[0,-1,-1],\"threshold\":[0.5,0,0],"
             "\"left\":[1,-1,-1],\"right\":[2,-1,-1],\"value\":[0,1,2]}]}",
             head);
    canopy_forest *f = NULL;
    CHECK_OK(canopy_forest_load_mem(m, strlen(m), "ok", CANOPY_FOREST_FORMAT_AUTO, &f));
    if (f) {
        /* x <= 0.5 goes left (1), NaN goes right (2) without default_left */
        float X[6] = {0.5f, 0, 0.75f, 0, NAN, 0};
        double y[3];
        canopy_points P = {X, 3, 2, 2};
        CHECK_OK(canopy_forest_predict(f, P, NULL, y, NULL));
        CHECK(y[0] == 1 && y[1] == 2 && y[2] == 2);
        canopy_predict_options o = canopy_predict_options_default();
        o.backend = CANOPY_BACKEND_GPU;
        if (!canopy_gpu_usable())
            CHECK_FAILS(canopy_forest_predict(f, P, &o, y, NULL), CANOPY_ERR_UNSUPPORTED,
                        "use --backend cpu");
        o = canopy_predict_options_default();
        o.layout = CANOPY_FOREST_LAYOUT_CSR;
        o.engine = CANOPY_FOREST_ENGINE_VM;
        CHECK_FAILS(canopy_forest_predict(f, P, &o, y, NULL), CANOPY_ERR_UNSUPPORTED, "csr");
        o.engine = CANOPY_FOREST_ENGINE_SIMD;
        CHECK_FAILS(canopy_forest_predict(f, P, &o, y, NULL), CANOPY_ERR_UNSUPPORTED, "csr");
        P.d = 3;
        P.stride = 3;
        CHECK_FAILS(canopy_forest_predict(f, P, NULL, y, NULL), CANOPY_ERR_INVALID, "columns");
        canopy_forest_free(f);
    }
    snprintf(m, sizeof m,
             "%s\"trees\":[{\"output\":0,\"feature\":[0,-1,-1],\"threshold\":[0.5,0,0],"
             "\"left\":[1,-1,-1],\"right\":[0,-1,-1],\"value\":[0,1,2]}]}",
             head);
    CHECK_FAILS(load_text(m, CANOPY_FOREST_FORMAT_AUTO), CANOPY_ERR_FORMAT, "bad child");
    snprintf(m, sizeof m,
             "%s\"trees\":[{\"output\":0,\"feature\":[7,-1,-1],\"threshold\":[0.5,0,0],"
             "\"left\":[1,-1,-1],\"right\":[2,-1,-1],\"value\":[0,1,2]}]}",
             head);
    CHECK_FAILS(load_text(m, CANOPY_FOREST_FORMAT_AUTO), CANOPY_ERR_FORMAT, "bad feature");
    snprintf(m, sizeof m,
             "%s\"trees\":[{\"output\":0,\"feature\":[0,-1,-1],\"threshold\":[0.5,0,0],"
             "\"right\":[2,-1,-1],\"value\":[0,1,2]}]}",
             head);
    CHECK_FAILS(load_text(m, CANOPY_FOREST_FORMAT_AUTO), CANOPY_ERR_FORMAT, "\"left\"");
    CHECK_FAILS(canopy_forest_load("/nonexistent/m.json", CANOPY_FOREST_FORMAT_AUTO, &f),
                CANOPY_ERR_IO, "/nonexistent/m.json");
}

int main(void) {
    const char *d = getenv("CANOPY_TEST_DATA");
    snprintf(data_dir, sizeof data_dir, "%s/forest", d ? d : "tests/data");
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) run_fixture(fixtures[i]);
    malformed();
    return check_finish();
}
