/* SPDX-License-Identifier: MIT */
/* Internal: kde/'s GPU entry point in the CUDA module (the GPU pair walk of canopy_kde),
 * its slice "kde" (core/cuda_module.h; forwarder in kde/gpu_forward.c). */
#ifndef CANOPY_KDE_GPU_ENTRIES_H
#define CANOPY_KDE_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "kde/kde_pair.h"

#define CANOPY_KDE_GPU_ENTRIES(STATUS, OUT, RELEASE)                                               \
    STATUS(canopy_gpu_kde_pairs,                                                                   \
           (const void *ctx, const canopy_tree_view *ta, const canopy_tree_view *tb, int sym,      \
            canopy_pair_counters *cnt, struct canopy_gpu_report *rep),                             \
           (ctx, ta, tb, sym, cnt, rep))

CANOPY_CUDA_SLICE_STRUCT(canopy_kde_gpu_entries, CANOPY_KDE_GPU_ENTRIES)

#endif
