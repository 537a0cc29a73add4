/* SPDX-License-Identifier: MIT */
/* The SIMD Pike VM on 8 AVX2 lanes (compiled with AVX2 flags; called only on AVX2
 * CPUs). */
#define SIMT_W 8
#define CRE_LINE_LANES canopy_cvm_regex_line_avx2
#include "regex/pike_vm_lanes.h"
