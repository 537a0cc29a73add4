/* SPDX-License-Identifier: MIT */
/* The walker's SIMD sweeps on 8 AVX2 lanes (compiled with AVX2 flags; called only on
 * AVX2 CPUs). */
#define SIMT_W 8
#define CF_SWEEPS canopy_cf_sweeps_avx2
#include "forest/walk_sync_lanes.h"
