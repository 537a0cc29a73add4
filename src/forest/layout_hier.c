/* SPDX-License-Identifier: MIT */
/* hier: the hierarchical layout of Wu ch. 5. Each tree is cut into subtrees of at
 * most D levels (D = 3..5), each stored as a complete binary tree of 2^D - 1 slots
 * numbered breadth-first (children of slot s at 2s+1, 2s+2: no child pointers), and
 * a connection table gives, for each bottom-level slot, the subtrees its left and
 * right children start. Slots under a leaf are padding and never read. */
#include "forest/forest.h"

#include <stdlib.h>
#include <string.h>

canopy_status canopy_cf_build_hier(const canopy_forest *f, int32_t depth, cf_layout *L) {
    if (depth < 3 || depth > 5)
        return canopy_fail(CANOPY_ERR_INVALID, "hier subtree depth %d (3 to 5)", depth);
    canopy_status s = canopy_cf_layout_init(f, L);
    if (!s) s = canopy_cf_layout_levels(f, L);
    if (s) {
        canopy_cf_layout_free(L);
        return s;
    }
    L->kind = CANOPY_FOREST_LAYOUT_HIER;
    L->hier_depth = depth;
    const int32_t S = (1 << depth) - 1, C = 1 << depth, bottom = (1 << (depth - 1)) - 1;
    /* A subtree starts at each root and at both children of every internal node on
     * a subtree's bottom level (level % D == D - 1): count them first. */
    int64_t total = f->n_trees;
    for (int64_t g = 0; g < f->n_nodes; g++)
        if (f->feature[g] >= 0 && L->level[g] % depth == depth - 1) total += 2;
    if (total > INT32_MAX / C) {
        canopy_cf_layout_free(L);
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "too many hier subtrees (%lld)",
                           (long long)total);
    }
    int32_t *qroot = malloc((size_t)total * sizeof *qroot); /* per subtree: its model node */
    int32_t *slot = malloc((size_t)S * sizeof *slot);
    L->hier_thr = calloc((size_t)total * S, sizeof *L->hier_thr);
    L->hier_key = calloc((size_t)total * S, sizeof *L->hier_key);
    L->hier_conn = malloc((size_t)total * C * sizeof *L->hier_conn);
    if (!qroot || !slot || !L->hier_thr || !L->hier_key || !L->hier_conn) {
        free(qroot);
        free(slot);
        canopy_cf_layout_free(L);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for the hier layout");
    }
    int64_t ns = 0;
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t b = f->trees[t].first, head = ns;
        L->root[t] = (int32_t)ns;
        qroot[ns++] = 0;
        /* the tree's subtrees, breadth-first */
        while (head < ns) {
            int64_t st = head++;
            float *thr = L->hier_thr + st * S;
            int32_t *key = L->hier_key + st * S, *conn = L->hier_conn + st * C;
            for (int32_t j = 0; j < C; j++) conn[j] = -1;
            for (int32_t j = 0; j < S; j++) slot[j] = -1;
            slot[0] = qroot[st];
            for (int32_t j = 0; j < S; j++) {
                if (slot[j] < 0) continue;
                int64_t g = b + slot[j];
                key[j] = canopy_cf_node_key(f, L, g);
                if (f->feature[g] < 0) continue;
                thr[j] = canopy_cf_le_threshold(f->threshold[g], f->flags[g] & CF_CMP_LT);
                if (j < bottom) {
                    slot[2 * j + 1] = f->left[g];
                    slot[2 * j + 2] = f->right[g];
                } else {
                    conn[2 * (j - bottom)] = (int32_t)ns;
                    qroot[ns++] = f->left[g];
                    conn[2 * (j - bottom) + 1] = (int32_t)ns;
                    qroot[ns++] = f->right[g];
                }
            }
        }
    }
    free(qroot);
    free(slot);
    L->n_subtrees = ns;
    L->bytes = (size_t)ns * ((size_t)S * 8 + (size_t)C * 4) + (size_t)f->n_trees * 4;
    return CANOPY_OK;
}

void canopy_cf_walk_hier(const cf_layout *L, const float *X, int64_t stride, int64_t r0, int64_t r1,
                         int32_t t0, int32_t t1, double *acc) {
    const int32_t S = (1 << L->hier_depth) - 1, C = 1 << L->hier_depth;
    const int32_t bottom = (1 << (L->hier_depth - 1)) - 1;
    for (int32_t t = t0; t < t1; t++)
        for (int64_t r = r0; r < r1; r++) {
            const float *x = X + r * stride;
            int64_t st = L->root[t];
            int32_t j = 0, key;
            while ((key = L->hier_key[st * S + j]) >= 0) {
                int right = cf_go_right(x[key & CF_KEY_FEATURE], L->hier_thr[st * S + j], key);
                if (j < bottom) {
                    j = 2 * j + 1 + right;
                } else {
                    /* Wu's iterative kernel restarts at slot 0 of the next subtree */
                    st = L->hier_conn[st * C + 2 * (j - bottom) + right];
                    j = 0;
                }
            }
            cf_add_leaf(L, ~key, acc + (r - r0) * L->n_outputs);
        }
}
