/* SPDX-License-Identifier: MIT */
/* ptsd/'s GPU entry points: forwarders to the CUDA module's slice "ptsd". */
#include "ptsd/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("ptsd", canopy_ptsd_gpu_entries, CANOPY_PTSD_GPU_ENTRIES)
