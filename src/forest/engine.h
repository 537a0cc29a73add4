/* SPDX-License-Identifier: MIT */
/* Glue between the forest driver (predict.c) and the interpreter engines. */
#ifndef CANOPY_FOREST_ENGINE_H
#define CANOPY_FOREST_ENGINE_H

#include "forest/forest.h"
#include "vm/vm.h"

/* One instruction per linked node plus the padding instruction; pcs = node indices. */
canopy_status canopy_cf_vm_compile(const cf_layout *L, cvm_program *p);
/* Runs rows [r0, r1) x trees [t0, t1); qrow/qpc hold (r1 - r0) * (t1 - t0) + CVM_PAD
 * ints; acc is indexed from row r0. isa: CANOPY_ISA_SCALAR runs the scalar
 * interpreter, AVX2 / AVX512 the SIMD one of that width. Returns interpreter steps. */
int64_t canopy_cf_vm_block(const cf_layout *L, const cvm_program *p, canopy_isa isa, int compaction,
                           const float *X, int64_t stride, int64_t r0, int64_t r1, int32_t t0,
                           int32_t t1, int32_t *qrow, int32_t *qpc, double *acc);

/* One task per row with the tree chosen per row (rows.c): B+-tree forests, where a
 * key visits only its bucket's tree. acc[r] (n_outputs doubles per row) receives the
 * leaf of tree tree_of[r], for every row r < n, on the layout's scalar walker (prog
 * NULL) or the interpreter (simd: AVX2 lanes). Rows run in parallel blocks; steps
 * (may be NULL) gets the interpreter steps. */
canopy_status canopy_cf_predict_rows(const cf_layout *L, const cvm_program *prog, int simd,
                                     int compaction, const float *X, int64_t stride, int64_t n,
                                     const int32_t *tree_of, double *acc, int64_t *steps);

#endif
