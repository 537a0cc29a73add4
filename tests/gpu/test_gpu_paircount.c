/* SPDX-License-Identifier: MIT */
/* The GPU pair walk of canopy_paircount (variant auto, backend gpu: canopy/pair_cuda.cuh
 * with pair_count.h's descriptor) against the float64 brute force on small inputs and
 * against the CPU pair walk on large ones: auto and cross, weighted, periodic, linear
 * and log bins, 1 bin, the per-lane counters (up to 32 unweighted bins) and their
 * flush, the shared-memory histogram's largest size (4096) and the first global one
 * (4097), 10^5 bins, duplicates on a coarse grid, dense lumps, d = 1..5, empty and
 * one-point inputs, leaf sizes 1 to 64 and 2048 to 100000. Every case runs each
 * lane-counter kernel (CANOPY_PAIRCOUNT_GPU_KERNEL columns; regs: d = 3 windows of at
 * most 6 edges in registers, b's points by shuffles; staged4: b's points through shared
 * memory and two of a's points a lane) on device frontiers of 1, 4 and 1024 node pairs
 * a warp (CANOPY_PAIRCOUNT_GPU_TASKS; 1024 expands small inputs down to their leaf
 * pairs). Periodic cases cover both forms of the minimum image: leaf pairs whose axes are
 * each direct or wrapped (the affine kernel bodies) and leaves wide enough to straddle
 * half the box (the minimum-image form). CANOPY_GPU_SMALL=1 (compute-sanitizer runs): the small
 * cases only, the first three runs. Prints the GPU phases and CPU times of the largest cases (not a
 * benchmark: bench/run_paircount.sh is). */
#define _POSIX_C_SOURCE 200809L
#include "canopy.h"
#include "check.h"
#include "paircount_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Squeezes coordinates in [0, 8) into lumps of side 0.1 at the even integers: 64 dense
 * clusters in 3-D, most pairs of a lump in its few smallest bins. */
static void lumps(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) x[i] = 2.0f * floorf(x[i] / 2.0f) + fmodf(x[i], 2.0f) * 0.05f;
}

/* brute: the float64 brute force (small n), else the CPU pair walk on 2 threads;
 * coarse 2: lumps instead of the grid */
static void check_case(int64_t n1, int64_t n2, int32_t d, int cross, int weighted, int periodic,
                       int log_bins, int32_t nbins, int coarse, int32_t leaf, int brute) {
    pc_case c = pc_case_make(n1, n2, d, cross, weighted, periodic, log_bins, nbins, coarse == 1);
    if (coarse == 2) {
        lumps(c.x1, n1 * d);
        lumps(c.x2, n2 * d);
    }
    canopy_paircount_options po = c.po;
    po.rmin = log_bins ? 0.05 : (coarse ? 0.0 : 0.01);
    po.rmax = periodic ? 4.0 : (brute ? 3.0 : 0.6);
    canopy_points p1 = c.p1, p2 = c.p2;
    const float *w1 = c.w1, *w2 = c.w2;
    double *want = c.want, *got = c.got;
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
    static const char *const kernels[] = {"columns", "regs", "staged4", "staged4", "staged4"};
    static const char *const tasks[] = {"4", "1024", "4", "1", "1024"};
    const int runs = getenv("CANOPY_GPU_SMALL") ? 3 : 5;
    for (int run = 0; run < runs; run++) {
        setenv("CANOPY_PAIRCOUNT_GPU_KERNEL", kernels[run], 1);
        setenv("CANOPY_PAIRCOUNT_GPU_TASKS", tasks[run], 1);
        double t = canopy_now();
        CHECK_OK(canopy_paircount(p1, w1, p2, w2, &po, &o, got, &st));
        t = canopy_now() - t;
        int32_t bad = 0;
        int ok = same(got, want, nbins, weighted, &bad);
        CHECK_MSG(ok && st.backend == CANOPY_BACKEND_GPU,
                  "n1=%lld n2=%lld d=%d cross=%d w=%d box=%d log=%d nbins=%d coarse=%d leaf=%d "
                  "kernel=%s run=%d (%s): bin %d got %.17g want %.17g [%s]",
                  (long long)n1, (long long)n2, (int)d, cross, weighted, periodic, log_bins,
                  (int)nbins, coarse, (int)leaf, kernels[run], run,
                  brute ? "brute force" : "CPU pair walk", (int)bad, got[bad], want[bad], st.note);
        if (!brute && n1 >= 100000)
            printf("  %lld points%s, kernel %s, tasks %s: GPU %.3f s whole call, CPU pair walk "
                   "2 threads %.3f s; %s\n",
                   (long long)n1, cross ? " (cross)" : "", kernels[run], tasks[run], t, t_cpu,
                   st.note);
    }
    unsetenv("CANOPY_PAIRCOUNT_GPU_KERNEL");
    unsetenv("CANOPY_PAIRCOUNT_GPU_TASKS");
    pc_case_free(&c);
}

/* A misspelt switch fails with a message instead of timing the wrong kernel. */
static void check_switches(void) {
    pc_case c = pc_case_make(100, 0, 3, 0, 0, 0, 1, 10, 0);
    c.po.rmin = 0.05;
    c.po.rmax = 0.6;
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    const char *bad[][2] = {{"CANOPY_PAIRCOUNT_GPU_KERNEL", "reg"},
                            {"CANOPY_PAIRCOUNT_GPU_KERNEL", "staged"},
                            {"CANOPY_PAIRCOUNT_GPU_TASKS", "0"},
                            {"CANOPY_PAIRCOUNT_GPU_TASKS", "4x"}};
    for (int i = 0; i < 4; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        canopy_status s = canopy_paircount(c.p1, NULL, c.p2, NULL, &c.po, &o, c.got, NULL);
        CHECK_MSG(s == CANOPY_ERR_INVALID, "%s=%s: status %d", bad[i][0], bad[i][1], (int)s);
        unsetenv(bad[i][0]);
    }
    pc_case_free(&c);
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
        /* per-lane counters (unweighted, up to 32 bins): their largest and the first
           atomic count, 1 bin, edge ties on the grid, lumps, d = 2 and 3, cross, periodic */
        check_case(900, 0, 3, 0, 0, 1, 1, 32, 0, leaf, 1);
        check_case(900, 0, 3, 0, 0, 0, 0, 33, 0, leaf, 1);
        check_case(700, 0, 3, 0, 0, 0, 0, 1, 0, leaf, 1);
        check_case(800, 500, 3, 1, 0, 1, 0, 12, 1, leaf, 1);
        check_case(1500, 0, 3, 0, 0, 0, 1, 10, 2, leaf, 1);
        check_case(1200, 900, 3, 1, 0, 1, 1, 10, 2, leaf, 1);
        check_case(900, 700, 2, 1, 0, 0, 1, 24, 0, leaf, 1);
        /* at most 7 bins in 3-D: every window fits count_regs (lumps, edge ties on the
           grid, cross, periodic) */
        check_case(900, 0, 3, 0, 0, 1, 1, 4, 2, leaf, 1);
        check_case(1000, 800, 3, 1, 0, 0, 0, 6, 1, leaf, 1);
        check_case(800, 700, 3, 1, 0, 1, 1, 7, 0, leaf, 1);
        check_case(600, 0, 3, 0, 0, 0, 1, 2, 2, leaf, 1);
    }
    check_switches();
    /* a leaf pair whose lanes could pass PCP_GPU_FLUSH pairs (leaves of 2048, one leaf
       of 3000 points) takes the atomic path */
    check_case(5000, 0, 3, 0, 0, 0, 1, 10, 2, 2048, 1);
    check_case(3000, 0, 3, 0, 0, 1, 1, 10, 0, 100000, 1);
    if (!small) {
        check_case(200000, 0, 3, 0, 0, 0, 1, 10, 0, 0, 0);
        check_case(200000, 0, 3, 0, 0, 1, 1, 10, 0, 0, 0);
        check_case(100000, 150000, 3, 1, 1, 0, 0, 30, 0, 32, 0);
        check_case(100000, 0, 3, 0, 0, 0, 1, 1000000, 0, 0, 0);
        check_case(60000, 0, 2, 0, 1, 1, 0, 5000, 1, 16, 0);
        /* lumps: about 2.5e9 point pairs in leaf pairs, several PCP_GPU_FLUSH a lane */
        check_case(400000, 0, 3, 0, 0, 0, 1, 10, 2, 0, 0);
        check_case(100000, 120000, 3, 1, 0, 1, 1, 10, 0, 0, 0);
    }
    return check_finish();
}
