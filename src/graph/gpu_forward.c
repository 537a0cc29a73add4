/* SPDX-License-Identifier: MIT */
/* graph/'s GPU entry points: forwarders to the CUDA module's slice "graph". */
#include "graph/gpu_entries.h"

CANOPY_CUDA_FORWARDERS("graph", canopy_graph_gpu_entries, CANOPY_GRAPH_GPU_ENTRIES)
