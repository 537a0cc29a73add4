/* SPDX-License-Identifier: MIT */
/* The scalar regular-expression interpreter (Ren Algorithm 2 with Cox's/Pike's
 * refinement): a line is read once, left to right; the threads at a position are
 * the pcs reached by epsilon moves (jmp, fork, assert) from the previous step, each
 * pc at most once (a generation mark), so a line costs O(length x program size)
 * and never backtracks. A new thread starts at pc 0 at every position, which makes
 * the search unanchored. This is the reference every other engine is tested
 * against. */
#include "regex/regex.h"

#include <string.h>

canopy_status cre_pike_scratch_init(const cre_prog *p, cre_pike_scratch *s) {
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
    if (st) cre_pike_scratch_free(s);
    s->gen = 0;
    return st;
}

void cre_pike_scratch_free(cre_pike_scratch *s) {
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

typedef struct run_state {
    const cre_prog *p;
    cre_pike_scratch *s;
    size_t pos, len;
    cre_mode mode;
    uint64_t *mask;
    int32_t matched; /* patterns matched so far */
} run_state;

static inline int pattern_done(const run_state *r, int32_t pc) {
    int32_t q = r->p->pattern_of[pc];
    return r->mode == CRE_ALL && q >= 0 && ((r->mask[q >> 6] >> (q & 63)) & 1);
}

/* Adds the closure of pc0 at position r->pos: consuming pcs (cmp, dot) go to list. */
static void add_closure(run_state *r, int32_t pc0, int32_t *list, int32_t *n) {
    const cvm_insn *code = r->p->vm.code;
    uint32_t gen = r->s->gen;
    uint32_t *mark = r->s->mark;
    int32_t *stack = r->s->stack;
    int32_t sp = 0;
    if (mark[pc0] == gen || pattern_done(r, pc0)) return;
    mark[pc0] = gen;
    stack[sp++] = pc0;
    while (sp > 0) {
        int32_t pc = stack[--sp];
        const cvm_insn *in = &code[pc];
        int32_t next[2], k = 0;
        switch (in->op) {
        case CVM_CMP:
        case CVM_DOT:
            list[(*n)++] = pc;
            break;
        case CVM_JMP:
            next[k++] = in->target;
            break;
        case CVM_FORK:
            next[k++] = in->target;
            next[k++] = pc + 1;
            break;
        case CVM_ASSERT:
            if (in->arg == CVM_ASSERT_BOL ? r->pos == 0 : r->pos == r->len) next[k++] = pc + 1;
            break;
        case CVM_MATCH:
            if (r->mode == CRE_ALL) {
                uint64_t bit = 1ull << (in->arg & 63);
                if (!(r->mask[in->arg >> 6] & bit)) {
                    r->mask[in->arg >> 6] |= bit;
                    r->matched++;
                }
            } else {
                r->matched = 1;
            }
            break;
        default:
            break;
        }
        for (int32_t j = 0; j < k; j++) {
            int32_t t = next[j];
            if (mark[t] != gen && !pattern_done(r, t)) {
                mark[t] = gen;
                stack[sp++] = t;
            }
        }
    }
}

int cvm_regex_line_scalar(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                          cre_mode mode, uint64_t *mask) {
    run_state r = {p, s, 0, len, mode, mask, 0};
    if (mode == CRE_ALL) memset(mask, 0, (size_t)p->mask_words * sizeof *mask);
    int32_t *clist = s->list_a, *raw = s->list_b;
    int32_t nraw = 0;
    for (size_t pos = 0;; pos++) {
        r.pos = pos;
        next_gen(p, s);
        int32_t nc = 0;
        for (int32_t i = 0; i < nraw; i++) add_closure(&r, raw[i], clist, &nc);
        add_closure(&r, 0, clist, &nc);
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
int cvm_regex_find(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                   size_t from, int word, size_t *mstart, size_t *mend) {
    run_state r = {p, s, 0, len, CRE_ANY, NULL, 0};
    int32_t *clist = s->list_a, *raw = s->list_b;
    size_t *cstart = s->start_a, *rstart = s->start_b;
    int32_t nraw = 0;
    int have = 0;
    size_t bs = 0, be = 0;
    for (size_t pos = from;; pos++) {
        r.pos = pos;
        next_gen(p, s);
        int end_ok = !(word && pos < len && word_byte(line[pos]));
        int32_t nc = 0;
        for (int32_t i = 0; i < nraw; i++) {
            if (have && rstart[i] > bs) break;
            int32_t before = nc;
            r.matched = 0;
            add_closure(&r, raw[i], clist, &nc);
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
            add_closure(&r, 0, clist, &nc);
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
