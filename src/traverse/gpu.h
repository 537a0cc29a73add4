/* The CUDA backend as seen from C: each application registers its host glue (that
 * uploads its context and buffers) as a canopy_gpu_runner (canopy/traverse.h), so the
 * driver in run.c dispatches without knowing any application. */
#ifndef CANOPY_TRAVERSE_GPU_H
#define CANOPY_TRAVERSE_GPU_H

#include "traverse/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_gpu_report {
    double transfer_seconds; /* host <-> device copies, tree included */
    double traverse_seconds; /* kernel time (device events) */
    double schedule_seconds; /* hybrid: profile and sort on the device (device events) */
    int64_t profile_tests;   /* hybrid: truncation tests of the profile kernel */
    canopy_trav_counters counters;
} canopy_gpu_report;

#ifdef __cplusplus
}
#endif

#endif
