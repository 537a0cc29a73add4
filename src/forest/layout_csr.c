/* SPDX-License-Identifier: MIT */
/* csr: the baseline of Wu ch. 5 — four flat arrays: feature_id, value,
 * children_arr_idx (where a node's children start in children_arr) and
 * children_arr. Every step is two dependent loads (index, then child). */
#include "forest/forest.h"

#include <stdlib.h>

canopy_status canopy_cf_build_csr(const canopy_forest *f, cf_layout *L) {
    if (f->n_nodes > INT32_MAX / 2)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "forests of more than 2^30 nodes");
    canopy_status s = canopy_cf_layout_init(f, L);
    if (s) return s;
    L->kind = CANOPY_FOREST_LAYOUT_CSR;
    int64_t n = f->n_nodes, nch = 2 * (n - L->n_leaves);
    L->csr_feature = malloc((size_t)n * sizeof *L->csr_feature);
    L->csr_value = malloc((size_t)n * sizeof *L->csr_value);
    L->csr_children_idx = malloc((size_t)n * sizeof *L->csr_children_idx);
    L->csr_children = malloc((size_t)(nch > 0 ? nch : 1) * sizeof *L->csr_children);
    if (!L->csr_feature || !L->csr_value || !L->csr_children_idx || !L->csr_children) {
        canopy_cf_layout_free(L);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for the csr layout");
    }
    int64_t c = 0;
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t b = f->trees[t].first;
        L->root[t] = (int32_t)b;
        for (int32_t i = 0; i < f->trees[t].n_nodes; i++) {
            int64_t g = b + i;
            L->csr_feature[g] = canopy_cf_node_key(f, L, g);
            L->csr_value[g] = 0;
            L->csr_children_idx[g] = -1;
            if (f->feature[g] < 0) continue;
            L->csr_value[g] = canopy_cf_le_threshold(f->threshold[g], f->flags[g] & CF_CMP_LT);
            L->csr_children_idx[g] = (int32_t)c;
            L->csr_children[c++] = (int32_t)(b + f->left[g]);
            L->csr_children[c++] = (int32_t)(b + f->right[g]);
        }
    }
    L->n_csr = n;
    L->n_csr_children = nch;
    L->bytes = (size_t)n * 12 + (size_t)nch * 4 + (size_t)f->n_trees * 4;
    return CANOPY_OK;
}

void canopy_cf_walk_csr(const cf_layout *L, const float *X, int64_t stride, int64_t r0, int64_t r1,
                        int32_t t0, int32_t t1, double *acc) {
    const int32_t *feat = L->csr_feature, *cidx = L->csr_children_idx, *ch = L->csr_children;
    const float *val = L->csr_value;
    for (int32_t t = t0; t < t1; t++)
        for (int64_t r = r0; r < r1; r++) {
            const float *x = X + r * stride;
            int32_t n = L->root[t], key;
            while ((key = feat[n]) >= 0)
                n = ch[cidx[n] + cf_go_right(x[key & CF_KEY_FEATURE], val[n], key)];
            cf_add_leaf(L, ~key, acc + (r - r0) * L->n_outputs);
        }
}
