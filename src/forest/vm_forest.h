/* SPDX-License-Identifier: MIT */
/* The forest interpreters over the VM's bytecode (src/forest/vm_forest.c). */
#ifndef CANOPY_FOREST_VM_FOREST_H
#define CANOPY_FOREST_VM_FOREST_H

#include "vm/vm.h"

/* The accumulation target of forest programs: leaf values and outputs per row. */
typedef struct cvm_forest_ctx {
    const cvm_program *prog;
    const double *values;
    int32_t n_outputs;
} cvm_forest_ctx;

/* Adds the leaf of a store instruction to a row's outputs (scalar leaves: arg is the
 * output; vector leaves, arg < 0: one value per output). */
static inline void cvm_forest_store_leaf(const cvm_forest_ctx *c, const cvm_insn *in,
                                         double *acc_row) {
    const double *v = c->values + in->imm;
    if (in->arg >= 0)
        acc_row[in->arg] += v[0];
    else
        for (int32_t k = 0; k < c->n_outputs; k++) acc_row[k] += v[k];
}

/* Runs a block of forest tasks to completion: task i starts at pc[i] on input row
 * row[i] (rows relative to X, each `stride` floats), leaves are added to
 * acc[row * n_outputs + ...]. row and pc are the task queue and are overwritten;
 * both need n + CVM_PAD entries (SIMD padding). Finished traversals are removed by stream
 * compaction; with compaction == 0 (SIMD only) they stay as padding bubbles, the
 * paper's baseline. Returns the number of SIMD (or scalar) steps executed. */
int64_t canopy_cvm_forest_run_scalar(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                                     int32_t *row, int32_t *pc, int32_t n, double *acc);
/* The SIMD ones (vm_forest_lanes.h) on 8 AVX2 or 16 AVX-512 lanes; call only when
 * canopy_cpu_isa() reports the ISA. */
int64_t canopy_cvm_forest_run_avx2(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                                   int32_t *row, int32_t *pc, int32_t n, double *acc,
                                   int compaction);
int64_t canopy_cvm_forest_run_avx512(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                                     int32_t *row, int32_t *pc, int32_t n, double *acc,
                                     int compaction);

#endif
