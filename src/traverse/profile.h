/* SPDX-License-Identifier: MIT */
/* The inspector of the hybrid schedule (Liu, dissertation ch. 3): every query is
 * walked through the top of the tree only, and what it reached there becomes a key
 * of `words` 64-bit words; sorting the queries by their keys puts queries that
 * traverse alike next to each other.
 *
 *   unguided: a bit per top-tree leaf (column 0 the most significant bit of word 0),
 *             set when the query reached that leaf: sorting the bit vectors is the
 *             paper's "sandpile" partition, one stable pass per column;
 *   guided:   the sequence of top-tree leaves in the order the query visited them,
 *             `step_bits` bits per step holding column + 1 (0 = no further step):
 *             sorting clusters by the first leaf, then by the next step, and so on.
 *
 * The profile calls the descriptor's init, truncate and order with a scratch state,
 * never visit_leaf or finish, so it has no effect on results. Shared by the CPU
 * engine below and the GPU kernel (canopy/traverse_cuda.cuh). */
#ifndef CANOPY_TRAVERSE_PROFILE_H
#define CANOPY_TRAVERSE_PROFILE_H

#include "canopy/traverse.h"

/* Profiles one query whose scratch state is already initialised; returns the
 * truncation tests made. Works on the host (app = function pointers) only; the GPU
 * kernel has the same loop over its template descriptor. */
static inline int64_t canopy_profile_walk(const canopy_app *app, const void *ctx, void *state,
                                          const canopy_tree_view *t, const canopy_profile_plan *p,
                                          uint64_t *key) {
    int32_t stack[CANOPY_PROFILE_STACK];
    int32_t sp = 0, steps = 0;
    int64_t tests = 0;
    for (int32_t w = 0; w < p->words; w++) key[w] = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        int32_t node = stack[--sp];
        tests++;
        if (app->truncate(ctx, state, t, node)) continue;
        if (p->col[node] >= 0) {
            canopy_profile_record(p, key, steps++, p->col[node]);
            continue;
        }
        const canopy_node *h = canopy_tv_node(t, node);
        int32_t perm[CANOPY_MAX_CHILDREN];
        if (app->guided)
            app->order(ctx, state, t, node, perm);
        else
            canopy_order_flip(perm, h->nchild, 0);
        for (int32_t c = h->nchild - 1; c >= 0; c--) stack[sp++] = h->child + perm[c];
    }
    return tests;
}

#endif
