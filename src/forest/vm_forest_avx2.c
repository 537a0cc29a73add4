/* SPDX-License-Identifier: MIT */
/* The SIMD forest interpreter on 8 AVX2 lanes (compiled with AVX2 flags; called only on
 * AVX2 CPUs). */
#define SIMT_W 8
#define CVM_FOREST_LANES canopy_cvm_forest_run_avx2
#include "forest/vm_forest_lanes.h"
