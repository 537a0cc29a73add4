/* SPDX-License-Identifier: MIT */
/* The linked node array shared by Ren's layouts (df, bf, ll, sll, cc, hybrid): a
 * node is {threshold, key, child}; the two children of a node are adjacent, so the
 * walker computes child + go_right instead of branching (Ren §4). The layouts
 * differ only in the order nodes are placed, which each layout file defines. */
#include "forest/forest.h"

#include <stdlib.h>
#include <string.h>

canopy_status canopy_cf_layout_init(const canopy_forest *f, cf_layout *L) {
    memset(L, 0, sizeof *L);
    L->n_trees = f->n_trees;
    L->n_outputs = f->n_outputs;
    L->values = f->values;
    int64_t nl = 0;
    for (int64_t i = 0; i < f->n_nodes; i++) nl += f->feature[i] < 0;
    L->n_leaves = nl;
    L->leaf_of = malloc((size_t)f->n_nodes * sizeof *L->leaf_of);
    L->leaf_off = malloc((size_t)nl * sizeof *L->leaf_off);
    L->leaf_out = malloc((size_t)nl * sizeof *L->leaf_out);
    L->root = malloc((size_t)f->n_trees * sizeof *L->root);
    if (!L->leaf_of || !L->leaf_off || !L->leaf_out || !L->root) {
        canopy_cf_layout_free(L);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for a forest layout");
    }
    int64_t k = 0;
    for (int32_t t = 0; t < f->n_trees; t++)
        for (int32_t i = 0; i < f->trees[t].n_nodes; i++) {
            int64_t g = f->trees[t].first + i;
            L->leaf_of[g] = -1;
            if (f->feature[g] >= 0) continue;
            L->leaf_of[g] = (int32_t)k;
            L->leaf_off[k] = f->value_off[g];
            L->leaf_out[k] = f->trees[t].output;
            k++;
        }
    return CANOPY_OK;
}

int32_t canopy_cf_node_key(const canopy_forest *f, const cf_layout *L, int64_t g) {
    if (f->feature[g] < 0) return ~L->leaf_of[g];
    int32_t key = f->feature[g];
    if (f->flags[g] & CF_MISS_ZERO) key |= CF_KEY_ZERO;
    if (f->flags[g] & CF_DEFAULT_LEFT) key |= CF_KEY_DL;
    return key;
}

void canopy_cf_layout_free(cf_layout *L) {
    free(L->leaf_off);
    free(L->leaf_out);
    free(L->root);
    free(L->nodes);
    free(L->csr_feature);
    free(L->csr_value);
    free(L->csr_children_idx);
    free(L->csr_children);
    free(L->hier_thr);
    free(L->hier_key);
    free(L->hier_conn);
    free(L->leaf_of);
    free(L->level);
    free(L->is_cold);
    free(L->lstart);
    free(L->sync_nodes);
    free(L->sync_leaf);
    free(L->sync_val);
    free(L->sync_out);
    free(L->tree_depth);
    free(L->perf_nodes);
    free(L->perf_first);
    free(L->perf_leaf);
    free(L->perf_val);
    memset(L, 0, sizeof *L);
}

canopy_status canopy_cf_layout_levels(const canopy_forest *f, cf_layout *L) {
    L->level = malloc((size_t)f->n_nodes * sizeof *L->level);
    L->is_cold = calloc((size_t)f->n_nodes, 1);
    if (!L->level || !L->is_cold) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    int32_t ml = 0;
    /* Trees are numbered breadth-first, children after parents: one forward pass. */
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t b = f->trees[t].first;
        L->level[b] = 0;
        for (int32_t i = 0; i < f->trees[t].n_nodes; i++) {
            int64_t g = b + i;
            if (L->level[g] > ml) ml = L->level[g];
            if (f->feature[g] < 0) continue;
            L->level[b + f->left[g]] = L->level[g] + 1;
            L->level[b + f->right[g]] = L->level[g] + 1;
            if (L->cold_in) {
                L->is_cold[b + f->left[g]] = L->cold_in[b + f->left[g]];
                L->is_cold[b + f->right[g]] = L->cold_in[b + f->right[g]];
            } else {
                L->is_cold[b + f->right[g]] = 1;
            }
        }
    }
    L->max_level = ml;
    int64_t per = ml + 2;
    L->lstart = malloc((size_t)f->n_trees * (size_t)per * sizeof *L->lstart);
    if (!L->lstart) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t *ls = L->lstart + t * per, b = f->trees[t].first;
        int32_t n = f->trees[t].n_nodes;
        /* Breadth-first numbering makes each level a contiguous range. */
        int32_t i = 0;
        for (int32_t k = 0; k < per; k++) {
            while (i < n && L->level[b + i] < k) i++;
            ls[k] = i;
        }
    }
    return CANOPY_OK;
}

canopy_status canopy_cf_build_linked(const canopy_forest *f, canopy_forest_layout kind,
                                     int32_t switch_level, const uint8_t *cold, cf_layout *L) {
    static const cf_order_fn orders[CANOPY_FOREST_LAYOUT_COUNT] = {
        [CANOPY_FOREST_LAYOUT_DF] = canopy_cf_order_df,
        [CANOPY_FOREST_LAYOUT_BF] = canopy_cf_order_bf,
        [CANOPY_FOREST_LAYOUT_LL] = canopy_cf_order_ll,
        [CANOPY_FOREST_LAYOUT_SLL] = canopy_cf_order_sll,
        [CANOPY_FOREST_LAYOUT_CC] = canopy_cf_order_cc,
        [CANOPY_FOREST_LAYOUT_HYBRID] = canopy_cf_order_hybrid,
    };
    if (kind >= CANOPY_FOREST_LAYOUT_COUNT || !orders[kind])
        return canopy_fail(CANOPY_ERR_INTERNAL, "layout %d is not a linked layout", (int)kind);
    if (f->n_nodes > INT32_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "forests of more than 2^31 nodes");
    canopy_status s = canopy_cf_layout_init(f, L);
    if (s) return s;
    L->kind = kind;
    L->switch_level = switch_level;
    L->cold_in = cold;
    int64_t *order = malloc((size_t)f->n_nodes * sizeof *order);
    int32_t *pos = malloc((size_t)f->n_nodes * sizeof *pos);
    L->nodes = malloc((size_t)f->n_nodes * sizeof *L->nodes);
    if (!order || !pos || !L->nodes) s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    if (!s) s = canopy_cf_layout_levels(f, L);
    if (!s) s = orders[kind](f, L, order);
    if (!s) {
        for (int64_t i = 0; i < f->n_nodes; i++) pos[i] = -1;
        for (int64_t i = 0; i < f->n_nodes && !s; i++) {
            if (order[i] < 0 || order[i] >= f->n_nodes || pos[order[i]] >= 0)
                s = canopy_fail(CANOPY_ERR_INTERNAL, "%s order is not a permutation",
                                canopy_forest_layout_name(kind));
            else
                pos[order[i]] = (int32_t)i;
        }
    }
    for (int32_t t = 0; t < f->n_trees && !s; t++) {
        int64_t b = f->trees[t].first;
        L->root[t] = pos[b];
        for (int32_t i = 0; i < f->trees[t].n_nodes; i++) {
            int64_t g = b + i;
            cf_lnode *nd = &L->nodes[pos[g]];
            nd->key = canopy_cf_node_key(f, L, g);
            nd->thr = 0;
            nd->child = 0;
            if (f->feature[g] < 0) continue;
            nd->thr = canopy_cf_le_threshold(f->threshold[g], f->flags[g] & CF_CMP_LT);
            nd->child = pos[b + f->left[g]];
            if (pos[b + f->right[g]] != nd->child + 1) {
                s = canopy_fail(CANOPY_ERR_INTERNAL, "%s order separates siblings",
                                canopy_forest_layout_name(kind));
                break;
            }
        }
    }
    L->n_lnodes = f->n_nodes;
    L->bytes = (size_t)f->n_nodes * sizeof(cf_lnode) + (size_t)f->n_trees * sizeof(int32_t);
    free(order);
    free(pos);
    L->cold_in = NULL; /* borrowed for the build only */
    if (s) canopy_cf_layout_free(L);
    return s;
}
