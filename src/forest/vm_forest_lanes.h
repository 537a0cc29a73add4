/* SPDX-License-Identifier: MIT */
/* Ren's SIMD forest interpreter (Algorithm 3) on SIMT_W lanes, written once with the SIMT
 * lane primitives: included by vm_forest_avx2.c (8 lanes) and vm_forest_avx512.c (16)
 * after they define SIMT_W and CVM_FOREST_LANES (the function's name). Each step
 * gathers the instructions of the lanes' tasks, evaluates every cmp at once (NaN, and
 * zero where the node treats it as missing, take the default direction), adds the
 * leaves of the finished ones, and stream-compacts the survivors to the front of the
 * queue (§3.3: AVX2 a shuffle per keep mask, AVX-512 a compress). */
#include "forest/forest.h"
#include "forest/vm_forest.h"
#include "simt/lanes.h"

/* Fills the CVM_PAD slots after the n live tasks with the padding instruction, so a
 * full vector load past the end reads finished lanes. */
static inline void pad_queue(int32_t *pc, int32_t *row, int32_t n, int32_t pad_pc) {
    for (int32_t i = n; i < n + CVM_PAD; i++) {
        pc[i] = pad_pc;
        row[i] = 0;
    }
}

int64_t CVM_FOREST_LANES(const cvm_forest_ctx *ctx, const float *X, int64_t stride, int32_t *row,
                         int32_t *pc, int32_t n, double *acc, int compaction) {
    const cvm_insn *code = ctx->prog->code;
    const int32_t *words = (const int32_t *)code;
    const simt_int pad = simt_splat(ctx->prog->pad_pc);
    int64_t steps = 0;
    int32_t live = n;
    pad_queue(pc, row, n, ctx->prog->pad_pc);
    while (live > 0) {
        int32_t w = 0;
        live = 0;
        for (int32_t i = 0; i < n; i += SIMT_W) {
            steps++;
            simt_int vpc = simt_loadu(pc + i), vrow = simt_loadu(row + i), at = vpc << 2;
            simt_int op = simt_gather_at(words, at, 4), key = simt_gather_at(words + 1, at, 4);
            simt_float thr = (simt_float)simt_gather_at(words + 2, at, 4);
            simt_int child = simt_gather_at(words + 3, at, 4);
            simt_mask is_cmp = op == CVM_CMP;
            uint32_t store_bits = simt_bits(op == CVM_STORE);
            /* T: the compare, x gathered only in cmp lanes */
            simt_float x = (simt_float)simt_gather_at_masked(
                X, vrow * (int32_t)stride + (key & CF_KEY_FEATURE), 4, is_cmp);
            simt_mask miss =
                (x != x) | ((simt_abs_f(x) <= CF_ZERO_EPS) & ((key & CF_KEY_ZERO) == CF_KEY_ZERO));
            simt_mask left = simt_blend(miss, (key & CF_KEY_DL) == CF_KEY_DL, x <= thr);
            simt_int npc = child + (~left & 1);
            /* W: leaves of finished lanes (rows may repeat across lanes: scalar adds) */
            for (; store_bits; store_bits &= store_bits - 1) {
                int b = __builtin_ctz(store_bits);
                cvm_forest_store_leaf(ctx, &code[pc[i + b]],
                                      acc + (int64_t)row[i + b] * ctx->n_outputs);
            }
            simt_mask keep = is_cmp;
            if (i + SIMT_W > n) keep &= simt_iota() < n - i;
            if (compaction) {
                /* survivors to the front; w <= i, so the whole-vector stores only
                 * overwrite slots this sweep has already read */
                int kept = simt_compact_store(pc + w, npc, keep);
                simt_compact_store(row + w, vrow, keep);
                w += kept;
                live += kept;
            } else {
                /* bubbles: finished lanes keep running the padding instruction */
                simt_storeu(pc + i, simt_blend(is_cmp, npc, pad));
                live += __builtin_popcount(simt_bits(keep));
            }
        }
        if (compaction) {
            n = w;
            pad_queue(pc, row, n, ctx->prog->pad_pc);
        }
    }
    return steps;
}
