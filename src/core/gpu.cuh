/* SPDX-License-Identifier: MIT */
/* The CUDA host helpers are public (traversals compiled outside the library use
 * them): canopy/cuda_util.cuh. */
#include "canopy/cuda_util.cuh"
