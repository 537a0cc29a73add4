/* SPDX-License-Identifier: MIT */
/* The GPU side of the bottom-up aggregations (built only with CUDA). s is one of the
 * CANOPY_PTSD_GPU_* strategies; out as for canopy_ptsd_run, mass sums not yet divided
 * into centres (the caller does that for every strategy alike). */
#ifndef CANOPY_PTSD_GPU_H
#define CANOPY_PTSD_GPU_H

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

canopy_status canopy_ptsd_gpu_run(const canopy_ptree *t, canopy_ptsd_app app, const double *mass,
                                  const double *pos, canopy_ptsd_strategy s, void *out,
                                  canopy_ptsd_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
