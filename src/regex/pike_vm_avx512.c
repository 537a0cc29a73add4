/* SPDX-License-Identifier: MIT */
/* The SIMD Pike VM on 16 AVX-512 lanes (compiled with AVX-512 flags; called only when
 * canopy_cpu_isa() finds AVX-512). */
#define SIMT_W 16
#define CRE_LINE_LANES canopy_cvm_regex_line_avx512
#include "regex/pike_vm_lanes.h"
