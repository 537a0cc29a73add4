/* SPDX-License-Identifier: MIT */
/* The regular-expression interpreter on SIMD lanes (Ren Algorithm 3): at each input
 * position the work list of NFA threads (pcs) is processed W at a time; one gather
 * per instruction field gives every lane its op, and masks per op type decide what
 * each lane does: cmp/dot lanes that accept the byte go to the next position's list,
 * jmp/fork/assert lanes produce this position's next work (fork two tasks), match
 * lanes record their pattern. Each output is stream-compacted into its list (an
 * AVX2 shuffle per keep mask, §3.3; AVX-512's compress store), so lanes stay full.
 * A pc enters the work of a position at most once (generation marks), which keeps
 * the Pike VM's O(length x program) bound. Results equal cvm_regex_line_scalar. */
#include "regex/regex.h"

#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* Keeps the pcs of `work` not yet seen at this position (and not of a pattern
 * already matched in CRE_ALL), marks them, and pads the list to a lane multiple. */
static inline int32_t dedup(const cre_prog *p, cre_pike_scratch *s, int32_t *work, int32_t n,
                            cre_mode mode, const uint64_t *mask, int32_t lanes) {
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t pc = work[i];
        if (s->mark[pc] == s->gen) continue;
        s->mark[pc] = s->gen;
        int32_t q = p->pattern_of[pc];
        if (mode == CRE_ALL && q >= 0 && ((mask[q >> 6] >> (q & 63)) & 1)) continue;
        work[k++] = pc;
    }
    for (int32_t i = k; i < k + lanes; i++) work[i] = p->vm.pad_pc;
    return k;
}

static inline void next_gen(const cre_prog *p, cre_pike_scratch *s) {
    if (++s->gen == 0) {
        memset(s->mark, 0, ((size_t)p->vm.n + 1) * sizeof *s->mark);
        s->gen = 1;
    }
}

/* Records the patterns of the match lanes in `bits`; returns patterns newly matched. */
static inline int32_t record(const int32_t *args, unsigned bits, cre_mode mode, uint64_t *mask) {
    int32_t added = 0;
    while (bits) {
        int b = __builtin_ctz(bits);
        bits &= bits - 1;
        if (mode == CRE_ANY) return 1;
        int32_t q = args[b];
        if (!((mask[q >> 6] >> (q & 63)) & 1)) {
            mask[q >> 6] |= 1ull << (q & 63);
            added++;
        }
    }
    return added;
}

/* Away from the line's ends, epsilon moves are the precomputed closures: the
 * targets in `raw` (pc + 1 of the threads that consumed the previous byte, and pc 0)
 * become this position's consuming threads in `out`, each pc once, and the match
 * pcs among them are recorded. Returns the threads; *matched as in record(). */
static inline int32_t expand(const cre_prog *p, cre_pike_scratch *s, const int32_t *raw,
                             int32_t nraw, int32_t *out, cre_mode mode, uint64_t *mask,
                             int32_t *matched, int32_t lanes) {
    int32_t k = 0;
    uint32_t gen = s->gen, *mark = s->mark;
    for (int32_t i = 0; i < nraw; i++) {
        const int32_t *c = p->clo + p->clo_off[raw[i]], *ce = p->clo + p->clo_off[raw[i] + 1];
        for (; c < ce; c++) {
            int32_t pc = *c;
            if (mark[pc] == gen) continue;
            mark[pc] = gen;
            int32_t q = p->pattern_of[pc];
            if (mode == CRE_ALL && ((mask[q >> 6] >> (q & 63)) & 1)) continue;
            if (p->vm.code[pc].op != CVM_MATCH) {
                out[k++] = pc;
            } else if (mode == CRE_ANY) {
                *matched = 1;
            } else {
                mask[q >> 6] |= 1ull << (q & 63);
                ++*matched;
            }
        }
    }
    for (int32_t i = k; i < k + lanes; i++) out[i] = p->vm.pad_pc;
    return k;
}

/* The consuming threads of list that accept byte c, one at a time: their pc + 1. */
static inline int32_t test_scalar(const cre_prog *p, const int32_t *list, int32_t n, unsigned c,
                                  int32_t *out) {
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        const cvm_insn *in = &p->vm.code[list[i]];
        if (in->op == CVM_DOT || cre_set_has(p->sets[in->arg], c)) out[k++] = list[i] + 1;
    }
    return k;
}

/* The flat step away from the line's ends: expand, then one pass of the lanes over
 * the consuming threads (no epsilon levels, so the lanes are full). Fewer threads
 * than half the lanes are tested one by one: the gathers' latency (~20 cycles each)
 * costs more than a few scalar tests (measured: 2x slower than scalar on `.*ab`,
 * whose 2-3 threads fill a quarter of the AVX2 lanes). */
#define FLAT_STEP(TEST)                                                                            \
    if (pos > 0 && have && p->clo) {                                                               \
        int32_t nc = expand(p, s, work, nwork, tmp, mode, mask, &matched, LANES);                  \
        if (mode == CRE_ANY ? matched > 0 : matched == p->n_patterns) return 1;                    \
        nnext = nc < LANES / 2 ? test_scalar(p, tmp, nc, c, next) : TEST(p, tmp, nc, c, next);     \
        int32_t *sw3 = work;                                                                       \
        work = next;                                                                               \
        next = sw3;                                                                                \
        nwork = nnext;                                                                             \
        continue;                                                                                  \
    }

#define LINE_LOOP_BEGIN                                                                            \
    if (mode == CRE_ALL) memset(mask, 0, (size_t)p->mask_words * sizeof *mask);                    \
    int32_t *work = s->list_a, *tmp = s->list_b, *next = s->list_c;                                \
    int32_t nwork = 0, matched = 0;                                                                \
    const int32_t *words = (const int32_t *)p->vm.code;                                            \
    const int32_t *setw = (const int32_t *)p->sets;                                                \
    for (size_t pos = 0;; pos++) {                                                                 \
        next_gen(p, s);                                                                            \
        work[nwork++] = 0; /* the unanchored search: a new thread at every position */             \
        int32_t nnext = 0;                                                                         \
        int have = pos < len;                                                                      \
        unsigned c = have ? line[pos] : 0;                                                         \
        FLAT_STEP(FLAT_TEST)                                                                       \
        while (nwork > 0) {                                                                        \
            nwork = dedup(p, s, work, nwork, mode, mask, LANES);                                   \
            int32_t ntmp = 0;                                                                      \
            for (int32_t i = 0; i < nwork; i += LANES) {
#define LINE_LOOP_END                                                                              \
    }                                                                                              \
    int32_t *sw = work;                                                                            \
    work = tmp;                                                                                    \
    tmp = sw;                                                                                      \
    nwork = ntmp;                                                                                  \
    if (mode == CRE_ANY ? matched > 0 : matched == p->n_patterns) return 1;                        \
    }                                                                                              \
    if (!have) break;                                                                              \
    int32_t *sw2 = work;                                                                           \
    work = next;                                                                                   \
    next = sw2;                                                                                    \
    nwork = nnext;                                                                                 \
    }                                                                                              \
    return matched > 0;

#define LANES 8
/* The consuming threads (cmp, dot; padding is nomatch) that accept byte c: their
 * pc + 1, stream-compacted into out. */
__attribute__((target("avx2,fma"))) static int32_t
flat_test_avx2(const cre_prog *p, const int32_t *list, int32_t n, unsigned c, int32_t *out) {
    const int32_t *words = (const int32_t *)p->vm.code, *setw = (const int32_t *)p->sets;
    const __m256i v_cmp = _mm256_set1_epi32(CVM_CMP), v_dot = _mm256_set1_epi32(CVM_DOT);
    const __m256i v_one = _mm256_set1_epi32(1), v_word = _mm256_set1_epi32((int32_t)(c >> 5));
    const __m128i v_shift = _mm_cvtsi32_si128((int)(c & 31));
    int32_t k = 0;
    for (int32_t i = 0; i < n; i += LANES) {
        __m256i vpc = _mm256_loadu_si256((const __m256i *)(list + i));
        __m256i idx = _mm256_slli_epi32(vpc, 2);
        __m256i op = _mm256_i32gather_epi32(words, idx, 4);
        __m256i arg = _mm256_i32gather_epi32(words + 1, idx, 4);
        __m256i is_cmp = _mm256_cmpeq_epi32(op, v_cmp);
        __m256i widx = _mm256_add_epi32(_mm256_slli_epi32(arg, 3), v_word);
        __m256i w = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), setw, widx, is_cmp, 4);
        __m256i hit = _mm256_and_si256(_mm256_srl_epi32(w, v_shift), v_one);
        __m256i consume = _mm256_or_si256(_mm256_and_si256(is_cmp, _mm256_cmpeq_epi32(hit, v_one)),
                                          _mm256_cmpeq_epi32(op, v_dot));
        unsigned keep = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(consume));
        __m256i perm = _mm256_loadu_si256((const __m256i *)cvm_compact_perm[keep]);
        _mm256_storeu_si256((__m256i *)(out + k),
                            _mm256_permutevar8x32_epi32(_mm256_add_epi32(vpc, v_one), perm));
        k += __builtin_popcount(keep);
    }
    return k;
}
#define FLAT_TEST flat_test_avx2
__attribute__((target("avx2,fma"))) int cvm_regex_line_avx2(const cre_prog *p, cre_pike_scratch *s,
                                                            const uint8_t *line, size_t len,
                                                            cre_mode mode, uint64_t *mask) {
    const __m256i v_cmp = _mm256_set1_epi32(CVM_CMP), v_dot = _mm256_set1_epi32(CVM_DOT);
    const __m256i v_jmp = _mm256_set1_epi32(CVM_JMP), v_fork = _mm256_set1_epi32(CVM_FORK);
    const __m256i v_assert = _mm256_set1_epi32(CVM_ASSERT);
    const __m256i v_match = _mm256_set1_epi32(CVM_MATCH), v_one = _mm256_set1_epi32(1);
    const __m256i v_eol = _mm256_set1_epi32(CVM_ASSERT_EOL);
    LINE_LOOP_BEGIN
    const __m256i v_word = _mm256_set1_epi32((int32_t)(c >> 5));
    const __m128i v_shift = _mm_cvtsi32_si128((int)(c & 31));
    /* which assert kind holds here: bol at 0, eol at len */
    const __m256i v_bol_ok = _mm256_set1_epi32(pos == 0 ? -1 : 0);
    const __m256i v_eol_ok = _mm256_set1_epi32(pos == len ? -1 : 0);
    __m256i vpc = _mm256_loadu_si256((const __m256i *)(work + i));
    __m256i idx = _mm256_slli_epi32(vpc, 2);
    __m256i op = _mm256_i32gather_epi32(words, idx, 4);
    __m256i arg = _mm256_i32gather_epi32(words + 1, idx, 4);
    __m256i target = _mm256_i32gather_epi32(words + 3, idx, 4);
    __m256i is_cmp = _mm256_cmpeq_epi32(op, v_cmp);
    __m256i is_dot = _mm256_cmpeq_epi32(op, v_dot);
    __m256i is_jmp = _mm256_cmpeq_epi32(op, v_jmp);
    __m256i is_fork = _mm256_cmpeq_epi32(op, v_fork);
    __m256i is_assert = _mm256_cmpeq_epi32(op, v_assert);
    __m256i pc1 = _mm256_add_epi32(vpc, v_one);
    /* T (consuming): the byte's bit in the lane's set */
    __m256i consume = _mm256_setzero_si256();
    if (have) {
        __m256i widx = _mm256_add_epi32(_mm256_slli_epi32(arg, 3), v_word);
        __m256i w = _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), setw, widx, is_cmp, 4);
        __m256i hit = _mm256_and_si256(_mm256_srl_epi32(w, v_shift), v_one);
        consume = _mm256_or_si256(_mm256_and_si256(is_cmp, _mm256_cmpeq_epi32(hit, v_one)), is_dot);
    }
    unsigned keep = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(consume));
    _mm256_storeu_si256((__m256i *)(next + nnext),
                        _mm256_permutevar8x32_epi32(
                            pc1, _mm256_loadu_si256((const __m256i *)cvm_compact_perm[keep])));
    nnext += __builtin_popcount(keep);
    /* T (epsilon): jmp/fork go to target, a holding assert to pc + 1; fork also pc + 1 */
    __m256i holds = _mm256_blendv_epi8(v_bol_ok, v_eol_ok, _mm256_cmpeq_epi32(arg, v_eol));
    __m256i a_ok = _mm256_and_si256(is_assert, holds);
    __m256i first = _mm256_blendv_epi8(target, pc1, is_assert);
    unsigned k1 = (unsigned)_mm256_movemask_ps(
        _mm256_castsi256_ps(_mm256_or_si256(_mm256_or_si256(is_jmp, is_fork), a_ok)));
    _mm256_storeu_si256((__m256i *)(tmp + ntmp),
                        _mm256_permutevar8x32_epi32(
                            first, _mm256_loadu_si256((const __m256i *)cvm_compact_perm[k1])));
    ntmp += __builtin_popcount(k1);
    unsigned k2 = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(is_fork));
    _mm256_storeu_si256((__m256i *)(tmp + ntmp),
                        _mm256_permutevar8x32_epi32(
                            pc1, _mm256_loadu_si256((const __m256i *)cvm_compact_perm[k2])));
    ntmp += __builtin_popcount(k2);
    /* W: match lanes */
    unsigned km =
        (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(op, v_match)));
    if (km) {
        int32_t args[8];
        _mm256_storeu_si256((__m256i *)args, arg);
        matched += record(args, km, mode, mask);
    }
    LINE_LOOP_END
}
#undef FLAT_TEST
#undef LANES

#define LANES 16
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) static int32_t
flat_test_avx512(const cre_prog *p, const int32_t *list, int32_t n, unsigned c, int32_t *out) {
    const int32_t *words = (const int32_t *)p->vm.code, *setw = (const int32_t *)p->sets;
    const __m512i v_cmp = _mm512_set1_epi32(CVM_CMP), v_dot = _mm512_set1_epi32(CVM_DOT);
    const __m512i v_one = _mm512_set1_epi32(1), v_word = _mm512_set1_epi32((int32_t)(c >> 5));
    const __m128i v_shift = _mm_cvtsi32_si128((int)(c & 31));
    int32_t k = 0;
    for (int32_t i = 0; i < n; i += LANES) {
        __m512i vpc = _mm512_loadu_si512((const void *)(list + i));
        __m512i idx = _mm512_slli_epi32(vpc, 2);
        __m512i op = _mm512_i32gather_epi32(idx, words, 4);
        __m512i arg = _mm512_i32gather_epi32(idx, words + 1, 4);
        __mmask16 is_cmp = _mm512_cmpeq_epi32_mask(op, v_cmp);
        __m512i widx = _mm512_add_epi32(_mm512_slli_epi32(arg, 3), v_word);
        __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), is_cmp, widx, setw, 4);
        __m512i hit = _mm512_and_si512(_mm512_srl_epi32(w, v_shift), v_one);
        __mmask16 consume = (__mmask16)(_mm512_mask_cmpeq_epi32_mask(is_cmp, hit, v_one) |
                                        _mm512_cmpeq_epi32_mask(op, v_dot));
        _mm512_mask_compressstoreu_epi32(out + k, consume, _mm512_add_epi32(vpc, v_one));
        k += __builtin_popcount(consume);
    }
    return k;
}
#define FLAT_TEST flat_test_avx512
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) int
cvm_regex_line_avx512(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                      cre_mode mode, uint64_t *mask) {
    const __m512i v_cmp = _mm512_set1_epi32(CVM_CMP), v_dot = _mm512_set1_epi32(CVM_DOT);
    const __m512i v_jmp = _mm512_set1_epi32(CVM_JMP), v_fork = _mm512_set1_epi32(CVM_FORK);
    const __m512i v_assert = _mm512_set1_epi32(CVM_ASSERT);
    const __m512i v_match = _mm512_set1_epi32(CVM_MATCH), v_one = _mm512_set1_epi32(1);
    const __m512i v_eol = _mm512_set1_epi32(CVM_ASSERT_EOL);
    LINE_LOOP_BEGIN
    const __m512i v_word = _mm512_set1_epi32((int32_t)(c >> 5));
    const __m128i v_shift = _mm_cvtsi32_si128((int)(c & 31));
    const __mmask16 bol_ok = pos == 0 ? 0xffff : 0, eol_ok = pos == len ? 0xffff : 0;
    __m512i vpc = _mm512_loadu_si512((const void *)(work + i));
    __m512i idx = _mm512_slli_epi32(vpc, 2);
    __m512i op = _mm512_i32gather_epi32(idx, words, 4);
    __m512i arg = _mm512_i32gather_epi32(idx, words + 1, 4);
    __m512i target = _mm512_i32gather_epi32(idx, words + 3, 4);
    __mmask16 is_cmp = _mm512_cmpeq_epi32_mask(op, v_cmp);
    __mmask16 is_dot = _mm512_cmpeq_epi32_mask(op, v_dot);
    __mmask16 is_jmp = _mm512_cmpeq_epi32_mask(op, v_jmp);
    __mmask16 is_fork = _mm512_cmpeq_epi32_mask(op, v_fork);
    __mmask16 is_assert = _mm512_cmpeq_epi32_mask(op, v_assert);
    __m512i pc1 = _mm512_add_epi32(vpc, v_one);
    __mmask16 consume = 0;
    if (have) {
        __m512i widx = _mm512_add_epi32(_mm512_slli_epi32(arg, 3), v_word);
        __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), is_cmp, widx, setw, 4);
        __m512i hit = _mm512_and_si512(_mm512_srl_epi32(w, v_shift), v_one);
        consume = (__mmask16)(_mm512_mask_cmpeq_epi32_mask(is_cmp, hit, v_one) | is_dot);
    }
    _mm512_mask_compressstoreu_epi32(next + nnext, consume, pc1);
    nnext += __builtin_popcount(consume);
    __mmask16 is_eol = _mm512_cmpeq_epi32_mask(arg, v_eol);
    __mmask16 holds = (__mmask16)((is_eol & eol_ok) | (~is_eol & bol_ok));
    __mmask16 a_ok = is_assert & holds;
    __m512i first = _mm512_mask_blend_epi32(is_assert, target, pc1);
    __mmask16 k1 = (__mmask16)(is_jmp | is_fork | a_ok);
    _mm512_mask_compressstoreu_epi32(tmp + ntmp, k1, first);
    ntmp += __builtin_popcount(k1);
    _mm512_mask_compressstoreu_epi32(tmp + ntmp, is_fork, pc1);
    ntmp += __builtin_popcount(is_fork);
    __mmask16 km = _mm512_cmpeq_epi32_mask(op, v_match);
    if (km) {
        int32_t args[16];
        _mm512_storeu_si512((void *)args, arg);
        matched += record(args, km, mode, mask);
    }
    LINE_LOOP_END
}
#undef FLAT_TEST
#undef LANES

#else
int cvm_regex_line_avx2(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                        cre_mode mode, uint64_t *mask) {
    return cvm_regex_line_scalar(p, s, line, len, mode, mask);
}
int cvm_regex_line_avx512(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                          cre_mode mode, uint64_t *mask) {
    return cvm_regex_line_scalar(p, s, line, len, mode, mask);
}
#endif
