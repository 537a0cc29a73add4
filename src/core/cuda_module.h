/* SPDX-License-Identifier: MIT */
/* Internal: the CUDA backend as a module loaded at run time (libcanopy_cuda.so.<major>),
 * so the library and the CLI never need the CUDA libraries to start. The module hands
 * the core a table (checked for ABI, size and version when it loads) of slices: each
 * subsystem's own struct of GPU entry points, found by a key and checked by size and by
 * its entries' text. The core hands the module the few core services it calls, so
 * errors, memory and names are the caller's own copy even when the core is linked
 * statically. The core knows no subsystem: each one lists its entries in its own
 * X/gpu_entries.h and defines them as forwarders in X/gpu_forward.c with
 * CANOPY_CUDA_FORWARDERS, which fail with CANOPY_ERR_UNSUPPORTED and the reason when the
 * module or the slice is absent; src/cuda_module/ fills the slices (docs/architecture.md). */
#ifndef CANOPY_CORE_CUDA_MODULE_H
#define CANOPY_CORE_CUDA_MODULE_H

#include "canopy.h"
#include "core/device.h"

#include <stddef.h>
#include <stdint.h>

/* Bump when the table, the host services or a structure they pass changes meaning. */
#define CANOPY_CUDA_MODULE_ABI 5
/* The one symbol the module exports. */
#define CANOPY_CUDA_MODULE_ENTRY "canopy_cuda_module_entry"

/* A subsystem's entries are an X-macro LIST(STATUS, OUT, RELEASE) of
 * STATUS(name, params, args): returns canopy_status and loads the module on first use;
 * OUT(name, params, args, out): a STATUS whose *out is NULL when it fails;
 * RELEASE(name, params, args): frees what an earlier call made, so it never loads the
 * module (nothing to free without it). */

/* A member of the entry's own type (qualified in C++, where the member hides the name). */
#ifdef __cplusplus
#define CANOPY_CUDA_MEMBER(name, params, ...) __typeof__(::name) *name;
#else
#define CANOPY_CUDA_MEMBER(name, params, ...) __typeof__(name) *name;
#endif
/* The struct of a slice: one function pointer per entry of LIST. */
#define CANOPY_CUDA_SLICE_STRUCT(type, LIST)                                                       \
    typedef struct type {                                                                          \
        LIST(CANOPY_CUDA_MEMBER, CANOPY_CUDA_MEMBER, CANOPY_CUDA_MEMBER)                           \
    } type;

/* Every entry's name and parameters as text: a slice whose entries differ from the
 * library's is refused even where the ABI number was not bumped. */
#define CANOPY_CUDA_SIGNATURE_OF(name, params, ...) #name #params ";"
#define CANOPY_CUDA_SIGNATURE(LIST)                                                                \
    LIST(CANOPY_CUDA_SIGNATURE_OF, CANOPY_CUDA_SIGNATURE_OF, CANOPY_CUDA_SIGNATURE_OF)

/* One subsystem's entries in the module. */
typedef struct canopy_cuda_slice_def {
    const char *key;       /* the subsystem's name: "index", "graph", ... */
    uint32_t size;         /* sizeof its struct of entries there */
    const char *signature; /* CANOPY_CUDA_SIGNATURE of its list there */
    const void *entries;   /* its struct of entries */
} canopy_cuda_slice_def;

/* What the module gives the core. The first three fields never move, so a module of
 * another ABI is recognised and refused before anything else of it is read. */
typedef struct canopy_cuda_module {
    uint32_t abi;        /* CANOPY_CUDA_MODULE_ABI of the module's build */
    uint32_t size;       /* sizeof(canopy_cuda_module) there */
    const char *version; /* CANOPY_VERSION_STRING there: internal structures must match */
    /* Visible devices (0 with a reason in why when there are none or CUDA fails). */
    int (*device_count)(char *why, size_t why_len);
    canopy_status (*gpu_info)(char *name, size_t name_len, size_t *total_bytes);
    int32_t n_slices;
    const canopy_cuda_slice_def *slices;
} canopy_cuda_module;

/* What the core lends the module: the functions of the core its code calls. */
typedef struct canopy_cuda_host {
    uint32_t abi, size;
    canopy_status (*fail)(canopy_status s, const char *message); /* records the message */
    __typeof__(canopy_alloc) *alloc;
    __typeof__(canopy_free) *free;
    __typeof__(canopy_now) *now;
    __typeof__(canopy_tree_free) *tree_free;
    __typeof__(canopy_profile_chunk) *profile_chunk;
    __typeof__(canopy_variant_name) *variant_name;
    __typeof__(canopy_schedule_name) *schedule_name;
    __typeof__(canopy_tree_kind_name) *tree_kind_name;
    __typeof__(canopy_graph_strategy_name) *graph_strategy_name;
    __typeof__(canopy_ptsd_strategy_name) *ptsd_strategy_name;
    __typeof__(canopy_forest_engine_name) *forest_engine_name;
    __typeof__(canopy_forest_layout_name) *forest_layout_name;
} canopy_cuda_host;

typedef const canopy_cuda_module *(*canopy_cuda_module_entry_fn)(const canopy_cuda_host *host);

#ifdef __cplusplus
extern "C" {
#endif
/* The module, loaded on the first call (thread-safe), or NULL when it is absent. */
const canopy_cuda_module *canopy_cuda(void);
/* The slice `key` of the module (loading it when `load`, else only when it is already
 * loaded), or NULL when the module or the slice is absent, or the slice's size or
 * signature differs from the caller's. */
const void *canopy_cuda_slice(const char *key, size_t size, const char *signature, int load);
/* Records why canopy_cuda_slice(key, ...) gave NULL; CANOPY_ERR_UNSUPPORTED. */
canopy_status canopy_cuda_slice_missing(const char *key);
#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------ core side -- */
/* Defines a subsystem's entries as forwarders to its slice `key` (one use per file: the
 * slice is looked up once and kept). (slice_: a name no entry's parameters use.) */
#define CANOPY_CUDA_FORWARDERS(key, type, LIST)                                                    \
    typedef type canopy_cuda_forward_type;                                                         \
    static const char canopy_cuda_forward_key[] = key;                                             \
    static const type *canopy_cuda_forward_slice(int load) {                                       \
        static const type *kept;                                                                   \
        const type *s = __atomic_load_n(&kept, __ATOMIC_ACQUIRE);                                  \
        if (s) return s;                                                                           \
        s = (const type *)canopy_cuda_slice(key, sizeof(type), CANOPY_CUDA_SIGNATURE(LIST), load); \
        if (s) __atomic_store_n(&kept, s, __ATOMIC_RELEASE);                                       \
        return s;                                                                                  \
    }                                                                                              \
    LIST(CANOPY_CUDA_FORWARD_STATUS, CANOPY_CUDA_FORWARD_OUT, CANOPY_CUDA_FORWARD_RELEASE)
#define CANOPY_CUDA_FORWARD_STATUS(name, params, args)                                             \
    canopy_status name params {                                                                    \
        const canopy_cuda_forward_type *slice_ = canopy_cuda_forward_slice(1);                     \
        return slice_ ? slice_->name args : canopy_cuda_slice_missing(canopy_cuda_forward_key);    \
    }
#define CANOPY_CUDA_FORWARD_OUT(name, params, args, out)                                           \
    canopy_status name params {                                                                    \
        const canopy_cuda_forward_type *slice_ = canopy_cuda_forward_slice(1);                     \
        if (slice_) return slice_->name args;                                                      \
        *out = NULL;                                                                               \
        return canopy_cuda_slice_missing(canopy_cuda_forward_key);                                 \
    }
#define CANOPY_CUDA_FORWARD_RELEASE(name, params, args)                                            \
    void name params {                                                                             \
        const canopy_cuda_forward_type *slice_ = canopy_cuda_forward_slice(0);                     \
        if (slice_) slice_->name args;                                                             \
    }

/* ---------------------------------------------------------- module side -- */
#ifdef __cplusplus
extern "C" {
/* The module's core (core/cuda_module.cu): takes the host's services (0 when the host
 * is of another ABI), counts devices, describes the calling thread's device. */
int canopy_cuda_module_attach(const canopy_cuda_host *host);
int canopy_cuda_module_device_count(char *why, size_t why_len);
canopy_status canopy_cuda_module_gpu_info(char *name, size_t name_len, size_t *total_bytes);
}
#endif

#endif
