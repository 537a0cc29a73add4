/* SPDX-License-Identifier: MIT */
/* Ren's bytecode IR (Ren, Mytkowicz, Agrawal 2014, §3, Table I) and its
 * interpreters. A traversal is a task (input, pc); node operations T move it to a
 * next pc, leaf operations W finish it. Forests use cmp/store; dot, jmp, fork,
 * match and nomatch are the regular-expression operations (Table III), plus one
 * assert for the anchors ^ and $ (src/regex). */
#ifndef CANOPY_VM_H
#define CANOPY_VM_H

#include "canopy.h"

#include <stdint.h>

typedef enum cvm_op {
    CVM_NOMATCH = 0, /* W: the task ends without a result (also pads SIMD lanes) */
    CVM_MATCH,       /* W: the task ends with a match (regex) */
    CVM_STORE,       /* W: add a leaf to the task's accumulator and end (forest) */
    CVM_CMP,         /* T: compare; forest: x[feature] <= threshold ? target : target + 1;
                        regex: input byte in byte set `arg` ? pc + 1 : end */
    CVM_DOT,         /* T: any input character (regex) */
    CVM_JMP,         /* T: pc = target (regex) */
    CVM_FORK,        /* T: start a task at target, continue at pc + 1 (regex) */
    CVM_ASSERT,      /* T: continue at pc + 1 if the position is a line's start
                        (arg CVM_ASSERT_BOL) or end (CVM_ASSERT_EOL), else end (regex) */
    CVM_OP_COUNT
} cvm_op;

enum { CVM_ASSERT_BOL = 0, CVM_ASSERT_EOL = 1 };

/* One instruction is four 32-bit words, so SIMD lanes gather every field with the
 * same index (pc * 4 + field).
 *   op:     cvm_op
 *   arg:    cmp (forest): feature | CF_KEY_ZERO | CF_KEY_DL (missing-value flags);
 *           store: the output slot, or -1 for a vector of all outputs
 *   imm:    cmp (forest): threshold as float bits; store: offset of the leaf value(s)
 *   target: cmp (forest): pc of the left child (the right child is target + 1);
 *           jmp / fork: destination */
typedef struct cvm_insn {
    int32_t op;
    int32_t arg;
    int32_t imm;
    int32_t target;
} cvm_insn;

typedef struct cvm_program {
    cvm_insn *code;
    int32_t n;      /* instructions, the last one a CVM_NOMATCH used as lane padding */
    int32_t pad_pc; /* that instruction */
} cvm_program;

const char *canopy_cvm_op_name(cvm_op op);

/* Queue padding of the SIMD interpreters: one vector of the widest (AVX-512). */
#define CVM_PAD 16

#endif
