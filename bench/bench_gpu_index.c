/* SPDX-License-Identifier: MIT */
/* Queries on a device-resident kd index (issue 14, "build once, query many"):
 * 200k reference points and 200k separate queries from the same distribution (no
 * self-exclusion), on 2-D clusters of very different sizes and spreads (clustv2) and
 * uniform 7-D (unif7); kNN k = 8 and NN (k = 1). Rows:
 *   resident, device pointers  canopy_index_knn_device, queries and results on the
 *                              device (wall time of the synchronous call; kernel
 *                              time from stats in the last column)
 *   resident, host arrays      canopy_index_knn: query upload and result copy-back
 *   first call                 canopy_index_build (residency device: GPU build) +
 *                              the first device-pointer query
 *   canopy_knn per call        build on the host, upload, query, copy back
 * Medians with min-max over REPS runs after WARM warm-ups (canopy_knn: REPS/3 runs).
 * Usage: canopy-bench-gpu-index [reps] [variant]   (markdown table on stdout) */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "canopy.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 200000, WARM = 3 };

static void die(const char *what) {
    fprintf(stderr, "canopy-bench-gpu-index: %s: %s\n", what, canopy_last_error());
    exit(1);
}

static void row(const char *data, const char *what, int k, double *v, int reps, double *kern) {
    bench_summary s = bench_summarise(v, reps);
    printf("| %s | %d | %s | %.3f | %.3f–%.3f |", data, k, what, s.med * 1e3, s.min * 1e3,
           s.max * 1e3);
    if (kern) {
        bench_summary ks = bench_summarise(kern, reps);
        printf(" %.3f |\n", ks.med * 1e3);
    } else {
        printf(" |\n");
    }
}

/* 2-D points whose density varies over orders of magnitude, as city locations do:
 * a few tight big clusters, many small spread ones, a thin uniform background. */
static void clustv2(float *p, int64_t n, uint64_t seed) {
    int64_t a = n / 2, b = n * 3 / 10, c = n * 3 / 20, u = n - a - b - c;
    if (canopy_gen_clusters(p, NULL, a, 2, 4, 0.002, seed) ||
        canopy_gen_clusters(p + 2 * a, NULL, b, 2, 30, 0.02, seed + 1) ||
        canopy_gen_clusters(p + 2 * (a + b), NULL, c, 2, 300, 0.0005, seed + 2) ||
        canopy_gen_uniform(p + 2 * (a + b + c), u, 2, 0.0, 1.0, seed + 3))
        die("generating clustv2");
}

static void one(const char *name, const float *ref, const float *qry, int32_t d, int32_t k,
                int reps, canopy_variant variant) {
    canopy_points R = canopy_points_make(ref, N, d), Q = canopy_points_make(qry, N, d);
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    o.variant = variant;
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.residency = CANOPY_RESIDENCY_DEVICE;
    size_t cells = (size_t)N * (size_t)k;
    float *dq, *dd;
    int64_t *di;
    if (cudaMalloc((void **)&dq, sizeof(float) * (size_t)N * d) != cudaSuccess ||
        cudaMalloc((void **)&di, sizeof(int64_t) * cells) != cudaSuccess ||
        cudaMalloc((void **)&dd, sizeof(float) * cells) != cudaSuccess ||
        cudaMemcpy(dq, qry, sizeof(float) * (size_t)N * d, cudaMemcpyHostToDevice) != cudaSuccess)
        die("device buffers");
    int64_t *hi = malloc(sizeof(int64_t) * cells);
    float *hd = malloc(sizeof(float) * cells);
    double *v = malloc(sizeof(double) * (size_t)reps),
           *kern = malloc(sizeof(double) * (size_t)reps);
    canopy_stats st;
    char what[96];

    /* first call: build on the GPU + first query (after a warm-up of the whole) */
    for (int r = 0; r < WARM + reps; r++) {
        canopy_index *ix = NULL;
        double t0 = canopy_now();
        if (canopy_index_build(R, &io, &ix)) die("index build");
        if (canopy_index_knn_device(ix, dq, N, k, &o, di, dd, NULL, &st)) die("first query");
        if (r >= WARM) v[r - WARM] = canopy_now() - t0;
        canopy_index_free(ix);
    }
    row(name, "first call (GPU build + query)", k, v, reps, NULL);

    canopy_index *ix = NULL;
    if (canopy_index_build(R, &io, &ix)) die("index build");
    for (int r = 0; r < WARM + reps; r++) {
        double t0 = canopy_now();
        if (canopy_index_knn_device(ix, dq, N, k, &o, di, dd, NULL, &st)) die("device query");
        if (r >= WARM) {
            v[r - WARM] = canopy_now() - t0;
            kern[r - WARM] = st.traverse_seconds;
        }
    }
    snprintf(what, sizeof what, "resident, device pointers (%s)", canopy_variant_name(st.variant));
    row(name, what, k, v, reps, kern);
    for (int r = 0; r < WARM + reps; r++) {
        double t0 = canopy_now();
        if (canopy_index_knn(ix, Q, k, &o, hi, hd, &st)) die("host-array query");
        if (st.tree_upload_bytes != 0) die("a resident index uploaded its tree");
        if (r >= WARM) {
            v[r - WARM] = canopy_now() - t0;
            kern[r - WARM] = st.traverse_seconds;
        }
    }
    snprintf(what, sizeof what, "resident, host arrays (%s, %s)", canopy_variant_name(st.variant),
             canopy_schedule_name(st.schedule));
    row(name, what, k, v, reps, kern);
    canopy_index_free(ix);

    int pr = reps / 3 > 3 ? reps / 3 : 3;
    o.tree = CANOPY_TREE_KD;
    for (int r = 0; r < 1 + pr; r++) {
        double t0 = canopy_now();
        if (canopy_knn(R, Q, k, &o, hi, hd, &st)) die("canopy_knn");
        if (r >= 1) {
            v[r - 1] = canopy_now() - t0;
            kern[r - 1] = st.traverse_seconds;
        }
    }
    snprintf(what, sizeof what, "canopy_knn per call (%s, %s)", canopy_variant_name(st.variant),
             canopy_schedule_name(st.schedule));
    row(name, what, k, v, pr, kern);
    cudaFree(dq), cudaFree(di), cudaFree(dd);
    free(hi), free(hd), free(v), free(kern);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    canopy_variant variant = CANOPY_VARIANT_AUTO;
    if (reps < 3) reps = 3;
    if (argc > 2 && canopy_variant_parse(argv[2], &variant)) die("variant");
    char gpu[256];
    if (canopy_gpu_info(gpu, sizeof gpu, NULL)) die("no GPU");
    float *ref = malloc(sizeof(float) * (size_t)N * 7),
          *qry = malloc(sizeof(float) * (size_t)N * 7);
    printf("device %s, %d reps (median, min–max in ms), variant %s\n\n", gpu, reps,
           canopy_variant_name(variant));
    printf("| data | k | what | median ms | min–max ms | kernel ms |\n|---|---|---|---|---|---|\n");
    clustv2(ref, N, 11);
    clustv2(qry, N, 97);
    one("clustv2 (2-D)", ref, qry, 2, 8, reps, variant);
    one("clustv2 (2-D)", ref, qry, 2, 1, reps, variant);
    if (canopy_gen_uniform(ref, N, 7, 0.0, 1.0, 5) || canopy_gen_uniform(qry, N, 7, 0.0, 1.0, 6))
        die("generating unif7");
    one("unif7 (7-D)", ref, qry, 7, 8, reps, variant);
    one("unif7 (7-D)", ref, qry, 7, 1, reps, variant);
    free(ref), free(qry);
    return 0;
}
