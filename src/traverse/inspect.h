/* SPDX-License-Identifier: MIT */
/* Host side of the inspector-executor schedule (Liu ch. 3): planning the top tree,
 * profiling queries in it and ordering them by profile. The GPU does the same steps
 * on the device (canopy/traverse_cuda.cuh) with the same plan and keys. */
#ifndef CANOPY_TRAVERSE_INSPECT_H
#define CANOPY_TRAVERSE_INSPECT_H

#include "traverse/profile.h"
#include "traverse/run.h"

/* What a hybrid schedule did, for --stats. */
typedef struct canopy_profile_info {
    int32_t depth;
    int32_t n_cols;
    int64_t chunks;
    int64_t tests; /* truncation tests of the profile walks */
} canopy_profile_info;

/* Cuts the top tree `depth` levels below the root (0: the deepest cut with at most
 * 256 top-tree leaves) and numbers its leaves. */
canopy_status canopy_profile_plan_make(const canopy_tree_view *t, int guided, int32_t depth,
                                       canopy_profile_plan *p);
void canopy_profile_plan_free(canopy_profile_plan *p);

/* Profiles queries[0..nq) (or q0 + i when queries is NULL) into keys (nq * words);
 * returns the truncation tests made. */
int64_t canopy_profile_cpu(const canopy_app *app, const void *ctx, const canopy_tree_view *t,
                           const canopy_profile_plan *p, const int64_t *queries, int64_t q0,
                           int64_t nq, uint64_t *keys);

/* perm: the stable ascending order of n keys of `words` words (word 0 most significant). */
canopy_status canopy_sort_by_keys(const uint64_t *keys, int32_t words, int64_t n, int64_t *perm);

/* The whole hybrid schedule on the host: order receives a permutation of [0, nq). */
canopy_status canopy_schedule_hybrid(const canopy_app *app, const void *ctx,
                                     const canopy_tree_view *t, int32_t depth, int64_t nq,
                                     int64_t *order, canopy_profile_info *info);

/* What auto looks at before choosing (canopy_inspect_sample). */
typedef struct canopy_sample {
    int64_t queries;        /* queries walked in full to count nodes */
    double nodes_per_query; /* their mean truncation tests */
    int64_t windows;        /* windows of 32 consecutive queries profiled */
    double coherence;       /* how alike neighbouring queries traverse, 0..1 */
} canopy_sample;

/* Goldfarb §4.4: do neighbouring queries traverse alike? Profiles 8 windows of 32
 * consecutive queries, and 8 windows of 32 queries spread far apart, in a coarse top
 * tree (at most 32 leaves). Unguided: coherence = (U_spread - U_window) /
 * (U_spread - m), with U the leaves a window reached together and m those one query
 * reached; guided: the same scale on the share of a window whose first top-tree leaf
 * is its most common one. About 1 for sorted queries, 0 for shuffled ones. */
canopy_status canopy_inspect_coherence(const canopy_app *app, const void *ctx,
                                       const canopy_tree_view *t, int64_t nq, canopy_sample *out);

/* nodes_per_query: 32 queries spread over the set walked in full (no results are
 * written; init may touch their output rows, which the real run rewrites). */
canopy_status canopy_inspect_work(const canopy_app *app, const void *ctx, const canopy_tree_view *t,
                                  int64_t nq, canopy_sample *out);

/* Both of the above. */
canopy_status canopy_inspect_sample(const canopy_app *app, const void *ctx,
                                    const canopy_tree_view *t, int64_t nq, canopy_sample *out);

#endif
