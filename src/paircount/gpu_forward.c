/* SPDX-License-Identifier: MIT */
/* paircount/'s GPU entry points: forwarders to the CUDA module's slice "paircount". */
#include "paircount/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("paircount", canopy_paircount_gpu_entries, CANOPY_PAIRCOUNT_GPU_ENTRIES)
