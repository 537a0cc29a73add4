/* The applications every GPU engine is instantiated for. Adding an application:
 * include its descriptor, declare its adapter, add it to the list. */
#ifndef CANOPY_TRAVERSE_GPU_APPS_CUH
#define CANOPY_TRAVERSE_GPU_APPS_CUH

#include "apps/gravity.h"
#include "apps/knn.h"
#include "apps/radius.h"
#include "apps/search.h"
#include "traverse/gpu_common.cuh"

CANOPY_GPU_APP_GUIDED(knn, knn_ctx, knn_state, true)
CANOPY_GPU_APP_UNGUIDED(radius, radius_ctx, radius_state)
CANOPY_GPU_APP_UNGUIDED(gravity, gravity_ctx, gravity_state)
CANOPY_GPU_APP_UNGUIDED(search, search_ctx, search_state)

#define CANOPY_GPU_FOR_EACH_APP(X) X(knn_gpu) X(radius_gpu) X(gravity_gpu) X(search_gpu)

#define CANOPY_GPU_INSTANTIATE(VARIANT, APP)                                                       \
    template canopy_status canopy_gpu_launch_##VARIANT<APP>(const canopy_gpu_launch &,             \
                                                            const typename APP::Ctx &);

#endif
