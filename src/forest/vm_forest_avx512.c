/* SPDX-License-Identifier: MIT */
/* The SIMD forest interpreter on 16 AVX-512 lanes (compiled with AVX-512 flags; called
 * only when canopy_cpu_isa() finds AVX-512). */
#define SIMT_W 16
#define CVM_FOREST_LANES canopy_cvm_forest_run_avx512
#include "forest/vm_forest_lanes.h"
