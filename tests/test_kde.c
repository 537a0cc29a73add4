/* SPDX-License-Identifier: MIT */
/* canopy_kde against its brute force on fresh random inputs: every kernel, exact
 * (atol = rtol = 0) and with tolerances, where the bound |p' - p| <= atol + rtol * p
 * must hold on every query; variants auto, rec and dr, one and two threads, leaf
 * sizes, d = 1 to 5, duplicates, one data point, queries equal to the data, empty
 * queries; canopy_index_kde over a kd index's tree (and its refusals). The kernel
 * norms are checked by integrating the density radially (d = 1 to 5), and bad input
 * by the messages it gets. */
#include "canopy.h"
#include "check.h"
#include "kde_cases.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void check_case(int64_t n, int64_t nq, int32_t d, int coarse, int self) {
    float *x = points(n, d, coarse), *q = self ? x : points(nq, d, coarse);
    if (self) nq = n;
    canopy_points data = canopy_points_make(x, n, d), qs = canopy_points_make(q, nq, d);
    double *want = malloc(sizeof *want * (size_t)(nq + 1));
    double *got = malloc(sizeof *got * (size_t)(nq + 1));
    const double tols[][2] = {{0.0, 0.0}, {0.0, 1e-4}, {0.0, 0.1}, {1e-3, 0.0}, {0.05, 0.05}};
    const canopy_variant vs[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_REC, CANOPY_VARIANT_DR};
    for (int k = 0; k < CANOPY_KDE_KERNEL_COUNT; k++)
        for (size_t t = 0; t < sizeof tols / sizeof *tols; t++) {
            canopy_kde_options ko = canopy_kde_options_default();
            ko.kernel = (canopy_kde_kernel)k;
            ko.bandwidth = 0.03 + 0.5 * canopy_rng_uniform(&rng);
            ko.atol = tols[t][0];
            ko.rtol = tols[t][1];
            CHECK_OK(canopy_kde_brute(data, qs, &ko, want));
            canopy_run_options o = canopy_run_options_default();
            o.variant = vs[canopy_rng_below(&rng, 3)];
            o.leaf_size = 1 + (int32_t)canopy_rng_below(&rng, 40);
            canopy_set_threads(1 + (int)canopy_rng_below(&rng, 2));
            canopy_stats st;
            CHECK_OK(canopy_kde(data, qs, &ko, &o, got, &st));
            int64_t first = 0, bad = outside(got, want, nq, ko.atol, ko.rtol, &first);
            CHECK_MSG(bad == 0,
                      "n=%lld nq=%lld d=%d coarse=%d self=%d %s h=%g atol=%g rtol=%g %s leaf "
                      "%d: %lld queries outside the bound, first %lld: %.17g want %.17g",
                      (long long)n, (long long)nq, (int)d, coarse, self,
                      canopy_kde_kernel_name(ko.kernel), ko.bandwidth, ko.atol, ko.rtol,
                      canopy_variant_name(o.variant), (int)o.leaf_size, (long long)bad,
                      (long long)first, got[first], want[first]);
        }
    canopy_set_threads(0);
    free(want);
    free(got);
    if (!self) free(q);
    free(x);
}

/* canopy_index_kde over a kd index of the data (its tree reused) against the brute
 * force: given queries and the self-query form, every kernel, with tolerances. */
static void check_index(int64_t n, int64_t nq, int32_t d, int coarse) {
    float *x = points(n, d, coarse), *q = points(nq, d, coarse);
    canopy_points data = canopy_points_make(x, n, d), qs = canopy_points_make(q, nq, d);
    double *want = malloc(sizeof *want * (size_t)(n + nq + 1));
    double *got = malloc(sizeof *got * (size_t)(n + nq + 1));
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.leaf_size = 1 + (int32_t)canopy_rng_below(&rng, 40);
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(data, &io, &ix));
    const double tols[][2] = {{0.0, 0.0}, {0.0, 1e-3}, {1e-3, 0.05}};
    for (int k = 0; k < CANOPY_KDE_KERNEL_COUNT; k++)
        for (int t = 0; t < 3; t++)
            for (int self = 0; self < 2; self++) {
                canopy_kde_options ko = canopy_kde_options_default();
                ko.kernel = (canopy_kde_kernel)k;
                ko.bandwidth = 0.03 + 0.5 * canopy_rng_uniform(&rng);
                ko.atol = tols[t][0];
                ko.rtol = tols[t][1];
                canopy_points ref = self ? data : qs;
                CHECK_OK(canopy_kde_brute(data, ref, &ko, want));
                canopy_run_options o = canopy_run_options_default();
                o.backend = CANOPY_BACKEND_CPU;
                canopy_set_threads(1 + (int)canopy_rng_below(&rng, 2));
                canopy_stats st;
                CHECK_OK(canopy_index_kde(ix, self ? canopy_points_make(NULL, 0, d) : qs, &ko, &o,
                                          got, &st));
                int64_t first = 0, bad = outside(got, want, ref.n, ko.atol, ko.rtol, &first);
                CHECK_MSG(bad == 0 && st.index_reused == 1 && st.build_seconds == 0.0,
                          "index n=%lld nq=%lld d=%d self=%d %s h=%g atol=%g rtol=%g leaf %d: "
                          "%lld queries outside the bound, first %lld: %.17g want %.17g",
                          (long long)n, (long long)ref.n, (int)d, self,
                          canopy_kde_kernel_name(ko.kernel), ko.bandwidth, ko.atol, ko.rtol,
                          (int)io.leaf_size, (long long)bad, (long long)first, got[first],
                          want[first]);
            }
    canopy_set_threads(0);
    canopy_kde_options ko = canopy_kde_options_default();
    if (d > 1)
        CHECK_FAILS(canopy_index_kde(ix, canopy_points_make(q, nq, d - 1), &ko, NULL, got, NULL),
                    CANOPY_ERR_INVALID, "dimensions");
    ko.bandwidth = 0.0;
    CHECK_FAILS(canopy_index_kde(ix, qs, &ko, NULL, got, NULL), CANOPY_ERR_INVALID, "bandwidth");
    canopy_index_free(ix);
    io = canopy_index_options_default(CANOPY_TREE_BALL);
    CHECK_OK(canopy_index_build(data, &io, &ix));
    ko = canopy_kde_options_default();
    CHECK_FAILS(canopy_index_kde(ix, qs, &ko, NULL, got, NULL), CANOPY_ERR_INVALID,
                "cannot answer");
    canopy_index_free(ix);
    free(want);
    free(got);
    free(q);
    free(x);
}

/* The density integrates to 1: one data point, queries along a ray from it, and the
 * radial integral of S_(d-1) r^(d-1) p(r) by the midpoint rule out to 40 h, where
 * every kernel's tail is negligible (S_(d-1) = 2 pi^(d/2) / Gamma(d/2), the surface
 * of the unit sphere). */
static void check_norms(int32_t d) {
    const int64_t nq = 40000;
    const double h = 0.3, step = 40.0 * h / (double)nq;
    float x[8] = {0.25f, -0.5f, 0.75f, 1.0f, 0.0f, 0.5f, 0.125f, 2.0f};
    float *g = malloc(sizeof *g * (size_t)(nq * d));
    double *ld = malloc(sizeof *ld * (size_t)nq);
    for (int64_t i = 0; i < nq; i++)
        for (int32_t j = 0; j < d; j++)
            g[i * d + j] = x[j] + (j == 0 ? (float)(step * ((double)i + 0.5)) : 0.0f);
    double surface = 2.0 * pow(3.14159265358979323846, 0.5 * d) / tgamma(0.5 * d);
    for (int k = 0; k < CANOPY_KDE_KERNEL_COUNT; k++) {
        canopy_kde_options ko = canopy_kde_options_default();
        ko.kernel = (canopy_kde_kernel)k;
        ko.bandwidth = h;
        CHECK_OK(canopy_kde(canopy_points_make(x, 1, d), canopy_points_make(g, nq, d), &ko, NULL,
                            ld, NULL));
        double total = 0.0;
        for (int64_t i = 0; i < nq; i++) {
            double r = (double)g[i * d] - (double)x[0];
            total += surface * pow(r, d - 1) * exp(ld[i]) * step;
        }
        CHECK_MSG(fabs(total - 1.0) < 2e-3, "d=%d %s: the density integrates to %.6f", (int)d,
                  canopy_kde_kernel_name(ko.kernel), total);
    }
    free(ld);
    free(g);
}

static void check_refusals(void) {
    float x[6] = {0, 0, 1, 1, 2, 2}, bad[2] = {0.0f, NAN};
    double out[3];
    canopy_points data = canopy_points_make(x, 3, 2);
    canopy_kde_options ko = canopy_kde_options_default();
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    /* without a usable GPU (this test runs on CPU machines too) the reason is named */
    canopy_status gs = canopy_kde(data, data, &ko, &o, out, NULL);
    CHECK_MSG(gs == CANOPY_OK ||
                  (gs == CANOPY_ERR_UNSUPPORTED && strstr(canopy_last_error(), "kde: ")),
              "backend gpu -> %s: %s", canopy_status_name(gs), canopy_last_error());
    /* the device entry with host arrays: refused (no module: unsupported, with the
       reason; a module: not device memory), and backend cpu before any pointer is read */
    gs = canopy_kde_device(data, data, &ko, NULL, out, NULL, NULL);
    CHECK_MSG((gs == CANOPY_ERR_UNSUPPORTED && strstr(canopy_last_error(), "CUDA")) ||
                  (gs == CANOPY_ERR_INVALID && strstr(canopy_last_error(), "device memory")),
              "kde_device on host arrays -> %s: %s", canopy_status_name(gs), canopy_last_error());
    o.backend = CANOPY_BACKEND_CPU;
    CHECK_FAILS(canopy_kde_device(data, data, &ko, &o, out, NULL, NULL), CANOPY_ERR_INVALID,
                "backend gpu or auto");
    o = canopy_run_options_default();
    o.tree = CANOPY_TREE_BALL;
    CHECK_FAILS(canopy_kde(data, data, &ko, &o, out, NULL), CANOPY_ERR_INVALID, "use kd");
    o = canopy_run_options_default();
    o.variant = CANOPY_VARIANT_SR;
    CHECK_FAILS(canopy_kde(data, data, &ko, &o, out, NULL), CANOPY_ERR_UNSUPPORTED,
                "variants rec and dr");
    CHECK_FAILS(canopy_kde(canopy_points_make(bad, 1, 2), data, &ko, NULL, out, NULL),
                CANOPY_ERR_INVALID, "kde data");
    CHECK_FAILS(canopy_kde(data, canopy_points_make(bad, 1, 2), &ko, NULL, out, NULL),
                CANOPY_ERR_INVALID, "kde queries");
    CHECK_FAILS(canopy_kde(canopy_points_make(x, 0, 2), data, &ko, NULL, out, NULL),
                CANOPY_ERR_INVALID, "no points");
    CHECK_FAILS(canopy_kde(data, canopy_points_make(x, 2, 3), &ko, NULL, out, NULL),
                CANOPY_ERR_INVALID, "2 dimensions but the queries have 3");
    const double bw[] = {0.0, -1.0, NAN, INFINITY};
    for (int i = 0; i < 4; i++) {
        ko.bandwidth = bw[i];
        CHECK_FAILS(canopy_kde(data, data, &ko, NULL, out, NULL), CANOPY_ERR_INVALID, "bandwidth");
        CHECK_FAILS(canopy_kde_brute(data, data, &ko, out), CANOPY_ERR_INVALID, "bandwidth");
    }
    ko = canopy_kde_options_default();
    ko.rtol = -1e-3;
    CHECK_FAILS(canopy_kde(data, data, &ko, NULL, out, NULL), CANOPY_ERR_INVALID, "rtol");
    ko.rtol = 0.0;
    ko.atol = NAN;
    CHECK_FAILS(canopy_kde(data, data, &ko, NULL, out, NULL), CANOPY_ERR_INVALID, "atol");
    ko = canopy_kde_options_default();
    ko.kernel = (canopy_kde_kernel)99;
    CHECK_FAILS(canopy_kde(data, data, &ko, NULL, out, NULL), CANOPY_ERR_INVALID, "kernel");
    canopy_kde_kernel k;
    CHECK_FAILS(canopy_kde_kernel_parse("gauss", &k), CANOPY_ERR_INVALID, "unknown kernel");
    for (int i = 0; i < CANOPY_KDE_KERNEL_COUNT; i++) {
        CHECK_OK(canopy_kde_kernel_parse(canopy_kde_kernel_name((canopy_kde_kernel)i), &k));
        CHECK(k == (canopy_kde_kernel)i);
    }
    /* no queries: nothing to write, not an error */
    ko = canopy_kde_options_default();
    CHECK_OK(canopy_kde(data, canopy_points_make(NULL, 0, 2), &ko, NULL, out, NULL));
}

int main(void) {
    rng = canopy_rng_make(check_seed(), 0);
    check_refusals();
    for (int32_t d = 1; d <= 5; d++) check_norms(d);
    check_case(1, 5, 2, 0, 0);
    check_case(3, 1, 1, 0, 0);
    check_case(200, 150, 1, 0, 0);
    check_case(500, 300, 2, 1, 0);
    check_case(800, 400, 3, 0, 0);
    check_case(600, 0, 3, 0, 1);
    check_case(400, 300, 5, 0, 0);
    check_case(300, 200, 3, 1, 1);
    check_index(1, 4, 2, 0);
    check_index(700, 300, 3, 0);
    check_index(400, 200, 2, 1);
    return check_finish();
}
