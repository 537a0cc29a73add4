/* Glue between the forest driver (predict.c) and the interpreter engines. */
#ifndef CANOPY_FOREST_ENGINE_H
#define CANOPY_FOREST_ENGINE_H

#include "forest/forest.h"
#include "vm/vm.h"

/* One instruction per linked node plus the padding instruction; pcs = node indices. */
canopy_status cf_vm_compile(const cf_layout *L, cvm_program *p);
/* Runs rows [r0, r1) x trees [t0, t1); qrow/qpc hold (r1 - r0) * (t1 - t0) + CVM_PAD
 * ints; acc is indexed from row r0. isa: CANOPY_ISA_SCALAR runs the scalar
 * interpreter, AVX2 / AVX512 the SIMD one of that width. Returns interpreter steps. */
int64_t cf_vm_block(const cf_layout *L, const cvm_program *p, canopy_isa isa, int compaction,
                    const float *X, int64_t stride, int64_t r0, int64_t r1, int32_t t0, int32_t t1,
                    int32_t *qrow, int32_t *qpc, double *acc);

#endif
