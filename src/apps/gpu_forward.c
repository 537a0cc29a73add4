/* SPDX-License-Identifier: MIT */
/* apps/'s GPU entry points: forwarders to the CUDA module's slice "apps". */
#include "apps/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("apps", canopy_apps_gpu_entries, CANOPY_APPS_GPU_ENTRIES)
