/* SPDX-License-Identifier: MIT */
#include "tree/select.h"

#include <stdlib.h>

typedef struct pairs {
    float *key;
    int64_t *perm;
} pairs;

static float pairs_key(const void *ctx, int64_t i) {
    return ((const pairs *)ctx)->key[i];
}

static void pairs_swap(void *ctx, int64_t a, int64_t b) {
    canopy_swap_pairs(((pairs *)ctx)->key, ((pairs *)ctx)->perm, a, b);
}

void canopy_select_pairs(float *key, int64_t *perm, int64_t n, int64_t nth) {
    pairs p = {key, perm};
    canopy_select_with(pairs_key, pairs_swap, &p, n, nth);
}

int canopy_split_at_median(canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                           int32_t dim, int64_t *child_begin) {
    int64_t m = end - begin;
    float *key = malloc(sizeof(float) * (size_t)m);
    if (!key) return 0;
    for (int64_t i = 0; i < m; i++) key[i] = canopy_point(pts, perm[begin + i])[dim];
    canopy_select_pairs(key, perm + begin, m, m / 2);
    free(key);
    child_begin[0] = begin;
    child_begin[1] = begin + m / 2;
    return 2;
}
