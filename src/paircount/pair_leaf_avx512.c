/* SPDX-License-Identifier: MIT */
/* The pair-count leaf kernel on 16 lanes (compiled with AVX-512 flags and only called when
 * canopy_cpu_isa() finds AVX-512). */
#define SIMT_W 16
#include "canopy/simt.h"
#define PCP_LEAF_NAME canopy_pcp_leaf_avx512
#include "paircount/pair_leaf.h"
