/* SPDX-License-Identifier: MIT */
/* One lane width's table (runtime.h): included by cpu_avx512.c, cpu_avx2.c and
 * cpu_generic.c after they define SIMT_W and SIMT_TABLE. */
#include "simt/kernels.h"
#include "simt/lanes.h"
#include "simt/runtime.h"

#include <stdlib.h>
#include <string.h>

static simt_int from_mem(const int32_t *p) {
    simt_int v;
    memcpy(&v, p, sizeof v);
    return v;
}
static void to_mem(int32_t *p, simt_int v) {
    memcpy(p, &v, sizeof v);
}

static void t_load(const int32_t *p, uint32_t m, int32_t *out) {
    to_mem(out, simt_load_i(p, simt_from_bits(m)));
}
static void t_gather(const int32_t *base, const int32_t *idx, uint32_t m, int32_t *out) {
    to_mem(out, simt_gather_i(base, from_mem(idx), simt_from_bits(m)));
}
static void t_gather_f(const float *base, const int32_t *idx, uint32_t m, float *out) {
    simt_float v = simt_gather_f(base, from_mem(idx), simt_from_bits(m));
    memcpy(out, &v, sizeof v);
}
static uint32_t t_cmp_lt(const int32_t *a, const int32_t *b) {
    return simt_bits(from_mem(a) < from_mem(b));
}
static uint32_t t_cmp_lt_f(const float *a, const float *b) {
    simt_float x, y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return simt_bits(x < y);
}
static int t_compress(const int32_t *v, uint32_t m, int32_t *out) {
    return simt_compress_i(out, from_mem(v), simt_from_bits(m));
}
static void t_blend(uint32_t m, const int32_t *a, const int32_t *b, int32_t *out) {
    to_mem(out, simt_blend(simt_from_bits(m), from_mem(a), from_mem(b)));
}
static void t_store(int32_t *p, const int32_t *v, uint32_t m) {
    simt_store_i(p, from_mem(v), simt_from_bits(m));
}
static void t_scatter(int32_t *base, const int32_t *idx, const int32_t *v, uint32_t m) {
    simt_scatter_i(base, from_mem(idx), from_mem(v), simt_from_bits(m));
}
static void t_shfl(const int32_t *v, const int32_t *src, int32_t *out) {
    to_mem(out, simt_shfl_i(from_mem(v), from_mem(src)));
}
static uint32_t t_ballot(const int32_t *v, uint32_t m) {
    simt_mask simt_m_ = simt_from_bits(m);
    return SIMT_BALLOT(from_mem(v));
}

static void t_gather_at(const void *base, const int32_t *off, int scale, int32_t *out) {
    to_mem(out, simt_gather_at(base, from_mem(off), scale));
}
static void t_gather_at_masked(const void *base, const int32_t *off, int scale, uint32_t m,
                               int32_t *out) {
    to_mem(out, simt_gather_at_masked(base, from_mem(off), scale, simt_from_bits(m)));
}
static int t_compact_store(const int32_t *v, uint32_t m, int32_t *out) {
    return simt_compact_store(out, from_mem(v), simt_from_bits(m));
}

static int launch(simt_kernel_fn fn, const void *args, int grid, int block, size_t shared, int team,
                  int threads) {
    simt_launch_cfg cfg = {grid, block, shared, team, threads};
    return canopy_simt_launch(fn, args, SIMT_W, &cfg);
}
static int blocks(int n, int b) {
    return n > 0 ? (n + b - 1) / b : 0;
}

/* Blocks of 8 warps for the flat kernels: looped over by one thread each. */
#define FLAT_BLOCK (8 * SIMT_W)

static int t_divergent(const int32_t *in, int32_t *out, int n, int bdim, int threads) {
    k_divergent_args a = {in, out, n};
    return launch(k_divergent, &a, blocks(n, bdim), bdim, 0, 0, threads);
}
static int t_exchange(const int32_t *in, int32_t *out, int n, int bdim, int rounds, int team,
                      int threads) {
    k_exchange_args a = {in, out, n, rounds};
    return launch(k_exchange, &a, blocks(n, bdim), bdim, sizeof(int32_t) * (size_t)bdim, team,
                  threads);
}

static int t_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out, int threads) {
    if (rows <= 0 || cols <= 0) return 0;
    int32_t *tmp = malloc(sizeof *tmp * (size_t)cols);
    if (!tmp) return -1;
    int32_t *bufs[2] = {out, tmp};
    memcpy(rows % 2 ? out : tmp, wall, sizeof *wall * (size_t)cols);
    int rc = 0;
    for (int r = 1; r < rows && rc == 0; r++) {
        k_pathfinder_args a = {wall, bufs[(rows - r) % 2], bufs[(rows - r + 1) % 2], cols, r};
        rc = launch(k_pathfinder, &a, blocks(cols, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
    }
    free(tmp);
    return rc;
}

static int t_bfs(const int32_t *rowptr, const int32_t *col, int n, int src, int32_t *cost,
                 int threads) {
    int32_t *flags = calloc((size_t)n * 3 + 1, sizeof *flags);
    if (!flags) return -1;
    k_bfs_args a = {rowptr, col, flags, flags + n, flags + 2 * n, cost, flags + 3 * n, n};
    for (int v = 0; v < n; v++) cost[v] = -1;
    cost[src] = 0;
    a.mask[src] = a.visited[src] = 1;
    int rc = 0;
    do {
        *a.over = 0;
        rc = launch(k_bfs_expand, &a, blocks(n, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
        if (rc == 0)
            rc = launch(k_bfs_commit, &a, blocks(n, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
    } while (rc == 0 && *a.over);
    free(flags);
    return rc;
}

static int t_hotspot(const float *temp, const float *power, int rows, int cols, int iters,
                     float *out, int threads) {
    if (rows <= 0 || cols <= 0) return 0;
    size_t cells = (size_t)rows * (size_t)cols;
    float *tmp = malloc(sizeof *tmp * cells);
    if (!tmp) return -1;
    float *bufs[2] = {out, tmp};
    memcpy(iters % 2 ? tmp : out, temp, sizeof *temp * cells);
    int bpr = blocks(cols, FLAT_BLOCK), rc = 0;
    hotspot_consts k = hotspot_consts_for(rows, cols);
    for (int it = 0; it < iters && rc == 0; it++) {
        k_hotspot_args a = {
            bufs[(iters - it) % 2], power, bufs[(iters - it + 1) % 2], rows, cols, bpr, k};
        rc = launch(k_hotspot, &a, rows * bpr, FLAT_BLOCK, 0, 0, threads);
    }
    free(tmp);
    return rc;
}
static int t_nn(const float *rec, int n, float lat, float lng, float *dist, int threads) {
    k_nn_args a = {rec, dist, n, lat, lng};
    return launch(k_nn, &a, blocks(n, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
}

static int t_lev(const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits,
                 int threads) {
    k_lev_args a = {text, hits, pat, n, len};
    return launch(k_lev, &a, blocks(n, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
}

static int t_pathfinder_tiled(const int32_t *wall, int rows, int cols, int bdim, int steps,
                              int team, int32_t *out, int threads) {
    if (rows <= 0 || cols <= 0) return 0;
    if (steps < 1 || bdim <= 2 * steps) return -1;
    int32_t *tmp = malloc(sizeof *tmp * (size_t)cols);
    if (!tmp) return -1;
    int32_t *bufs[2] = {out, tmp};
    int launches = (rows - 1 + steps - 1) / steps, rc = 0;
    memcpy(bufs[launches % 2], wall, sizeof *wall * (size_t)cols);
    for (int k = 0; k < launches && rc == 0; k++) {
        int r = k * steps, s = rows - 1 - r < steps ? rows - 1 - r : steps;
        k_pathfinder_tile_args a = {
            wall, bufs[(launches - k) % 2], bufs[(launches - k + 1) % 2], cols, r, s};
        rc = launch(k_pathfinder_tile, &a, blocks(cols, bdim - 2 * s), bdim,
                    2 * sizeof(int32_t) * (size_t)bdim, team, threads);
    }
    free(tmp);
    return rc;
}

static int t_hotspot_tiled(const float *temp, const float *power, int rows, int cols, int iters,
                           int tw_log, int th, int steps, int team, float *out, int threads) {
    if (rows <= 0 || cols <= 0) return 0;
    int tw = 1 << tw_log;
    if (steps < 1 || tw <= 2 * steps || th <= 2 * steps) return -1;
    size_t cells = (size_t)rows * (size_t)cols;
    float *tmp = malloc(sizeof *tmp * cells);
    if (!tmp) return -1;
    float *bufs[2] = {out, tmp};
    int launches = (iters + steps - 1) / steps, rc = 0;
    memcpy(bufs[launches % 2], temp, sizeof *temp * cells);
    hotspot_consts k = hotspot_consts_for(rows, cols);
    for (int l = 0; l < launches && rc == 0; l++) {
        int s = iters - l * steps < steps ? iters - l * steps : steps;
        int bpr = blocks(cols, tw - 2 * s);
        k_hotspot_tile_args a = {bufs[(launches - l) % 2],
                                 power,
                                 bufs[(launches - l + 1) % 2],
                                 rows,
                                 cols,
                                 s,
                                 tw_log,
                                 th,
                                 bpr,
                                 k};
        rc = launch(k_hotspot_tile, &a, blocks(rows, th - 2 * s) * bpr, tw * th,
                    3 * sizeof(float) * (size_t)(tw * th), team, threads);
    }
    free(tmp);
    return rc;
}

static int t_gaussian(const float *a, const float *b, int n, float *x, int threads) {
    if (n <= 0) return 0;
    size_t nn = (size_t)n * (size_t)n;
    float *w = malloc(sizeof *w * (nn + 2 * (size_t)n));
    if (!w) return -1;
    memcpy(w, a, sizeof *w * nn);
    memcpy(w + nn, b, sizeof *w * (size_t)n);
    int rc = 0;
    for (int t = 0; t < n - 1 && rc == 0; t++) {
        k_gauss_args g = {w, w + nn, w + nn + n, n, t};
        rc = launch(k_gauss_fan1, &g, blocks(n - 1 - t, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
        if (rc == 0) rc = launch(k_gauss_fan2, &g, n - 1 - t, FLAT_BLOCK, 0, 0, threads);
    }
    if (rc == 0) simt_gauss_back(w, w + nn, n, x);
    free(w);
    return rc;
}

static int t_empty(int grid, int bdim, int threads) {
    k_micro_args a = {0};
    return launch(k_empty, &a, grid, bdim, 0, 0, threads);
}
static int t_memory(const int32_t *in, int32_t *out, int n, int rdeg, int iters, int threads) {
    k_micro_args a = {in, out, n, rdeg, iters, 0, 0};
    return launch(k_memory, &a, blocks(n, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
}
static int t_diverge(int32_t *out, int n, int d, int cost, int threads) {
    k_micro_args a = {NULL, out, n, 0, 0, d, cost};
    return launch(k_diverge, &a, blocks(n, FLAT_BLOCK), FLAT_BLOCK, 0, 0, threads);
}
static int t_barrier(int bdim, int iters) {
    k_micro_args a = {.iters = iters};
    return launch(k_barrier, &a, 1, bdim, 0, 1, 0);
}
static int t_shmem(int32_t *out, int rdeg, int iters, int team) {
    k_micro_args a = {NULL, out, 64, rdeg, iters, 0, 0};
    return launch(k_shmem, &a, 1, 64, 2048 * sizeof(int32_t), team, team ? 64 / SIMT_W : 1);
}

const simt_impl SIMT_TABLE = {
    .isa = SIMT_ISA_NAME,
    .width = SIMT_W,
    .load = t_load,
    .gather = t_gather,
    .gather_f = t_gather_f,
    .cmp_lt = t_cmp_lt,
    .cmp_lt_f = t_cmp_lt_f,
    .compress = t_compress,
    .blend = t_blend,
    .store = t_store,
    .scatter = t_scatter,
    .shfl = t_shfl,
    .ballot = t_ballot,
    .gather_at = t_gather_at,
    .gather_at_masked = t_gather_at_masked,
    .compact_store = t_compact_store,
    .divergent = t_divergent,
    .exchange = t_exchange,
    .pathfinder = t_pathfinder,
    .bfs = t_bfs,
    .hotspot = t_hotspot,
    .nn = t_nn,
    .lev = t_lev,
    .pathfinder_tiled = t_pathfinder_tiled,
    .hotspot_tiled = t_hotspot_tiled,
    .gaussian = t_gaussian,
    .empty = t_empty,
    .memory = t_memory,
    .diverge = t_diverge,
    .barrier = t_barrier,
    .shmem = t_shmem,
};
