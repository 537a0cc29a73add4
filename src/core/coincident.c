/* SPDX-License-Identifier: MIT */
#include "core/coincident.h"

#include <stdlib.h>
#include <string.h>

static int rows_equal(canopy_points p, int64_t i, int64_t j) {
    const float *x = canopy_point(p, i), *y = canopy_point(p, j);
    for (int32_t k = 0; k < p.d; k++)
        if (x[k] != y[k]) return 0;
    return 1;
}

static uint64_t row_hash(canopy_points p, int64_t i) {
    const float *x = canopy_point(p, i);
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int32_t k = 0; k < p.d; k++) {
        float v = x[k] + 0.0f; /* -0.0 hashes as 0.0, which it equals */
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        h = (h ^ bits) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return h;
}

int canopy_points_find_coincident(canopy_points p, int64_t *a, int64_t *b) {
    if (p.n < 2) return 0;
    uint64_t size = 2;
    while (size < 2 * (uint64_t)p.n) size <<= 1;
    int64_t *slot = calloc(size, sizeof *slot); /* row + 1; 0 is empty */
    if (!slot) return -1;
    int found = 0;
    for (int64_t i = 0; i < p.n && !found; i++) {
        uint64_t s = row_hash(p, i) & (size - 1);
        for (; slot[s]; s = (s + 1) & (size - 1))
            if (rows_equal(p, slot[s] - 1, i)) {
                *a = slot[s] - 1;
                *b = i;
                found = 1;
                break;
            }
        if (!found) slot[s] = i + 1;
    }
    free(slot);
    return found;
}
