/* SPDX-License-Identifier: MIT */
/* Selection on (key, index) pairs, shared by the builders that split at a median. */
#ifndef CANOPY_TREE_SELECT_H
#define CANOPY_TREE_SELECT_H

#include "canopy.h"

#include <stdint.h>

/* Swaps entries a and b of key and, with them, of perm. */
static inline void canopy_swap_pairs(float *key, int64_t *perm, int64_t a, int64_t b) {
    float k = key[a];
    key[a] = key[b];
    key[b] = k;
    int64_t p = perm[a];
    perm[a] = perm[b];
    perm[b] = p;
}

/* The median of three keys: the selections' pivot. */
static inline float canopy_select_median3(float a, float b, float c) {
    if (a < b) return b < c ? b : (a < c ? c : a);
    return a < c ? a : (b < c ? c : b);
}

/* Reorders key[0..n) and perm[0..n) together so that key[nth] is the value a full
 * sort would put there, with no larger key before it and no smaller after it.
 * Three-way partitioning keeps it linear on inputs with many equal keys. */
void canopy_select_pairs(float *key, int64_t *perm, int64_t n, int64_t nth);

/* The ball tree's split: reorders perm[begin..end) so that its first half
 * holds the points whose coordinate dim is at most the median, sets child_begin[0..1]
 * and returns 2 (children); returns 0 (a leaf) when there is no memory for the keys,
 * which still makes a correct tree, only a slower one. */
int canopy_split_at_median(canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                           int32_t dim, int64_t *child_begin);

/* The kd rule's three-way partition (build_kd.c's partition_out) on AVX-512: copies
 * the keys of a[lo, hi) below pivot to the front of b[lo, hi) and those above it to
 * the back; returns where the keys equal to it begin, *gt where those above begin (the
 * order within each side is unspecified). Call only where canopy_cpu_isa() is
 * CANOPY_ISA_AVX512. */
int64_t canopy_kd_partition_avx512(const float *a, float *b, int64_t lo, int64_t hi, float pivot,
                                   int64_t *gt);

#endif
