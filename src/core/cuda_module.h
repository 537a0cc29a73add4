/* SPDX-License-Identifier: MIT */
/* Internal: the CUDA backend as a module loaded at run time (libcanopy_cuda.so.<major>),
 * so the library and the CLI never need the CUDA libraries to start. The module hands
 * the core one table of function pointers (checked for ABI, size and version when it
 * loads); the core hands the module the few core services it calls, so errors, memory
 * and names are the caller's own copy even when the core is linked statically.
 * Every core caller keeps calling the entry points by their names (apps/common.h,
 * graph/gpu.h, ...): cuda_load.c defines them as forwarders through the table, which
 * fail with CANOPY_ERR_UNSUPPORTED and the reason when the module is absent. */
#ifndef CANOPY_CORE_CUDA_MODULE_H
#define CANOPY_CORE_CUDA_MODULE_H

#include "apps/common.h"
#include "core/device.h"
#include "forest/gpu.h"
#include "graph/gpu.h"
#include "index/device.h"
#include "nbody/gpu_multipole.h"
#include "nbody/let_gpu.h"
#include "paircount/pair_count.h"
#include "paircount/paircount.h"
#include "ptsd/gpu.h"
#include "simt/gpu.h"
#include "traverse/gpu_schedule.h"

#include <stdint.h>

/* Bump when the table, the host services or a structure they pass changes meaning. */
#define CANOPY_CUDA_MODULE_ABI 3
/* The one symbol the module exports. */
#define CANOPY_CUDA_MODULE_ENTRY "canopy_cuda_module_entry"

/* The GPU entry points. STATUS(name, params, args) returns canopy_status and loads the
 * module on first use; OUT is a STATUS whose *out is NULL when it fails; RELEASE frees
 * what an earlier call made, so it never loads the module (nothing to free without it). */
#define CANOPY_CUDA_ENTRIES(STATUS, OUT, RELEASE)                                                  \
    STATUS(canopy_gpu_knn,                                                                         \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_radius,                                                                      \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_gravity,                                                                     \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_search,                                                                      \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_paircount,                                                                   \
           (const void *ctx, const canopy_tree_view *tree, const int64_t *order, int64_t nq,       \
            canopy_variant v, const struct canopy_profile_plan *plan,                              \
            struct canopy_gpu_report *rep),                                                        \
           (ctx, tree, order, nq, v, plan, rep))                                                   \
    STATUS(canopy_gpu_paircount_pairs,                                                             \
           (const void *ctx, const canopy_tree_view *ta, const canopy_tree_view *tb, int sym,      \
            canopy_pair_counters *cnt, struct canopy_gpu_report *rep),                             \
           (ctx, ta, tb, sym, cnt, rep))                                                           \
    STATUS(canopy_index_device_build,                                                              \
           (canopy_points pts, int device_points, const canopy_tree_options *to, void *stream,     \
            canopy_index_device *dv),                                                              \
           (pts, device_points, to, stream, dv))                                                   \
    STATUS(canopy_index_device_upload, (const canopy_tree_view *host, canopy_index_device *dv),    \
           (host, dv))                                                                             \
    RELEASE(canopy_index_device_free, (canopy_index_device * dv), (dv))                            \
    STATUS(canopy_index_device_knn,                                                                \
           (canopy_index_device * dv, const float *d_queries, int64_t nq, int32_t k,               \
            canopy_variant v, canopy_schedule sched, int64_t *d_idx, float *d_dist2, void *stream, \
            canopy_gpu_report *rep),                                                               \
           (dv, d_queries, nq, k, v, sched, d_idx, d_dist2, stream, rep))                          \
    STATUS(canopy_index_staging_reserve,                                                           \
           (struct canopy_index_staging * *st, int64_t nq, int32_t d, int32_t k, int pinned,       \
            float **h_queries, int64_t **h_idx, float **h_dist2),                                  \
           (st, nq, d, k, pinned, h_queries, h_idx, h_dist2))                                      \
    STATUS(canopy_index_staging_put,                                                               \
           (struct canopy_index_staging * st, const float *rows_at, int64_t row0, int64_t rows,    \
            int last),                                                                             \
           (st, rows_at, row0, rows, last))                                                        \
    STATUS(canopy_index_staging_knn,                                                               \
           (canopy_index_device * dv, struct canopy_index_staging * st, canopy_variant v,          \
            canopy_schedule sched, canopy_gpu_report * rep),                                       \
           (dv, st, v, sched, rep))                                                                \
    STATUS(canopy_index_staging_back,                                                              \
           (struct canopy_index_staging * st, void *h_idx, int narrow, float *h_dist2,             \
            int32_t chunks),                                                                       \
           (st, h_idx, narrow, h_dist2, chunks))                                                   \
    STATUS(canopy_index_staging_wait, (struct canopy_index_staging * st, int32_t chunk),           \
           (st, chunk))                                                                            \
    RELEASE(canopy_index_staging_free, (struct canopy_index_staging * st), (st))                   \
    STATUS(canopy_gpu_warm_up, (void), ())                                                         \
    STATUS(canopy_cf_gpu_predict,                                                                  \
           (const canopy_forest *f, const cf_layout *L, canopy_points X, canopy_forest_engine e,   \
            canopy_forest_mapping m, double *acc, cf_gpu_report *rep),                             \
           (f, L, X, e, m, acc, rep))                                                              \
    RELEASE(canopy_cf_gpu_release, (canopy_forest * f), (f))                                       \
    OUT(canopy_cf_gpu_enc_source, (const cf_layout *L, canopy_forest_mapping m, char **src),       \
        (L, m, src), src)                                                                          \
    OUT(canopy_cf_gpu_nvrtc_compile, (const char *src, int cc, void **cubin, size_t *size),        \
        (src, cc, cubin, size), cubin)                                                             \
    STATUS(graph_gpu_sssp,                                                                         \
           (const canopy_csr *g, int64_t source, const canopy_graph_options *opt, double *dist,    \
            canopy_graph_stats *stats),                                                            \
           (g, source, opt, dist, stats))                                                          \
    STATUS(graph_gpu_bfs,                                                                          \
           (const canopy_csr *g, int64_t source, int recursive, const canopy_graph_options *opt,   \
            int64_t *level, canopy_graph_stats *stats),                                            \
           (g, source, recursive, opt, level, stats))                                              \
    STATUS(graph_gpu_spmv,                                                                         \
           (const canopy_csr *g, const double *x, const canopy_graph_options *opt, double *y,      \
            canopy_graph_stats *stats),                                                            \
           (g, x, opt, y, stats))                                                                  \
    STATUS(graph_gpu_pagerank,                                                                     \
           (const canopy_csr *g, const canopy_csr *t, const canopy_graph_options *opt,             \
            double *rank, canopy_graph_stats *stats),                                              \
           (g, t, opt, rank, stats))                                                               \
    STATUS(graph_gpu_color,                                                                        \
           (const canopy_csr *sym, const canopy_graph_options *opt, int64_t *color,                \
            canopy_graph_stats *stats),                                                            \
           (sym, opt, color, stats))                                                               \
    STATUS(ptsd_gpu_run,                                                                           \
           (const canopy_ptree *t, canopy_ptsd_app app, const double *mass, const double *pos,     \
            canopy_ptsd_strategy s, void *out, canopy_ptsd_stats *stats),                          \
           (t, app, mass, pos, s, out, stats))                                                     \
    STATUS(simt_gpu_divergent, (const int32_t *in, int32_t *out, int n, int bdim),                 \
           (in, out, n, bdim))                                                                     \
    STATUS(simt_gpu_exchange, (const int32_t *in, int32_t *out, int n, int bdim, int rounds),      \
           (in, out, n, bdim, rounds))                                                             \
    STATUS(simt_gpu_pathfinder,                                                                    \
           (const int32_t *wall, int rows, int cols, int32_t *out, simt_gpu_timing *t),            \
           (wall, rows, cols, out, t))                                                             \
    STATUS(simt_gpu_pathfinder_tiled,                                                              \
           (const int32_t *wall, int rows, int cols, int bdim, int steps, int32_t *out,            \
            simt_gpu_timing *t),                                                                   \
           (wall, rows, cols, bdim, steps, out, t))                                                \
    STATUS(simt_gpu_bfs,                                                                           \
           (const int32_t *rowptr, const int32_t *col, int n, int src, int32_t *cost,              \
            simt_gpu_timing *t),                                                                   \
           (rowptr, col, n, src, cost, t))                                                         \
    STATUS(simt_gpu_hotspot,                                                                       \
           (const float *temp, const float *power, int rows, int cols, int iters, float *out,      \
            simt_gpu_timing *t),                                                                   \
           (temp, power, rows, cols, iters, out, t))                                               \
    STATUS(simt_gpu_hotspot_tiled,                                                                 \
           (const float *temp, const float *power, int rows, int cols, int iters, int tw_log,      \
            int th, int steps, float *out, simt_gpu_timing *t),                                    \
           (temp, power, rows, cols, iters, tw_log, th, steps, out, t))                            \
    STATUS(simt_gpu_nn,                                                                            \
           (const float *rec, int n, float lat, float lng, float *dist, simt_gpu_timing *t),       \
           (rec, n, lat, lng, dist, t))                                                            \
    STATUS(simt_gpu_lev,                                                                           \
           (const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits,                \
            simt_gpu_timing *t),                                                                   \
           (text, n, len, pat, hits, t))                                                           \
    STATUS(simt_gpu_gaussian,                                                                      \
           (const float *a, const float *b, int n, float *x, simt_gpu_timing *t), (a, b, n, x, t)) \
    STATUS(simt_gpu_micro,                                                                         \
           (const simt_micro_cfg *c, const int32_t *in, int32_t *out, simt_gpu_timing *t),         \
           (c, in, out, t))                                                                        \
    OUT(canopy_tree_build_gpu,                                                                     \
        (canopy_points pts, const canopy_tree_options *opt, canopy_gpu_tree **out),                \
        (pts, opt, out), out)                                                                      \
    OUT(canopy_gpu_tree_download, (const canopy_gpu_tree *g, canopy_tree **out), (g, out), out)    \
    RELEASE(canopy_gpu_tree_free, (canopy_gpu_tree * g), (g))                                      \
    RELEASE(canopy_gpu_pool_release, (void), ())                                                   \
    STATUS(canopy_gpu_schedule_queries,                                                            \
           (canopy_schedule s, canopy_points queries, int64_t * order), (s, queries, order))       \
    OUT(gpu_mp_create, (gpu_mp * *out), (out), out)                                                \
    RELEASE(gpu_mp_free, (gpu_mp * m), (m))                                                        \
    STATUS(gpu_mp_forces,                                                                          \
           (gpu_mp * m, const float *d_xyzm, int64_t n, const gpu_mp_params *p, float *d_acc,      \
            float *d_pot, gpu_mp_timing *t),                                                       \
           (m, d_xyzm, n, p, d_acc, d_pot, t))                                                     \
    STATUS(gpu_mp_forces_host,                                                                     \
           (canopy_points bodies, const float *mass, const gpu_mp_params *p, float *acc,           \
            float *pot, gpu_mp_timing *t),                                                         \
           (bodies, mass, p, acc, pot, t))                                                         \
    STATUS(gpu_mp_direct_sample,                                                                   \
           (canopy_points bodies, const float *mass, float softening, const int64_t *sample,       \
            int64_t ns, double *acc, double *pot),                                                 \
           (bodies, mass, softening, sample, ns, acc, pot))                                        \
    STATUS(canopy_gravity_multipole_gpu,                                                           \
           (canopy_points bodies, const float *mass, const canopy_gravity_options *g,              \
            int32_t leaf, float *acc, float *pot, int device, void *stream, canopy_stats *stats),  \
           (bodies, mass, g, leaf, acc, pot, device, stream, stats))                               \
    OUT(gpu_nbody_create,                                                                          \
        (const double *pos, const double *vel, const float *mass, int64_t n,                       \
         const gpu_mp_params *p, gpu_nbody **out),                                                 \
        (pos, vel, mass, n, p, out), out)                                                          \
    STATUS(gpu_nbody_step, (gpu_nbody * s, double dt, int64_t steps), (s, dt, steps))              \
    STATUS(gpu_nbody_download, (const gpu_nbody *s, double *pos, double *vel), (s, pos, vel))      \
    STATUS(gpu_nbody_energy,                                                                       \
           (const gpu_nbody *s, int direct, double *kinetic, double *potential,                    \
            double momentum[3], double angular[3]),                                                \
           (s, direct, kinetic, potential, momentum, angular))                                     \
    RELEASE(gpu_nbody_free, (gpu_nbody * s), (s))                                                  \
    OUT(gpu_let_create, (gpu_let * *out), (out), out)                                              \
    RELEASE(gpu_let_free, (gpu_let * g), (g))                                                      \
    STATUS(gpu_let_launch,                                                                         \
           (gpu_let * g, const let_piece *pieces, int32_t n_pieces, canopy_points q,               \
            const int64_t *qid, float inv_theta, float eps2),                                      \
           (g, pieces, n_pieces, q, qid, inv_theta, eps2))                                         \
    STATUS(gpu_let_finish,                                                                         \
           (gpu_let * g, float *acc, float *pot, int64_t *work, let_walk_stats *stats,             \
            double *walk_seconds),                                                                 \
           (g, acc, pot, work, stats, walk_seconds))                                               \
    STATUS(gpu_bind_device, (int device), (device))                                                \
    STATUS(gpu_nccl_load, (void), ())                                                              \
    STATUS(gpu_nccl_unique_id, (unsigned char *id), (id))                                          \
    OUT(gpu_nccl_create, (const unsigned char *id, int nranks, int rank, gpu_nccl **out),          \
        (id, nranks, rank, out), out)                                                              \
    RELEASE(gpu_nccl_free, (gpu_nccl * c), (c))                                                    \
    STATUS(gpu_nccl_alltoallv,                                                                     \
           (gpu_nccl * c, const void *send, const int64_t *send_counts,                            \
            const int64_t *recv_counts, char **recv, void *heads, size_t head_bytes),              \
           (c, send, send_counts, recv_counts, recv, heads, head_bytes))

/* A member of the entry's own type (qualified in C++, where the member hides the name). */
#ifdef __cplusplus
#define CANOPY_CUDA_MEMBER(name, params, ...) __typeof__(::name) *name;
#else
#define CANOPY_CUDA_MEMBER(name, params, ...) __typeof__(name) *name;
#endif

/* Every entry's name and parameters as text: a module whose entries differ from the
 * core's is refused even where the ABI number was not bumped. */
#define CANOPY_CUDA_SIGNATURE_OF(name, params, ...) #name #params ";"
#define CANOPY_CUDA_SIGNATURE                                                                      \
    CANOPY_CUDA_ENTRIES(CANOPY_CUDA_SIGNATURE_OF, CANOPY_CUDA_SIGNATURE_OF,                        \
                        CANOPY_CUDA_SIGNATURE_OF)

/* What the module gives the core. The first three fields never move, so a module of
 * another ABI is recognised and refused before anything else of it is read. */
typedef struct canopy_cuda_module {
    uint32_t abi;          /* CANOPY_CUDA_MODULE_ABI of the module's build */
    uint32_t size;         /* sizeof(canopy_cuda_module) there */
    const char *version;   /* CANOPY_VERSION_STRING there: internal structures must match */
    const char *signature; /* CANOPY_CUDA_SIGNATURE there */
    /* Visible devices (0 with a reason in why when there are none or CUDA fails). */
    int (*device_count)(char *why, size_t why_len);
    canopy_status (*gpu_info)(char *name, size_t name_len, size_t *total_bytes);
    CANOPY_CUDA_ENTRIES(CANOPY_CUDA_MEMBER, CANOPY_CUDA_MEMBER, CANOPY_CUDA_MEMBER)
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
#ifdef __cplusplus
}
#endif

#endif
