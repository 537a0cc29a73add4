/* SPDX-License-Identifier: MIT */
/* The walker's SIMD sweeps on 16 AVX-512 lanes (compiled with AVX-512 flags; called
 * only when canopy_cpu_isa() finds AVX-512). */
#define SIMT_W 16
#define CF_SWEEPS canopy_cf_sweeps_avx512
#include "forest/walk_sync_lanes.h"
