/* The required-literal prefilter. A pattern that is a concatenation holding a run
 * of single bytes ("ab" in ".*ab.*c") cannot match a line without that run, so when
 * every pattern has one, lines are found by searching for the runs (a SIMD compare
 * of the first two bytes per 32-byte window, then memcmp) and only those lines go
 * through the DFA. When a pattern is just its literal, optionally between `.*`s,
 * an occurrence is the match itself and the DFA is skipped (Ren's `.*ab` workload). */
#include "regex/dfa.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* The single byte of a set, or -1 when it has none or several. */
static int single_byte(const uint32_t *set) {
    int found = -1;
    for (int w = 0; w < 8; w++) {
        if (!set[w]) continue;
        if (found >= 0 || (set[w] & (set[w] - 1))) return -1;
        found = w * 32 + __builtin_ctz(set[w]);
    }
    return found;
}

static int is_dot_star(const cre_tree *t, int32_t i) {
    const cre_node *n = &t->nodes[i];
    return n->kind == CRE_REP && n->min == 0 && n->max < 0 && t->nodes[n->a].kind == CRE_DOT;
}

/* The longest run of single bytes in the top-level concatenation of a pattern
 * (up to CRE_LIT_LEN bytes, '\n' never included); *exact when the pattern is the run
 * alone between `.*`s. Returns its length, 0 when there is none. */
static int32_t pattern_literal(const cre_tree *t, uint8_t *lit, int *exact) {
    int32_t items[4096], n = 0;
    int32_t i = t->root;
    while (t->nodes[i].kind == CRE_CAT) {
        if (n == 4096) return 0;
        items[n++] = t->nodes[i].b;
        i = t->nodes[i].a;
    }
    items[n++] = i;
    /* items are in reverse order */
    int32_t best = 0, best_end = 0, run = 0;
    for (int32_t k = n - 1; k >= 0; k--) {
        const cre_node *x = &t->nodes[items[k]];
        int c = x->kind == CRE_SET ? single_byte(x->set) : -1;
        run = c >= 0 && c != '\n' ? run + 1 : 0;
        if (run > best) {
            best = run;
            best_end = k;
        }
    }
    if (best == 0) return 0;
    int32_t first = best_end + best - 1; /* index in items of the run's first byte */
    *exact = best <= CRE_LIT_LEN;
    for (int32_t k = n - 1; k > first && *exact; k--) *exact = is_dot_star(t, items[k]);
    for (int32_t k = best_end - 1; k >= 0 && *exact; k--) *exact = is_dot_star(t, items[k]);
    int32_t len = best < CRE_LIT_LEN ? best : CRE_LIT_LEN;
    for (int32_t j = 0; j < len; j++) lit[j] = (uint8_t)single_byte(t->nodes[items[first - j]].set);
    return len;
}

void cre_literal_analyze(const cre_prog *p, const cre_tree *trees, cre_dfa_info *info) {
    info->n_lit = 0;
    info->exact = 1;
    if (p->n_patterns == 0) return;
    for (int32_t q = 0; q < p->n_patterns; q++) {
        uint8_t lit[CRE_LIT_LEN];
        int exact = 0;
        int32_t len = pattern_literal(&trees[q], lit, &exact);
        if (len == 0) {
            info->n_lit = 0;
            return;
        }
        int dup = 0;
        for (int32_t j = 0; j < info->n_lit && !dup; j++)
            dup = info->lit_len[j] == len && memcmp(info->lit[j], lit, (size_t)len) == 0;
        info->exact &= exact;
        if (dup) continue;
        if (info->n_lit == CRE_LIT_MAX) {
            info->n_lit = 0;
            return;
        }
        memcpy(info->lit[info->n_lit], lit, (size_t)len);
        info->lit_len[info->n_lit++] = len;
    }
}

static int lit_at(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    for (int32_t j = 0; j < info->n_lit; j++)
        if (info->lit_len[j] <= e - x && memcmp(x, info->lit[j], (size_t)info->lit_len[j]) == 0)
            return 1;
    return 0;
}

static const uint8_t *find_scalar(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    uint8_t first[256] = {0};
    for (int32_t j = 0; j < info->n_lit; j++) first[info->lit[j][0]] = 1;
    for (; x < e; x++)
        if (first[*x] && lit_at(info, x, e)) return x;
    return e;
}

#if defined(__x86_64__) || defined(__i386__)
/* 32 positions per step: a candidate has the first byte of some literal and, for
 * literals of two bytes or more, its second byte next; candidates are confirmed with
 * memcmp. */
__attribute__((target("avx2"))) static const uint8_t *
find_avx2(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    __m256i b0[CRE_LIT_MAX], b1[CRE_LIT_MAX];
    int32_t n = info->n_lit;
    for (int32_t j = 0; j < n; j++) {
        b0[j] = _mm256_set1_epi8((char)info->lit[j][0]);
        b1[j] = _mm256_set1_epi8((char)(info->lit_len[j] > 1 ? info->lit[j][1] : 0));
    }
    for (; e - x >= 33; x += 32) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)x);
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(x + 1));
        __m256i acc = _mm256_setzero_si256();
        for (int32_t j = 0; j < n; j++) {
            __m256i m = _mm256_cmpeq_epi8(v0, b0[j]);
            if (info->lit_len[j] > 1) m = _mm256_and_si256(m, _mm256_cmpeq_epi8(v1, b1[j]));
            acc = _mm256_or_si256(acc, m);
        }
        uint32_t bits = (uint32_t)_mm256_movemask_epi8(acc);
        while (bits) {
            const uint8_t *c = x + __builtin_ctz(bits);
            if (lit_at(info, c, e)) return c;
            bits &= bits - 1;
        }
    }
    return find_scalar(info, x, e);
}
#endif

const uint8_t *cre_literal_find(const cre_dfa_info *info, const uint8_t *from, const uint8_t *e) {
#if defined(__x86_64__) || defined(__i386__)
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX2) return find_avx2(info, from, e);
#endif
    return find_scalar(info, from, e);
}
