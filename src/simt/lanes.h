/* SPDX-License-Identifier: MIT */
/* Lane primitives for the library's own SIMD loops (the forest walker, the regex Pike
 * VM), beside canopy/simt.h's: their lanes' addresses are scattered and their lists have
 * room past the end, so these skip simt.h's tests for empty masks and contiguous lanes
 * and store whole vectors. Written once; a file defines SIMT_W (8 or 16) and is compiled
 * with that width's ISA flags (AVX2, AVX-512) or none (portable loops). */
#ifndef CANOPY_SIMT_LANES_H
#define CANOPY_SIMT_LANES_H

#include "canopy/simt.h"

#include <string.h>

#if !defined(SIMT_W)
#error "define SIMT_W before including simt/lanes.h"
#endif

/* For each 8-bit keep mask, the kept lanes' indices packed to the front (0 after them):
 * the permutation of one AVX2 stream-compaction step (Ren §3.3). */
extern const int32_t canopy_simt_compact_perm8[256][8];

/* A whole vector from p (any alignment), and back. */
static inline simt_int simt_loadu(const void *p) {
    simt_int v;
    memcpy(&v, p, sizeof v);
    return v;
}
static inline void simt_storeu(void *p, simt_int v) {
    memcpy(p, &v, sizeof v);
}

/* Lane l gets the 32-bit word at (const char *)base + off[l] * scale, lanes of m only
 * (the others get 0 and read nothing); scale is a constant 1, 2, 4 or 8. The AVX2 and
 * AVX-512 gathers want it as an immediate, hence one case per scale. */
#if defined(SIMT_AVX512)
#define SIMT_GATHER_AT_(s)                                                                         \
    return (simt_int)_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), (__mmask16)simt_bits(m),  \
                                                 (__m512i)off, base, s)
#elif defined(SIMT_AVX2)
#define SIMT_GATHER_AT_(s)                                                                         \
    return (simt_int)_mm256_mask_i32gather_epi32(_mm256_setzero_si256(), (const int *)base,        \
                                                 (__m256i)off, (__m256i)m, s)
#endif
static inline simt_int simt_gather_at_masked(const void *base, simt_int off, int scale,
                                             simt_mask m) {
#if defined(SIMT_GATHER_AT_)
    switch (scale) {
    case 1:
        SIMT_GATHER_AT_(1);
    case 2:
        SIMT_GATHER_AT_(2);
    case 8:
        SIMT_GATHER_AT_(8);
    default:
        SIMT_GATHER_AT_(4);
    }
#else
    simt_int r = {0};
    for (int l = 0; l < SIMT_W; l++)
        if (m[l]) { /* through a scalar: clang takes no address of a vector element */
            int32_t x;
            memcpy(&x, (const char *)base + (ptrdiff_t)off[l] * scale, sizeof x);
            r[l] = x;
        }
    return r;
#endif
}
#undef SIMT_GATHER_AT_

/* The same for every lane (the gather instructions take a mask either way). A gather's
 * destination is also an input (masked-off lanes keep it): given an all-ones mask, gcc
 * drops the zero pass-through for AVX2 and may pick a register that still holds a
 * later gather of the previous iteration, chaining the iterations of a loop (measured:
 * the AVX2 forest sweep 1.3x slower). Hiding the mask from the compiler keeps the
 * zeroing, which breaks the chain. */
static inline simt_int simt_gather_at(const void *base, simt_int off, int scale) {
    simt_mask all = simt_splat(-1);
#if defined(SIMT_AVX2)
    __asm__("" : "+x"(all));
#endif
    return simt_gather_at_masked(base, off, scale, all);
}

/* Writes the lanes of m packed to the front of out and returns how many; out has room
 * for SIMT_W values, and those past the count are overwritten with junk (a whole-vector
 * store is cheaper than a store of the count: AVX-512's compress to memory is microcoded
 * on AMD Zen 4, compress to a register is not). */
static inline int simt_compact_store(int32_t *out, simt_int v, simt_mask m) {
    uint32_t b = simt_bits(m);
#if defined(SIMT_AVX512)
    simt_storeu(out, (simt_int)_mm512_maskz_compress_epi32((__mmask16)b, (__m512i)v));
#elif defined(SIMT_AVX2)
    simt_storeu(out, (simt_int)_mm256_permutevar8x32_epi32(
                         (__m256i)v, (__m256i)simt_loadu(canopy_simt_compact_perm8[b])));
#else
    int n = 0;
    for (int l = 0; l < SIMT_W; l++)
        if (b >> l & 1) out[n++] = v[l];
#endif
    return __builtin_popcount(b);
}

#endif
