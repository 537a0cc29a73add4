/* SPDX-License-Identifier: MIT */
/* Internal: paircount/'s GPU entry points in the CUDA module (the GPU pair counts), its slice
 * "paircount" (core/cuda_module.h; forwarders in paircount/gpu_forward.c). */
#ifndef CANOPY_PAIRCOUNT_GPU_ENTRIES_H
#define CANOPY_PAIRCOUNT_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "paircount/pair_count.h"
#include "paircount/paircount.h"

#define CANOPY_PAIRCOUNT_GPU_ENTRIES(STATUS, OUT, RELEASE)                                         \
    STATUS(canopy_gpu_paircount,                                                                   \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_paircount_pairs,                                                             \
           (const void *ctx, const canopy_tree_view *ta, const canopy_tree_view *tb, int sym,      \
            canopy_pair_counters *cnt, struct canopy_gpu_report *rep),                             \
           (ctx, ta, tb, sym, cnt, rep))

CANOPY_CUDA_SLICE_STRUCT(canopy_paircount_gpu_entries, CANOPY_PAIRCOUNT_GPU_ENTRIES)

#endif
