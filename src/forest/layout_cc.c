/* SPDX-License-Identifier: MIT */
/* cc: cache-conscious (Ren §4). Each tree is cut into blocks of G levels, G about
 * log2 of the nodes per cache line, stored breadth-first inside the block; a block
 * below is rooted at a sibling pair and follows its parent block depth-first. A
 * path then touches about one line per G levels (intra-traversal locality). */
#include "forest/forest.h"

#include <stdlib.h>

int32_t canopy_cf_cc_levels(void) {
    int32_t per_line = 64 / (int32_t)sizeof(cf_lnode), g = 0;
    while ((2 << g) - 1 <= per_line) g++;
    return g < 2 ? 2 : g;
}

canopy_status canopy_cf_emit_cc(const canopy_forest *f, int32_t t, int32_t top, int top_pair,
                                int32_t levels_per_block, int64_t *order, int64_t *pos) {
    int64_t b = f->trees[t].first;
    int32_t n = f->trees[t].n_nodes;
    /* cur/next: the nodes of one level of the current block; stack: pending blocks
     * (the left child of a pair). All bounded by the tree size. */
    int32_t *cur = malloc((size_t)n * sizeof *cur), *next = malloc((size_t)n * sizeof *next);
    int32_t *stack = malloc((size_t)n * sizeof *stack);
    if (!cur || !next || !stack) {
        free(cur);
        free(next);
        free(stack);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    }
    int32_t sp = 0;
    stack[sp++] = top * 2 + (top_pair ? 1 : 0);
    while (sp > 0) {
        int32_t e = stack[--sp], first = e >> 1, nc = (e & 1) ? 2 : 1;
        cur[0] = first;
        if (nc == 2) cur[1] = first + 1;
        int32_t frontier_n = 0;
        for (int32_t lev = 0; lev < levels_per_block && nc > 0; lev++) {
            int32_t nn = 0;
            for (int32_t j = 0; j < nc; j++) {
                order[(*pos)++] = b + cur[j];
                int64_t g = b + cur[j];
                if (f->feature[g] < 0) continue;
                next[nn++] = f->left[g];
                next[nn++] = f->right[g];
            }
            int32_t *tmp = cur;
            cur = next;
            next = tmp;
            nc = nn;
            frontier_n = nn;
        }
        /* cur holds the pairs just below the block: each roots a new block; push
         * in reverse so the leftmost is laid out next. */
        for (int32_t j = frontier_n - 2; j >= 0; j -= 2) stack[sp++] = cur[j] * 2 + 1;
    }
    free(cur);
    free(next);
    free(stack);
    return CANOPY_OK;
}

canopy_status canopy_cf_order_cc(const canopy_forest *f, const cf_layout *L, int64_t *order) {
    (void)L;
    int64_t p = 0;
    int32_t g = canopy_cf_cc_levels();
    for (int32_t t = 0; t < f->n_trees; t++) {
        canopy_status s = canopy_cf_emit_cc(f, t, 0, 0, g, order, &p);
        if (s) return s;
    }
    return CANOPY_OK;
}
