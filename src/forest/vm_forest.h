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

/* Runs a block of forest tasks to completion: task i starts at pc[i] on input row
 * row[i] (rows relative to X, each `stride` floats), leaves are added to
 * acc[row * n_outputs + ...]. row and pc are the task queue and are overwritten;
 * both need n + CVM_PAD entries (SIMD padding). Finished traversals are removed by stream
 * compaction; with compaction == 0 (SIMD only) they stay as padding bubbles, the
 * paper's baseline. Returns the number of SIMD (or scalar) steps executed. */
int64_t cvm_forest_run_scalar(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                              int32_t *row, int32_t *pc, int32_t n, double *acc);
int64_t cvm_forest_run_avx2(const cvm_forest_ctx *ctx, const float *X, int64_t stride, int32_t *row,
                            int32_t *pc, int32_t n, double *acc, int compaction);
/* 16 lanes, compaction by vpcompressd; call only when canopy_cpu_isa() reports
 * AVX-512. */
int64_t cvm_forest_run_avx512(const cvm_forest_ctx *ctx, const float *X, int64_t stride,
                              int32_t *row, int32_t *pc, int32_t n, double *acc, int compaction);

#endif
