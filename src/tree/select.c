/* SPDX-License-Identifier: MIT */
#include "tree/select.h"

#include <stdlib.h>

void canopy_select_pairs(float *key, int64_t *perm, int64_t n, int64_t nth) {
    int64_t lo = 0, hi = n; /* the answer lies in [lo, hi) */
    while (hi - lo > 1) {
        float pivot = canopy_select_median3(key[lo], key[lo + (hi - lo) / 2], key[hi - 1]);
        /* Dutch flag: [lo, lt) < pivot, [lt, i) == pivot, (gt, hi) > pivot. */
        int64_t lt = lo, i = lo, gt = hi - 1;
        while (i <= gt) {
            if (key[i] < pivot)
                canopy_swap_pairs(key, perm, lt++, i++);
            else if (key[i] > pivot)
                canopy_swap_pairs(key, perm, i, gt--);
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
