/* SPDX-License-Identifier: MIT */
/* GPU morton and hilbert schedules against the host's (schedule.c): the permutation
 * must be identical, for host and device queries (device ones with a row stride) and
 * host and device output, on uniform, clustered and heavily duplicated data,
 * d = 1, 2, 3, 7 and 70 (only the first 63 coordinates count), n from 0 up.
 * Exits 77 without a GPU. CANOPY_GPU_SMALL=1 runs small sizes (compute-sanitizer). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include "traverse/gpu_schedule.h"
#include "traverse/run.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static double rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* kind 0 uniform, 1 clustered, 2 duplicates (4 values per coordinate), 3 one point */
static float *make_points(int64_t n, int32_t d, int kind, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    if (kind == 1 && n > 0) {
        CHECK_OK(canopy_gen_clusters(p, NULL, n, d, 12, 0.01, seed));
        return p;
    }
    rng_state = seed;
    for (int64_t i = 0; i < n * d; i++)
        p[i] = kind == 2   ? (float)(int)(rnd() * 4) - 1.5f
               : kind == 3 ? 0.75f
                           : (float)(rnd() * 200.0 - 100.0);
    return p;
}

static void one_case(canopy_schedule sch, int64_t n, int32_t d, int kind, uint64_t seed) {
    char tag[160];
    snprintf(tag, sizeof tag, "%s n=%lld d=%d kind=%d seed=%llu", canopy_schedule_name(sch),
             (long long)n, d, kind, (unsigned long long)seed);
    float *pts = make_points(n, d, kind, seed);
    canopy_points P = canopy_points_make(pts, n, d);
    size_t ob = sizeof(int64_t) * (size_t)(n > 0 ? n : 1);
    int64_t *want = malloc(ob), *got = malloc(ob);
    CHECK_OK(canopy_schedule_queries(sch, P, NULL, want));
    /* host in, host out */
    memset(got, 0xff, ob);
    canopy_status s = canopy_gpu_schedule_queries(sch, P, got);
    CHECK_MSG(s == CANOPY_OK, "%s: %s", tag, canopy_last_error());
    CHECK_MSG(!memcmp(want, got, sizeof(int64_t) * (size_t)n), "%s: host in/out differs", tag);
    /* device in (row stride d + 2), device and host out */
    int64_t stride = d + 2;
    float *wide = calloc((size_t)(n * stride + 1), sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        memcpy(wide + i * stride, pts + i * d, sizeof(float) * (size_t)d);
        wide[i * stride + d] = NAN; /* outside the row: must not be read */
    }
    float *dq = NULL;
    int64_t *dorder = NULL;
    if (cudaMalloc((void **)&dq, sizeof(float) * (size_t)(n * stride + 1)) == cudaSuccess &&
        cudaMalloc((void **)&dorder, ob) == cudaSuccess) {
        cudaMemcpy(dq, wide, sizeof(float) * (size_t)(n * stride), cudaMemcpyHostToDevice);
        canopy_points D = {dq, n, d, stride};
        memset(got, 0xff, ob);
        CHECK_OK(canopy_gpu_schedule_queries(sch, D, got));
        CHECK_MSG(!memcmp(want, got, sizeof(int64_t) * (size_t)n), "%s: device in differs", tag);
        memset(got, 0xff, ob);
        CHECK_OK(canopy_gpu_schedule_queries(sch, D, dorder));
        cudaMemcpy(got, dorder, sizeof(int64_t) * (size_t)n, cudaMemcpyDeviceToHost);
        CHECK_MSG(!memcmp(want, got, sizeof(int64_t) * (size_t)n), "%s: device out differs", tag);
    } else {
        CHECK_MSG(0, "%s: cudaMalloc failed", tag);
    }
    cudaFree(dq);
    cudaFree(dorder);
    free(wide);
    free(pts);
    free(want);
    free(got);
}

int main(void) {
    int skip = check_gpu();
    if (skip) return skip;
    const char *env = getenv("CANOPY_GPU_SMALL");
    int small = env && *env == '1';
    uint64_t seed = check_seed();
    static const int32_t dims[] = {1, 2, 3, 7, 70};
    const int64_t sizes[] = {0, 1, 2, 3, 1000, 50000, 200000};
    int n_sizes = small ? 5 : 7;
    static const canopy_schedule schs[] = {CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_HILBERT,
                                           CANOPY_SCHEDULE_NONE};
    for (int si = 0; si < n_sizes; si++)
        for (int di = 0; di < 5; di++)
            for (int kind = 0; kind < 4; kind++)
                for (int c = 0; c < 3; c++) {
                    if (sizes[si] > 50000 && (dims[di] != 3 || kind == 3)) continue;
                    one_case(schs[c], sizes[si], dims[di], kind,
                             seed + (uint64_t)(si * 97 + di * 13 + kind * 3 + c));
                }
    /* bad input fails clearly */
    float bad[6] = {0, 1, 2, INFINITY, 4, 5};
    int64_t order[3];
    CHECK(canopy_gpu_schedule_queries(CANOPY_SCHEDULE_MORTON, canopy_points_make(bad, 3, 2),
                                      order) == CANOPY_ERR_INVALID);
    CHECK(strstr(canopy_last_error(), "row 1") != NULL);
    CHECK(canopy_gpu_schedule_queries(CANOPY_SCHEDULE_TREE, canopy_points_make(bad, 1, 2), order) ==
          CANOPY_ERR_UNSUPPORTED);
    canopy_gpu_pool_release();
    return check_finish();
}
