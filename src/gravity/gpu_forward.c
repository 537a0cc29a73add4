/* SPDX-License-Identifier: MIT */
/* nbody/'s GPU entry points: forwarders to the CUDA module's slice "nbody". */
#include "gravity/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("nbody", canopy_nbody_gpu_entries, CANOPY_NBODY_GPU_ENTRIES)
