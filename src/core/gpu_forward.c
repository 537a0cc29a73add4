/* SPDX-License-Identifier: MIT */
/* core/'s GPU entry points: forwarders to the CUDA module's slice "core". */
#include "core/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("core", canopy_core_gpu_entries, CANOPY_CORE_GPU_ENTRIES)
