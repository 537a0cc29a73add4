/* SPDX-License-Identifier: MIT */
/* canopy_predictor: compiled once, it predicts exactly what canopy_forest_predict does
 * (every output kind, several layouts and engines) on every shipped model in
 * tests/data/forest; saved and loaded back (mmap) it predicts the same; bad files are
 * rejected naming the file and the problem. */
#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*len + 1);
    *len = fread(b, 1, *len, f);
    fclose(f);
    return b;
}

/* Predictions of p equal canopy_forest_predict(f, opt) for every output kind. */
static void same(const canopy_forest *f, const canopy_predict_options *opt,
                 const canopy_predictor *p, canopy_points X, const char *what) {
    for (int out = CANOPY_FOREST_OUTPUT_RAW; out <= CANOPY_FOREST_OUTPUT_CLASS; out++) {
        int32_t W = canopy_forest_output_width(f, (canopy_forest_output)out);
        size_t sz = (size_t)(X.n > 0 ? X.n : 1) * (size_t)W;
        double *a = calloc(sz, sizeof *a), *b = calloc(sz, sizeof *b);
        canopy_predict_options o = *opt;
        o.output = (canopy_forest_output)out;
        canopy_predict_stats st;
        CHECK_OK(canopy_forest_predict(f, X, &o, a, NULL));
        CHECK_OK(canopy_predictor_predict(p, X, (canopy_forest_output)out, b, &st));
        CHECK_MSG(memcmp(a, b, sz * sizeof *a) == 0, "%s output %s: predictor == predict", what,
                  canopy_forest_output_name((canopy_forest_output)out));
        CHECK_MSG(st.build_seconds == 0.0, "%s: no layout build per call", what);
        free(a);
        free(b);
    }
}

static void one_model(const char *dir, const char *name) {
    char path[2048], xpath[2048], what[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    const char *dot = strrchr(name, '.');
    snprintf(xpath, sizeof xpath, "%s/%.*s.X.npy", dir, (int)(dot - name), name);
    canopy_forest *f = NULL;
    canopy_array X = {0};
    CHECK_OK(canopy_forest_load(path, CANOPY_FOREST_FORMAT_AUTO, &f));
    CHECK_OK(canopy_npy_read(xpath, &X));
    if (!f || !X.data) goto done;
    CHECK_OK(canopy_array_convert(&X, CANOPY_F32));
    canopy_points P = {X.data, X.shape[0], (int32_t)(X.ndim == 2 ? X.shape[1] : 1), 0};
    P.stride = P.d;
    canopy_predict_options opts[4];
    for (int i = 0; i < 4; i++) {
        opts[i] = canopy_predict_options_default();
        opts[i].backend = CANOPY_BACKEND_CPU;
    }
    opts[1].layout = CANOPY_FOREST_LAYOUT_CSR;
    opts[2].layout = CANOPY_FOREST_LAYOUT_HIER;
    opts[3].engine = CANOPY_FOREST_ENGINE_VM_SIMD;
    for (int i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "%s option set %d", name, i);
        canopy_predictor *p = NULL, *q = NULL;
        CHECK_OK(canopy_predictor_compile(f, &opts[i], &p));
        if (!p) continue;
        same(f, &opts[i], p, P, what);
        const char *cpf = check_tmp_path("m.cpf");
        CHECK_OK(canopy_predictor_save(p, cpf));
        CHECK_OK(canopy_predictor_load(cpf, &q));
        if (q) {
            snprintf(what, sizeof what, "%s option set %d, loaded", name, i);
            same(f, &opts[i], q, P, what);
            canopy_forest_info a, b;
            canopy_forest_get_info(f, &a);
            canopy_forest_get_info(canopy_predictor_forest(q), &b);
            CHECK(a.n_trees == b.n_trees && a.n_nodes == b.n_nodes &&
                  strcmp(a.objective, b.objective) == 0 && a.link == b.link);
            canopy_points wrong = P;
            wrong.d = P.d + 1;
            wrong.stride = wrong.d;
            wrong.n = P.n / 2;
            double out[8];
            CHECK_FAILS(canopy_predictor_predict(q, wrong, CANOPY_FOREST_OUTPUT_RAW, out, NULL),
                        CANOPY_ERR_INVALID, "columns");
        }
        canopy_predictor_free(q);
        canopy_predictor_free(p);
    }
done:
    canopy_array_release(&X);
    canopy_forest_free(f);
}

static void bad_files(const char *dir) {
    char path[2048];
    snprintf(path, sizeof path, "%s/lgb_multi.txt", dir);
    canopy_forest *f = NULL;
    canopy_predictor *p = NULL, *q = NULL;
    CHECK_OK(canopy_forest_load(path, CANOPY_FOREST_FORMAT_AUTO, &f));
    if (!f) return;
    CHECK_OK(canopy_predictor_compile(f, NULL, &p));
    const char *cpf = check_tmp_path("bad.cpf");
    CHECK_OK(canopy_predictor_save(p, cpf));
    size_t len = 0;
    unsigned char *b = slurp(cpf, &len);
    CHECK_OK(canopy_predictor_load_mem(b, len, "good.cpf", &q));
    canopy_predictor_free(q);
    CHECK_FAILS(canopy_predictor_load_mem(b, len - 1, "short.cpf", &q), CANOPY_ERR_FORMAT,
                "short.cpf: truncated");
    unsigned char *c = malloc(len);
    memcpy(c, b, len);
    c[len / 2] ^= 1;
    CHECK_FAILS(canopy_predictor_load_mem(c, len, "flip.cpf", &q), CANOPY_ERR_FORMAT, "checksum");
    memcpy(c, b, len);
    c[12] = 2;
    CHECK_FAILS(canopy_predictor_load_mem(c, len, "v2.cpf", &q), CANOPY_ERR_FORMAT, "version 2");
    memcpy(c, b, len);
    for (int i = 0; i < 4; i++) c[8 + i] = b[11 - i];
    CHECK_FAILS(canopy_predictor_load_mem(c, len, "be.cpf", &q), CANOPY_ERR_FORMAT, "byte order");
    /* an index file is not a predictor */
    float pts[6] = {0, 1, 2, 3, 4, 5};
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(canopy_points_make(pts, 3, 2), NULL, &ix));
    const char *idx = check_tmp_path("x.idx");
    CHECK_OK(canopy_index_save(ix, idx));
    canopy_index_free(ix);
    CHECK_FAILS(canopy_predictor_load(idx, &q), CANOPY_ERR_FORMAT, "not a CNPYCPF1 file");
    CHECK(q == NULL);
    /* device rows need a GPU predictor: a CPU one refuses them before reading anything */
    double out = 7.0;
    CHECK_FAILS(canopy_predictor_predict_device(p, canopy_points_make(pts, 1, 2),
                                                CANOPY_FOREST_OUTPUT_RAW, &out, NULL, NULL),
                CANOPY_ERR_INVALID, "compile with backend gpu");
    CHECK(out == 7.0);
    free(c);
    free(b);
    canopy_predictor_free(p);
    canopy_forest_free(f);
}

int main(void) {
    const char *data = getenv("CANOPY_TEST_DATA");
    if (!data) return check_skip("CANOPY_TEST_DATA not set");
    char dir[1024];
    if ((size_t)snprintf(dir, sizeof dir, "%s/forest", data) >= sizeof dir)
        return check_skip("CANOPY_TEST_DATA too long");
    DIR *d = opendir(dir);
    if (!d) return check_skip("no tests/data/forest");
    int models = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        int model = (n > 5 && strcmp(e->d_name + n - 5, ".json") == 0) ||
                    (n > 4 && strcmp(e->d_name + n - 4, ".txt") == 0);
        if (!model) continue;
        one_model(dir, e->d_name);
        models++;
    }
    closedir(d);
    CHECK_MSG(models >= 10, "%d shipped models found", models);
    bad_files(dir);
    return check_finish();
}
