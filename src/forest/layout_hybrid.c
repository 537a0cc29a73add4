/* SPDX-License-Identifier: MIT */
/* hybrid (Ren §4): sll for the levels above the switch level x, where many
 * traversals share the few top nodes (inter-traversal locality), then cc blocks per
 * tree below it, where paths diverge (intra-traversal locality). x comes from the
 * cache model (cache_model.c) unless given. */
#include "forest/forest.h"

canopy_status canopy_cf_order_hybrid(const canopy_forest *f, const cf_layout *L, int64_t *order) {
    int32_t x = L->switch_level < 1 ? 1 : L->switch_level;
    if (x > L->max_level) return canopy_cf_order_sll(f, L, order);
    int64_t p = 0, per = L->max_level + 2;
    /* top: levels 0 .. x-1 as in sll */
    for (int32_t t = 0; t < f->n_trees; t++) order[p++] = f->trees[t].first;
    for (int32_t k = 1; k < x; k++)
        for (int side = (k == 1 ? -1 : 0); side <= 1; side++) {
            for (int32_t t = 0; t < f->n_trees; t++) {
                const int64_t *ls = L->lstart + t * per;
                int64_t b = f->trees[t].first;
                for (int64_t i = ls[k - 1]; i < ls[k]; i++) {
                    int64_t g = b + i;
                    if (f->feature[g] < 0 || (side >= 0 && L->is_cold[g] != side)) continue;
                    order[p++] = b + f->left[g];
                    order[p++] = b + f->right[g];
                }
            }
            if (k == 1) break;
        }
    /* bottom: per tree, cc blocks rooted at the pairs of level x */
    int32_t g = canopy_cf_cc_levels();
    for (int32_t t = 0; t < f->n_trees; t++) {
        const int64_t *ls = L->lstart + t * per;
        int64_t b = f->trees[t].first;
        for (int64_t i = ls[x - 1]; i < ls[x]; i++) {
            if (f->feature[b + i] < 0) continue;
            canopy_status s = canopy_cf_emit_cc(f, t, f->left[b + i], 1, g, order, &p);
            if (s) return s;
        }
    }
    return CANOPY_OK;
}
