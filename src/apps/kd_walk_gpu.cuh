/* SPDX-License-Identifier: MIT */
/* The specialised kd walks of kNN and radius counts on the GPU (kd_walk_gpu.cu), which
 * their descriptor types offer the engines as their own kernel where kd_walk_applies
 * (canopy_gpu_has_own_kernel). */
#ifndef CANOPY_APPS_KD_WALK_GPU_CUH
#define CANOPY_APPS_KD_WALK_GPU_CUH

#include "apps/kd_walk.h"
#include "apps/knn/knn.h"
#include "apps/radius/radius.h"
#include "canopy/traverse_cuda.cuh"

/* kNN with a register list of K slots (K in 1, 4, 8, 16; k <= K), and radius counts. */
template <int K>
canopy_status kd_walk_knn(canopy_variant v, const canopy_gpu_launch &L, const knn_ctx &ctx);
canopy_status kd_walk_radius(canopy_variant v, const canopy_gpu_launch &L, const radius_ctx &ctx);

#endif
