/* SPDX-License-Identifier: MIT */
/* The SIMT kernels compiled by nvcc (src/simt/gpu.cu) against the same scalar references
 * as their CPU-lane builds (tests/test_simt.c): divergent and early-returning threads,
 * a shared-memory exchange across warps with barriers, Pathfinder and Hotspot (flat and
 * with Rodinia's pyramids), BFS, NN, Levenshtein, Gaussian elimination and the
 * microbenchmarks, with the kernel timings' launch counts. Exits 77 without a GPU. */
#include "check.h"
#include "core/device.h"
#include "simt/consts.h"
#include "simt/gpu.h"
#include "simt/runtime.h"

#include <stdlib.h>
#include <string.h>

static uint64_t state;
static uint32_t rnd(void) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(state >> 33);
}

/* A random diagonally dominant system (no pivoting needed): bit-equal to the scalar loops. */
static void gaussian_case(int n) {
    float *a = malloc(sizeof *a * (size_t)n * (size_t)n), *b = malloc(sizeof *b * (size_t)n),
          *x = malloc(sizeof *x * (size_t)n), *xr = malloc(sizeof *xr * (size_t)n);
    for (int i = 0; i < n; i++) {
        float sum = 1.0f;
        for (int j = 0; j < n; j++) {
            a[(size_t)i * n + j] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
            sum += a[(size_t)i * n + j] < 0 ? -a[(size_t)i * n + j] : a[(size_t)i * n + j];
        }
        a[(size_t)i * n + i] = rnd() & 1 ? sum : -sum;
        b[i] = (float)((int)(rnd() % 2001) - 1000) / 100.0f;
    }
    canopy_simt_ref_gaussian(a, b, n, xr, 1);
    simt_gpu_timing tm = {-1.0, -1};
    CHECK_OK(canopy_simt_gpu_gaussian(a, b, n, x, &tm));
    CHECK_MSG(!memcmp(x, xr, sizeof *x * (size_t)n), "gaussian n=%d", n);
    CHECK_MSG(tm.launches == 2 * (n - 1), "gaussian timing: %d launches for n=%d", tm.launches, n);
    free(a);
    free(b);
    free(x);
    free(xr);
}

/* The microbenchmarks run and, where they compute, equal the CPU references. */
static void check_micro(void) {
    int n = 4096;
    int32_t *in = malloc(sizeof *in * (size_t)n), *out = malloc(sizeof *out * (size_t)n),
            *ref = malloc(sizeof *ref * (size_t)n);
    for (int i = 0; i < n; i++) in[i] = (int32_t)(rnd() % 1000);
    simt_gpu_timing tm;
    simt_micro_cfg c = {SIMT_MICRO_MEMORY, n, 63, 3, 0, 0, 0, 0, 0};
    canopy_simt_ref_memory(in, ref, n, 63, 3, 1);
    CHECK_OK(canopy_simt_gpu_micro(&c, in, out, &tm));
    CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "micro memory");
    c = (simt_micro_cfg){SIMT_MICRO_DIVERGE, n, 0, 0, 8, 5, 0, 0, 0};
    canopy_simt_ref_diverge(ref, n, 8, 5, 1);
    CHECK_OK(canopy_simt_gpu_micro(&c, NULL, out, &tm));
    CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "micro diverge");
    c = (simt_micro_cfg){SIMT_MICRO_SHMEM, 0, 512, 100, 0, 0, 0, 0, 0};
    canopy_simt_ref_shmem(ref, 512, 100);
    CHECK_OK(canopy_simt_gpu_micro(&c, NULL, out, &tm));
    CHECK_MSG(!memcmp(out, ref, sizeof *out * 64), "micro shmem");
    c = (simt_micro_cfg){SIMT_MICRO_BARRIER, 0, 0, 100, 0, 0, 1, 256, 0};
    CHECK_OK(canopy_simt_gpu_micro(&c, NULL, NULL, &tm));
    c = (simt_micro_cfg){SIMT_MICRO_EMPTY, 0, 0, 0, 0, 0, 2, 256, 10};
    CHECK_OK(canopy_simt_gpu_micro(&c, NULL, NULL, &tm));
    CHECK_MSG(tm.launches == 10, "micro launches: %d", tm.launches);
    free(in);
    free(out);
    free(ref);
}

int main(void) {
    if (!canopy_gpu_usable()) return check_skip("no usable GPU");
    state = check_seed();
    static const int sizes[] = {1, 31, 33, 1000, 100003};
    /* CANOPY_GPU_SMALL (under compute-sanitizer): the small sizes only. */
    size_t nsizes = getenv("CANOPY_GPU_SMALL") ? 4 : sizeof sizes / sizeof *sizes;
    for (size_t k = 0; k < nsizes; k++) {
        int n = sizes[k];
        int32_t *in = malloc(sizeof *in * (size_t)n), *out = malloc(sizeof *out * (size_t)n),
                *ref = malloc(sizeof *ref * (size_t)n);
        for (int i = 0; i < n; i++) in[i] = (int32_t)(rnd() % 100000);
        static const int bdims[] = {32, 48, 256};
        for (int b = 0; b < 3; b++) {
            canopy_simt_ref_divergent(in, ref, n);
            CHECK_OK(canopy_simt_gpu_divergent(in, out, n, bdims[b]));
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "divergent n=%d bdim=%d", n,
                      bdims[b]);
            canopy_simt_ref_exchange(in, ref, n, bdims[b], 4);
            CHECK_OK(canopy_simt_gpu_exchange(in, out, n, bdims[b], 4));
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "exchange n=%d bdim=%d", n,
                      bdims[b]);
        }
        int rows = 1 + (int)(rnd() % 30);
        int32_t *wall = malloc(sizeof *wall * (size_t)n * (size_t)rows);
        for (size_t i = 0; i < (size_t)n * (size_t)rows; i++) wall[i] = (int32_t)(rnd() % 10);
        canopy_simt_ref_pathfinder(wall, rows, n, ref, 1);
        CHECK_OK(canopy_simt_gpu_pathfinder(wall, rows, n, out, NULL));
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "pathfinder %dx%d", rows, n);
        static const int pf[][2] = {{3, 1}, {48, 7}, {256, 20}, {1024, 30}}; /* bdim, steps */
        for (int c = 0; c < 4; c++) {
            simt_gpu_timing tm = {-1.0, -1};
            memset(out, 0x55, sizeof *out * (size_t)n);
            CHECK_OK(canopy_simt_gpu_pathfinder_tiled(wall, rows, n, pf[c][0], pf[c][1], out, &tm));
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n),
                      "tiled pathfinder %dx%d bdim=%d steps=%d", rows, n, pf[c][0], pf[c][1]);
            CHECK_MSG(tm.launches == (rows - 1 + pf[c][1] - 1) / pf[c][1] && tm.kernel_ms >= 0.0,
                      "tiled pathfinder timing: %d launches", tm.launches);
        }
        int32_t *rowptr = malloc(sizeof *rowptr * ((size_t)n + 1)),
                *col = malloc(sizeof *col * (size_t)n * 4 + 1);
        rowptr[0] = 0;
        for (int v = 0; v < n; v++) {
            int d = (int)(rnd() % 5);
            for (int e = 0; e < d; e++) col[rowptr[v] + e] = (int32_t)(rnd() % (unsigned)n);
            rowptr[v + 1] = rowptr[v] + d;
        }
        int src = (int)(rnd() % (unsigned)n);
        canopy_simt_ref_bfs(rowptr, col, n, src, ref, 1);
        simt_gpu_timing tm = {-1.0, -1};
        CHECK_OK(canopy_simt_gpu_bfs(rowptr, col, n, src, out, &tm));
        CHECK_MSG(tm.launches >= 2 && tm.launches % 2 == 0 && tm.kernel_ms >= 0.0,
                  "bfs timing: %d launches, %g ms", tm.launches, tm.kernel_ms);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "bfs n=%d", n);
        float *temp = malloc(sizeof *temp * (size_t)n * (size_t)rows),
              *power = malloc(sizeof *power * (size_t)n * (size_t)rows),
              *fo = malloc(sizeof *fo * (size_t)n * (size_t)rows),
              *fr = malloc(sizeof *fr * (size_t)n * (size_t)rows);
        for (size_t i = 0; i < (size_t)n * (size_t)rows; i++) {
            temp[i] = 320.0f + (float)(rnd() % 1000) / 100.0f;
            power[i] = (float)(rnd() % 1000) / 1e6f;
        }
        canopy_simt_ref_hotspot(temp, power, rows, n, 3, fr, 1);
        CHECK_OK(canopy_simt_gpu_hotspot(temp, power, rows, n, 3, fo, NULL));
        CHECK_MSG(!memcmp(fo, fr, sizeof *fo * (size_t)n * (size_t)rows), "hotspot %dx%d", rows, n);
        static const int ht[][3] = {
            {2, 3, 1}, {4, 16, 2}, {5, 32, 7}, {6, 8, 3}}; /* tw_log, th, steps */
        for (int c = 0; c < 4; c++) {
            memset(fo, 0, sizeof *fo * (size_t)n * (size_t)rows);
            CHECK_OK(canopy_simt_gpu_hotspot_tiled(temp, power, rows, n, 3, ht[c][0], ht[c][1],
                                                   ht[c][2], fo, NULL));
            CHECK_MSG(!memcmp(fo, fr, sizeof *fo * (size_t)n * (size_t)rows),
                      "tiled hotspot %dx%d tile %dx%d steps=%d", rows, n, 1 << ht[c][0], ht[c][1],
                      ht[c][2]);
        }
        canopy_simt_ref_nn(temp, n / 2, 321.0f, 0.5f, fr, 1);
        CHECK_OK(canopy_simt_gpu_nn(temp, n / 2, 321.0f, 0.5f, fo, NULL));
        CHECK_MSG(!memcmp(fo, fr, sizeof *fo * (size_t)(n / 2)), "nn n=%d", n / 2);
        int32_t pat[SIMT_LEV_M];
        for (int j = 0; j < SIMT_LEV_M; j++) pat[j] = (int32_t)(rnd() % 2);
        for (size_t i = 0; i < (size_t)n * (size_t)rows; i++) wall[i] &= 1;
        canopy_simt_ref_lev(wall, n, rows, pat, ref, 1);
        CHECK_OK(canopy_simt_gpu_lev(wall, n, rows, pat, out, NULL));
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "levenshtein n=%d len=%d", n, rows);
        gaussian_case(n < 1000 ? n : 257);
        free(temp);
        free(power);
        free(fo);
        free(fr);
        free(in);
        free(out);
        free(ref);
        free(wall);
        free(rowptr);
        free(col);
    }
    for (int n = 1; n <= 3; n++) gaussian_case(n);
    gaussian_case(130);
    check_micro();
    return check_finish();
}
