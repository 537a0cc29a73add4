/* SPDX-License-Identifier: MIT */
/* The kd median selection's three-way partition on 16 lanes (compiled with AVX-512
 * flags and called only when canopy_cpu_isa() finds AVX-512): a compare and a
 * compress per side and 16 keys, where the scalar loop takes a few cycles per key (the
 * selection was a quarter of a one-thread 2-D kd build). The compressed keys are
 * written by masked stores, not compress-stores, which some cores run microcoded. */
#include "tree/select.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

/* Keys a[i, hi) one at a time: below the pivot to b[*l], above it to b[*r - 1]. */
static inline void partition_tail(const float *a, float *b, int64_t i, int64_t hi, float pivot,
                                  int64_t *l, int64_t *r) {
    int64_t nl = *l, nr = *r;
    for (; i < hi; i++) {
        float t = a[i];
        b[nl] = t;
        b[nr - 1] = t;
        nl += t < pivot;
        nr -= t > pivot;
    }
    *l = nl;
    *r = nr;
}

int64_t canopy_kd_partition_avx512(const float *a, float *b, int64_t lo, int64_t hi, float pivot,
                                   int64_t *gt) {
    int64_t l = lo, r = hi, i = lo; /* b[lo, l) below the pivot, b[r, hi) above it */
#if defined(__AVX512F__)
    const __m512 p = _mm512_set1_ps(pivot);
    for (; i + 16 <= hi; i += 16) {
        __m512 v = _mm512_loadu_ps(a + i);
        __mmask16 below = _mm512_cmp_ps_mask(v, p, _CMP_LT_OQ);
        __mmask16 above = _mm512_cmp_ps_mask(v, p, _CMP_GT_OQ);
        int nb = __builtin_popcount(below), na = __builtin_popcount(above);
        _mm512_mask_storeu_ps(b + l, (__mmask16)((1u << nb) - 1),
                              _mm512_maskz_compress_ps(below, v));
        r -= na;
        _mm512_mask_storeu_ps(b + r, (__mmask16)((1u << na) - 1),
                              _mm512_maskz_compress_ps(above, v));
        l += nb;
    }
#endif
    /* the last keys; all of them outside x86, where canopy_cpu_isa() never picks this */
    partition_tail(a, b, i, hi, pivot, &l, &r);
    *gt = r;
    return l;
}
