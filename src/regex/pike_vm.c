/* SPDX-License-Identifier: MIT */
/* The scalar regular-expression interpreter (Ren Algorithm 2 with Cox's/Pike's
 * refinement): a line is read once, left to right; the threads at a position are
 * the pcs reached by epsilon moves (jmp, fork, assert) from the previous step, each
 * pc at most once (a generation mark), so a line costs O(length x program size)
 * and never backtracks. A new thread starts at pc 0 at every position, which makes
 * the search unanchored. This is the reference every other engine is tested
 * against. */
#include "regex/closure.h"

#include <string.h>

canopy_status canopy_cre_pike_scratch_init(const cre_prog *p, cre_pike_scratch *s) {
    memset(s, 0, sizeof *s);
    /* a work list holds up to two successors per pc, plus SIMD padding */
    size_t n = 2 * (size_t)p->vm.n + 64;
    canopy_status st = canopy_alloc((void **)&s->list_a, n, sizeof(int32_t));
    if (!st) st = canopy_alloc((void **)&s->list_b, n, sizeof(int32_t));
    if (!st) st = canopy_alloc((void **)&s->list_c, n, sizeof(int32_t));
    if (!st) st = canopy_alloc((void **)&s->stack, n, sizeof(int32_t));
    if (!st) st = canopy_calloc((void **)&s->mark, (size_t)p->vm.n + 1, sizeof(uint32_t));
    if (!st) st = canopy_alloc((void **)&s->start_a, n, sizeof(size_t));
    if (!st) st = canopy_alloc((void **)&s->start_b, n, sizeof(size_t));
    if (st) canopy_cre_pike_scratch_free(s);
    s->gen = 0;
    return st;
}

void canopy_cre_pike_scratch_free(cre_pike_scratch *s) {
    canopy_free(s->list_a);
    canopy_free(s->list_b);
    canopy_free(s->list_c);
    canopy_free(s->stack);
    canopy_free(s->mark);
    canopy_free(s->start_a);
    canopy_free(s->start_b);
    memset(s, 0, sizeof *s);
}

/* A fresh generation for the mark array; on wrap-around the marks are cleared. */
static inline uint32_t next_gen(const cre_prog *p, cre_pike_scratch *s) {
    if (++s->gen == 0) {
        memset(s->mark, 0, ((size_t)p->vm.n + 1) * sizeof *s->mark);
        s->gen = 1;
    }
    return s->gen;
}

/* A closure walker at pos of a line of len bytes (a fresh mark generation). */
static inline void at_pos(cre_closure *c, const cre_prog *p, cre_pike_scratch *s, size_t pos,
                          size_t len) {
    c->gen = next_gen(p, s);
    c->bol = pos == 0;
    c->eol = pos == len;
}

int canopy_cvm_regex_line_scalar(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line,
                                 size_t len, cre_mode mode, uint64_t *mask) {
    cre_closure r = {p->vm.code, p->pattern_of,   s->mark, 0, s->stack, 0, 0,
                     0,          mode == CRE_ALL, mask,    0};
    if (mode == CRE_ALL) memset(mask, 0, (size_t)p->mask_words * sizeof *mask);
    int32_t *clist = s->list_a, *raw = s->list_b;
    int32_t nraw = 0;
    for (size_t pos = 0;; pos++) {
        at_pos(&r, p, s, pos, len);
        int32_t nc = 0;
        for (int32_t i = 0; i < nraw; i++) cre_closure_add(&r, raw[i], clist, &nc);
        cre_closure_add(&r, 0, clist, &nc);
        if (mode == CRE_ANY ? r.matched > 0 : r.matched == p->n_patterns) break;
        if (pos == len) break;
        unsigned c = line[pos];
        nraw = 0;
        for (int32_t i = 0; i < nc; i++) {
            const cvm_insn *in = &p->vm.code[clist[i]];
            if (in->op == CVM_DOT || cre_set_has(p->sets[in->arg], c)) raw[nraw++] = clist[i] + 1;
        }
    }
    return r.matched > 0;
}

static int word_byte(uint8_t c) {
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* Leftmost-longest in one pass: threads carry their start, the list stays in
 * start order (survivors keep their order, the new thread goes last), so for each
 * pc the earliest start wins the generation mark, which is right since the same
 * pc has the same futures. Once a match is known, no later start can win: those
 * threads are dropped and no new ones start; the pass ends when no thread with a
 * start at or before the best one is left. */
int canopy_cvm_regex_find(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                          size_t from, int word, size_t *mstart, size_t *mend) {
    cre_closure r = {p->vm.code, p->pattern_of, s->mark, 0, s->stack, 0, 0, 0, 0, NULL, 0};
    int32_t *clist = s->list_a, *raw = s->list_b;
    size_t *cstart = s->start_a, *rstart = s->start_b;
    int32_t nraw = 0;
    int have = 0;
    size_t bs = 0, be = 0;
    for (size_t pos = from;; pos++) {
        at_pos(&r, p, s, pos, len);
        int end_ok = !(word && pos < len && word_byte(line[pos]));
        int32_t nc = 0;
        for (int32_t i = 0; i < nraw; i++) {
            if (have && rstart[i] > bs) break;
            int32_t before = nc;
            r.matched = 0;
            cre_closure_add(&r, raw[i], clist, &nc);
            for (int32_t k = before; k < nc; k++) cstart[k] = rstart[i];
            if (r.matched && end_ok && (!have || rstart[i] < bs || pos > be)) {
                have = 1;
                bs = rstart[i];
                be = pos;
            }
        }
        if (!have && !(word && pos > 0 && word_byte(line[pos - 1]))) {
            int32_t before = nc;
            r.matched = 0;
            cre_closure_add(&r, 0, clist, &nc);
            for (int32_t k = before; k < nc; k++) cstart[k] = pos;
            if (r.matched && end_ok) {
                have = 1;
                bs = be = pos;
            }
        }
        if (pos == len || (have && nc == 0)) break;
        unsigned c = line[pos];
        nraw = 0;
        for (int32_t i = 0; i < nc; i++) {
            if (have && cstart[i] > bs) break;
            const cvm_insn *in = &p->vm.code[clist[i]];
            if (in->op == CVM_DOT || cre_set_has(p->sets[in->arg], c)) {
                raw[nraw] = clist[i] + 1;
                rstart[nraw++] = cstart[i];
            }
        }
    }
    if (have) {
        *mstart = bs;
        *mend = be;
    }
    return have;
}
