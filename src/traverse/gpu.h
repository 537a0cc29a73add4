/* The CUDA backend as seen from C: one entry per application (the host glue that
 * uploads its context and buffers) with a shared signature, so the driver in run.c
 * dispatches without knowing any application. Defined only when CANOPY_HAVE_CUDA. */
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

/* Runs nq queries in `order` (NULL = identity), or, when plan is given, in the order
 * of the hybrid schedule computed on the device from that plan. */
/* canopy_gpu_runner (canopy/traverse.h) is the signature of each entry. */

canopy_status canopy_gpu_knn(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                             int64_t nq, canopy_variant v, const canopy_profile_plan *plan,
                             canopy_gpu_report *rep);
canopy_status canopy_gpu_radius(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                                int64_t nq, canopy_variant v, const canopy_profile_plan *plan,
                                canopy_gpu_report *rep);
canopy_status canopy_gpu_gravity(const void *ctx, const canopy_tree_view *tree,
                                 const int64_t *order, int64_t nq, canopy_variant v,
                                 const canopy_profile_plan *plan, canopy_gpu_report *rep);
canopy_status canopy_gpu_search(const void *ctx, const canopy_tree_view *tree, const int64_t *order,
                                int64_t nq, canopy_variant v, const canopy_profile_plan *plan,
                                canopy_gpu_report *rep);

#ifdef __cplusplus
}
#endif

/* The runner an application registers: its glue when CUDA is built, else NULL. */
#ifdef CANOPY_HAVE_CUDA
#define CANOPY_GPU_RUNNER(NAME) canopy_gpu_##NAME
#else
#define CANOPY_GPU_RUNNER(NAME) NULL
#endif

#endif
