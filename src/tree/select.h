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

static inline float canopy_select_median3(float a, float b, float c) {
    if (a < b) return b < c ? b : (a < c ? c : a);
    return a < c ? a : (b < c ? c : b);
}

/* The selection algorithm once, over any storage: key(ctx, i) reads entry i, swap(ctx,
 * a, b) exchanges two. Always inlined so that constant key/swap functions inline too;
 * every caller with the same keys makes the same swaps, so the same split. */
static inline __attribute__((always_inline)) void
canopy_select_with(float (*key)(const void *, int64_t), void (*swap)(void *, int64_t, int64_t),
                   void *ctx, int64_t n, int64_t nth) {
    int64_t lo = 0, hi = n; /* the answer lies in [lo, hi) */
    while (hi - lo > 1) {
        float pivot =
            canopy_select_median3(key(ctx, lo), key(ctx, lo + (hi - lo) / 2), key(ctx, hi - 1));
        /* Dutch flag: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot. */
        int64_t lt = lo, i = lo, gt = hi - 1;
        while (i <= gt) {
            float k = key(ctx, i);
            if (k < pivot)
                swap(ctx, lt++, i++);
            else if (k > pivot)
                swap(ctx, i, gt--);
            else
                i++;
        }
        if (nth < lt)
            hi = lt;
        else if (nth > gt)
            lo = gt + 1;
        else
            return;
    }
}

/* Reorders key[0..n) and perm[0..n) together so that key[nth] is the value a full
 * sort would put there, with no larger key before it and no smaller after it.
 * Three-way partitioning keeps it linear on inputs with many equal keys. */
void canopy_select_pairs(float *key, int64_t *perm, int64_t n, int64_t nth);

/* The kd and ball trees' split: reorders perm[begin..end) so that its first half
 * holds the points whose coordinate dim is at most the median, sets child_begin[0..1]
 * and returns 2 (children); returns 0 (a leaf) when there is no memory for the keys,
 * which still makes a correct tree, only a slower one. */
int canopy_split_at_median(canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                           int32_t dim, int64_t *child_begin);

#endif
