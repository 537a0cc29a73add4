/* The traversal descriptor contract (STMD: many queries, one tree).
 *
 * An application says *what* happens at a node; engines (cpu_<variant>.h,
 * gpu_<variant>.cu) decide *how* the tree is walked. An application supplies, in a
 * header written in the common subset of C and CUDA (functions CANOPY_HD):
 *
 *   init(ctx, state, q)              start query q (q indexes the caller's queries)
 *   truncate(ctx, state, tree, node) 1 = skip this subtree; may update the state
 *                                    (e.g. accept a far Barnes-Hut cell, count a
 *                                    subtree wholly inside a radius)
 *   visit_leaf(ctx, state, tree, node)  process the leaf's bucket [begin, end)
 *   order(ctx, state, tree, node)    guided traversals only: 0 = children in
 *                                    canonical order, 1 = reversed
 *   finish(ctx, state, q)            write query q's result
 *
 * and the flags `guided` (an order function exists) and `orders_equivalent` (any
 * child order gives the same result, only speed differs: lockstep variants may then
 * take the majority's order). The semantics every engine must preserve: for each
 * query, a node is tested with truncate at most once; a leaf that is not truncated
 * is visited; the children of a node that is not truncated are processed in the
 * order chosen for that query (canonical order for unguided descriptors).
 *
 * On the CPU an application is a canopy_app of pointers to those static inline
 * functions; engines are always-inline functions run inside a parallel region that
 * the per-application runner opens (cpu_team.h, cpu_engines.h), so every (engine,
 * application) pair compiles to direct calls with no indirection in the inner loop. */
#ifndef CANOPY_TRAVERSE_DESCRIPTOR_H
#define CANOPY_TRAVERSE_DESCRIPTOR_H

#include "tree/tree.h"

#include <stddef.h>

/* Largest per-query state an application may have (bytes). */
enum { CANOPY_MAX_STATE = 256 };

typedef void (*canopy_init_fn)(const void *ctx, void *state, int64_t q);
typedef int (*canopy_truncate_fn)(const void *ctx, void *state, const canopy_tree_view *t,
                                  int32_t node);
typedef void (*canopy_visit_fn)(const void *ctx, void *state, const canopy_tree_view *t,
                                int32_t node);
typedef int (*canopy_order_fn)(const void *ctx, const void *state, const canopy_tree_view *t,
                               int32_t node);
typedef void (*canopy_finish_fn)(const void *ctx, void *state, int64_t q);

typedef struct canopy_app {
    const char *name;
    size_t state_size;
    int guided;
    int orders_equivalent;
    canopy_init_fn init;
    canopy_truncate_fn truncate;
    canopy_visit_fn visit_leaf;
    canopy_order_fn order; /* NULL when unguided */
    canopy_finish_fn finish;
} canopy_app;

/* Counters every engine fills (summed over queries). */
typedef struct canopy_trav_counters {
    int64_t nodes;         /* truncation tests made, all queries */
    int64_t group_nodes;   /* lockstep: nodes the packet/warp visited, summed over packets */
    int64_t group_longest; /* lockstep: longest member traversal, summed over packets */
    int64_t groups;        /* lockstep: packets/warp chunks run */
} canopy_trav_counters;

/* One traversal job: queries order[0..nq) (indices into the caller's queries). */
typedef struct canopy_trav_job {
    const void *ctx;
    const canopy_tree_view *tree;
    const int64_t *order;
    int64_t nq;
} canopy_trav_job;

#define CANOPY_ENGINE static inline __attribute__((always_inline))

#endif
