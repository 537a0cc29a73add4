/* SPDX-License-Identifier: MIT */
/* The GPU pair walk of canopy_paircount (variant auto, backend gpu: canopy/pair_cuda.cuh
 * with pair_count.h's descriptor) against the float64 brute force on small inputs and
 * against the CPU pair walk on large ones: auto and cross, weighted, periodic, linear
 * and log bins, 1 bin, the shared-memory histogram's largest size (4096) and the first
 * global one (4097), 10^5 bins, duplicates on a coarse grid, d = 1..5, empty and
 * one-point inputs, leaf sizes 1 to 64. CANOPY_GPU_SMALL=1 (compute-sanitizer runs):
 * the small cases only. Prints the GPU and CPU times of the largest case (not a
 * benchmark: bench/run_paircount.sh is). */
#include "canopy.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng;
static float uniform(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng >> 40) / (float)(1u << 24);
}

static float *points(int64_t n, int32_t d, int coarse) {
    float *p = malloc((size_t)(n * d + 1) * sizeof *p);
    for (int64_t i = 0; i < n * d; i++)
        p[i] = coarse ? (float)(int)(uniform() * 8.0f) : uniform() * 8.0f;
    return p;
}

static float *weights(int64_t n) {
    float *w = malloc((size_t)(n + 1) * sizeof *w);
    for (int64_t i = 0; i < n; i++) w[i] = 0.25f + uniform();
    return w;
}

static int same(const double *a, const double *b, int32_t n, int weighted, int32_t *bad) {
    for (int32_t i = 0; i < n; i++) {
        double tol = weighted ? 1e-9 * (fabs(b[i]) + 1.0) : 0.0;
        if (fabs(a[i] - b[i]) > tol) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

/* brute: the float64 brute force (small n), else the CPU pair walk on 2 threads */
static void check_case(int64_t n1, int64_t n2, int32_t d, int cross, int weighted, int periodic,
                       int log_bins, int32_t nbins, int coarse, int32_t leaf, int brute) {
    float *x1 = points(n1, d, coarse), *x2 = points(n2, d, coarse);
    float *w1 = weighted ? weights(n1) : NULL, *w2 = weighted && cross ? weights(n2) : NULL;
    canopy_points p1 = canopy_points_make(x1, n1, d);
    canopy_points p2 = cross ? canopy_points_make(x2, n2, d) : canopy_points_make(NULL, 0, d);
    canopy_paircount_options po = canopy_paircount_options_default();
    po.nbins = nbins;
    po.log_bins = log_bins;
    po.rmin = log_bins ? 0.05 : (coarse ? 0.0 : 0.01);
    po.rmax = periodic ? 4.0 : (brute ? 3.0 : 0.6);
    po.boxsize = periodic ? 8.0 : 0.0;
    double *want = calloc((size_t)nbins, sizeof *want), *got = calloc((size_t)nbins, sizeof *got);
    canopy_run_options o = canopy_run_options_default();
    canopy_stats st_cpu, st;
    double t_cpu = 0.0;
    if (brute) {
        CHECK_OK(canopy_paircount_brute(p1, w1, p2, w2, &po, want));
    } else {
        o.backend = CANOPY_BACKEND_CPU;
        canopy_set_threads(2);
        t_cpu = canopy_now();
        CHECK_OK(canopy_paircount(p1, w1, p2, w2, &po, &o, want, &st_cpu));
        t_cpu = canopy_now() - t_cpu;
        canopy_set_threads(0);
    }
    o.backend = CANOPY_BACKEND_GPU;
    o.leaf_size = leaf;
    double t = canopy_now();
    CHECK_OK(canopy_paircount(p1, w1, p2, w2, &po, &o, got, &st));
    t = canopy_now() - t;
    int32_t bad = 0;
    int ok = same(got, want, nbins, weighted, &bad);
    CHECK_MSG(ok && st.backend == CANOPY_BACKEND_GPU,
              "n1=%lld n2=%lld d=%d cross=%d w=%d box=%d log=%d nbins=%d coarse=%d leaf=%d "
              "(%s): bin %d got %.17g want %.17g [%s]",
              (long long)n1, (long long)n2, (int)d, cross, weighted, periodic, log_bins, (int)nbins,
              coarse, (int)leaf, brute ? "brute force" : "CPU pair walk", (int)bad, got[bad],
              want[bad], st.note);
    if (!brute && n1 >= 100000)
        printf("  %lld points%s: GPU %.3f s whole call (kernel %.3f s, transfers %.3f s), CPU "
               "pair walk 2 threads %.3f s; %s\n",
               (long long)n1, cross ? " (cross)" : "", t, st.traverse_seconds, st.transfer_seconds,
               t_cpu, st.note);
    free(x1);
    free(x2);
    free(w1);
    free(w2);
    free(want);
    free(got);
}

int main(void) {
    int g = check_gpu();
    if (g) return g;
    rng = check_seed();
    const char *small = getenv("CANOPY_GPU_SMALL");
    const int32_t leaves[] = {0, 1, 8, 64};
    for (int rep = 0; rep < 2; rep++) {
        int32_t leaf = leaves[rep * 2 + (int)(uniform() * 2)];
        check_case(0, 0, 3, 0, 0, 0, 0, 5, 0, leaf, 1);
        check_case(1, 0, 3, 0, 0, 0, 0, 5, 0, leaf, 1);
        check_case(0, 40, 2, 1, 1, 0, 0, 5, 0, leaf, 1);
        check_case(700, 0, 1, 0, 0, 0, 0, 12, 1, leaf, 1);
        check_case(900, 0, 3, 0, 0, 0, 1, 10, 0, leaf, 1);
        check_case(900, 0, 3, 0, 1, 0, 1, 8, 0, leaf, 1);
        check_case(800, 600, 2, 1, 0, 0, 1, 15, 1, leaf, 1);
        check_case(800, 600, 2, 1, 1, 0, 0, 1, 0, leaf, 1);
        check_case(900, 0, 3, 0, 0, 1, 0, 20, 0, leaf, 1);
        check_case(700, 500, 3, 1, 1, 1, 1, 10, 1, leaf, 1);
        check_case(800, 0, 5, 0, 0, 0, 0, 4096, 0, leaf, 1);
        check_case(800, 0, 3, 0, 1, 0, 1, 4097, 0, leaf, 1);
        check_case(1000, 0, 3, 0, 0, 1, 1, 100000, 1, leaf, 1);
    }
    if (!small) {
        check_case(200000, 0, 3, 0, 0, 0, 1, 10, 0, 0, 0);
        check_case(200000, 0, 3, 0, 0, 1, 1, 10, 0, 0, 0);
        check_case(100000, 150000, 3, 1, 1, 0, 0, 30, 0, 32, 0);
        check_case(100000, 0, 3, 0, 0, 0, 1, 1000000, 0, 0, 0);
        check_case(60000, 0, 2, 0, 1, 1, 0, 5000, 1, 16, 0);
    }
    return check_finish();
}
