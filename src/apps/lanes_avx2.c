/* SPDX-License-Identifier: MIT */
/* simd_l with vector hooks on 8 lanes (this file is compiled with AVX2 flags and only called when
 * canopy_cpu_isa() finds AVX2). */
#define SIMT_W 8
#define CANOPY_LANES_ISA avx2
#include "apps/lanes_body.h"
