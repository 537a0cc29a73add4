/* SPDX-License-Identifier: MIT */
/* gravity/'s GPU entry points: forwarders to the CUDA module's slice "gravity". */
#include "gravity/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("gravity", canopy_gravity_gpu_entries, CANOPY_GRAVITY_GPU_ENTRIES)
