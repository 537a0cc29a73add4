/* SPDX-License-Identifier: MIT */
/* tree/'s GPU entry points: forwarders to the CUDA module's slice "tree". */
#include "tree/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("tree", canopy_tree_gpu_entries, CANOPY_TREE_GPU_ENTRIES)
