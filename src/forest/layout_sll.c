/* SPDX-License-Identifier: MIT */
/* sll: sorted level by level (Ren §4). Like ll, but from level 2 on, each level
 * holds first the sibling pairs whose parent is a left child (across all trees),
 * then those whose parent is a right child. Inputs biased toward left paths then
 * read a region half as wide per level. */
#include "forest/forest.h"

/* Appends, for every tree, the child pairs of its level-(k-1) nodes; side -1 takes
 * all parents, 0 only left children, 1 only right children. */
static void emit_children(const canopy_forest *f, const cf_layout *L, int32_t k, int side,
                          int64_t *order, int64_t *p) {
    int64_t per = L->max_level + 2;
    for (int32_t t = 0; t < f->n_trees; t++) {
        const int64_t *ls = L->lstart + t * per;
        int64_t b = f->trees[t].first;
        for (int64_t i = ls[k - 1]; i < ls[k]; i++) {
            int64_t g = b + i;
            if (f->feature[g] < 0 || (side >= 0 && L->is_cold[g] != side)) continue;
            order[(*p)++] = b + f->left[g];
            order[(*p)++] = b + f->right[g];
        }
    }
}

canopy_status canopy_cf_order_sll(const canopy_forest *f, const cf_layout *L, int64_t *order) {
    int64_t p = 0;
    for (int32_t t = 0; t < f->n_trees; t++) order[p++] = f->trees[t].first;
    for (int32_t k = 1; k <= L->max_level; k++) {
        if (k == 1) {
            emit_children(f, L, k, -1, order, &p);
        } else {
            emit_children(f, L, k, 0, order, &p);
            emit_children(f, L, k, 1, order, &p);
        }
    }
    return CANOPY_OK;
}
