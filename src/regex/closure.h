/* SPDX-License-Identifier: MIT */
/* The epsilon closure both line engines take (dfa.c builds states from it, pike_vm.c
 * steps with it): one source, so a DFA state is exactly the Pike VM's thread list. */
#ifndef CANOPY_REGEX_CLOSURE_H
#define CANOPY_REGEX_CLOSURE_H

#include "regex/regex.h"

typedef struct cre_closure {
    const cvm_insn *code;
    const int32_t *pattern_of;
    uint32_t *mark; /* mark[pc] == gen: pc already reached at this position */
    uint32_t gen;
    int32_t *stack; /* room for every pc */
    int bol, eol;   /* whether ^ and $ hold here */
    int wait_eol;   /* a failing `assert eol` is kept (the DFA: the line may end next) */
    int all;        /* CRE_ALL: matches set bits of mask, threads of matched patterns drop */
    uint64_t *mask;
    int32_t matched; /* patterns newly matched (CRE_ALL), 1 on any match otherwise */
} cre_closure;

/* Adds the closure of pc0 to out[*n..]: consuming pcs (cmp, dot) and the kept asserts.
 * A thread of a pattern already in mask is dropped: it cannot change the answer. */
static inline void cre_closure_add(cre_closure *c, int32_t pc0, int32_t *out, int32_t *n) {
    int32_t sp = 0;
    if (c->mark[pc0] == c->gen) return;
    c->mark[pc0] = c->gen;
    c->stack[sp++] = pc0;
    while (sp > 0) {
        int32_t pc = c->stack[--sp];
        const cvm_insn *in = &c->code[pc];
        int32_t q = c->pattern_of[pc];
        if (c->all && q >= 0 && ((c->mask[q >> 6] >> (q & 63)) & 1)) continue;
        int32_t next[2], k = 0;
        switch (in->op) {
        case CVM_CMP:
        case CVM_DOT:
            out[(*n)++] = pc;
            break;
        case CVM_JMP:
            next[k++] = in->target;
            break;
        case CVM_FORK:
            next[k++] = in->target;
            next[k++] = pc + 1;
            break;
        case CVM_ASSERT:
            if (in->arg == CVM_ASSERT_BOL ? c->bol : c->eol)
                next[k++] = pc + 1;
            else if (c->wait_eol && in->arg == CVM_ASSERT_EOL)
                out[(*n)++] = pc;
            break;
        case CVM_MATCH:
            if (c->all) {
                uint64_t bit = 1ull << (in->arg & 63);
                if (!(c->mask[in->arg >> 6] & bit)) {
                    c->mask[in->arg >> 6] |= bit;
                    c->matched++;
                }
            } else {
                c->matched = 1;
            }
            break;
        default:
            break;
        }
        for (int32_t j = 0; j < k; j++)
            if (c->mark[next[j]] != c->gen) {
                c->mark[next[j]] = c->gen;
                c->stack[sp++] = next[j];
            }
    }
}

#endif
