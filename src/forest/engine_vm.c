/* SPDX-License-Identifier: MIT */
/* The interpreter engines: a linked layout compiled to Ren's bytecode (a node is
 * `cmp feature, threshold, left-child pc`, a leaf is `store`), run by the scalar,
 * AVX2 or AVX-512 interpreter of src/vm over tasks (row, pc) of a row block x tree
 * block. */
#include "forest/forest.h"
#include "forest/engine.h"
#include "forest/vm_forest.h"

#include <stdlib.h>
#include <string.h>

canopy_status canopy_cf_vm_compile(const cf_layout *L, cvm_program *p) {
    memset(p, 0, sizeof *p);
    if (!L->nodes) return canopy_fail(CANOPY_ERR_INTERNAL, "vm needs a linked layout");
    if (L->n_lnodes >= INT32_MAX - 1)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "program of more than 2^31 instructions");
    p->n = (int32_t)L->n_lnodes + 1;
    p->code = malloc((size_t)p->n * sizeof *p->code);
    if (!p->code) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for the bytecode");
    for (int64_t i = 0; i < L->n_lnodes; i++) {
        const cf_lnode *nd = &L->nodes[i];
        cvm_insn *in = &p->code[i];
        if (nd->key < 0) {
            int32_t leaf = ~nd->key;
            if (L->leaf_off[leaf] > INT32_MAX) {
                free(p->code);
                p->code = NULL;
                return canopy_fail(CANOPY_ERR_UNSUPPORTED, "leaf values beyond 2^31");
            }
            in->op = CVM_STORE;
            in->arg = L->leaf_out[leaf];
            in->imm = (int32_t)L->leaf_off[leaf];
            in->target = 0;
        } else {
            union {
                float f;
                int32_t i;
            } u = {nd->thr};
            in->op = CVM_CMP;
            in->arg = nd->key;
            in->imm = u.i;
            in->target = nd->child;
        }
    }
    p->pad_pc = p->n - 1;
    p->code[p->pad_pc] = (cvm_insn){CVM_NOMATCH, 0, 0, 0};
    return CANOPY_OK;
}

int64_t canopy_cf_vm_block(const cf_layout *L, const cvm_program *p, canopy_isa isa, int compaction,
                           const float *X, int64_t stride, int64_t r0, int64_t r1, int32_t t0,
                           int32_t t1, int32_t *qrow, int32_t *qpc, double *acc) {
    /* Row-major tasks: one input's traversals of consecutive trees sit in adjacent
     * lanes (with ll/sll they read adjacent nodes, Ren's inter-traversal reuse). */
    int32_t n = 0;
    for (int64_t r = r0; r < r1; r++)
        for (int32_t t = t0; t < t1; t++) {
            qrow[n] = (int32_t)(r - r0);
            qpc[n] = L->root[t];
            n++;
        }
    cvm_forest_ctx ctx = {p, L->values, L->n_outputs};
    const float *Xb = X + r0 * stride;
    if (isa >= CANOPY_ISA_AVX512)
        return canopy_cvm_forest_run_avx512(&ctx, Xb, stride, qrow, qpc, n, acc, compaction);
    if (isa >= CANOPY_ISA_AVX2)
        return canopy_cvm_forest_run_avx2(&ctx, Xb, stride, qrow, qpc, n, acc, compaction);
    return canopy_cvm_forest_run_scalar(&ctx, Xb, stride, qrow, qpc, n, acc);
}
