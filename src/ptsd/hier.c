/* SPDX-License-Identifier: MIT */
/* Wu's HIER on the CPU: the recursion is parallel over a node's children (OpenMP
 * tasks, the GPU version's block-mapped loop), and a child whose children are all
 * leaves is finished right away by a plain loop over those grandchildren (the
 * thread-mapped loop) instead of recursing. Tasks are spawned only near the top,
 * where subtrees are large enough to pay for them. Children are folded in order
 * after the tasks finish, so results equal rec's exactly. */
#include "ptsd/ptsd.h"

enum { TASK_LEVELS = 8 };

static bool grandchildren_all_leaves(const canopy_ptree *t, int64_t c) {
    for (int64_t k = t->child_ptr[c]; k < t->child_ptr[c + 1]; k++)
        if (!ptsd_is_leaf(t, t->child[k])) return false;
    return true;
}

static void visit(const canopy_ptree *t, const ptsd_agg *a, int64_t v, int32_t level) {
    for (int64_t k = t->child_ptr[v]; k < t->child_ptr[v + 1]; k++) {
        int64_t c = t->child[k];
        if (grandchildren_all_leaves(t, c)) {
            a->init(a->ctx, c);
            for (int64_t j = t->child_ptr[c]; j < t->child_ptr[c + 1]; j++) {
                a->init(a->ctx, t->child[j]);
                a->fold(a->ctx, c, t->child[j]);
            }
        } else {
#pragma omp task if (level < TASK_LEVELS) firstprivate(c)
            { visit(t, a, c, level + 1); }
        }
    }
#pragma omp taskwait
    a->init(a->ctx, v);
    for (int64_t k = t->child_ptr[v]; k < t->child_ptr[v + 1]; k++) a->fold(a->ctx, v, t->child[k]);
}

canopy_status canopy_ptsd_run_hier(const canopy_ptree *t, const ptsd_agg *a) {
    if (t->depth > PTSD_MAX_RECURSION)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "tree: strategy hier recurses once per level and this tree has %d "
                           "levels (at most %d); use crec or flat",
                           (int)t->depth, (int)PTSD_MAX_RECURSION);
#pragma omp parallel num_threads(canopy_threads())
#pragma omp single
    visit(t, a, t->root, 0);
    return CANOPY_OK;
}
