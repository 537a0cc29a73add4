/* SPDX-License-Identifier: MIT */
/* bf: per tree, breadth-first (Ren §4). The model already numbers each tree
 * breadth-first with a node's children adjacent (canopy_cf_add_raw_tree), so the order is
 * the model's own: tree after tree, level after level. */
#include "forest/forest.h"

canopy_status canopy_cf_order_bf(const canopy_forest *f, const cf_layout *L, int64_t *order) {
    (void)L;
    for (int64_t i = 0; i < f->n_nodes; i++) order[i] = i;
    return CANOPY_OK;
}
