/* SPDX-License-Identifier: MIT */
/* SIMT on SIMD (Wu, dissertation ch. 6): one kernel body for the GPU and the CPU's vector
 * units. On the CPU a CUDA thread is a vector lane, a warp is SIMT_W lanes run by one
 * OpenMP thread, and a block is a team of warps with a barrier; control flow becomes
 * masks (SIMT_IF: M_if = cond & M_parent, M_else = ~cond & M_parent, a branch whose mask
 * is empty is skipped; SIMT_WHILE runs while any lane is active; SIMT_RETURN clears
 * lanes). Under nvcc the same macros are the native constructs. Kernels that share
 * memory across barriers may be written block-wide (SIMT_BLOCK_KERNEL, SIMT_WARPS regions
 * between SIMT_SYNCs), so one CPU thread can run a block's warps in turn. docs/simt.md.
 *
 * A CPU kernel's translation unit defines SIMT_W (8 or 16) before including this header;
 * compile it with that width's ISA flags (AVX2 or AVX-512) or none (portable loops). */
#ifndef CANOPY_SIMT_H
#define CANOPY_SIMT_H

#include <stddef.h>
#include <stdint.h>

/* What a CPU kernel body knows about the warp it runs as; filled by the launcher. */
typedef struct canopy_simt_warp {
    int warp, block; /* warp in its block (-1: run them all in turn), block in the grid */
    int bdim, gdim;  /* threads per block, blocks */
    int lanes;       /* lanes of this warp that are threads (< bdim) */
    unsigned char *shared;
    size_t shared_size, shared_used; /* SIMT_SHARED takes from shared in declaration order */
    void (*sync)(struct canopy_simt_warp *w);
    void *team;
    int sense; /* the barrier's sense for this warp */
} canopy_simt_warp;

#if defined(CANOPY_SIMT_COUNT) && !defined(__CUDACC__)
/* A counting build (-DCANOPY_SIMT_COUNT, for canopy-bench-simt --counts): what the calling
 * thread's kernels did. Memory operations count once per warp; `lanes` sums their active
 * lanes. src/simt/runtime.c defines the counters. */
typedef struct canopy_simt_counts {
    unsigned long long launches, warps, barriers, loads, gathers, stores, scatters, lanes;
} canopy_simt_counts;
extern _Thread_local canopy_simt_counts canopy_simt_counts_;
#define SIMT_COUNT_(field, k) (canopy_simt_counts_.field += (k))
#else
#define SIMT_COUNT_(field, k) ((void)0)
#endif

#if defined(__CUDACC__)
/* ------------------------------------------------------------------ CUDA -- */
typedef int simt_int;
typedef float simt_float;
#define SIMT_KERNEL(name, T)                                                                       \
    static __device__ void name##_body(const T *args);                                             \
    static __global__ void name(const T args_v) {                                                  \
        name##_body(&args_v);                                                                      \
    }                                                                                              \
    static __device__ void name##_body(const T *args)
#define SIMT_BEGIN
#define SIMT_TID ((int)threadIdx.x)
#define SIMT_BID ((int)blockIdx.x)
#define SIMT_BDIM ((int)blockDim.x)
#define SIMT_GDIM ((int)gridDim.x)
#define SIMT_LANE ((int)(threadIdx.x & 31))
#define SIMT_WARP_ID ((int)(threadIdx.x >> 5))
#define SIMT_WARP_SIZE 32
#define SIMT_IF(c) if (c) {
#define SIMT_ELSE                                                                                  \
    }                                                                                              \
    else {
#define SIMT_ENDIF }
#define SIMT_WHILE(c) while (c) {
#define SIMT_ENDWHILE }
#define SIMT_BREAK break
#define SIMT_RETURN return
#define SIMT_SET(x, v) ((x) = (v))
#define SIMT_SELECT(c, a, b) ((c) ? (a) : (b))
#define SIMT_MIN(a, b) min((a), (b))
#define SIMT_LD(p, i) ((p)[i])
#define SIMT_ST(p, i, v) ((p)[i] = (v))
#define SIMT_FLAG_SET(p) (*(p) = 1)
#define SIMT_BALLOT(c) __ballot_sync(__activemask(), (c))
#define SIMT_ANY(c) __any_sync(__activemask(), (c))
#define SIMT_ALL(c) __all_sync(__activemask(), (c))
#define SIMT_SHFL(v, src) __shfl_sync(__activemask(), (v), (src))
#define SIMT_SYNC() __syncthreads()
#define SIMT_SHARED(T, name, n) __shared__ T name[n]
/* Sized at launch (its bytes are the launch's dynamic shared memory): one per kernel. */
#define SIMT_SHARED_DYN(T, name, n) extern __shared__ T name[]
#define SIMT_BLOCK_KERNEL(name, T) SIMT_KERNEL(name, T)
#define SIMT_WARPS {
#define SIMT_END_WARPS }

#elif defined(SIMT_W) /* without it, only the warp's description (for launchers) */
/* ------------------------------------------------------------------- CPU -- */
#if SIMT_W != 8 && SIMT_W != 16
#error "define SIMT_W as 8 or 16 before including canopy/simt.h"
#endif
#if defined(__AVX512F__) && defined(__AVX512DQ__) && SIMT_W == 16
#define SIMT_AVX512 1
#include <immintrin.h>
#elif defined(__AVX2__) && SIMT_W == 8
#define SIMT_AVX2 1
#include <immintrin.h>
#endif

typedef int32_t simt_int __attribute__((vector_size(4 * SIMT_W)));
typedef float simt_float __attribute__((vector_size(4 * SIMT_W)));
typedef simt_int simt_mask; /* -1 in an active lane, 0 elsewhere */

/* Lane primitives, each written once: vector extensions where the compiler does well,
 * intrinsics where it needs telling (gather, scatter, compress, permute, movemask). */
static inline simt_int simt_iota(void) {
#if SIMT_W == 16
    return (simt_int){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
#else
    return (simt_int){0, 1, 2, 3, 4, 5, 6, 7};
#endif
}
static inline simt_int simt_splat(int32_t x) {
    return (simt_int){0} + x;
}
static inline simt_float simt_splat_f(float x) {
    return (simt_float){0} + x;
}
/* IEEE square root per lane (rounded as sqrtf is, so lanes equal scalar code). */
static inline simt_float simt_sqrt_f(simt_float x) {
#if defined(SIMT_AVX512)
    return (simt_float)_mm512_sqrt_ps((__m512)x);
#elif defined(SIMT_AVX2)
    return (simt_float)_mm256_sqrt_ps((__m256)x);
#else
    simt_float r;
    for (int l = 0; l < SIMT_W; l++) r[l] = __builtin_sqrtf(x[l]);
    return r;
#endif
}
static inline simt_float simt_abs_f(simt_float x) {
    return (simt_float)((simt_int)x & 0x7fffffff);
}
static inline simt_mask simt_none(void) {
    return (simt_mask){0};
}

static inline uint32_t simt_bits(simt_mask m) {
#if defined(SIMT_AVX512)
    return _mm512_movepi32_mask((__m512i)m);
#elif defined(SIMT_AVX2)
    return (uint32_t)_mm256_movemask_ps((__m256)m);
#else
    uint32_t b = 0;
    for (int l = 0; l < SIMT_W; l++) b |= (uint32_t)(m[l] != 0) << l;
    return b;
#endif
}
static inline simt_mask simt_from_bits(uint32_t b) {
    return ((simt_splat((int32_t)b) >> simt_iota()) & 1) != 0;
}
static inline int simt_any(simt_mask m) {
    return simt_bits(m) != 0;
}

static inline simt_int simt_blend_i(simt_mask m, simt_int a, simt_int b) {
    return (a & m) | (b & ~m);
}
static inline simt_float simt_blend_f(simt_mask m, simt_float a, simt_float b) {
    return (simt_float)(((simt_int)a & m) | ((simt_int)b & ~m));
}
#define simt_blend(m, a, b)                                                                        \
    _Generic((b), simt_float : simt_blend_f, default : simt_blend_i)((m), (a), (b))

/* The lanes' addresses are base+idx[0]+lane: a (masked) vector load serves, not a gather. */
static inline int simt_contiguous(simt_int idx) {
    return !simt_any((idx - idx[0]) != simt_iota());
}

static inline simt_int simt_load_i(const int32_t *p, simt_mask m) {
    if (simt_bits(m) == (1u << SIMT_W) - 1) { /* a plain load: no mask to wait for */
        simt_int v;
        __builtin_memcpy(&v, p, sizeof v);
        return v;
    }
#if defined(SIMT_AVX512)
    return (simt_int)_mm512_maskz_loadu_epi32((__mmask16)simt_bits(m), p);
#elif defined(SIMT_AVX2)
    return (simt_int)_mm256_maskload_epi32((const int *)p, (__m256i)m);
#else
    simt_int r = {0};
    for (int l = 0; l < SIMT_W; l++)
        if (m[l]) r[l] = p[l];
    return r;
#endif
}
/* Counting builds only: one memory operation of the warp, a vector access or not. */
#define SIMT_COUNT_MEM_(vector, other, idx, m)                                                     \
    (SIMT_COUNT_(lanes, (unsigned)__builtin_popcount(simt_bits(m))),                               \
     simt_contiguous(idx) ? SIMT_COUNT_(vector, 1) : SIMT_COUNT_(other, 1))
static inline simt_int simt_gather_i(const int32_t *base, simt_int idx, simt_mask m) {
    if (!simt_any(m)) return simt_splat(0);
#if defined(CANOPY_SIMT_COUNT)
    SIMT_COUNT_MEM_(loads, gathers, idx, m);
#endif
    if (simt_contiguous(idx)) return simt_load_i(base + idx[0], m);
#if defined(SIMT_AVX512) || defined(SIMT_AVX2)
    /* Every lane, every other word (a field of two-word records): two unaligned loads
     * (the second from the middle word on, so no word past the last lane's is read) and
     * a permutation; gathers are slow on AMD. */
    if (simt_bits(m) == (1u << SIMT_W) - 1 && !simt_any((idx - idx[0]) != 2 * simt_iota())) {
        const int32_t *p = base + idx[0];
#if defined(SIMT_AVX512)
        __m512i lo = _mm512_loadu_si512(p), hi = _mm512_loadu_si512(p + 15);
        __m512i pick = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 17, 19, 21, 23, 25, 27, 29, 31);
        return (simt_int)_mm512_permutex2var_epi32(lo, pick, hi);
#else
        __m256i lo = _mm256_loadu_si256((const __m256i *)p),
                hi = _mm256_loadu_si256((const __m256i *)(p + 7));
        return (simt_int)_mm256_blend_epi32(
            _mm256_permutevar8x32_epi32(lo, _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0)),
            _mm256_permutevar8x32_epi32(hi, _mm256_setr_epi32(0, 0, 0, 0, 1, 3, 5, 7)), 0xf0);
#endif
    }
#endif
#if defined(SIMT_AVX512)
    return (simt_int)_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), (__mmask16)simt_bits(m),
                                                 (__m512i)idx, base, 4);
#elif defined(SIMT_AVX2)
    return (simt_int)_mm256_mask_i32gather_epi32(_mm256_setzero_si256(), (const int *)base,
                                                 (__m256i)idx, (__m256i)m, 4);
#else
    simt_int r = {0};
    for (int l = 0; l < SIMT_W; l++)
        if (m[l]) r[l] = base[idx[l]];
    return r;
#endif
}
static inline simt_float simt_gather_f(const float *base, simt_int idx, simt_mask m) {
    /* Lanes move bits, so a float gather is an int gather of the same memory (the
     * intrinsics may alias); the portable path reads floats as floats. */
#if defined(SIMT_AVX512) || defined(SIMT_AVX2)
    return (simt_float)simt_gather_i((const int32_t *)(const void *)base, idx, m);
#else
#if defined(CANOPY_SIMT_COUNT)
    if (simt_any(m)) SIMT_COUNT_MEM_(loads, gathers, idx, m);
#endif
    simt_float r = {0};
    for (int l = 0; l < SIMT_W; l++)
        if (m[l]) r[l] = base[idx[l]];
    return r;
#endif
}

static inline void simt_store_i(int32_t *p, simt_int v, simt_mask m) {
    if (simt_bits(m) == (1u << SIMT_W) - 1) {
        __builtin_memcpy(p, &v, sizeof v);
        return;
    }
#if defined(SIMT_AVX512)
    _mm512_mask_storeu_epi32(p, (__mmask16)simt_bits(m), (__m512i)v);
#elif defined(SIMT_AVX2)
    _mm256_maskstore_epi32((int *)p, (__m256i)m, (__m256i)v);
#else
    for (int l = 0; l < SIMT_W; l++)
        if (m[l]) p[l] = v[l];
#endif
}
/* Lanes writing one address: the highest lane wins, as an AVX-512 scatter does. */
static inline void simt_scatter_i(int32_t *base, simt_int idx, simt_int v, simt_mask m) {
    if (!simt_any(m)) return;
#if defined(CANOPY_SIMT_COUNT)
    SIMT_COUNT_MEM_(stores, scatters, idx, m);
#endif
    if (simt_contiguous(idx)) {
        simt_store_i(base + idx[0], v, m);
        return;
    }
#if defined(SIMT_AVX512)
    _mm512_mask_i32scatter_epi32(base, (__mmask16)simt_bits(m), (__m512i)idx, (__m512i)v, 4);
#else
    for (uint32_t b = simt_bits(m); b; b &= b - 1) {
        int l = __builtin_ctz(b);
        base[idx[l]] = v[l];
    }
#endif
}
static inline void simt_scatter_f(float *base, simt_int idx, simt_float v, simt_mask m) {
#if defined(SIMT_AVX512) || defined(SIMT_AVX2)
    simt_scatter_i((int32_t *)(void *)base, idx, (simt_int)v, m);
#else
#if defined(CANOPY_SIMT_COUNT)
    if (simt_any(m)) SIMT_COUNT_MEM_(stores, scatters, idx, m);
#endif
    for (int l = 0; l < SIMT_W; l++)
        if (m[l]) base[idx[l]] = v[l];
#endif
}

/* Writes the active lanes' values packed to out; returns how many. */
static inline int simt_compress_i(int32_t *out, simt_int v, simt_mask m) {
    uint32_t b = simt_bits(m);
#if defined(SIMT_AVX512)
    _mm512_mask_compressstoreu_epi32(out, (__mmask16)b, (__m512i)v);
    return __builtin_popcount(b);
#else
    int n = 0;
    for (; b; b &= b - 1) out[n++] = v[__builtin_ctz(b)];
    return n;
#endif
}

/* simt_compress_i into an output with room for SIMT_W values at out (the lanes after
 * the kept ones get junk): a register compress and a plain store, since the masked
 * compress-store is microcoded and slow on AMD Zen 4. */
static inline int simt_compress_i_padded(int32_t *out, simt_int v, simt_mask m) {
#if defined(SIMT_AVX512)
    uint32_t b = simt_bits(m);
    _mm512_storeu_si512(out, _mm512_maskz_compress_epi32((__mmask16)b, (__m512i)v));
    return __builtin_popcount(b);
#else
    return simt_compress_i(out, v, m);
#endif
}

/* Lane l gets v[src[l] mod SIMT_W]. */
static inline simt_int simt_shfl_i(simt_int v, simt_int src) {
    src &= SIMT_W - 1;
#if defined(SIMT_AVX512)
    return (simt_int)_mm512_permutexvar_epi32((__m512i)src, (__m512i)v);
#elif defined(SIMT_AVX2)
    return (simt_int)_mm256_permutevar8x32_epi32((__m256i)v, (__m256i)src);
#else
    simt_int r;
    for (int l = 0; l < SIMT_W; l++) r[l] = v[src[l]];
    return r;
#endif
}
static inline simt_float simt_shfl_f(simt_float v, simt_int src) {
    return (simt_float)simt_shfl_i((simt_int)v, src);
}

/* Takes the next n bytes of block-shared memory (64-byte aligned); every warp of a block
 * declares the same arrays in the same order, so all get the same addresses. */
static inline void *simt_shared_take(canopy_simt_warp *w, size_t n) {
    size_t at = w->shared_used;
    w->shared_used += (n + 63) & ~(size_t)63;
    return at + n <= w->shared_size ? w->shared + at : NULL;
}

/* Kernel-side layer. Names with a trailing underscore are the layer's own. */
/* A kernel's launcher entry: a warp of a team runs the body once for itself. */
#define SIMT_KERNEL_ENTRY_(name, T)                                                                \
    static inline void name##_body(canopy_simt_warp *simt_w_, const T *args);                      \
    static void name(canopy_simt_warp *w, const void *a) {                                         \
        if (w->warp >= 0) {                                                                        \
            name##_body(w, (const T *)a);                                                          \
            return;                                                                                \
        }
#define SIMT_KERNEL(name, T)                                                                       \
    SIMT_KERNEL_ENTRY_(name, T)                                                                    \
    for (w->warp = 0; w->warp * SIMT_W < w->bdim; w->warp++) {                                     \
        w->lanes = w->bdim - w->warp * SIMT_W < SIMT_W ? w->bdim - w->warp * SIMT_W : SIMT_W;      \
        w->shared_used = 0;                                                                        \
        name##_body(w, (const T *)a);                                                              \
    }                                                                                              \
    w->warp = -1;                                                                                  \
    }                                                                                              \
    static inline void name##_body(canopy_simt_warp *simt_w_, const T *args)
/* Opens the body: the warp's mask (lanes beyond the block are off), no lane returned. */
#define SIMT_BEGIN                                                                                 \
    SIMT_COUNT_(warps, 1);                                                                         \
    simt_mask simt_m_ = simt_iota() < simt_w_->lanes;                                              \
    simt_mask simt_ret_ = simt_none(), simt_brk_ = simt_none();                                    \
    (void)simt_m_, (void)simt_ret_, (void)simt_brk_
#define SIMT_TID (simt_iota() + simt_w_->warp * SIMT_W)
#define SIMT_BID (simt_w_->block)
#define SIMT_BDIM (simt_w_->bdim)
#define SIMT_GDIM (simt_w_->gdim)
#define SIMT_LANE simt_iota()
#define SIMT_WARP_ID (simt_w_->warp)
#define SIMT_WARP_SIZE SIMT_W

/* A condition, varying or uniform, as a lane mask. */
#define SIMT_COND_(c) (((simt_mask){0} + (c)) != 0)
#define SIMT_IF(c)                                                                                 \
    {                                                                                              \
        simt_mask simt_p_ = simt_m_, simt_c_ = SIMT_COND_(c);                                      \
        simt_m_ = simt_p_ & simt_c_ & ~simt_ret_ & ~simt_brk_;                                     \
        if (simt_any(simt_m_)) {
#define SIMT_ELSE                                                                                  \
    }                                                                                              \
    simt_m_ = simt_p_ & ~simt_c_ & ~simt_ret_ & ~simt_brk_;                                        \
    if (simt_any(simt_m_)) {
#define SIMT_ENDIF                                                                                 \
    }                                                                                              \
    simt_m_ = simt_p_ & ~simt_ret_ & ~simt_brk_;                                                   \
    }
/* The condition is evaluated under the lanes still looping, so its loads are masked. */
#define SIMT_WHILE(c)                                                                              \
    {                                                                                              \
        simt_mask simt_le_ = simt_m_;                                                              \
        {                                                                                          \
            simt_mask simt_lp_ = simt_m_, simt_brk_ = simt_none();                                 \
            for (;;) {                                                                             \
                simt_m_ = simt_lp_ & ~simt_ret_ & ~simt_brk_;                                      \
                simt_m_ = simt_m_ & SIMT_COND_(c);                                                 \
                simt_lp_ = simt_m_;                                                                \
                if (!simt_any(simt_m_)) break;                                                     \
                {
#define SIMT_ENDWHILE                                                                              \
    }                                                                                              \
    }                                                                                              \
    }                                                                                              \
    simt_m_ = simt_le_ & ~simt_ret_ & ~simt_brk_;                                                  \
    }
#define SIMT_BREAK (simt_brk_ |= simt_m_, simt_m_ = simt_none())
#define SIMT_RETURN (simt_ret_ |= simt_m_, simt_m_ = simt_none())
/* Assignment to a variable that lives past the branch: only active lanes change. */
#define SIMT_SET(x, v) ((x) = simt_blend(simt_m_, (__typeof__(x)){0} + (v), (x)))
#define SIMT_SELECT(c, a, b) simt_blend(SIMT_COND_(c), (a), (b))
#define SIMT_MIN(a, b) SIMT_SELECT((a) < (b), (a), (b))
#define SIMT_LD(p, i)                                                                              \
    _Generic((p), float *: simt_gather_f, const float *: simt_gather_f, default: simt_gather_i)(   \
        (p), simt_splat(0) + (i), simt_m_)
/* The lanes of p's element type, for broadcasting a uniform value stored to p. */
#define SIMT_LANES_OF_(p) _Generic((p), float * : (simt_float){0}, default : simt_splat(0))
#define SIMT_ST(p, i, v)                                                                           \
    _Generic((p), float *: simt_scatter_f, default: simt_scatter_i)(                               \
        (p), simt_splat(0) + (i), SIMT_LANES_OF_(p) + (v), simt_m_)
/* Sets a flag that many lanes may raise (BFS's "not done"): one store per warp. */
#define SIMT_FLAG_SET(p)                                                                           \
    do {                                                                                           \
        if (simt_any(simt_m_)) __atomic_store_n((p), 1, __ATOMIC_RELAXED);                         \
    } while (0)
#define SIMT_BALLOT(c) simt_bits(simt_m_ &SIMT_COND_(c))
#define SIMT_ANY(c) (SIMT_BALLOT(c) != 0)
#define SIMT_ALL(c) (SIMT_BALLOT(c) == simt_bits(simt_m_))
#define SIMT_SHFL(v, src)                                                                          \
    _Generic((v), simt_float : simt_shfl_f, default : simt_shfl_i)((v), simt_splat(0) + (src))
#define SIMT_SYNC() simt_w_->sync(simt_w_)
#define SIMT_SHARED(T, name, n) T *name = (T *)simt_shared_take(simt_w_, sizeof(T) * (size_t)(n))
#define SIMT_SHARED_DYN(T, name, n) SIMT_SHARED(T, name, n)

/* Block-wide kernels (the barrier-separated regions of MCUDA, Stratton et al. 2008): the
 * body is uniform over the block; SIMT_WARPS ... SIMT_END_WARPS encloses per-thread code
 * and SIMT_SYNC() stands between such regions. Launched as a team, each warp's thread
 * runs its own warp in every region and meets the others at the barriers; launched
 * without, one thread runs a region for every warp in turn, so the barrier after it
 * costs nothing. Values live across a barrier only in shared memory (as per-thread
 * arrays indexed by SIMT_TID); shared arrays are declared outside the regions. */
static inline void simt_sync_in_turn_(canopy_simt_warp *w) {
    (void)w; /* every warp has finished the region before */
    SIMT_COUNT_(barriers, 1);
}
#define SIMT_BLOCK_KERNEL(name, T)                                                                 \
    SIMT_KERNEL_ENTRY_(name, T)                                                                    \
    void (*sync)(canopy_simt_warp *) = w->sync;                                                    \
    w->sync = simt_sync_in_turn_;                                                                  \
    w->shared_used = 0;                                                                            \
    name##_body(w, (const T *)a);                                                                  \
    w->sync = sync;                                                                                \
    }                                                                                              \
    static inline void name##_body(canopy_simt_warp *simt_w_, const T *args)
#define SIMT_WARPS                                                                                 \
    for (int simt_k_ = simt_w_->warp >= 0 ? simt_w_->warp : 0,                                     \
             simt_ke_ = simt_w_->warp >= 0 ? simt_k_ + 1 : (simt_w_->bdim + SIMT_W - 1) / SIMT_W;  \
         simt_k_ < simt_ke_; simt_k_++) {                                                          \
        canopy_simt_warp simt_wk_ = *simt_w_;                                                      \
        simt_wk_.warp = simt_k_;                                                                   \
        simt_wk_.lanes =                                                                           \
            simt_wk_.bdim - simt_k_ * SIMT_W < SIMT_W ? simt_wk_.bdim - simt_k_ * SIMT_W : SIMT_W; \
        {                                                                                          \
            canopy_simt_warp *simt_w_ = &simt_wk_;                                                 \
            SIMT_BEGIN;
#define SIMT_END_WARPS                                                                             \
    }                                                                                              \
    }
#endif

#endif
