/* SPDX-License-Identifier: MIT */
/* The CPU side of SIMT on SIMD: launching a grid of blocks of warps, and the table of
 * primitives and kernels each lane width provides (one per ISA translation unit). */
#ifndef CANOPY_SIMT_RUNTIME_H
#define CANOPY_SIMT_RUNTIME_H

#include "canopy/simt.h"

#include <stdint.h>

typedef void (*simt_kernel_fn)(canopy_simt_warp *w, const void *args);

typedef struct simt_launch_cfg {
    int grid, block; /* blocks, threads per block */
    size_t shared;   /* bytes of block-shared memory */
    int team;        /* 1: a block's warps are a team of OpenMP threads with a barrier;
                        0: one thread loops over a block's warps (SIMT_SYNC only in
                        one-warp blocks) */
    int threads;     /* OpenMP threads; <= 0: omp_get_max_threads() */
} simt_launch_cfg;

/* Runs fn over the grid with `width` lanes per warp. 0, or -1 when the team could not
 * get its threads or shared memory (a message is on stderr). */
int canopy_simt_launch(simt_kernel_fn fn, const void *args, int width, const simt_launch_cfg *cfg);

/* One lane width's primitives on one warp (masks as bit sets, lane l = bit l) for the
 * tests, and its kernels (0 or -1, as canopy_simt_launch). */
typedef struct simt_impl {
    const char *isa;
    int width;
    void (*load)(const int32_t *p, uint32_t m, int32_t *out);
    void (*gather)(const int32_t *base, const int32_t *idx, uint32_t m, int32_t *out);
    void (*gather_f)(const float *base, const int32_t *idx, uint32_t m, float *out);
    uint32_t (*cmp_lt)(const int32_t *a, const int32_t *b);
    uint32_t (*cmp_lt_f)(const float *a, const float *b);
    int (*compress)(const int32_t *v, uint32_t m, int32_t *out);
    void (*blend)(uint32_t m, const int32_t *a, const int32_t *b, int32_t *out);
    void (*store)(int32_t *p, const int32_t *v, uint32_t m);
    void (*scatter)(int32_t *base, const int32_t *idx, const int32_t *v, uint32_t m);
    void (*shfl)(const int32_t *v, const int32_t *src, int32_t *out);
    uint32_t (*ballot)(const int32_t *v, uint32_t m); /* lanes with v != 0 among m */
    /* simt/lanes.h: the words at (const char *)base + off * scale, all lanes or those of
     * m; the lanes of m packed to out (room for width values), returning how many. */
    void (*gather_at)(const void *base, const int32_t *off, int scale, int32_t *out);
    void (*gather_at_masked)(const void *base, const int32_t *off, int scale, uint32_t m,
                             int32_t *out);
    int (*compact_store)(const int32_t *v, uint32_t m, int32_t *out);

    /* Test kernels: divergent ifs, a data-dependent loop with break, early returns
     * (canopy_simt_ref_divergent); a barrier exchange through shared memory
     * (canopy_simt_ref_exchange). */
    int (*divergent)(const int32_t *in, int32_t *out, int n, int bdim, int threads);
    int (*exchange)(const int32_t *in, int32_t *out, int n, int bdim, int rounds, int team,
                    int threads);
    /* Applications: Pathfinder (min-cost path down a rows x cols grid, one launch per
     * row) and BFS (Rodinia's two kernels per level); as simt_ref_*. */
    int (*pathfinder)(const int32_t *wall, int rows, int cols, int32_t *out, int threads);
    int (*bfs)(const int32_t *rowptr, const int32_t *col, int n, int src, int32_t *cost,
               int threads);
    /* Hotspot: `iters` steps on a rows x cols grid, result in out (as canopy_simt_ref_hotspot);
     * NN: squared distances of n (lat, lng) records to the target. */
    int (*hotspot)(const float *temp, const float *power, int rows, int cols, int iters, float *out,
                   int threads);
    int (*nn)(const float *rec, int n, float lat, float lng, float *dist, int threads);
    /* Levenshtein: per stream, the positions where a substring within distance 1 of
     * pat (8 characters) ends; text is stream-interleaved (as canopy_simt_ref_lev). */
    int (*lev)(const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits, int threads);
    /* The same two with Rodinia's pyramids (block-shared tiles advanced `steps` rows or
     * time steps per launch, a barrier per step): Pathfinder in blocks of bdim threads
     * (bdim > 2 steps), Hotspot in tiles of 2^tw_log x th (both > 2 steps); team as in
     * simt_launch_cfg. Results equal canopy_simt_ref_pathfinder's and canopy_simt_ref_hotspot's. */
    int (*pathfinder_tiled)(const int32_t *wall, int rows, int cols, int bdim, int steps, int team,
                            int32_t *out, int threads);
    int (*hotspot_tiled)(const float *temp, const float *power, int rows, int cols, int iters,
                         int tw_log, int th, int steps, int team, float *out, int threads);
    /* Gaussian elimination without pivoting (Rodinia: Fan1 and Fan2 per step, back
     * substitution on the host): x solving a x = b, a n x n row-major (as
     * canopy_simt_ref_gaussian). */
    int (*gaussian)(const float *a, const float *b, int n, float *x, int threads);
    /* Wu's microbenchmarks (Fig. 6.6); memory: rdeg + 1 a power of two <= n; shmem: rdeg
     * 0 or a power of two in 64..2048. */
    int (*empty)(int grid, int bdim, int threads);
    int (*memory)(const int32_t *in, int32_t *out, int n, int rdeg, int iters, int threads);
    int (*diverge)(int32_t *out, int n, int d, int cost, int threads);
    int (*barrier)(int bdim, int iters);
    int (*shmem)(int32_t *out, int rdeg, int iters, int team);
} simt_impl;

extern const simt_impl canopy_simt_impl_avx512, canopy_simt_impl_avx2, canopy_simt_impl_generic;
/* The table for `width` lanes (8 or 16) on this CPU, NULL when its ISA is absent; width
 * 0: the widest available. */
const simt_impl *canopy_simt_impl_for(int width);

/* Scalar references (plain C, OpenMP over threads). */
void canopy_simt_ref_divergent(const int32_t *in, int32_t *out, int n);
void canopy_simt_ref_exchange(const int32_t *in, int32_t *out, int n, int bdim, int rounds);
void canopy_simt_ref_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out, int threads);
void canopy_simt_ref_bfs(const int32_t *rowptr, const int32_t *col, int n, int src, int32_t *cost,
                         int threads);
void canopy_simt_ref_hotspot(const float *temp, const float *power, int rows, int cols, int iters,
                             float *out, int threads);
void canopy_simt_ref_nn(const float *rec, int n, float lat, float lng, float *dist, int threads);
void canopy_simt_ref_lev(const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits,
                         int threads);
void canopy_simt_ref_gaussian(const float *a, const float *b, int n, float *x, int threads);
void canopy_simt_ref_memory(const int32_t *in, int32_t *out, int n, int rdeg, int iters,
                            int threads);
void canopy_simt_ref_diverge(int32_t *out, int n, int d, int cost, int threads);
void canopy_simt_ref_shmem(int32_t *out, int rdeg, int iters);

#endif
