/* SPDX-License-Identifier: MIT */
/* Private contract between the bottom-up (PTSD) aggregations and the strategies
 * that run them: an aggregation says how a node starts, how a finished child folds
 * into its parent, and (for flat) how one node's contribution lands atomically on
 * an ancestor `dist` levels up. Each strategy is one file. */
#ifndef CANOPY_PTSD_PTSD_H
#define CANOPY_PTSD_PTSD_H

#include "canopy.h"

#include <stdbool.h>

typedef struct ptsd_agg {
    void *ctx;
    /* Node's own value before any child is folded in (leaves: their final value). */
    void (*init)(void *ctx, int64_t node);
    /* parent ⊕= child; the child is complete. Called for a parent's children in
     * child order by one thread, so sums come out in one fixed order. */
    void (*fold)(void *ctx, int64_t parent, int64_t child);
    /* flat: node's contribution to an ancestor `dist` levels above it, atomically. */
    void (*up)(void *ctx, int64_t node, int64_t ancestor, int64_t dist);
    /* flat: whether this node walks up (e.g. only leaves carry mass). */
    bool (*walks)(void *ctx, const canopy_ptree *t, int64_t node);
} ptsd_agg;

/* Recursive strategies refuse deeper trees (the C stack, and OpenMP task stacks,
 * are finite). */
enum { PTSD_MAX_RECURSION = 10000 };

canopy_status canopy_ptsd_run_rec(const canopy_ptree *t, const ptsd_agg *a);
canopy_status canopy_ptsd_run_flat(const canopy_ptree *t, const ptsd_agg *a);
canopy_status canopy_ptsd_run_crec(const canopy_ptree *t, const ptsd_agg *a);
canopy_status canopy_ptsd_run_hier(const canopy_ptree *t, const ptsd_agg *a);
/* Checks the tree, runs the strategy, times it. */
canopy_status canopy_ptsd_run_strategy(const canopy_ptree *t, canopy_ptsd_strategy s,
                                       const ptsd_agg *a, double *seconds);

static inline bool ptsd_is_leaf(const canopy_ptree *t, int64_t v) {
    return t->child_ptr[v] == t->child_ptr[v + 1];
}

#endif
