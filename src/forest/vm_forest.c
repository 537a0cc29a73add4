/* SPDX-License-Identifier: MIT */
/* Ren's scalar forest interpreter over the VM's bytecode (Algorithm 2: the task queue is
 * processed in order; a cmp task is rewritten in place with its next pc, a store task
 * adds its leaf and is dropped, so the queue compacts as it goes). The SIMD one
 * (Algorithm 3) is vm_forest_lanes.h. */
#include "forest/vm_forest.h"

#include "forest/forest.h"

int64_t canopy_cvm_forest_run_scalar(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                                     int32_t *row, int32_t *pc, int32_t n, double *acc) {
    const cvm_insn *code = ctx->prog->code;
    int64_t steps = 0;
    while (n > 0) {
        int32_t w = 0;
        for (int32_t i = 0; i < n; i++) {
            const cvm_insn *in = &code[pc[i]];
            int32_t r = row[i];
            steps++;
            if (in->op == CVM_CMP) {
                union {
                    int32_t i;
                    float f;
                } thr = {in->imm};
                float x = X[r * stride + (in->arg & CF_KEY_FEATURE)];
                pc[w] = in->target + cf_go_right(x, thr.f, in->arg);
                row[w] = r;
                w++;
            } else if (in->op == CVM_STORE) {
                cvm_forest_store_leaf(ctx, in, acc + (int64_t)r * ctx->n_outputs);
            }
        }
        n = w;
    }
    return steps;
}
