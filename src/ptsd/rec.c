/* SPDX-License-Identifier: MIT */
/* The serial reference: post-order recursion, each node folding its children in
 * order once they are complete (Wu's REC on the CPU). */
#include "ptsd/ptsd.h"

static void visit(const canopy_ptree *t, const ptsd_agg *a, int64_t v) {
    a->init(a->ctx, v);
    for (int64_t k = t->child_ptr[v]; k < t->child_ptr[v + 1]; k++) {
        visit(t, a, t->child[k]);
        a->fold(a->ctx, v, t->child[k]);
    }
}

canopy_status canopy_ptsd_run_rec(const canopy_ptree *t, const ptsd_agg *a) {
    if (t->depth > PTSD_MAX_RECURSION)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "tree: strategy rec recurses once per level and this tree has %d "
                           "levels (at most %d); use crec or flat",
                           (int)t->depth, (int)PTSD_MAX_RECURSION);
    visit(t, a, t->root);
    return CANOPY_OK;
}
