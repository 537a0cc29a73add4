/* SPDX-License-Identifier: MIT */
/* Space-filling-curve keys of a grid cell, one source for the host (schedule.c) and the
 * device (gpu_schedule.cu): both schedules must order queries bit for bit alike. */
#ifndef CANOPY_TRAVERSE_CURVE_KEY_H
#define CANOPY_TRAVERSE_CURVE_KEY_H

#include "canopy/traverse.h"

#include <stdint.h>

/* The Morton key of a cell with `bits`-bit coordinates x[0..d), bits * d <= 63: the bits
 * interleaved, most significant first, coordinate 0 first. */
CANOPY_HD uint64_t canopy_morton_key(const uint64_t *x, int32_t d, int32_t bits) {
    uint64_t key = 0;
    for (int32_t b = bits - 1; b >= 0; b--)
        for (int32_t j = 0; j < d; j++) key = key << 1 | ((x[j] >> b) & 1u);
    return key;
}

/* Skilling, "Programming the Hilbert curve" (2004): the Hilbert index of a cell,
 * written "transposed" (its bits dealt round-robin over the d coordinates), is
 * obtained from the cell's coordinates in place by undoing, from the top bit down,
 * the reflections and axis exchanges the curve applies in each sub-cube, then Gray
 * coding. Interleaving the transposed bits (coordinate 0 first) gives the index.
 * Overwrites x. */
CANOPY_HD uint64_t canopy_hilbert_key(uint64_t *x, int32_t d, int32_t bits) {
    uint64_t top = (uint64_t)1 << (bits - 1);
    for (uint64_t q = top; q > 1; q >>= 1) {
        uint64_t p = q - 1; /* the bits below q */
        for (int32_t j = 0; j < d; j++) {
            if (x[j] & q) {
                x[0] ^= p; /* reflect */
            } else {
                uint64_t t = (x[0] ^ x[j]) & p; /* exchange the low bits of x0 and xj */
                x[0] ^= t;
                x[j] ^= t;
            }
        }
    }
    for (int32_t j = 1; j < d; j++) x[j] ^= x[j - 1];
    uint64_t t = 0;
    for (uint64_t q = top; q > 1; q >>= 1)
        if (x[d - 1] & q) t ^= q - 1;
    for (int32_t j = 0; j < d; j++) x[j] ^= t;
    return canopy_morton_key(x, d, bits);
}

#endif
