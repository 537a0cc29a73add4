/* SPDX-License-Identifier: MIT */
/* The IR's names and the stream-compaction table the SIMD interpreters share. */
#include "vm/vm.h"

const char *cvm_op_name(cvm_op op) {
    static const char *const names[CVM_OP_COUNT] = {"nomatch", "match", "store", "cmp",
                                                    "dot",     "jmp",   "fork",  "assert"};
    return (unsigned)op < CVM_OP_COUNT ? names[op] : "?";
}

int32_t cvm_compact_perm[256][8];

void cvm_simd_init(void) {
    static int done;
    if (done) return;
    for (int m = 0; m < 256; m++) {
        int k = 0;
        for (int b = 0; b < 8; b++)
            if (m & (1 << b)) cvm_compact_perm[m][k++] = b;
        while (k < 8) cvm_compact_perm[m][k++] = 0;
    }
    done = 1;
}
