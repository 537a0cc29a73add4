/* SPDX-License-Identifier: MIT */
/* The pair-count leaf kernel on 8 lanes (compiled with AVX2 flags and only called when
 * canopy_cpu_isa() finds AVX2). */
#define SIMT_W 8
#include "canopy/simt.h"
#define PCP_LEAF_NAME canopy_pcp_leaf_avx2
#include "paircount/pair_leaf.h"
