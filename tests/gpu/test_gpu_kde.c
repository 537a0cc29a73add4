/* SPDX-License-Identifier: MIT */
/* canopy_kde on the GPU (backend gpu: canopy/pair_cuda.cuh with kde_pair.h's
 * descriptor) against canopy_kde_brute on fresh random inputs: every kernel, exact
 * (atol = rtol = 0) and with tolerances, the bound |p' - p| <= atol + rtol * p checked
 * on every query; one data point, one query, d = 1 to 5, duplicates on a coarse grid,
 * leaf sizes 1 to 64, queries equal to the data, a kd canopy_index's tree. Large
 * cases against the CPU walk (each within rtol of the exact density, so within
 * 2 rtol of each other), and backend auto taking the GPU for them. CANOPY_GPU_SMALL=1
 * (compute-sanitizer runs): the small cases only. Prints the GPU and CPU times of the
 * 200k case (not a benchmark: bench/run_kde.sh is). */
#include "canopy.h"
#include "check.h"
#include "kde_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Every kernel and tolerance on the GPU against the brute force; index: through a kd
 * canopy_index of the data (host residency) instead of canopy_kde. */
static void check_case(int64_t n, int64_t nq, int32_t d, int coarse, int self, int index) {
    float *x = points(n, d, coarse), *q = self ? x : points(nq, d, coarse);
    if (self) nq = n;
    canopy_points data = canopy_points_make(x, n, d), qs = canopy_points_make(q, nq, d);
    double *want = malloc(sizeof *want * (size_t)(nq + 1));
    double *got = malloc(sizeof *got * (size_t)(nq + 1));
    const double tols[][2] = {{0.0, 0.0}, {0.0, 1e-4}, {0.0, 0.1}, {1e-3, 0.0}, {0.05, 0.05}};
    const int32_t leaves[] = {1, 8, 32, 64};
    canopy_index *ix = NULL;
    if (index) {
        canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
        io.leaf_size = leaves[canopy_rng_below(&rng, 4)];
        CHECK_OK(canopy_index_build(data, &io, &ix));
    }
    for (int k = 0; k < CANOPY_KDE_KERNEL_COUNT; k++)
        for (size_t t = 0; t < sizeof tols / sizeof *tols; t++) {
            canopy_kde_options ko = canopy_kde_options_default();
            ko.kernel = (canopy_kde_kernel)k;
            ko.bandwidth = 0.03 + 0.5 * canopy_rng_uniform(&rng);
            ko.atol = tols[t][0];
            ko.rtol = tols[t][1];
            CHECK_OK(canopy_kde_brute(data, qs, &ko, want));
            canopy_run_options o = canopy_run_options_default();
            o.backend = CANOPY_BACKEND_GPU;
            o.leaf_size = leaves[canopy_rng_below(&rng, 4)];
            canopy_stats st;
            if (ix)
                CHECK_OK(canopy_index_kde(ix, self ? canopy_points_make(NULL, 0, d) : qs, &ko, &o,
                                          got, &st));
            else
                CHECK_OK(canopy_kde(data, qs, &ko, &o, got, &st));
            int64_t first = 0, bad = outside(got, want, nq, ko.atol, ko.rtol, &first);
            CHECK_MSG(bad == 0 && st.backend == CANOPY_BACKEND_GPU,
                      "n=%lld nq=%lld d=%d coarse=%d self=%d index=%d %s h=%g atol=%g rtol=%g "
                      "leaf %d: backend %s, %lld queries outside the bound, first %lld: %.17g "
                      "want %.17g",
                      (long long)n, (long long)nq, (int)d, coarse, self, index,
                      canopy_kde_kernel_name(ko.kernel), ko.bandwidth, ko.atol, ko.rtol,
                      (int)o.leaf_size, canopy_backend_name(st.backend), (long long)bad,
                      (long long)first, got[first], want[first]);
        }
    canopy_index_free(ix);
    free(want);
    free(got);
    if (!self) free(q);
    free(x);
}

/* n data points and nq queries, uniform in the unit cube: the GPU (backend auto, which
 * must pick it) against the CPU walk on all cores, rtol 1e-4. */
static void check_large(int64_t n, int64_t nq, int32_t d, canopy_kde_kernel kernel, double h) {
    float *x = points(n, d, 0), *q = points(nq, d, 0);
    canopy_points data = canopy_points_make(x, n, d), qs = canopy_points_make(q, nq, d);
    double *want = malloc(sizeof *want * (size_t)nq), *got = malloc(sizeof *got * (size_t)nq);
    canopy_kde_options ko = canopy_kde_options_default();
    ko.kernel = kernel;
    ko.bandwidth = h;
    ko.rtol = 1e-4;
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_CPU;
    canopy_stats st_cpu, st;
    double t_cpu = canopy_now();
    CHECK_OK(canopy_kde(data, qs, &ko, &o, want, &st_cpu));
    t_cpu = canopy_now() - t_cpu;
    o.backend = CANOPY_BACKEND_AUTO;
    double t = canopy_now();
    CHECK_OK(canopy_kde(data, qs, &ko, &o, got, &st));
    t = canopy_now() - t;
    /* p_cpu >= (1 - rtol) p, so 2 rtol p <= 2.001 rtol p_cpu */
    int64_t first = 0, bad = outside(got, want, nq, 0.0, 2.001 * ko.rtol, &first);
    CHECK_MSG(bad == 0 && st.backend == CANOPY_BACKEND_GPU,
              "large n=%lld nq=%lld d=%d %s: backend %s (%s), %lld queries differ by more than "
              "2 rtol, first %lld: %.17g CPU %.17g",
              (long long)n, (long long)nq, (int)d, canopy_kde_kernel_name(kernel),
              canopy_backend_name(st.backend), st.note, (long long)bad, (long long)first,
              got[first], want[first]);
    printf("  %lld + %lld points, d %d, %s h %g rtol 1e-4: GPU %.3f s whole call (walks %.3f s, "
           "transfers %.3f s, builds %.3f s), CPU %d threads %.3f s; %s\n",
           (long long)n, (long long)nq, (int)d, canopy_kde_kernel_name(kernel), h, t,
           st.traverse_seconds, st.transfer_seconds, st.build_seconds, canopy_threads(), t_cpu,
           st.note);
    free(want);
    free(got);
    free(q);
    free(x);
}

int main(void) {
    int g = check_gpu();
    if (g) return g;
    rng = canopy_rng_make(check_seed(), 0);
    const char *small = getenv("CANOPY_GPU_SMALL");
    for (int rep = 0; rep < (small ? 1 : 2); rep++) {
        check_case(1, 5, 2, 0, 0, 0);
        check_case(3, 1, 1, 0, 0, 0);
        check_case(1, 1, 3, 0, 0, 1);
        check_case(200, 150, 1, 0, 0, 0);
        check_case(500, 300, 2, 1, 0, 0);
        check_case(800, 400, 3, 0, 0, 0);
        check_case(600, 0, 3, 0, 1, 1);
        check_case(400, 300, 5, 0, 0, 1);
        check_case(300, 200, 3, 1, 1, 0);
        if (!small) check_case(4000, 3000, 3, 0, 0, 0);
    }
    if (!small) {
        check_large(200000, 200000, 3, CANOPY_KDE_GAUSSIAN, 0.05);
        check_large(100000, 60000, 2, CANOPY_KDE_EPANECHNIKOV, 0.02);
        check_large(60000, 80000, 4, CANOPY_KDE_EXPONENTIAL, 0.1);
    }
    return check_finish();
}
