/* SPDX-License-Identifier: MIT */
/* The SIMT kernels compiled by nvcc (src/simt/gpu.cu) against the same scalar references
 * as their CPU-lane builds (tests/test_simt.c): divergent and early-returning threads,
 * a shared-memory exchange across warps with barriers, Pathfinder, BFS, Hotspot, NN and
 * Levenshtein. Exits 77
 * without a GPU. */
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

int main(void) {
    if (!canopy_gpu_usable()) return check_skip("no usable GPU");
    state = check_seed();
    static const int sizes[] = {1, 31, 33, 1000, 100003};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        int32_t *in = malloc(sizeof *in * (size_t)n), *out = malloc(sizeof *out * (size_t)n),
                *ref = malloc(sizeof *ref * (size_t)n);
        for (int i = 0; i < n; i++) in[i] = (int32_t)(rnd() % 100000);
        static const int bdims[] = {32, 48, 256};
        for (int b = 0; b < 3; b++) {
            simt_ref_divergent(in, ref, n);
            CHECK_OK(simt_gpu_divergent(in, out, n, bdims[b]));
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "divergent n=%d bdim=%d", n,
                      bdims[b]);
            simt_ref_exchange(in, ref, n, bdims[b], 4);
            CHECK_OK(simt_gpu_exchange(in, out, n, bdims[b], 4));
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "exchange n=%d bdim=%d", n,
                      bdims[b]);
        }
        int rows = 1 + (int)(rnd() % 30);
        int32_t *wall = malloc(sizeof *wall * (size_t)n * (size_t)rows);
        for (size_t i = 0; i < (size_t)n * (size_t)rows; i++) wall[i] = (int32_t)(rnd() % 10);
        simt_ref_pathfinder(wall, rows, n, ref, 1);
        CHECK_OK(simt_gpu_pathfinder(wall, rows, n, out));
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "pathfinder %dx%d", rows, n);
        int32_t *rowptr = malloc(sizeof *rowptr * ((size_t)n + 1)),
                *col = malloc(sizeof *col * (size_t)n * 4 + 1);
        rowptr[0] = 0;
        for (int v = 0; v < n; v++) {
            int d = (int)(rnd() % 5);
            for (int e = 0; e < d; e++) col[rowptr[v] + e] = (int32_t)(rnd() % (unsigned)n);
            rowptr[v + 1] = rowptr[v] + d;
        }
        int src = (int)(rnd() % (unsigned)n);
        simt_ref_bfs(rowptr, col, n, src, ref, 1);
        CHECK_OK(simt_gpu_bfs(rowptr, col, n, src, out));
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "bfs n=%d", n);
        float *temp = malloc(sizeof *temp * (size_t)n * (size_t)rows),
              *power = malloc(sizeof *power * (size_t)n * (size_t)rows),
              *fo = malloc(sizeof *fo * (size_t)n * (size_t)rows),
              *fr = malloc(sizeof *fr * (size_t)n * (size_t)rows);
        for (size_t i = 0; i < (size_t)n * (size_t)rows; i++) {
            temp[i] = 320.0f + (float)(rnd() % 1000) / 100.0f;
            power[i] = (float)(rnd() % 1000) / 1e6f;
        }
        simt_ref_hotspot(temp, power, rows, n, 3, fr, 1);
        CHECK_OK(simt_gpu_hotspot(temp, power, rows, n, 3, fo));
        CHECK_MSG(!memcmp(fo, fr, sizeof *fo * (size_t)n * (size_t)rows), "hotspot %dx%d", rows, n);
        simt_ref_nn(temp, n / 2, 321.0f, 0.5f, fr, 1);
        CHECK_OK(simt_gpu_nn(temp, n / 2, 321.0f, 0.5f, fo));
        CHECK_MSG(!memcmp(fo, fr, sizeof *fo * (size_t)(n / 2)), "nn n=%d", n / 2);
        int32_t pat[SIMT_LEV_M];
        for (int j = 0; j < SIMT_LEV_M; j++) pat[j] = (int32_t)(rnd() % 2);
        for (size_t i = 0; i < (size_t)n * (size_t)rows; i++) wall[i] &= 1;
        simt_ref_lev(wall, n, rows, pat, ref, 1);
        CHECK_OK(simt_gpu_lev(wall, n, rows, pat, out));
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "levenshtein n=%d len=%d", n, rows);
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
    return check_finish();
}
