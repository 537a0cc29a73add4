/* SPDX-License-Identifier: MIT */
/* df: per tree, depth-first with siblings adjacent (Ren §4): root, then the pair of
 * its children, then the left child's subtree pairs before the right child's. Good
 * intra-traversal locality on the first few steps of a path. */
#include "forest/forest.h"

#include <stdlib.h>

canopy_status canopy_cf_order_df(const canopy_forest *f, const cf_layout *L, int64_t *order) {
    (void)L;
    int32_t max_n = 1;
    for (int32_t t = 0; t < f->n_trees; t++)
        if (f->trees[t].n_nodes > max_n) max_n = f->trees[t].n_nodes;
    int32_t *stack = malloc((size_t)max_n * sizeof *stack);
    if (!stack) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    int64_t p = 0;
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t b = f->trees[t].first;
        int32_t sp = 0;
        order[p++] = b;
        stack[sp++] = 0;
        while (sp > 0) {
            int32_t i = stack[--sp];
            if (f->feature[b + i] < 0) continue;
            int32_t l = f->left[b + i], r = f->right[b + i];
            order[p++] = b + l;
            order[p++] = b + r;
            stack[sp++] = r; /* left popped first: its pairs come first */
            stack[sp++] = l;
        }
    }
    free(stack);
    return CANOPY_OK;
}
