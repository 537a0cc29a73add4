/* SPDX-License-Identifier: MIT */
/* ll: trees interleaved level by level (Ren §4): all roots, then every tree's level
 * 1, and so on. Traversals of one input through many trees touch neighbouring
 * nodes at the same step (inter-traversal locality), the pattern of the interpreter. */
#include "forest/forest.h"

canopy_status canopy_cf_order_ll(const canopy_forest *f, const cf_layout *L, int64_t *order) {
    int64_t p = 0, per = L->max_level + 2;
    for (int32_t k = 0; k <= L->max_level; k++)
        for (int32_t t = 0; t < f->n_trees; t++) {
            const int64_t *ls = L->lstart + t * per;
            for (int64_t i = ls[k]; i < ls[k + 1]; i++) order[p++] = f->trees[t].first + i;
        }
    return CANOPY_OK;
}
