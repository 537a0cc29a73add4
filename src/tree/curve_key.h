/* SPDX-License-Identifier: MIT */
/* Space-filling-curve keys of a grid cell, one source for the host (schedule.c) and the
 * device (gpu_schedule.cu), which must order queries bit for bit alike, and for the kd
 * curve build (build_kd_curve.c). */
#ifndef CANOPY_TREE_CURVE_KEY_H
#define CANOPY_TREE_CURVE_KEY_H

#include "canopy/tree_view.h"

#include <stdint.h>

/* The low bits of x moved apart to every second (x < 2^32) or third (x < 2^21) place,
 * five shifts and masks instead of a step per bit: spread2(x0) << 1 | spread2(x1) is
 * the 2-D Morton key, and so on in 3-D (coordinate 0 in the top place of each group). */
CANOPY_HD uint64_t canopy_spread2(uint64_t x) {
    x = (x | x << 16) & 0x0000FFFF0000FFFFull;
    x = (x | x << 8) & 0x00FF00FF00FF00FFull;
    x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;
    x = (x | x << 2) & 0x3333333333333333ull;
    return (x | x << 1) & 0x5555555555555555ull;
}
CANOPY_HD uint64_t canopy_spread3(uint64_t x) {
    x = (x | x << 32) & 0x001F00000000FFFFull;
    x = (x | x << 16) & 0x001F0000FF0000FFull;
    x = (x | x << 8) & 0x100F00F00F00F00Full;
    x = (x | x << 4) & 0x10C30C30C30C30C3ull;
    return (x | x << 2) & 0x1249249249249249ull;
}

/* The Morton key of a cell with `bits`-bit coordinates x[0..d), bits * d <= 63: the bits
 * interleaved, most significant first, coordinate 0 first. */
CANOPY_HD uint64_t canopy_morton_key(const uint64_t *x, int32_t d, int32_t bits) {
    uint64_t low = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    if (d == 2) return canopy_spread2(x[0] & low) << 1 | canopy_spread2(x[1] & low);
    if (d == 3)
        return canopy_spread3(x[0] & low) << 2 | canopy_spread3(x[1] & low) << 1 |
               canopy_spread3(x[2] & low);
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
 * Without branches: which of reflect and exchange applies is a coin toss per bit, and
 * mispredicting it was most of a key's cost. Overwrites x. */
CANOPY_HD uint64_t canopy_hilbert_key(uint64_t *x, int32_t d, int32_t bits) {
    uint64_t top = (uint64_t)1 << (bits - 1), x0 = d > 0 ? x[0] : 0;
    for (uint64_t q = top; q > 1; q >>= 1) {
        uint64_t p = q - 1;                        /* the bits below q */
        x0 ^= p & ((uint64_t)0 - ((x0 & q) != 0)); /* j = 0 only ever reflects */
        /* x0 in a register: x[0] through memory chained every step through a store */
        for (int32_t j = 1; j < d; j++) {
            uint64_t set = (uint64_t)0 - ((x[j] & q) != 0);
            /* set: reflect (x0 ^= p); clear: exchange the low bits of x0 and xj */
            uint64_t t = (x0 ^ x[j]) & p & ~set;
            x0 ^= (p & set) | t;
            x[j] ^= t;
        }
    }
    x[0] = x0;
    for (int32_t j = 1; j < d; j++) x[j] ^= x[j - 1];
    uint64_t t = 0;
    for (uint64_t q = top; q > 1; q >>= 1) t ^= (q - 1) & ((uint64_t)0 - ((x[d - 1] & q) != 0));
    for (int32_t j = 0; j < d; j++) x[j] ^= t;
    return canopy_morton_key(x, d, bits);
}

#endif
