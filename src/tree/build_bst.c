/* SPDX-License-Identifier: MIT */
/* Binary-search-tree split rule over 1-d keys: [lo, hi] of the node's keys, split
 * at the median position, so every key of the first child is <= every key of the
 * second and leaves come out in key order. The input need not be sorted. */
#include "tree/select.h"
#include "tree/tree.h"

#include <stdlib.h>

static int bst_split(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                     int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    (void)ctx;
    (void)depth;
    int64_t m = end - begin;
    geom[0] = geom[1] = m > 0 ? canopy_point(pts, perm[begin])[0] : 0.0f;
    for (int64_t i = begin; i < end; i++) {
        float x = canopy_point(pts, perm[i])[0];
        if (x < geom[0]) geom[0] = x;
        if (x > geom[1]) geom[1] = x;
    }
    if (!may_split) return 0;
    float *key = malloc(sizeof(float) * (size_t)m);
    if (!key) return 0; /* a leaf is still a correct tree; only slower */
    for (int64_t i = 0; i < m; i++) key[i] = canopy_point(pts, perm[begin + i])[0];
    canopy_select_pairs(key, perm + begin, m, m / 2);
    free(key);
    child_begin[0] = begin;
    child_begin[1] = begin + m / 2;
    return 2;
}

canopy_status canopy_tree_spec_bst(int32_t d, canopy_tree_spec *spec) {
    if (d != 1) return canopy_fail(CANOPY_ERR_INVALID, "bst tree needs d = 1 (got d = %d)", (int)d);
    spec->kind = CANOPY_TREE_BST;
    spec->geom_stride = 2;
    spec->max_children = 2;
    spec->split = bst_split;
    spec->ctx = NULL;
    return CANOPY_OK;
}
