/* SPDX-License-Identifier: MIT */
/* simd_l with vector hooks on 16 lanes (this file is compiled with AVX-512 flags and only called
 * when canopy_cpu_isa() finds AVX-512). */
#define SIMT_W 16
#define CANOPY_LANES_ISA avx512
#include "apps/lanes_body.h"
