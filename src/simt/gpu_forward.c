/* SPDX-License-Identifier: MIT */
/* simt/'s GPU entry points: forwarders to the CUDA module's slice "simt". */
#include "simt/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("simt", canopy_simt_gpu_entries, CANOPY_SIMT_GPU_ENTRIES)
