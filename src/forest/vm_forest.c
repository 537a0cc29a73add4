/* SPDX-License-Identifier: MIT */
/* Ren's forest interpreters over the VM's bytecode: the scalar one (Algorithm 2: the task
 * queue is processed in order; a cmp task is rewritten in place with its next pc, a store
 * task adds its leaf and is dropped, so the queue compacts as it goes) and the SIMD one
 * (Algorithm 3) on 8 AVX2 or 16 AVX-512 lanes: each step gathers the instructions of the
 * lanes' tasks, evaluates every cmp at once, adds the leaves of the finished ones, and
 * stream-compacts the survivors to the front of the queue (§3.3): AVX2 with a shuffle
 * per movemask (vm's cvm_compact_perm), AVX-512 with vpcompressd. The SIMD ones are
 * built with target attributes and called only when canopy_cpu_isa() reports the ISA. */
#include "forest/vm_forest.h"

#include "forest/forest.h"

#include <string.h>

static inline void store_leaf(const cvm_forest_ctx *c, const cvm_insn *in, double *acc_row) {
    const double *v = c->values + in->imm;
    if (in->arg >= 0)
        acc_row[in->arg] += v[0];
    else
        for (int32_t k = 0; k < c->n_outputs; k++) acc_row[k] += v[k];
}

int64_t cvm_forest_run_scalar(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
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
                store_leaf(ctx, in, acc + (int64_t)r * ctx->n_outputs);
            }
        }
        n = w;
    }
    return steps;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

/* Fills the CVM_PAD slots after the n live tasks with the padding instruction, so a
 * full vector load past the end reads finished lanes. */
static inline void pad_queue(int32_t *pc, int32_t *row, int32_t n, int32_t pad_pc) {
    for (int32_t i = n; i < n + CVM_PAD; i++) {
        pc[i] = pad_pc;
        row[i] = 0;
    }
}

__attribute__((target("avx2,fma"))) int64_t
cvm_forest_run_avx2(const cvm_forest_ctx *ctx, const float *X, int64_t stride, int32_t *row,
                    int32_t *pc, int32_t n, double *acc, int compaction) {
    const cvm_insn *code = ctx->prog->code;
    const int *words = (const int *)code;
    const __m256i v_cmp = _mm256_set1_epi32(CVM_CMP), v_store = _mm256_set1_epi32(CVM_STORE);
    const __m256i v_feat = _mm256_set1_epi32(CF_KEY_FEATURE);
    const __m256i v_zero_flag = _mm256_set1_epi32(CF_KEY_ZERO);
    const __m256i v_dl = _mm256_set1_epi32(CF_KEY_DL);
    const __m256i v_one = _mm256_set1_epi32(1), v_pad = _mm256_set1_epi32(ctx->prog->pad_pc);
    const __m256 v_eps = _mm256_set1_ps(CF_ZERO_EPS);
    const __m256 v_abs = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i v_stride = _mm256_set1_epi32((int32_t)stride);
    int64_t steps = 0;
    int32_t live = n;
    pad_queue(pc, row, n, ctx->prog->pad_pc);
    while (live > 0) {
        int32_t w = 0;
        live = 0;
        for (int32_t i = 0; i < n; i += 8) {
            steps++;
            __m256i vpc = _mm256_loadu_si256((const __m256i *)(pc + i));
            __m256i vrow = _mm256_loadu_si256((const __m256i *)(row + i));
            __m256i idx = _mm256_slli_epi32(vpc, 2);
            __m256i op = _mm256_i32gather_epi32(words, idx, 4);
            __m256i key = _mm256_i32gather_epi32(words + 1, idx, 4);
            __m256 thr = _mm256_castsi256_ps(_mm256_i32gather_epi32(words + 2, idx, 4));
            __m256i child = _mm256_i32gather_epi32(words + 3, idx, 4);
            __m256i is_cmp = _mm256_cmpeq_epi32(op, v_cmp);
            int store_bits =
                _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(op, v_store)));
            /* T: the compare, gathered only in cmp lanes */
            __m256i xi =
                _mm256_add_epi32(_mm256_mullo_epi32(vrow, v_stride), _mm256_and_si256(key, v_feat));
            __m256 x = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), X, xi,
                                                _mm256_castsi256_ps(is_cmp), 4);
            __m256 le = _mm256_cmp_ps(x, thr, _CMP_LE_OQ);
            __m256 miss = _mm256_cmp_ps(x, x, _CMP_UNORD_Q);
            __m256 small = _mm256_cmp_ps(_mm256_and_ps(x, v_abs), v_eps, _CMP_LE_OQ);
            __m256i zflag = _mm256_cmpeq_epi32(_mm256_and_si256(key, v_zero_flag), v_zero_flag);
            miss = _mm256_or_ps(miss, _mm256_and_ps(small, _mm256_castsi256_ps(zflag)));
            __m256i dl = _mm256_cmpeq_epi32(_mm256_and_si256(key, v_dl), v_dl);
            /* go left = miss ? dl : le */
            __m256 left = _mm256_blendv_ps(le, _mm256_castsi256_ps(dl), miss);
            __m256i right = _mm256_andnot_si256(_mm256_castps_si256(left), v_one);
            __m256i npc = _mm256_add_epi32(child, right);
            /* W: leaves of finished lanes (rows may repeat across lanes: scalar adds) */
            while (store_bits) {
                int b = __builtin_ctz(store_bits);
                store_bits &= store_bits - 1;
                store_leaf(ctx, &code[pc[i + b]], acc + (int64_t)row[i + b] * ctx->n_outputs);
            }
            int keep = _mm256_movemask_ps(_mm256_castsi256_ps(is_cmp));
            if (i + 8 > n) keep &= (1 << (n - i)) - 1;
            live += __builtin_popcount(keep);
            if (compaction) {
                /* survivors to the front; w <= i, so only already-read slots are written */
                __m256i perm = _mm256_loadu_si256((const __m256i *)cvm_compact_perm[keep]);
                _mm256_storeu_si256((__m256i *)(pc + w), _mm256_permutevar8x32_epi32(npc, perm));
                _mm256_storeu_si256((__m256i *)(row + w), _mm256_permutevar8x32_epi32(vrow, perm));
                w += __builtin_popcount(keep);
            } else {
                /* bubbles: finished lanes keep running the padding instruction */
                npc = _mm256_blendv_epi8(v_pad, npc, is_cmp);
                _mm256_storeu_si256((__m256i *)(pc + i), npc);
            }
        }
        if (compaction) {
            n = w;
            pad_queue(pc, row, n, ctx->prog->pad_pc);
        }
    }
    return steps;
}

__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl"))) int64_t
cvm_forest_run_avx512(const cvm_forest_ctx *ctx, const float *X, int64_t stride, int32_t *row,
                      int32_t *pc, int32_t n, double *acc, int compaction) {
    const cvm_insn *code = ctx->prog->code;
    const int *words = (const int *)code;
    const __m512i v_cmp = _mm512_set1_epi32(CVM_CMP), v_store = _mm512_set1_epi32(CVM_STORE);
    const __m512i v_feat = _mm512_set1_epi32(CF_KEY_FEATURE);
    const __m512i v_zero_flag = _mm512_set1_epi32(CF_KEY_ZERO);
    const __m512i v_dl = _mm512_set1_epi32(CF_KEY_DL);
    const __m512i v_one = _mm512_set1_epi32(1), v_pad = _mm512_set1_epi32(ctx->prog->pad_pc);
    const __m512 v_eps = _mm512_set1_ps(CF_ZERO_EPS);
    const __m512i v_stride = _mm512_set1_epi32((int32_t)stride);
    int64_t steps = 0;
    int32_t live = n;
    pad_queue(pc, row, n, ctx->prog->pad_pc);
    while (live > 0) {
        int32_t w = 0;
        live = 0;
        for (int32_t i = 0; i < n; i += 16) {
            steps++;
            __m512i vpc = _mm512_loadu_si512(pc + i);
            __m512i vrow = _mm512_loadu_si512(row + i);
            __m512i idx = _mm512_slli_epi32(vpc, 2);
            __m512i op = _mm512_i32gather_epi32(idx, words, 4);
            __m512i key = _mm512_i32gather_epi32(idx, words + 1, 4);
            __m512 thr = _mm512_castsi512_ps(_mm512_i32gather_epi32(idx, words + 2, 4));
            __m512i child = _mm512_i32gather_epi32(idx, words + 3, 4);
            __mmask16 is_cmp = _mm512_cmpeq_epi32_mask(op, v_cmp);
            unsigned store_bits = _mm512_cmpeq_epi32_mask(op, v_store);
            /* T: the compare, gathered only in cmp lanes */
            __m512i xi =
                _mm512_add_epi32(_mm512_mullo_epi32(vrow, v_stride), _mm512_and_si512(key, v_feat));
            __m512 x = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), is_cmp, xi, X, 4);
            __mmask16 le = _mm512_cmp_ps_mask(x, thr, _CMP_LE_OQ);
            __mmask16 miss = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
            miss |= _mm512_cmp_ps_mask(_mm512_abs_ps(x), v_eps, _CMP_LE_OQ) &
                    _mm512_test_epi32_mask(key, v_zero_flag);
            __mmask16 dl = _mm512_test_epi32_mask(key, v_dl);
            /* go left = miss ? dl : le */
            __mmask16 left = (__mmask16)((miss & dl) | (~miss & le));
            __m512i npc = _mm512_mask_add_epi32(child, (__mmask16)~left, child, v_one);
            /* W: leaves of finished lanes (rows may repeat across lanes: scalar adds) */
            while (store_bits) {
                int b = __builtin_ctz(store_bits);
                store_bits &= store_bits - 1;
                store_leaf(ctx, &code[pc[i + b]], acc + (int64_t)row[i + b] * ctx->n_outputs);
            }
            unsigned keep = is_cmp;
            if (i + 16 > n) keep &= (1u << (n - i)) - 1;
            live += __builtin_popcount(keep);
            if (compaction) {
                /* vpcompressd packs the survivors; a full-width store is safe because
                 * w <= i, so it only overwrites slots this sweep has already read */
                _mm512_storeu_si512(pc + w, _mm512_maskz_compress_epi32((__mmask16)keep, npc));
                _mm512_storeu_si512(row + w, _mm512_maskz_compress_epi32((__mmask16)keep, vrow));
                w += __builtin_popcount(keep);
            } else {
                /* bubbles: finished lanes keep running the padding instruction */
                _mm512_storeu_si512(pc + i, _mm512_mask_blend_epi32(is_cmp, v_pad, npc));
            }
        }
        if (compaction) {
            n = w;
            pad_queue(pc, row, n, ctx->prog->pad_pc);
        }
    }
    return steps;
}
#else
int64_t cvm_forest_run_avx512(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                              int32_t *row, int32_t *pc, int32_t n, double *acc, int compaction) {
    (void)compaction;
    return cvm_forest_run_scalar(ctx, X, stride, row, pc, n, acc);
}
int64_t cvm_forest_run_avx2(const cvm_forest_ctx *ctx, const float *X, int64_t stride, int32_t *row,
                            int32_t *pc, int32_t n, double *acc, int compaction) {
    (void)compaction;
    return cvm_forest_run_scalar(ctx, X, stride, row, pc, n, acc);
}
#endif
