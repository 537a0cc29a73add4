/* SPDX-License-Identifier: MIT */
/* The SIMT kernels: one source each, compiled per lane width for the CPU (isa_body.h)
 * and by nvcc for the GPU (gpu.cu). Only the canopy/simt.h layer (and simt/consts.h)
 * is used here. */
#ifndef CANOPY_SIMT_KERNELS_H
#define CANOPY_SIMT_KERNELS_H

/* The float kernels (and consts.h's back substitution) equal their references bit for
 * bit only unfused: gcc's C11 mode and nvcc --fmad=false do not contract a * b + c,
 * clang does unless told (its FMA builds). */
#if defined(__clang__) && !defined(__CUDACC__)
#pragma clang fp contract(off)
#endif

#include "canopy/simt.h"
#include "simt/consts.h"

/* A cheap per-thread pseudo-random number, the same in every build (no overflow). */
#define SIMT_HASH_(g, it) ((((g)&0x7fff) * 40503 + (it)*9973 + 17) >> 5)

typedef struct k_divergent_args {
    const int32_t *in;
    int32_t *out;
    int n;
} k_divergent_args;

/* Divergent ifs, a data-dependent loop with break and early returns (test only). */
SIMT_KERNEL(k_divergent, k_divergent_args) {
    SIMT_BEGIN;
    simt_int i = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(i >= args->n)
    SIMT_RETURN;
    SIMT_ENDIF
    simt_int x = SIMT_LD(args->in, i);
    SIMT_IF((x % 7) == 0)
    SIMT_ST(args->out, i, -1);
    SIMT_RETURN;
    SIMT_ENDIF
    simt_int acc = x;
    SIMT_IF(x & 1)
    SIMT_SET(acc, x * 3);
    SIMT_ELSE
    SIMT_SET(acc, x / 2);
    SIMT_ENDIF
    simt_int y = (x & 1023) + 1, steps = x - x;
    SIMT_WHILE(y != 1)
    SIMT_IF(steps >= 40)
    SIMT_BREAK;
    SIMT_ENDIF
    SIMT_IF(y & 1)
    SIMT_SET(y, 3 * y + 1);
    SIMT_ELSE
    SIMT_SET(y, y >> 1);
    SIMT_ENDIF
    SIMT_SET(steps, steps + 1);
    SIMT_ENDWHILE
    SIMT_IF((steps > 20) & (acc > 100))
    SIMT_ST(args->out, i, steps + acc);
    SIMT_RETURN;
    SIMT_ENDIF
    SIMT_ST(args->out, i, steps - acc);
}

typedef struct k_exchange_args {
    const int32_t *in;
    int32_t *out;
    int n, rounds;
} k_exchange_args;

/* Each round every thread publishes its value in shared memory and takes its
 * neighbour's (r+1 places on, across warps): wrong without the barriers. */
SIMT_KERNEL(k_exchange, k_exchange_args) {
    SIMT_BEGIN;
    SIMT_SHARED_DYN(int32_t, buf, SIMT_BDIM);
    simt_int t = SIMT_TID, g = SIMT_BID * SIMT_BDIM + t;
    simt_int v = g - g;
    SIMT_IF(g < args->n)
    SIMT_SET(v, SIMT_LD(args->in, g));
    SIMT_ENDIF
    for (int r = 0; r < args->rounds; r++) {
        SIMT_ST(buf, t, v);
        SIMT_SYNC();
        SIMT_SET(v, SIMT_LD(buf, (t + r + 1) % SIMT_BDIM) + r);
        SIMT_SYNC();
    }
    SIMT_IF(g < args->n)
    SIMT_ST(args->out, g, v);
    SIMT_ENDIF
}

typedef struct k_pathfinder_args {
    const int32_t *wall, *src;
    int32_t *dst;
    int cols, row;
} k_pathfinder_args;

/* Pathfinder (Rodinia): one grid row per launch, each cell adds its wall cost to the
 * cheapest of the three cells above it. */
SIMT_KERNEL(k_pathfinder, k_pathfinder_args) {
    SIMT_BEGIN;
    simt_int x = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(x < args->cols)
    simt_int l = SIMT_SELECT(x > 0, x - 1, x), r = SIMT_SELECT(x < args->cols - 1, x + 1, x);
    simt_int m = SIMT_MIN(SIMT_LD(args->src, l), SIMT_LD(args->src, x));
    m = SIMT_MIN(m, SIMT_LD(args->src, r));
    SIMT_ST(args->dst, x, m + SIMT_LD(args->wall, args->row * args->cols + x));
    SIMT_ENDIF
}

typedef struct k_bfs_args {
    const int32_t *rowptr, *col;
    int32_t *mask, *updating, *visited, *cost, *over;
    int n;
} k_bfs_args;

/* BFS (Rodinia), kernel 1: each frontier vertex offers cost+1 to its unvisited
 * neighbours (every writer writes the same level). */
SIMT_KERNEL(k_bfs_expand, k_bfs_args) {
    SIMT_BEGIN;
    simt_int v = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(v < args->n)
    SIMT_IF(SIMT_LD(args->mask, v) != 0)
    SIMT_ST(args->mask, v, 0);
    simt_int e = SIMT_LD(args->rowptr, v), end = SIMT_LD(args->rowptr, v + 1);
    simt_int c = SIMT_LD(args->cost, v) + 1;
    SIMT_WHILE(e < end)
    simt_int w = SIMT_LD(args->col, e);
    SIMT_IF(SIMT_LD(args->visited, w) == 0)
    SIMT_ST(args->cost, w, c);
    SIMT_ST(args->updating, w, 1);
    SIMT_ENDIF
    SIMT_SET(e, e + 1);
    SIMT_ENDWHILE
    SIMT_ENDIF
    SIMT_ENDIF
}

/* BFS kernel 2: the offered vertices become the next frontier. */
SIMT_KERNEL(k_bfs_commit, k_bfs_args) {
    SIMT_BEGIN;
    simt_int v = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(v < args->n)
    SIMT_IF(SIMT_LD(args->updating, v) != 0)
    SIMT_ST(args->mask, v, 1);
    SIMT_ST(args->visited, v, 1);
    SIMT_ST(args->updating, v, 0);
    SIMT_FLAG_SET(args->over);
    SIMT_ENDIF
    SIMT_ENDIF
}

typedef struct k_hotspot_args {
    const float *temp, *power;
    float *out;
    int rows, cols, bpr; /* bpr: blocks per grid row */
    hotspot_consts k;
} k_hotspot_args;

/* Hotspot (Rodinia): one explicit step of the chip's heat equation, edges clamped. */
SIMT_KERNEL(k_hotspot, k_hotspot_args) {
    SIMT_BEGIN;
    int r = SIMT_BID / args->bpr;
    simt_int c = (SIMT_BID % args->bpr) * SIMT_BDIM + SIMT_TID;
    SIMT_IF(c < args->cols)
    simt_int i = r * args->cols + c;
    simt_int w = SIMT_SELECT(c > 0, i - 1, i), e = SIMT_SELECT(c < args->cols - 1, i + 1, i);
    int n = r > 0 ? -args->cols : 0, s = r < args->rows - 1 ? args->cols : 0;
    simt_float t = SIMT_LD(args->temp, i), p = SIMT_LD(args->power, i);
    simt_float vs = SIMT_LD(args->temp, i + s), vn = SIMT_LD(args->temp, i + n);
    simt_float ve = SIMT_LD(args->temp, e), vw = SIMT_LD(args->temp, w);
    SIMT_ST(args->out, i, HOTSPOT_NEXT(args->k, t, p, vs, vn, ve, vw));
    SIMT_ENDIF
}

typedef struct k_nn_args {
    const float *rec; /* (lat, lng) pairs */
    float *dist;
    int n;
    float lat, lng;
} k_nn_args;

/* NN (Rodinia's nn, the chapter's kNN): each record's squared distance to the target;
 * the pairs make every load a stride-2 gather. */
SIMT_KERNEL(k_nn, k_nn_args) {
    SIMT_BEGIN;
    simt_int g = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(g < args->n)
    simt_float a = SIMT_LD(args->rec, 2 * g) - args->lat,
               b = SIMT_LD(args->rec, 2 * g + 1) - args->lng;
    SIMT_ST(args->dist, g, a * a + b * b);
    SIMT_ENDIF
}

typedef struct k_lev_args {
    const int32_t *text; /* stream g's character i at text[i * n + g] (coalesced) */
    int32_t *hits;
    const int32_t *pat; /* SIMT_LEV_M characters */
    int n, len;
} k_lev_args;

/* Levenshtein (the chapter's LD): each thread scans its own stream for substrings
 * within edit distance 1 of an 8-character pattern (Sellers' column DP; a substring may
 * start anywhere, so row 0 stays 0) and counts the positions where one ends. */
SIMT_KERNEL(k_lev, k_lev_args) {
    SIMT_BEGIN;
    simt_int g = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(g < args->n)
    simt_int zero = g - g, one = zero + 1, hits = zero, d[SIMT_LEV_M + 1];
    for (int j = 0; j <= SIMT_LEV_M; j++) d[j] = zero + j;
    for (int i = 0; i < args->len; i++) {
        simt_int c = SIMT_LD(args->text, i * args->n + g), diag = d[0];
        for (int j = 1; j <= SIMT_LEV_M; j++) {
            simt_int up = d[j];
            simt_int v = SIMT_MIN(up + 1, d[j - 1] + 1);
            d[j] = SIMT_MIN(v, diag + SIMT_SELECT(c == args->pat[j - 1], zero, one));
            diag = up;
        }
        hits = hits + SIMT_SELECT(d[SIMT_LEV_M] <= 1, one, zero);
    }
    SIMT_ST(args->hits, g, hits);
    SIMT_ENDIF
}

typedef struct k_pathfinder_tile_args {
    const int32_t *wall, *src;
    int32_t *dst;
    int cols, row, steps; /* rows row+1 .. row+steps, from src (row `row`) */
} k_pathfinder_tile_args;

/* Pathfinder with Rodinia's pyramid: a block loads SIMT_BDIM columns of a row into
 * shared memory and advances them `steps` rows there, each step one column narrower on
 * either side, so its middle SIMT_BDIM - 2 * steps columns come out `steps` rows on; one
 * launch and one barrier per row instead of one launch per row. */
SIMT_BLOCK_KERNEL(k_pathfinder_tile, k_pathfinder_tile_args) {
    SIMT_SHARED_DYN(int32_t, buf, 2 * SIMT_BDIM);
    int32_t *prev = buf, *next = buf + SIMT_BDIM;
    int steps = args->steps, cols = args->cols, x0 = SIMT_BID * (SIMT_BDIM - 2 * steps) - steps;
    SIMT_WARPS
    simt_int t = SIMT_TID, x = x0 + t;
    SIMT_IF((x >= 0) & (x < cols))
    SIMT_ST(prev, t, SIMT_LD(args->src, x));
    SIMT_ENDIF
    SIMT_END_WARPS
    SIMT_SYNC();
    for (int i = 0; i < steps; i++) {
        SIMT_WARPS
        simt_int t = SIMT_TID, x = x0 + t;
        SIMT_IF((t > i) & (t < SIMT_BDIM - 1 - i) & (x >= 0) & (x < cols))
        simt_int l = SIMT_SELECT(x > 0, t - 1, t), r = SIMT_SELECT(x < cols - 1, t + 1, t);
        simt_int m = SIMT_MIN(SIMT_LD(prev, l), SIMT_LD(prev, t));
        m = SIMT_MIN(m, SIMT_LD(prev, r));
        SIMT_ST(next, t, m + SIMT_LD(args->wall, (args->row + 1 + i) * cols + x));
        SIMT_ENDIF
        SIMT_END_WARPS
        SIMT_SYNC(); /* the next step writes what this one read */
        int32_t *s = prev;
        prev = next;
        next = s;
    }
    SIMT_WARPS
    simt_int t = SIMT_TID, x = x0 + t;
    SIMT_IF((t >= steps) & (t < SIMT_BDIM - steps) & (x < cols))
    SIMT_ST(args->dst, x, SIMT_LD(prev, t));
    SIMT_ENDIF
    SIMT_END_WARPS
}

typedef struct k_hotspot_tile_args {
    const float *temp, *power;
    float *out;
    int rows, cols, steps, tw_log, th, bpr; /* tile 2^tw_log x th threads; bpr tiles per row */
    hotspot_consts k;
} k_hotspot_tile_args;

/* Hotspot with Rodinia's pyramid: a block loads a tile of temperatures and powers into
 * shared memory and runs `steps` steps there, the valid part shrinking by a cell on
 * every side each step; the tile's middle is written back. The tile's rows are warps'
 * runs of contiguous cells (2^tw_log wide, a multiple of the warp on the CPU). */
SIMT_BLOCK_KERNEL(k_hotspot_tile, k_hotspot_tile_args) {
    SIMT_SHARED_DYN(float, fbuf, 3 * SIMT_BDIM); /* CUDA: one name per type in a file */
    float *cur = fbuf, *nxt = fbuf + SIMT_BDIM, *pw = fbuf + 2 * SIMT_BDIM;
    int steps = args->steps, tw = 1 << args->tw_log, th = args->th;
    int r0 = SIMT_BID / args->bpr * (th - 2 * steps) - steps,
        c0 = SIMT_BID % args->bpr * (tw - 2 * steps) - steps;
    SIMT_WARPS
    simt_int t = SIMT_TID, r = r0 + (t >> args->tw_log), c = c0 + (t & (tw - 1));
    SIMT_IF((r >= 0) & (r < args->rows) & (c >= 0) & (c < args->cols))
    simt_int g = r * args->cols + c;
    SIMT_ST(cur, t, SIMT_LD(args->temp, g));
    SIMT_ST(pw, t, SIMT_LD(args->power, g));
    SIMT_ENDIF
    SIMT_END_WARPS
    SIMT_SYNC();
    for (int i = 0; i < steps; i++) {
        SIMT_WARPS
        simt_int t = SIMT_TID, ty = t >> args->tw_log, tx = t & (tw - 1);
        simt_int r = r0 + ty, c = c0 + tx;
        SIMT_IF((ty > i) & (ty < th - 1 - i) & (tx > i) & (tx < tw - 1 - i) & (r >= 0) &
                (r < args->rows) & (c >= 0) & (c < args->cols))
        simt_int w = SIMT_SELECT(c > 0, t - 1, t), e = SIMT_SELECT(c < args->cols - 1, t + 1, t);
        simt_int n = SIMT_SELECT(r > 0, t - tw, t), s = SIMT_SELECT(r < args->rows - 1, t + tw, t);
        simt_float v = SIMT_LD(cur, t), p = SIMT_LD(pw, t);
        simt_float vs = SIMT_LD(cur, s), vn = SIMT_LD(cur, n), ve = SIMT_LD(cur, e),
                   vw = SIMT_LD(cur, w);
        SIMT_ST(nxt, t, HOTSPOT_NEXT(args->k, v, p, vs, vn, ve, vw));
        SIMT_ENDIF
        SIMT_END_WARPS
        SIMT_SYNC(); /* the next step writes what this one read */
        float *sw = cur;
        cur = nxt;
        nxt = sw;
    }
    SIMT_WARPS
    simt_int t = SIMT_TID, ty = t >> args->tw_log, tx = t & (tw - 1);
    simt_int r = r0 + ty, c = c0 + tx;
    SIMT_IF((ty >= steps) & (ty < th - steps) & (tx >= steps) & (tx < tw - steps) &
            (r < args->rows) & (c < args->cols))
    SIMT_ST(args->out, r * args->cols + c, SIMT_LD(cur, t));
    SIMT_ENDIF
    SIMT_END_WARPS
}

typedef struct k_gauss_args {
    float *a, *b, *m; /* n x n matrix, right-hand side, multipliers (column t of m) */
    int n, t;
} k_gauss_args;

/* Gaussian elimination (Rodinia's gaussian), step t, Fan1: the multiplier of each row
 * below the pivot row. */
SIMT_KERNEL(k_gauss_fan1, k_gauss_args) {
    SIMT_BEGIN;
    simt_int i = args->t + 1 + SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(i < args->n)
    SIMT_ST(args->m, i,
            SIMT_LD(args->a, i * args->n + args->t) / args->a[args->t * args->n + args->t]);
    SIMT_ENDIF
}

/* Fan2: row t + 1 + SIMT_BID less its multiple of the pivot row, columns t..n-1 in
 * strides of the block (Rodinia's 2-D grid of one column per thread made each thread's
 * work a few lanes long, so the per-warp set-up dominated on the CPU), and its
 * right-hand side (the thread of column t). */
SIMT_KERNEL(k_gauss_fan2, k_gauss_args) {
    SIMT_BEGIN;
    int n = args->n, t = args->t, i = t + 1 + SIMT_BID;
    float mi = args->m[i];
    simt_int j = t + SIMT_TID;
    SIMT_IF(j == t)
    SIMT_ST(args->b, i, SIMT_LD(args->b, i) - mi * args->b[t]);
    SIMT_ENDIF
    SIMT_WHILE(j < n)
    SIMT_ST(args->a, i * n + j, SIMT_LD(args->a, i * n + j) - mi * SIMT_LD(args->a, t * n + j));
    SIMT_SET(j, j + SIMT_BDIM);
    SIMT_ENDWHILE
}

/* ------------------------------------------ microbenchmarks (Wu, Fig. 6.6) -- */
typedef struct k_micro_args {
    const int32_t *in;
    int32_t *out;
    int n, rdeg, iters, d, cost;
} k_micro_args;

SIMT_KERNEL(k_empty, k_micro_args) {
    SIMT_BEGIN;
    (void)args;
}

/* (a) irregular memory: thread g reads in[g + rand(0..rdeg)] each iteration (rdeg + 1 a
 * power of two at most n: masks, not divisions, which have no vector instruction). */
SIMT_KERNEL(k_memory, k_micro_args) {
    SIMT_BEGIN;
    simt_int g = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(g < args->n)
    simt_int acc = g - g;
    for (int it = 0; it < args->iters; it++) {
        simt_int j = g;
        if (args->rdeg > 0) {
            j = g + (SIMT_HASH_(g, it) & args->rdeg);
            j = SIMT_SELECT(j >= args->n, j - args->n, j);
        }
        acc = acc + SIMT_LD(args->in, j);
    }
    SIMT_ST(args->out, g, acc);
    SIMT_ENDIF
}

/* (b) control divergence: thread g takes branch g mod d of d, each `cost` steps long. */
SIMT_KERNEL(k_diverge, k_micro_args) {
    SIMT_BEGIN;
    simt_int g = SIMT_BID * SIMT_BDIM + SIMT_TID;
    SIMT_IF(g < args->n)
    simt_int x = g, br = g % args->d;
    for (int b = 0; b < args->d; b++) {
        SIMT_IF(br == b)
        for (int k = 0; k < args->cost; k++) SIMT_SET(x, ((x * 3) + b) & 0xffffff);
        SIMT_ENDIF
    }
    SIMT_ST(args->out, g, x);
    SIMT_ENDIF
}

/* (c) block barrier: iters barriers in a row. */
SIMT_KERNEL(k_barrier, k_micro_args) {
    SIMT_BEGIN;
    for (int it = 0; it < args->iters; it++) SIMT_SYNC();
}

/* (d) shared memory: each thread writes and reads back its own words of a 2048-word
 * array (t + 64 * rand), so no barrier is needed; rdeg (0 or a power of two, 64..2048)
 * sets how scattered they are. */
SIMT_KERNEL(k_shmem, k_micro_args) {
    SIMT_BEGIN;
    SIMT_SHARED(int32_t, sm, 2048);
    simt_int t = SIMT_TID, acc = t - t;
    for (int it = 0; it < args->iters; it++) {
        simt_int j = t;
        if (args->rdeg > 0) j = (t + 64 * (SIMT_HASH_(t, it) & (args->rdeg / 64 - 1))) & 2047;
        SIMT_ST(sm, j, t + it);
        acc = acc + SIMT_LD(sm, j);
    }
    SIMT_ST(args->out, t, acc);
}

#endif
