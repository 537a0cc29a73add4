/* SPDX-License-Identifier: MIT */
/* The regular-expression interpreter on SIMT lanes (Ren Algorithm 3), written once with
 * the SIMT lane primitives: included by pike_vm_avx2.c (8 lanes) and pike_vm_avx512.c
 * (16) after they define SIMT_W and CRE_LINE_LANES (the function's name). At each input
 * position the work list of NFA threads (pcs) is processed SIMT_W at a time; one gather
 * per instruction field gives every lane its op, and masks per op type decide what each
 * lane does: cmp/dot lanes that accept the byte go to the next position's list,
 * jmp/fork/assert lanes produce this position's next work (fork two tasks), match lanes
 * record their pattern. Each output is stream-compacted into its list (an AVX2 shuffle
 * per keep mask, §3.3; AVX-512's compress), so lanes stay full. A pc enters the work of
 * a position at most once (generation marks), which keeps the Pike VM's O(length x
 * program) bound. Results equal canopy_cvm_regex_line_scalar. */
#include "regex/regex.h"
#include "simt/lanes.h"

#include <string.h>

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

/* Nothing left to find: some pattern matched (CRE_ANY), or all did. */
static inline int done(const cre_prog *p, cre_mode mode, int32_t matched) {
    return mode == CRE_ANY ? matched > 0 : matched == p->n_patterns;
}

/* The lanes whose instruction consumes byte c: dot, or cmp with c in its set (the
 * set's word is gathered for the cmp lanes only). */
static inline simt_mask consumes(const int32_t *setw, simt_int op, simt_int arg, unsigned c) {
    simt_mask is_cmp = op == CVM_CMP;
    simt_int w = simt_gather_at_masked(setw, (arg << 3) + (int32_t)(c >> 5), 4, is_cmp);
    return (is_cmp & (((w >> (c & 31)) & 1) != 0)) | (op == CVM_DOT);
}

/* The consuming threads (cmp, dot; padding is nomatch) that accept byte c: their
 * pc + 1, stream-compacted into out. */
static int32_t flat_test(const cre_prog *p, const int32_t *list, int32_t n, unsigned c,
                         int32_t *out) {
    const int32_t *words = (const int32_t *)p->vm.code, *setw = (const int32_t *)p->sets;
    int32_t k = 0;
    for (int32_t i = 0; i < n; i += SIMT_W) {
        simt_int pc = simt_loadu(list + i), at = pc << 2;
        simt_int op = simt_gather_at(words, at, 4), arg = simt_gather_at(words + 1, at, 4);
        k += simt_compact_store(out + k, pc + 1, consumes(setw, op, arg, c));
    }
    return k;
}

int CRE_LINE_LANES(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                   cre_mode mode, uint64_t *mask) {
    if (mode == CRE_ALL) memset(mask, 0, (size_t)p->mask_words * sizeof *mask);
    int32_t *work = s->list_a, *tmp = s->list_b, *next = s->list_c, *sw;
    int32_t nwork = 0, matched = 0;
    const int32_t *words = (const int32_t *)p->vm.code, *setw = (const int32_t *)p->sets;
    for (size_t pos = 0;; pos++) {
        next_gen(p, s);
        work[nwork++] = 0; /* the unanchored search: a new thread at every position */
        int32_t nnext = 0;
        int have = pos < len;
        unsigned c = have ? line[pos] : 0;
        /* Away from the line's ends: expand, then one pass of the lanes over the
         * consuming threads (no epsilon levels, so the lanes are full). Fewer threads
         * than half the lanes are tested one by one: the gathers' latency (~20 cycles
         * each) costs more than a few scalar tests (measured: 2x slower than scalar on
         * `.*ab`, whose 2-3 threads fill a quarter of the AVX2 lanes). */
        if (pos > 0 && have && p->clo) {
            int32_t nc = expand(p, s, work, nwork, tmp, mode, mask, &matched, SIMT_W);
            if (done(p, mode, matched)) return 1;
            nwork =
                nc < SIMT_W / 2 ? test_scalar(p, tmp, nc, c, next) : flat_test(p, tmp, nc, c, next);
            sw = work, work = next, next = sw;
            continue;
        }
        /* which assert kind holds here: bol at 0, eol at len */
        const simt_mask bol_ok = simt_splat(pos == 0 ? -1 : 0);
        const simt_mask eol_ok = simt_splat(pos == len ? -1 : 0);
        while (nwork > 0) {
            nwork = dedup(p, s, work, nwork, mode, mask, SIMT_W);
            int32_t ntmp = 0;
            for (int32_t i = 0; i < nwork; i += SIMT_W) {
                simt_int pc = simt_loadu(work + i), at = pc << 2, pc1 = pc + 1;
                simt_int op = simt_gather_at(words, at, 4), arg = simt_gather_at(words + 1, at, 4);
                simt_int target = simt_gather_at(words + 3, at, 4);
                /* T (consuming): the byte's bit in the lane's set */
                if (have)
                    nnext += simt_compact_store(next + nnext, pc1, consumes(setw, op, arg, c));
                /* T (epsilon): jmp/fork go to target, a holding assert to pc + 1; fork
                 * also to pc + 1 */
                simt_mask is_fork = op == CVM_FORK, is_assert = op == CVM_ASSERT;
                simt_mask holds = simt_blend(arg == CVM_ASSERT_EOL, eol_ok, bol_ok);
                simt_mask eps = (op == CVM_JMP) | is_fork | (is_assert & holds);
                ntmp += simt_compact_store(tmp + ntmp, simt_blend(is_assert, pc1, target), eps);
                ntmp += simt_compact_store(tmp + ntmp, pc1, is_fork);
                /* W: match lanes */
                uint32_t km = simt_bits(op == CVM_MATCH);
                if (km) {
                    int32_t args[SIMT_W];
                    simt_storeu(args, arg);
                    matched += record(args, km, mode, mask);
                }
            }
            sw = work, work = tmp, tmp = sw;
            nwork = ntmp;
            if (done(p, mode, matched)) return 1;
        }
        if (!have) break;
        sw = work, work = next, next = sw;
        nwork = nnext;
    }
    return matched > 0;
}
