/* SPDX-License-Identifier: MIT */
/* Every application's vector hooks and simd_l runners for one lane width: included by
 * lanes_avx512.c, lanes_avx2.c and lanes_generic.c after they define SIMT_W and
 * CANOPY_LANES_ISA. Each application's hooks live in its folder (X_lanes.h). */
#include "apps/knn/knn_lanes.h"
#include "apps/radius/radius_lanes.h"
#include "gravity/gravity_lanes.h"
