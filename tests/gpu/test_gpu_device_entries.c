/* SPDX-License-Identifier: MIT */
/* The device-pointer entries of pair counts, KDE and forest prediction
 * (canopy_paircount_device, canopy_kde_device, canopy_predictor_predict_device) against
 * their host entries on the GPU backend, on fresh random inputs (several seeds, sizes,
 * dimensions): unweighted pair counts equal bit for bit, weighted within float64
 * rounding; auto and cross, periodic boxes, strided rows; log-densities within
 * float64 rounding (exact, and within the tolerance of the float64 brute force with
 * rtol); predictions of fixture models (raw, prob, class; iter and ren engines) within
 * float64 rounding. Inputs are written on a non-blocking stream the call is given (a
 * call that did not wait for it would read unwritten memory). Empty inputs, host
 * pointers, a CPU predictor, one weight array of two, non-finite and out-of-box
 * coordinates fail or succeed as documented. Exits 77 without a GPU. */
#include "canopy.h"
#include "check.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cudaStream_t stream;
/* pinned sources of copies still queued, freed at the end */
enum { MAX_PINNED = 1024 };
static void *pinned[MAX_PINNED];
static int n_pinned;

/* A device copy of bytes of host memory, queued on `stream` from pinned memory and not
 * waited for: the entries must wait for the stream themselves. */
static void *to_device(const void *h, size_t bytes) {
    void *d = NULL, *src = NULL;
    CHECK(cudaMalloc(&d, bytes ? bytes : 1) == cudaSuccess);
    if (!bytes) return d;
    if (n_pinned == MAX_PINNED) {
        CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
        return d;
    }
    CHECK(cudaMallocHost(&src, bytes) == cudaSuccess);
    memcpy(src, h, bytes);
    pinned[n_pinned++] = src;
    CHECK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, stream) == cudaSuccess);
    return d;
}

static float *random_points(canopy_rng *r, int64_t n, int32_t stride, float lo, float hi) {
    float *p = malloc(sizeof(float) * (size_t)(n * stride + 1));
    for (int64_t i = 0; i < n * stride; i++) p[i] = lo + (hi - lo) * (float)canopy_rng_uniform(r);
    return p;
}

static int close_enough(double a, double b, double rel) {
    if (a == b) return 1; /* -inf == -inf included */
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300;
}

/* ------------------------------------------------------------- pair counts -- */

static void paircount_case(uint64_t seed, int64_t n1, int64_t n2, int32_t d, int cross,
                           int weighted, int periodic, int32_t nbins, int log_bins, int strided) {
    canopy_rng r = canopy_rng_make(seed, 11);
    const float box = periodic ? 2.0f : 0.0f;
    const int32_t s1 = strided ? d + 2 : d;
    float *p1 = random_points(&r, n1, s1, 0.0f, periodic ? box : 1.0f);
    float *p2 = random_points(&r, cross ? n2 : 0, d, 0.0f, periodic ? box : 1.0f);
    float *w1 = weighted ? random_points(&r, n1, 1, 0.5f, 2.0f) : NULL;
    float *w2 = weighted && cross ? random_points(&r, n2, 1, 0.5f, 2.0f) : NULL;
    canopy_paircount_options po = canopy_paircount_options_default();
    po.nbins = nbins;
    po.log_bins = log_bins;
    po.rmin = log_bins ? 0.01 : 0.0;
    po.rmax = periodic ? 0.9 : 0.3;
    po.boxsize = box;
    canopy_points h1 = {p1, n1, d, s1}, h2 = {cross ? p2 : NULL, cross ? n2 : 0, d, d};
    double *want = calloc((size_t)nbins, sizeof(double)), *got = calloc((size_t)nbins, 8);
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    CHECK_OK(canopy_paircount(h1, w1, h2, w2, &po, &o, want, NULL));
    float *d1 = to_device(p1, sizeof(float) * (size_t)(n1 * s1));
    float *d2 = cross ? to_device(p2, sizeof(float) * (size_t)(n2 * d)) : NULL;
    float *dw1 = w1 ? to_device(w1, sizeof(float) * (size_t)n1) : NULL;
    float *dw2 = w2 ? to_device(w2, sizeof(float) * (size_t)n2) : NULL;
    canopy_points g1 = {d1, n1, d, s1}, g2 = {d2, cross ? n2 : 0, d, d};
    canopy_stats st;
    CHECK_OK(canopy_paircount_device(g1, dw1, g2, dw2, &po, NULL, got, stream, &st));
    int bad = -1;
    for (int32_t b = 0; b < nbins && bad < 0; b++)
        if (weighted ? !close_enough(got[b], want[b], 1e-9) : got[b] != want[b]) bad = b;
    CHECK_MSG(bad < 0,
              "paircount seed %llu n1=%lld n2=%lld d=%d cross=%d w=%d box=%d bins=%d log=%d "
              "strided=%d: bin %d device %.17g host %.17g",
              (unsigned long long)seed, (long long)n1, (long long)n2, (int)d, cross, weighted,
              periodic, (int)nbins, log_bins, strided, bad, bad < 0 ? 0.0 : got[bad],
              bad < 0 ? 0.0 : want[bad]);
    if (n1 > 0 && (!cross || n2 > 0))
        CHECK_MSG(st.backend == CANOPY_BACKEND_GPU, "paircount: backend %d", (int)st.backend);
    cudaFree(d1), cudaFree(d2), cudaFree(dw1), cudaFree(dw2);
    free(p1), free(p2), free(w1), free(w2), free(want), free(got);
}

static void paircount_errors(void) {
    float host[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, *dev = to_device(host, sizeof host);
    float *wdev = to_device(host, sizeof(float) * 3);
    canopy_paircount_options po = canopy_paircount_options_default();
    po.rmax = 0.5;
    double counts[10];
    canopy_points none = {NULL, 0, 2, 0};
    CHECK_FAILS(canopy_paircount_device((canopy_points){host, 3, 2, 2}, NULL, none, NULL, &po, NULL,
                                        counts, NULL, NULL),
                CANOPY_ERR_INVALID, "must be device memory");
    CHECK_FAILS(canopy_paircount_device((canopy_points){dev, 3, 2, 2}, host, none, NULL, &po, NULL,
                                        counts, NULL, NULL),
                CANOPY_ERR_INVALID, "weights1 must be device memory");
    CHECK_FAILS(canopy_paircount_device((canopy_points){dev, 3, 2, 2}, wdev,
                                        (canopy_points){dev, 3, 2, 2}, NULL, &po, NULL, counts,
                                        NULL, NULL),
                CANOPY_ERR_INVALID, "both weights1 and weights2");
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_CPU;
    CHECK_FAILS(canopy_paircount_device((canopy_points){dev, 3, 2, 2}, NULL, none, NULL, &po, &o,
                                        counts, NULL, NULL),
                CANOPY_ERR_INVALID, "backend gpu or auto");
    /* a coordinate outside the box, and a NaN, seen only on the device (their copies
       are queued on `stream`, which the call waits for) */
    po.boxsize = 1.2;
    float outside[6] = {0.1f, 0.2f, 1.5f, 0.4f, 0.5f, 0.6f}, nan_row[6] = {0.1f, NAN, 0.3f};
    float *dout = to_device(outside, sizeof outside), *dnan = to_device(nan_row, sizeof nan_row);
    CHECK_FAILS(canopy_paircount_device((canopy_points){dout, 3, 2, 2}, NULL, none, NULL, &po, NULL,
                                        counts, stream, NULL),
                CANOPY_ERR_INVALID, "outside the periodic box");
    po.boxsize = 0.0;
    CHECK_FAILS(canopy_paircount_device((canopy_points){dnan, 3, 2, 2}, NULL, none, NULL, &po, NULL,
                                        counts, stream, NULL),
                CANOPY_ERR_INVALID, "not finite");
    /* empty: every count 0, nothing read */
    for (int b = 0; b < 10; b++) counts[b] = 7.0;
    CHECK_OK(canopy_paircount_device((canopy_points){NULL, 0, 2, 2}, NULL, none, NULL, &po, NULL,
                                     counts, NULL, NULL));
    int zero = 1;
    for (int b = 0; b < po.nbins; b++) zero &= counts[b] == 0.0;
    CHECK_MSG(zero, "paircount: empty input left a non-zero count");
    cudaFree(dev), cudaFree(wdev), cudaFree(dout), cudaFree(dnan);
}

/* --------------------------------------------------------------------- kde -- */

static void kde_case(uint64_t seed, int64_t n, int64_t nq, int32_t d, canopy_kde_kernel kernel,
                     double rtol, int self) {
    canopy_rng r = canopy_rng_make(seed, 12);
    float *x = random_points(&r, n, d, 0.0f, 1.0f);
    float *q = self ? x : random_points(&r, nq, d, -0.2f, 1.2f);
    if (self) nq = n;
    canopy_kde_options ko = canopy_kde_options_default();
    ko.kernel = kernel;
    ko.bandwidth = 0.15;
    ko.rtol = rtol;
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    double *want = malloc(sizeof(double) * (size_t)(nq + 1));
    double *got = malloc(sizeof(double) * (size_t)(nq + 1));
    canopy_points hx = {x, n, d, d}, hq = {q, nq, d, d};
    if (rtol > 0.0)
        CHECK_OK(canopy_kde_brute(hx, hq, &ko, want));
    else
        CHECK_OK(canopy_kde(hx, hq, &ko, &o, want, NULL));
    float *dx = to_device(x, sizeof(float) * (size_t)(n * d));
    float *dq = self ? dx : to_device(q, sizeof(float) * (size_t)(nq * d));
    double *dout = NULL;
    CHECK(cudaMalloc((void **)&dout, sizeof(double) * (size_t)(nq + 1)) == cudaSuccess);
    canopy_stats st;
    CHECK_OK(canopy_kde_device((canopy_points){dx, n, d, d}, (canopy_points){dq, nq, d, d}, &ko,
                               NULL, dout, stream, &st));
    CHECK(cudaMemcpy(got, dout, sizeof(double) * (size_t)nq, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    int64_t bad = -1;
    for (int64_t i = 0; i < nq && bad < 0; i++) {
        /* rtol: the densities (not their logs) within rtol of the brute force's */
        int ok = rtol > 0.0 ? (isinf(want[i]) && want[i] == got[i]) ||
                                  fabs(exp(got[i] - want[i]) - 1.0) <= rtol * (1 + 1e-9)
                            : close_enough(got[i], want[i], 1e-9);
        if (!ok) bad = i;
    }
    CHECK_MSG(bad < 0,
              "kde seed %llu n=%lld nq=%lld d=%d kernel %s rtol %g self %d: query %lld device "
              "%.17g host %.17g",
              (unsigned long long)seed, (long long)n, (long long)nq, (int)d,
              canopy_kde_kernel_name(kernel), rtol, self, (long long)bad, bad < 0 ? 0.0 : got[bad],
              bad < 0 ? 0.0 : want[bad]);
    CHECK_MSG(st.backend == CANOPY_BACKEND_GPU, "kde: backend %d", (int)st.backend);
    cudaFree(dx), cudaFree(dout);
    if (!self) cudaFree(dq), free(q);
    free(x), free(want), free(got);
}

static void kde_errors(void) {
    float host[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, *dev = to_device(host, sizeof host);
    double hout[3], *dout = NULL;
    CHECK(cudaMalloc((void **)&dout, sizeof hout) == cudaSuccess);
    canopy_kde_options ko = canopy_kde_options_default();
    canopy_points dp = {dev, 3, 2, 2}, hp = {host, 3, 2, 2};
    CHECK_FAILS(canopy_kde_device(hp, dp, &ko, NULL, dout, NULL, NULL), CANOPY_ERR_INVALID,
                "data must be device memory");
    CHECK_FAILS(canopy_kde_device(dp, hp, &ko, NULL, dout, NULL, NULL), CANOPY_ERR_INVALID,
                "queries must be device memory");
    CHECK_FAILS(canopy_kde_device(dp, dp, &ko, NULL, hout, NULL, NULL), CANOPY_ERR_INVALID,
                "log_density must be device memory");
    CHECK_FAILS(canopy_kde_device((canopy_points){dev, 0, 2, 2}, dp, &ko, NULL, dout, NULL, NULL),
                CANOPY_ERR_INVALID, "no points");
    /* no queries: nothing to write, nothing checked beyond the data's shape */
    CHECK_OK(canopy_kde_device(dp, (canopy_points){NULL, 0, 2, 2}, &ko, NULL, NULL, NULL, NULL));
    cudaFree(dev), cudaFree(dout);
}

/* ----------------------------------------------------------------- forests -- */

static void predict_case(const char *dir, const char *stem, const char *ext,
                         canopy_forest_engine engine, canopy_forest_layout layout, int strided) {
    char path[1200];
    canopy_forest *f = NULL;
    canopy_array X = {0};
    snprintf(path, sizeof path, "%s/%s.%s", dir, stem, ext);
    CHECK_OK(canopy_forest_load(path, CANOPY_FOREST_FORMAT_AUTO, &f));
    snprintf(path, sizeof path, "%s/%s.X.npy", dir, stem);
    CHECK_OK(canopy_npy_read(path, &X));
    if (!f || !X.data) {
        canopy_forest_free(f);
        canopy_array_release(&X);
        return;
    }
    const int64_t n = X.shape[0];
    const int32_t d = (int32_t)X.shape[1], s = strided ? d + 3 : d;
    float *rows = malloc(sizeof(float) * (size_t)(n * s + 1));
    for (int64_t i = 0; i < n; i++)
        for (int32_t j = 0; j < s; j++) rows[i * s + j] = j < d ? ((float *)X.data)[i * d + j] : 0;
    canopy_predict_options po = canopy_predict_options_default();
    po.backend = CANOPY_BACKEND_GPU;
    po.engine = engine;
    po.layout = layout;
    canopy_predictor *p = NULL;
    CHECK_OK(canopy_predictor_compile(f, &po, &p));
    float *drows = to_device(rows, sizeof(float) * (size_t)(n * s));
    for (int k = CANOPY_FOREST_OUTPUT_RAW; p && k <= CANOPY_FOREST_OUTPUT_CLASS; k++) {
        canopy_forest_output out = (canopy_forest_output)k;
        int64_t m = n * canopy_forest_output_width(f, out);
        double *want = malloc(sizeof(double) * (size_t)(m + 1)), *got = malloc(8 * (size_t)(m + 1));
        double *dout = NULL;
        CHECK(cudaMalloc((void **)&dout, sizeof(double) * (size_t)(m + 1)) == cudaSuccess);
        CHECK_OK(canopy_predictor_predict(p, (canopy_points){rows, n, d, s}, out, want, NULL));
        CHECK_OK(canopy_predictor_predict_device(p, (canopy_points){drows, n, d, s}, out, dout,
                                                 stream, NULL));
        CHECK(cudaMemcpy(got, dout, sizeof(double) * (size_t)m, cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        int64_t bad = -1;
        for (int64_t i = 0; i < m && bad < 0; i++)
            if (!close_enough(got[i], want[i], 1e-12) && fabs(got[i] - want[i]) > 1e-12) bad = i;
        CHECK_MSG(bad < 0,
                  "predict %s engine %s layout %s output %d strided %d: value %lld "
                  "device %.17g host %.17g",
                  stem, canopy_forest_engine_name(engine), canopy_forest_layout_name(layout), k,
                  strided, (long long)bad, bad < 0 ? 0.0 : got[bad], bad < 0 ? 0.0 : want[bad]);
        cudaFree(dout);
        free(want), free(got);
    }
    /* a CPU predictor reads host rows only; host rows refused; no rows: nothing */
    canopy_predictor *cpu = NULL;
    double one = 0.0, *dout = NULL;
    CHECK(cudaMalloc((void **)&dout, sizeof(double) * 64) == cudaSuccess);
    CHECK_OK(canopy_predictor_compile(f, NULL, &cpu));
    CHECK_FAILS(canopy_predictor_predict_device(cpu, (canopy_points){drows, n, d, s},
                                                CANOPY_FOREST_OUTPUT_RAW, dout, NULL, NULL),
                CANOPY_ERR_INVALID, "compile with backend gpu");
    CHECK_FAILS(canopy_predictor_predict_device(p, (canopy_points){rows, 1, d, s},
                                                CANOPY_FOREST_OUTPUT_RAW, dout, NULL, NULL),
                CANOPY_ERR_INVALID, "X must be device memory");
    CHECK_FAILS(canopy_predictor_predict_device(p, (canopy_points){drows, 1, d, s},
                                                CANOPY_FOREST_OUTPUT_RAW, &one, NULL, NULL),
                CANOPY_ERR_INVALID, "out must be device memory");
    CHECK_OK(canopy_predictor_predict_device(p, (canopy_points){NULL, 0, d, d},
                                             CANOPY_FOREST_OUTPUT_RAW, NULL, NULL, NULL));
    cudaFree(dout);
    cudaFree(drows);
    canopy_predictor_free(cpu);
    canopy_predictor_free(p);
    canopy_forest_free(f);
    canopy_array_release(&X);
    free(rows);
}

int main(void) {
    int rc = check_gpu();
    if (rc) return rc;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    uint64_t seed = check_seed();
    for (int k = 0; k < 3; k++) {
        uint64_t s = seed + (uint64_t)k * 7919;
        paircount_case(s, 3000 + 1000 * k, 2500, 3, 0, 0, 0, 12, 0, 0);
        paircount_case(s, 2000, 3100 + k, 2, 1, 0, 0, 20, 1, k == 1);
        paircount_case(s, 2500, 1800, 3, 1, 1, 0, 8, 0, 0);
        paircount_case(s, 2200, 0, 4, 0, 1, 0, 5000, 0, 1);
        paircount_case(s, 3000, 0, 3, 0, 0, 1, 16, 0, 0);
        paircount_case(s, 60000, 0, 3, 0, 0, 0, 10, 1, 0);
        paircount_case(s, 1, 0, 3, 0, 0, 0, 4, 0, 0);
        paircount_case(s, 0, 100, 3, 1, 0, 0, 4, 0, 0);
        paircount_case(s, 100, 0, 3, 1, 0, 0, 4, 0, 0);
        kde_case(s, 4000, 3000, 3, CANOPY_KDE_GAUSSIAN, 0.0, 0);
        kde_case(s, 3000, 2000, 2, CANOPY_KDE_EPANECHNIKOV, 0.0, k == 2);
        kde_case(s, 3000, 2500, 3, CANOPY_KDE_TOPHAT, 0.0, 0);
        kde_case(s, 5000, 4000, 3, CANOPY_KDE_GAUSSIAN, 1e-3, 0);
        kde_case(s, 1, 5, 1, CANOPY_KDE_LINEAR, 0.0, 0);
    }
    paircount_errors();
    kde_errors();
    const char *data = getenv("CANOPY_TEST_DATA");
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/forest", data ? data : "tests/data");
    predict_case(dir, "xgb_multi", "json", CANOPY_FOREST_ENGINE_AUTO, CANOPY_FOREST_LAYOUT_AUTO, 0);
    predict_case(dir, "xgb_binary", "json", CANOPY_FOREST_ENGINE_AUTO, CANOPY_FOREST_LAYOUT_AUTO,
                 1);
    predict_case(dir, "lgb_reg", "txt", CANOPY_FOREST_ENGINE_GPU_REN, CANOPY_FOREST_LAYOUT_DF, 0);
    predict_case(dir, "sk_rf_clf", "json", CANOPY_FOREST_ENGINE_GPU_ITER, CANOPY_FOREST_LAYOUT_CSR,
                 1);
    cudaStreamSynchronize(stream);
    for (int i = 0; i < n_pinned; i++) cudaFreeHost(pinned[i]);
    cudaStreamDestroy(stream);
    return check_finish();
}
