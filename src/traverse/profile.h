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
 * engine below and the GPU kernel (gpu_profile.cu). */
#ifndef CANOPY_TRAVERSE_PROFILE_H
#define CANOPY_TRAVERSE_PROFILE_H

#include "canopy/traverse.h"

/* Entries of the profile walk's stack: at most depth * (fan-out - 1) + 1, and plans
 * keep the top tree within it. */
enum { CANOPY_PROFILE_STACK = 128, CANOPY_PROFILE_MAX_WORDS = 8 };

typedef struct canopy_profile_plan {
    int32_t depth;     /* levels below the root that the profile descends (>= 1) */
    int32_t n_cols;    /* top-tree leaves: nodes at that level and shallower leaves */
    int32_t words;     /* key words per query */
    int32_t step_bits; /* guided: bits per recorded step; 0 = unguided bit vectors */
    int32_t *col;      /* per node: its column when it is a top-tree leaf, else -1 */
} canopy_profile_plan;

/* Queries profiled at once: a chunk's keys stay within the environment's
 * CANOPY_PROFILE_MAX_BYTES (default 256 MiB). Each chunk is ordered on its own
 * (inspect.c). */
#ifdef __cplusplus
extern "C" {
#endif
int64_t canopy_profile_chunk(int32_t words);
#ifdef __cplusplus
}
#endif

/* Records that the query reached top-tree leaf `col` as its `step`-th one. */
CANOPY_HD void canopy_profile_record(const canopy_profile_plan *p, uint64_t *key, int32_t step,
                                     int32_t col) {
    if (p->step_bits == 0) {
        key[col >> 6] |= (uint64_t)1 << (63 - (col & 63));
        return;
    }
    int32_t per_word = 64 / p->step_bits;
    if (step >= per_word * p->words) return; /* later steps no longer separate clusters */
    int32_t shift = 64 - p->step_bits * (step % per_word + 1);
    key[step / per_word] |= (uint64_t)(col + 1) << shift;
}

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
