/* SPDX-License-Identifier: MIT */
/* The ball count's simd_l on 16 lanes (CMakeLists.txt gives this file its ISA's flags). */
#define SIMT_W 16
#define CANOPY_LANES_ISA avx512
#include "ball_lanes.h"
