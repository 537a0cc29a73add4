/* SPDX-License-Identifier: MIT */
/* The IR's op names (the SIMD interpreters' compaction is simt/lanes.h's). */
#include "vm/vm.h"

const char *canopy_cvm_op_name(cvm_op op) {
    static const char *const names[CVM_OP_COUNT] = {"nomatch", "match", "store", "cmp",
                                                    "dot",     "jmp",   "fork",  "assert"};
    return (unsigned)op < CVM_OP_COUNT ? names[op] : "?";
}
