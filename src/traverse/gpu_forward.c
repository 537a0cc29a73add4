/* SPDX-License-Identifier: MIT */
/* traverse/'s GPU entry points: forwarders to the CUDA module's slice "traverse". */
#include "traverse/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("traverse", canopy_traverse_gpu_entries, CANOPY_TRAVERSE_GPU_ENTRIES)
