/* SPDX-License-Identifier: MIT */
/* GPU kd build against the host build, same run: clust2 (200k 2-D clusters), rand7's
 * reference half (200k uniform 7-D) and plummer1m's bodies (1M, 3-D; kd and octree on
 * the GPU and on the host). GPU times from host arrays (pinned
 * staging and upload included) and from device-resident input; the host build on
 * canopy_threads() threads. Medians with min-max over REPS runs after WARM warm-ups.
 * Query schedules: morton and hilbert orders of 200k uniform 3-D queries, host
 * (canopy_schedule_queries) against the GPU (host arrays in and out, or device ones).
 * Usage: canopy-bench-gpu-build [reps]   (prints a markdown table) */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "canopy.h"
#include "traverse/gpu_schedule.h"
#include "traverse/run.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARM = 3 };

static void die(const char *what) {
    fprintf(stderr, "canopy-bench-gpu-build: %s: %s\n", what, canopy_last_error());
    exit(1);
}

static void row(const char *data, const char *what, double *v, int reps, double ref_med) {
    bench_summary s = bench_summarise(v, reps);
    printf("| %s | %s | %.3f | %.3f–%.3f |", data, what, s.med * 1e3, s.min * 1e3, s.max * 1e3);
    if (ref_med > 0)
        printf(" %.1f× |\n", ref_med / s.med);
    else
        printf(" |\n");
}

static double host_build(canopy_points P, canopy_tree_kind kind) {
    canopy_tree_options o = canopy_tree_options_default(kind);
    canopy_tree *t = NULL;
    double t0 = canopy_now();
    if (canopy_tree_build(P, &o, &t)) die("host build");
    double dt = canopy_now() - t0;
    canopy_tree_free(t);
    return dt;
}

static double gpu_build(canopy_points P, canopy_tree_kind kind) {
    canopy_tree_options o = canopy_tree_options_default(kind);
    canopy_gpu_tree *g = NULL;
    double t0 = canopy_now();
    if (canopy_tree_build_gpu(P, &o, &g)) die("GPU build");
    double dt = canopy_now() - t0;
    canopy_gpu_tree_free(g);
    return dt;
}

static void bench(const char *name, const float *pts, int64_t n, int32_t d, int reps, int oct) {
    double *v = malloc(sizeof(double) * (size_t)reps);
    canopy_points P = canopy_points_make(pts, n, d);
    float *dp = NULL;
    if (cudaMalloc((void **)&dp, sizeof(float) * (size_t)(n * d)) != cudaSuccess ||
        cudaMemcpy(dp, pts, sizeof(float) * (size_t)(n * d), cudaMemcpyHostToDevice) !=
            cudaSuccess) {
        fprintf(stderr, "canopy-bench-gpu-build: cudaMalloc/cudaMemcpy failed\n");
        exit(1);
    }
    canopy_points D = canopy_points_make(dp, n, d);

    for (int r = 0; r < WARM; r++) host_build(P, CANOPY_TREE_KD);
    for (int r = 0; r < reps; r++) v[r] = host_build(P, CANOPY_TREE_KD);
    bench_summary hs = bench_summarise(v, reps);
    char what[64];
    snprintf(what, sizeof what, "host kd, %d threads", canopy_threads());
    row(name, what, v, reps, 0);
    for (int r = 0; r < WARM; r++) gpu_build(P, CANOPY_TREE_KD);
    for (int r = 0; r < reps; r++) v[r] = gpu_build(P, CANOPY_TREE_KD);
    row(name, "GPU kd, host input", v, reps, hs.med);
    for (int r = 0; r < WARM; r++) gpu_build(D, CANOPY_TREE_KD);
    for (int r = 0; r < reps; r++) v[r] = gpu_build(D, CANOPY_TREE_KD);
    row(name, "GPU kd, device input", v, reps, hs.med);
    if (oct) {
        for (int r = 0; r < WARM; r++) host_build(P, CANOPY_TREE_OCT);
        for (int r = 0; r < reps; r++) v[r] = host_build(P, CANOPY_TREE_OCT);
        bench_summary os = bench_summarise(v, reps);
        snprintf(what, sizeof what, "host oct, %d threads", canopy_threads());
        row(name, what, v, reps, 0);
        for (int r = 0; r < WARM; r++) gpu_build(P, CANOPY_TREE_OCT);
        for (int r = 0; r < reps; r++) v[r] = gpu_build(P, CANOPY_TREE_OCT);
        row(name, "GPU oct, host input", v, reps, os.med);
        for (int r = 0; r < WARM; r++) gpu_build(D, CANOPY_TREE_OCT);
        for (int r = 0; r < reps; r++) v[r] = gpu_build(D, CANOPY_TREE_OCT);
        row(name, "GPU oct, device input", v, reps, os.med);
    }
    cudaFree(dp);
    free(v);
}

static void bench_schedule(int reps) {
    const int64_t n = 200000;
    float *q = malloc(sizeof(float) * (size_t)(n * 3));
    int64_t *order = malloc(sizeof(int64_t) * (size_t)n);
    double *v = malloc(sizeof(double) * (size_t)reps);
    if (canopy_gen_uniform(q, n, 3, 0.0, 1.0, 7)) die("queries");
    float *dq = NULL;
    int64_t *dorder = NULL;
    if (cudaMalloc((void **)&dq, sizeof(float) * (size_t)(n * 3)) != cudaSuccess ||
        cudaMalloc((void **)&dorder, sizeof(int64_t) * (size_t)n) != cudaSuccess ||
        cudaMemcpy(dq, q, sizeof(float) * (size_t)(n * 3), cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "canopy-bench-gpu-build: cudaMalloc/cudaMemcpy failed\n");
        exit(1);
    }
    canopy_points P = canopy_points_make(q, n, 3), D = canopy_points_make(dq, n, 3);
    static const canopy_schedule schs[] = {CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_HILBERT};
    for (int c = 0; c < 2; c++) {
        char data[64], what[64];
        snprintf(data, sizeof data, "200k 3-D queries, %s", canopy_schedule_name(schs[c]));
        for (int r = 0; r < WARM + reps; r++) {
            double t0 = canopy_now();
            if (canopy_schedule_queries(schs[c], P, NULL, order)) die("host schedule");
            if (r >= WARM) v[r - WARM] = canopy_now() - t0;
        }
        bench_summary hs = bench_summarise(v, reps);
        snprintf(what, sizeof what, "host sort, %d threads", canopy_threads());
        row(data, what, v, reps, 0);
        for (int r = 0; r < WARM + reps; r++) {
            double t0 = canopy_now();
            if (canopy_gpu_schedule_queries(schs[c], P, order)) die("GPU schedule");
            if (r >= WARM) v[r - WARM] = canopy_now() - t0;
        }
        row(data, "GPU sort, host arrays", v, reps, hs.med);
        for (int r = 0; r < WARM + reps; r++) {
            double t0 = canopy_now();
            if (canopy_gpu_schedule_queries(schs[c], D, dorder)) die("GPU schedule");
            if (r >= WARM) v[r - WARM] = canopy_now() - t0;
        }
        row(data, "GPU sort, device arrays", v, reps, hs.med);
    }
    cudaFree(dq);
    cudaFree(dorder);
    free(q);
    free(order);
    free(v);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1) {
        fprintf(stderr, "canopy-bench-gpu-build: reps must be >= 1\n");
        return 1;
    }
    char name[256];
    if (canopy_gpu_info(name, sizeof name, NULL)) die("no GPU");
    printf("GPU: %s; %d reps after %d warm-ups; times in ms (median, min–max); ratio = host "
           "median of the same kind / this median\n\n",
           name, reps, WARM);
    printf("| data | build | median ms | min–max ms | vs host |\n|---|---|---|---|---|\n");
    const canopy_workload *c2 = canopy_workload_find("clust2");
    const canopy_workload *r7 = canopy_workload_find("rand7");
    if (!c2 || !r7) die("workload table");
    float *p = malloc(sizeof(float) * (size_t)(c2->n * c2->d));
    if (canopy_gen_clusters(p, NULL, c2->n, c2->d, c2->clusters, c2->spread, c2->seed))
        die("clust2");
    bench("clust2 200k 2-D", p, c2->n, c2->d, reps, 0);
    free(p);
    p = malloc(sizeof(float) * (size_t)(r7->n * r7->d));
    if (canopy_gen_uniform(p, r7->n, r7->d, 0.0, 1.0, r7->seed)) die("rand7");
    bench("rand7 200k 7-D", p, r7->n, r7->d, reps, 0);
    free(p);
    int64_t nb = 1000000;
    p = malloc(sizeof(float) * (size_t)(nb * 3));
    float *vel = malloc(sizeof(float) * (size_t)(nb * 3));
    if (canopy_gen_plummer(p, vel, nb, 1)) die("plummer");
    bench("plummer 1M 3-D", p, nb, 3, reps, 1);
    free(p);
    free(vel);
    bench_schedule(reps);
    canopy_gpu_pool_release();
    return 0;
}
