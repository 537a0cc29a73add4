/* SPDX-License-Identifier: MIT */
/* index/'s GPU entry points: forwarders to the CUDA module's slice "index". */
#include "index/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("index", canopy_index_gpu_entries, CANOPY_INDEX_GPU_ENTRIES)
