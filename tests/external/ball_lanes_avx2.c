/* SPDX-License-Identifier: MIT */
/* The ball count's simd_l on 8 lanes (CMakeLists.txt gives this file its ISA's flags). */
#define SIMT_W 8
#define CANOPY_LANES_ISA avx2
#include "ball_lanes.h"
