/* SPDX-License-Identifier: MIT */
/* forest/'s GPU entry points: forwarders to the CUDA module's slice "forest". */
#include "forest/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("forest", canopy_forest_gpu_entries, CANOPY_FOREST_GPU_ENTRIES)
