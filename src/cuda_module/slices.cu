/* SPDX-License-Identifier: MIT */
/* The CUDA module's table: its one exported entry, which takes the core's services and
 * returns every subsystem's slice of GPU entry points (core/cuda_module.h). It sits at the
 * top of the stack, so it alone includes each X/gpu_entries.h; a subsystem with GPU
 * code adds its slice here. */
#include "apps/gpu_entries.h"
#include "core/cuda_module.h"
#include "core/gpu_entries.h"
#include "forest/gpu_entries.h"
#include "graph/gpu_entries.h"
#include "gravity/gpu_entries.h"
#include "index/gpu_entries.h"
#include "kde/gpu_entries.h"
#include "paircount/gpu_entries.h"
#include "ptsd/gpu_entries.h"
#include "simt/gpu_entries.h"
#include "traverse/gpu_entries.h"
#include "tree/gpu_entries.h"

/* Each entry reached through the table first puts its calling thread on the device
 * canopy_gpu_bind_device chose (one GPU per MPI rank), so the binding holds for every GPU call
 * of the process, OpenMP threads' included. */
#define BOUND_STATUS(name, params, args)                                                           \
    static canopy_status bound_##name params {                                                     \
        gpu_bind_thread();                                                                         \
        return ::name args;                                                                        \
    }
#define BOUND_OUT(name, params, args, out) BOUND_STATUS(name, params, args)
#define BOUND_RELEASE(name, params, args)                                                          \
    static void bound_##name params {                                                              \
        gpu_bind_thread();                                                                         \
        ::name args;                                                                               \
    }
#define BOUND_ENTRY(name, ...) bound_##name,
/* The module's struct of one subsystem's entries, and its row of the table. */
#define SLICE(sub, LIST)                                                                           \
    LIST(BOUND_STATUS, BOUND_OUT, BOUND_RELEASE)                                                   \
    static const canopy_##sub##_gpu_entries sub##_entries = {                                      \
        LIST(BOUND_ENTRY, BOUND_ENTRY, BOUND_ENTRY)};
#define ROW(sub, LIST)                                                                             \
    {#sub, (uint32_t)sizeof(canopy_##sub##_gpu_entries), CANOPY_CUDA_SIGNATURE(LIST),              \
     &sub##_entries},

#define SLICES(X)                                                                                  \
    X(core, CANOPY_CORE_GPU_ENTRIES)                                                               \
    X(simt, CANOPY_SIMT_GPU_ENTRIES)                                                               \
    X(tree, CANOPY_TREE_GPU_ENTRIES)                                                               \
    X(traverse, CANOPY_TRAVERSE_GPU_ENTRIES)                                                       \
    X(apps, CANOPY_APPS_GPU_ENTRIES)                                                               \
    X(paircount, CANOPY_PAIRCOUNT_GPU_ENTRIES)                                                     \
    X(kde, CANOPY_KDE_GPU_ENTRIES)                                                                 \
    X(forest, CANOPY_FOREST_GPU_ENTRIES)                                                           \
    X(graph, CANOPY_GRAPH_GPU_ENTRIES)                                                             \
    X(ptsd, CANOPY_PTSD_GPU_ENTRIES)                                                               \
    X(index, CANOPY_INDEX_GPU_ENTRIES)                                                             \
    X(gravity, CANOPY_GRAVITY_GPU_ENTRIES)

SLICES(SLICE)
static const canopy_cuda_slice_def slices[] = {SLICES(ROW)};

/* gpu_info reports the device the calling thread is bound to. */
static canopy_status bound_gpu_info(char *name, size_t name_len, size_t *total_bytes) {
    gpu_bind_thread();
    return canopy_cuda_module_gpu_info(name, name_len, total_bytes);
}

static const canopy_cuda_module table = {
    CANOPY_CUDA_MODULE_ABI,
    sizeof(canopy_cuda_module),
    CANOPY_VERSION_STRING,
    canopy_cuda_module_device_count,
    bound_gpu_info,
    (int32_t)(sizeof slices / sizeof slices[0]),
    slices,
};

/* The module's only exported symbol (the link's version script hides the rest). A core
 * of another ABI reads abi/size/version first and refuses the table. */
extern "C" const canopy_cuda_module *canopy_cuda_module_entry(const canopy_cuda_host *h) {
    return canopy_cuda_module_attach(h) ? &table : NULL;
}
