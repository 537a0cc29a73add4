/* SPDX-License-Identifier: MIT */
/* simd_l with vector hooks on 8 lanes (this file is compiled with no ISA flags: portable lanes for
 * every other CPU). */
#define SIMT_W 8
#define CANOPY_LANES_ISA generic
#include "apps/lanes_body.h"
