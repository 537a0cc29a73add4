/* SPDX-License-Identifier: MIT */
/* kde/'s GPU entry point: a forwarder to the CUDA module's slice "kde". */
#include "kde/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("kde", canopy_kde_gpu_entries, CANOPY_KDE_GPU_ENTRIES)
