/* SPDX-License-Identifier: MIT */
/* canopy/traverse.h — write your own tree traversal (docs/c-api.md, "Write your own
 * traversal"; tests/external/ is a complete example built against include/ only).
 *
 * A traversal is a *descriptor* (STMD: many queries, one tree). It says what happens
 * at a node; the engines (canopy/traverse_cpu.h; the GPU's own) decide how the tree
 * is walked. A descriptor supplies, as static inline functions (CANOPY_HD, so the
 * same code can be compiled for a GPU):
 *
 *   init(ctx, state, q)              start query q (q indexes the caller's queries)
 *   truncate(ctx, state, tree, node) 1 = skip this subtree; may update the state
 *                                    (e.g. count a subtree wholly inside a radius)
 *   visit_leaf(ctx, state, tree, node)  process the leaf's points [begin, end)
 *   order(ctx, state, tree, node, perm)  guided traversals only: write a permutation
 *                                    of 0..nchild-1 to perm[0..nchild): the children
 *                                    of `node` are processed as child + perm[0],
 *                                    child + perm[1], ... for this query
 *   finish(ctx, state, q)            write query q's result
 *
 * and the flags `guided` (an order function exists) and `orders_equivalent` (any
 * child order gives the same result, only speed differs). The semantics every engine
 * keeps: for each query, a node is tested with truncate at most once; a leaf that is
 * not truncated is visited; the children of a node that is not truncated are
 * processed in the order chosen for that query (canonical order, perm = identity,
 * for unguided descriptors). Two exceptions, both allowed only when
 * orders_equivalent is 1 (otherwise the variant is refused with a message):
 *   sr (static ropes) walks every query in canonical order, and refuses guided
 *     descriptors altogether;
 *   lockstep variants (simd_l; the GPU's dr_l, sr_l, fsm_l) walk a packet of
 *     queries together: at each node the child that most of the packet's continuing
 *     queries want first wins (ties: the smaller child index), and the packet uses
 *     the permutation of the lowest-numbered query that chose that child. With two
 *     children this is "the majority's order, ties canonical".
 * Every variant therefore returns the same result for a descriptor whose result
 * does not depend on the child order.
 *
 * State: at most CANOPY_MAX_STATE bytes per query, aligned to 64. The engines call
 * the functions from several threads at once, each on its own state; ctx is shared
 * and read-only except for the per-query rows finish writes. */
#ifndef CANOPY_TRAVERSE_H
#define CANOPY_TRAVERSE_H

#include "canopy.h"
#include "canopy/tree_view.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The tree view (canopy_node, canopy_tree_view, canopy_tv_*) is canopy/tree_view.h. */

/* ------------------------------------------------------------ descriptor -- */

/* Largest per-query state (bytes) and largest fan-out of any tree kind (oct: 8),
 * the size of the permutation an order function writes. */
enum { CANOPY_MAX_STATE = 256, CANOPY_MAX_CHILDREN = 8 };

typedef void (*canopy_init_fn)(const void *ctx, void *state, int64_t q);
typedef int (*canopy_truncate_fn)(const void *ctx, void *state, const canopy_tree_view *t,
                                  int32_t node);
typedef void (*canopy_visit_fn)(const void *ctx, void *state, const canopy_tree_view *t,
                                int32_t node);
typedef void (*canopy_order_fn)(const void *ctx, const void *state, const canopy_tree_view *t,
                                int32_t node, int32_t *perm);
typedef void (*canopy_finish_fn)(const void *ctx, void *state, int64_t q);

/* A descriptor as CPU engines take it: pointers to static inline functions. Declare
 * it `static const` so every (engine, descriptor) pair compiles to direct calls. */
typedef struct canopy_app {
    const char *name; /* for messages */
    size_t state_size;
    int guided;
    int orders_equivalent;
    canopy_init_fn init;
    canopy_truncate_fn truncate;
    canopy_visit_fn visit_leaf;
    canopy_order_fn order; /* NULL when unguided */
    canopy_finish_fn finish;
    /* 1: the runners come from CANOPY_CPU_INSTANTIATE_LANES, so simd_l evaluates a whole
     * packet per call through the descriptor's vector hooks (canopy_lane_app) and auto
     * may pick it; 0: simd_l calls the hooks above lane by lane. */
    int lane_hooks;
} canopy_app;

/* Vector hooks (optional; docs/simt.md): the same descriptor for a packet of up to 16
 * lockstep lanes at once, written with canopy/simt.h's lane types and compiled once
 * per lane width (canopy/traverse_cpu.h, CANOPY_SIMD_L_LANES). `pk` is the packet's
 * state, laid out by the descriptor as structure of arrays (one vector per field) in
 * packet_size bytes aligned to 64; lane l is the query q[l]; bit l of a mask is lane
 * l. The results must be those of the scalar hooks run lane by lane:
 *   packet_size(ctx, tree)             bytes of pk for this tree
 *   init(ctx, pk, tree, q, mask)       start the lanes in mask on queries q[l]
 *   truncate(ctx, pk, tree, node, mask)  the lanes of mask that go on below node
 *   visit_leaf(ctx, pk, tree, node, mask)  visit the leaf for the lanes in mask
 *   order(ctx, pk, tree, node, mask, perm)  guided: the packet's order, the vote of
 *                                      canopy/traverse.h over the lanes in mask
 *   finish(ctx, pk, q, mask)           write the lanes' results */
typedef struct canopy_lane_app {
    size_t (*packet_size)(const void *ctx, const canopy_tree_view *t);
    void (*init)(const void *ctx, void *pk, const canopy_tree_view *t, const int64_t *q,
                 uint32_t mask);
    uint32_t (*truncate)(const void *ctx, void *pk, const canopy_tree_view *t, int32_t node,
                         uint32_t mask);
    void (*visit_leaf)(const void *ctx, void *pk, const canopy_tree_view *t, int32_t node,
                       uint32_t mask);
    void (*order)(const void *ctx, const void *pk, const canopy_tree_view *t, int32_t node,
                  uint32_t mask, int32_t *perm);
    void (*finish)(const void *ctx, void *pk, const int64_t *q, uint32_t mask);
} canopy_lane_app;

/* Writes the canonical (reversed = 0) or reversed order of n children to perm: the
 * whole order function of a two-way "near side first" descriptor. */
CANOPY_HD void canopy_order_flip(int32_t *perm, int32_t n, int reversed) {
    for (int32_t c = 0; c < n; c++) perm[c] = reversed ? n - 1 - c : c;
}

/* Counters every engine fills (summed over queries). */
typedef struct canopy_trav_counters {
    int64_t nodes;         /* truncation tests made, all queries */
    int64_t group_nodes;   /* lockstep: nodes the packet/warp visited, summed over packets */
    int64_t group_longest; /* lockstep: longest member traversal, summed over packets */
    int64_t groups;        /* lockstep: packets/warp chunks run */
    int64_t lane_calls;    /* simd_l: scalar hook calls made lane by lane (0 with vector hooks) */
    int32_t threads;       /* CPU: the most threads a runner's team had (sized by the work) */
} canopy_trav_counters;

/* One traversal job: queries order[0..nq) (indices into the caller's queries; order
 * NULL = 0..nq-1). */
typedef struct canopy_trav_job {
    const void *ctx;
    const canopy_tree_view *tree;
    const int64_t *order;
    int64_t nq;
    /* Estimated node visits of the whole job (auto's sample), which sets the threads
     * (canopy_threads_for); 0: estimated from nq and the tree's depth. */
    double work;
} canopy_trav_job;

/* Whether variant v can run descriptor app (sr: unguided only; lockstep: unguided or
 * orders_equivalent); CANOPY_ERR_INVALID saying why not. */
canopy_status canopy_variant_check(const canopy_app *app, canopy_variant v);

/* --------------------------------------------------------------- running -- */

/* One instantiated engine (CANOPY_CPU_INSTANTIATE makes a table of them). */
typedef canopy_status (*canopy_cpu_runner)(const canopy_trav_job *job, canopy_trav_counters *cnt);

/* The GPU side of a traversal: CUDA glue that uploads its context and runs nq
 * queries in `order` (NULL = identity) or, when plan is given, in the hybrid order
 * it computes on the device; NULL when there is none. Its arguments are the library's own (the
 * profile plan of a device-side hybrid schedule and the timing report). */
/* Shared by the engines and the library's schedules (not needed to write a
 * descriptor): the top-tree profile of the hybrid schedule (Liu ch. 3) and the
 * report of a GPU run. */
/* Entries of the profile walk's stack: at most depth * (fan-out - 1) + 1, and plans
 * keep the top tree within it. */
enum { CANOPY_PROFILE_STACK = 128, CANOPY_PROFILE_MAX_WORDS = 8 };

typedef struct canopy_profile_plan {
    int32_t depth;     /* levels below the root that the profile descends (>= 1) */
    int32_t n_cols;    /* top-tree leaves: nodes at that level and shallower leaves */
    int32_t words;     /* key words per query */
    int32_t step_bits; /* guided: bits per recorded step; 0 = unguided bit vectors */
    int32_t *col;      /* per node: its column when it is a top-tree leaf, else -1 */
} canopy_profile_plan;

/* Queries profiled at once: a chunk's keys stay within the environment's
 * CANOPY_PROFILE_MAX_BYTES (default 256 MiB). Each chunk is ordered on its own
 * (inspect.c). */
int64_t canopy_profile_chunk(int32_t words);

/* Records that the query reached top-tree leaf `col` as its `step`-th one. */
CANOPY_HD void canopy_profile_record(const canopy_profile_plan *p, uint64_t *key, int32_t step,
                                     int32_t col) {
    if (p->step_bits == 0) {
        key[col >> 6] |= (uint64_t)1 << (63 - (col & 63));
        return;
    }
    int32_t per_word = 64 / p->step_bits;
    if (step >= per_word * p->words) return; /* later steps no longer separate clusters */
    int32_t shift = 64 - p->step_bits * (step % per_word + 1);
    key[step / per_word] |= (uint64_t)(col + 1) << shift;
}

typedef struct canopy_gpu_report {
    double transfer_seconds; /* host <-> device copies, tree included */
    double traverse_seconds; /* kernel time (device events) */
    double schedule_seconds; /* hybrid: profile and sort on the device (device events) */
    int64_t profile_tests;   /* hybrid: truncation tests of the profile kernel */
    canopy_trav_counters counters;
    /* in: the tree already on the device (a resident index's), used instead of an
     * upload; NULL: canopy_gpu_run_app uploads the host tree */
    const canopy_tree_view *device_tree;
    int64_t tree_upload_bytes;  /* out: tree bytes copied to the device this call */
    double tree_upload_seconds; /* out: their copy time (part of transfer_seconds) */
} canopy_gpu_report;

typedef canopy_status (*canopy_gpu_runner)(const void *ctx, const canopy_tree_view *tree,
                                           const int64_t *order, int64_t nq, canopy_variant v,
                                           const struct canopy_profile_plan *plan,
                                           struct canopy_gpu_report *rep);

/* A traversal ready to run: the descriptor, its engines and its queries. */
typedef struct canopy_traversal {
    const char *name; /* for messages */
    const canopy_app *app;
    const canopy_cpu_runner *cpu; /* CANOPY_VARIANT_COUNT entries (NAME_cpu_runners) */
    canopy_gpu_runner gpu;        /* NULL: CPU only */
    const void *ctx;
    canopy_points queries; /* positions, used by the spatial schedules (morton, hilbert,
                              tree); data may be NULL when only none/hybrid are used */
    int64_t nq;
    /* Optional (NULL: never): 1 when the GPU runner brings its own kernel for variant v
     * on tree t (a descriptor type's own_kernel, canopy/traverse_cuda.cuh); auto then
     * runs that variant on the GPU (dr where the engines' choice would be gdr or sr). */
    int (*gpu_own_kernel)(const void *ctx, const canopy_tree_view *t, int variant);
} canopy_traversal;

/* Runs tr over tree under opt (NULL = defaults; opt->tree and leaf_size are the
 * caller's business here, the tree is already built): resolves the auto backend,
 * variant and schedule as the shipped applications do, orders the queries, runs the
 * engine and fills stats (may be NULL; its build fields are left as they are). */
canopy_status canopy_traverse(const canopy_tree *tree, const canopy_traversal *tr,
                              const canopy_run_options *opt, canopy_stats *stats);

#ifdef __cplusplus
}
#endif

#endif
