/* SPDX-License-Identifier: MIT */
/* Every GPU variant x application x schedule (x tree kind for kNN) against the CPU
 * engine on fresh random inputs. Exits 77 (skipped, visibly) without a GPU.
 * CANOPY_GPU_SMALL=1 runs one small case per combination (for compute-sanitizer). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const canopy_variant gpu_variants[] = {
    CANOPY_VARIANT_REC,  CANOPY_VARIANT_DR,   CANOPY_VARIANT_SR,    CANOPY_VARIANT_GDR,
    CANOPY_VARIANT_DR_L, CANOPY_VARIANT_SR_L, CANOPY_VARIANT_FSM_L, CANOPY_VARIANT_AUTO};
enum { N_GV = sizeof gpu_variants / sizeof gpu_variants[0] };
static const canopy_schedule schedules[] = {CANOPY_SCHEDULE_NONE,   CANOPY_SCHEDULE_TREE,
                                            CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_HILBERT,
                                            CANOPY_SCHEDULE_HYBRID, CANOPY_SCHEDULE_AUTO};
enum { N_S = sizeof schedules / sizeof schedules[0] };

static int small;
static int runs;

static int is_static_rope(canopy_variant v) {
    return v == CANOPY_VARIANT_SR || v == CANOPY_VARIANT_SR_L;
}

static canopy_run_options gpu_opts(canopy_variant v, canopy_schedule s, canopy_tree_kind t) {
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    o.variant = v;
    o.schedule = s;
    o.tree = t;
    return o;
}

static float *random_points(int64_t n, int32_t d, uint64_t seed, int clustered) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    if (clustered)
        CHECK_OK(canopy_gen_clusters(p, NULL, n, d, 16, 0.02, seed));
    else
        CHECK_OK(canopy_gen_uniform(p, n, d, 0.0, 1.0, seed));
    return p;
}

static void test_knn(int64_t n, int64_t nq, int32_t d, int32_t k, canopy_tree_kind tree,
                     uint64_t seed) {
    float *r = random_points(n, d, seed, 1), *q = random_points(nq, d, seed + 1, 0);
    canopy_points rp = canopy_points_make(r, n, d), qp = canopy_points_make(q, nq, d);
    size_t cells = (size_t)(nq * k);
    int64_t *ci = malloc(cells * 8 + 8), *gi = malloc(cells * 8 + 8);
    float *cd = malloc(cells * 4 + 4), *gd = malloc(cells * 4 + 4);
    canopy_run_options co = canopy_run_options_default();
    co.tree = tree;
    CHECK_OK(canopy_knn(rp, qp, k, &co, ci, cd, NULL));
    for (int v = 0; v < N_GV; v++)
        for (int s = 0; s < N_S; s++) {
            canopy_run_options o = gpu_opts(gpu_variants[v], schedules[s], tree);
            canopy_status st = canopy_knn(rp, qp, k, &o, gi, gd, NULL);
            if (is_static_rope(gpu_variants[v])) {
                CHECK_MSG(st == CANOPY_ERR_INVALID, "knn with %s must be refused",
                          canopy_variant_name(gpu_variants[v]));
                continue;
            }
            runs++;
            CHECK_MSG(st == CANOPY_OK, "knn gpu %s: %s", canopy_variant_name(gpu_variants[v]),
                      canopy_last_error());
            CHECK_MSG(st || (!memcmp(ci, gi, cells * 8) && !memcmp(cd, gd, cells * 4)),
                      "knn gpu %s/%s/%s n=%lld nq=%lld d=%d k=%d differs from the CPU",
                      canopy_variant_name(gpu_variants[v]), canopy_schedule_name(schedules[s]),
                      canopy_tree_kind_name(tree), (long long)n, (long long)nq, (int)d, (int)k);
        }
    free(r), free(q), free(ci), free(gi), free(cd), free(gd);
}

static void test_radius(int64_t n, int64_t nq, int32_t d, float rad, uint64_t seed) {
    float *r = random_points(n, d, seed, 0), *q = random_points(nq, d, seed + 2, 1);
    canopy_points rp = canopy_points_make(r, n, d), qp = canopy_points_make(q, nq, d);
    int64_t *cc = malloc((size_t)nq * 8 + 8), *gc = malloc((size_t)nq * 8 + 8);
    CHECK_OK(canopy_radius_count_brute(rp, qp, rad, cc));
    canopy_run_options co = canopy_run_options_default();
    co.variant = CANOPY_VARIANT_DR;
    canopy_stats cs;
    CHECK_OK(canopy_radius_count(rp, qp, rad, &co, gc, &cs));
    double cpu_nodes = cs.nodes_per_query;
    for (int v = 0; v < N_GV; v++)
        for (int s = 0; s < N_S; s++) {
            canopy_run_options o = gpu_opts(gpu_variants[v], schedules[s], CANOPY_TREE_KD);
            canopy_stats stats;
            canopy_status st = canopy_radius_count(rp, qp, rad, &o, gc, &stats);
            runs++;
            /* Unguided: every variant tests each (query, node) pair the CPU's dr tests. */
            CHECK_MSG(st || stats.nodes_per_query == cpu_nodes,
                      "radius gpu %s/%s: %.3f nodes per query, the CPU's dr %.3f",
                      canopy_variant_name(gpu_variants[v]), canopy_schedule_name(schedules[s]),
                      stats.nodes_per_query, cpu_nodes);
            CHECK_MSG(st == CANOPY_OK, "radius gpu %s: %s", canopy_variant_name(gpu_variants[v]),
                      canopy_last_error());
            CHECK_MSG(st || !memcmp(cc, gc, (size_t)nq * 8),
                      "radius gpu %s/%s n=%lld d=%d differs from brute force",
                      canopy_variant_name(gpu_variants[v]), canopy_schedule_name(schedules[s]),
                      (long long)n, (int)d);
        }
    free(r), free(q), free(cc), free(gc);
}

static void test_gravity(int64_t n, uint64_t seed) {
    float *b = malloc(sizeof(float) * (size_t)(3 * n));
    CHECK_OK(canopy_gen_plummer(b, NULL, n, seed));
    canopy_points bp = canopy_points_make(b, n, 3);
    float *ca = malloc(sizeof(float) * (size_t)(3 * n)),
          *ga = malloc(sizeof(float) * (size_t)(3 * n));
    canopy_stats cpu_stats;
    CHECK_OK(canopy_gravity(bp, NULL, 0.5f, 0.01f, NULL, ca, &cpu_stats));
    for (int v = 0; v < N_GV; v++)
        for (int s = 0; s < N_S; s++) {
            canopy_run_options o = gpu_opts(gpu_variants[v], schedules[s], CANOPY_TREE_OCT);
            canopy_stats stats;
            canopy_status st = canopy_gravity(bp, NULL, 0.5f, 0.01f, &o, ga, &stats);
            runs++;
            CHECK_MSG(st || stats.nodes_per_query == cpu_stats.nodes_per_query,
                      "gravity gpu %s/%s: %.3f nodes per query, the CPU's %.3f",
                      canopy_variant_name(gpu_variants[v]), canopy_schedule_name(schedules[s]),
                      stats.nodes_per_query, cpu_stats.nodes_per_query);
            CHECK_MSG(st == CANOPY_OK, "gravity gpu %s: %s", canopy_variant_name(gpu_variants[v]),
                      canopy_last_error());
            double worst = 0;
            for (int64_t i = 0; !st && i < 3 * n; i++) {
                double e = fabs((double)ca[i] - ga[i]) / (fabs((double)ca[i]) + 1e-3);
                if (e > worst) worst = e;
            }
            CHECK_MSG(worst < 1e-4, "gravity gpu %s/%s: relative difference %.3g from the CPU",
                      canopy_variant_name(gpu_variants[v]), canopy_schedule_name(schedules[s]),
                      worst);
        }
    free(b), free(ca), free(ga);
}

static int cmp_f(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void test_search(int64_t n, int64_t nq, uint64_t seed) {
    float *keys = random_points(n, 1, seed, 0), *q = random_points(nq, 1, seed + 3, 0);
    qsort(keys, (size_t)n, sizeof(float), cmp_f);
    int64_t *ci = malloc((size_t)nq * 8 + 8), *gi = malloc((size_t)nq * 8 + 8);
    CHECK_OK(canopy_search(keys, n, q, nq, NULL, ci, NULL));
    for (int v = 0; v < N_GV; v++)
        for (int s = 0; s < N_S; s++) {
            canopy_run_options o = gpu_opts(gpu_variants[v], schedules[s], CANOPY_TREE_BST);
            canopy_status st = canopy_search(keys, n, q, nq, &o, gi, NULL);
            runs++;
            CHECK_MSG(st == CANOPY_OK, "search gpu %s: %s", canopy_variant_name(gpu_variants[v]),
                      canopy_last_error());
            CHECK_MSG(st || !memcmp(ci, gi, (size_t)nq * 8), "search gpu %s/%s differs",
                      canopy_variant_name(gpu_variants[v]), canopy_schedule_name(schedules[s]));
        }
    free(keys), free(q), free(ci), free(gi);
}

int main(void) {
    int skip = check_gpu();
    if (skip) return skip;
    const char *env = getenv("CANOPY_GPU_SMALL");
    small = env && *env == '1';
    uint64_t seed = check_seed();
    static const canopy_tree_kind trees[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP};
    if (small) {
        test_knn(500, 100, 3, 4, CANOPY_TREE_KD, seed);
        test_radius(500, 100, 3, 0.2f, seed);
        test_gravity(500, seed);
        test_search(500, 100, seed);
    } else {
        for (int t = 0; t < 3; t++) {
            test_knn(20000, 3000, 7, 8, trees[t], seed + (uint64_t)t);
            test_knn(5000, 1000, 2, 64, trees[t], seed + 10 + (uint64_t)t);
            test_knn(3, 100, 1, 5, trees[t], seed + 20 + (uint64_t)t); /* k > n: padded */
        }
        test_knn(20000, 0, 3, 4, CANOPY_TREE_KD, seed);
        test_radius(30000, 5000, 3, 0.08f, seed);
        test_radius(20000, 2000, 7, 0.3f, seed + 1);
        test_radius(200000, 20000, 7, 0.28f, seed + 2); /* deep tree: rec's device stack */
        test_gravity(20000, seed);
        test_search(100000, 20000, seed);
        test_search(1, 50, seed);
        /* the device hybrid schedule in chunks of 128 queries */
        setenv("CANOPY_PROFILE_MAX_BYTES", "1024", 1);
        test_radius(30000, 5000, 3, 0.08f, seed + 3);
        test_knn(20000, 3000, 7, 8, CANOPY_TREE_KD, seed + 4);
        unsetenv("CANOPY_PROFILE_MAX_BYTES");
    }
    printf("%d GPU (application, variant, schedule) runs compared\n", runs);
    CHECK(runs > 0);
    return check_finish();
}
