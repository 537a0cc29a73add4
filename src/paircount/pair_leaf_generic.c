/* SPDX-License-Identifier: MIT */
/* The pair-count leaf kernel on 8 lanes (compiled with no ISA flags: portable lanes for every other
 * CPU). */
#define SIMT_W 8
#include "canopy/simt.h"
#define PCP_LEAF_NAME canopy_pcp_leaf_generic
#include "paircount/pair_leaf.h"
