/* SPDX-License-Identifier: MIT */
/* B+-tree forests (Ren, Mytkowicz, Agrawal 2014, §2.2): internal state shared by the
 * builder (build.c), the lookup driver (lookup.c) and the pointer-based baseline
 * (pointer.c). The public API is the "B+-tree forest" section of canopy.h. */
#ifndef CANOPY_BPTREE_H
#define CANOPY_BPTREE_H

#include "canopy.h"
#include "forest/forest.h"
#include "vm/vm.h"

#include <stdint.h>

/* Batches smaller than this run on the calling thread: a parallel region costs more. */
enum { CBP_SERIAL_BELOW = 4096 };

/* The classic B+ tree of the baseline: a node holds up to CBP_FANOUT keys. */
enum { CBP_FANOUT = 16 };
typedef struct cbp_pnode cbp_pnode;
typedef struct cbp_pointer_tree {
    cbp_pnode *root; /* NULL when there are no keys */
    int32_t height;  /* levels, leaves included */
    size_t bytes;
} cbp_pointer_tree;

struct canopy_bptree {
    int64_t n;
    float *keys;     /* sorted ascending */
    int64_t *values; /* in key order */
    /* The hash: bucket(q) = clamp(floor((q - lo) * scale), 0, n_buckets - 1), the top
     * levels of the B+ tree; bucket b holds the keys [start[b], start[b + 1]). */
    int64_t n_buckets;
    double lo, scale;
    int64_t *start;
    /* One tree per bucket, feature 0 = the key, leaf value = the key's rank (-1 in an
     * empty bucket). */
    canopy_forest *forest;
    int64_t depth_sum; /* over the keys: comparisons before their leaf */
    int32_t max_depth;
    /* The layout of the last forest lookup, kept for the next one. */
    int have_layout;
    cf_layout layout;
    cvm_program prog;
    int32_t layout_hier_depth, layout_switch_level;
    /* The baseline, built on first use. */
    cbp_pointer_tree *pointer;
};

/* The bucket of a query; NaN goes to bucket 0 (it matches no key anyway). */
static inline int64_t cbp_bucket(const canopy_bptree *t, float q) {
    double v = ((double)q - t->lo) * t->scale;
    if (!(v >= 0)) return 0;
    if (v >= (double)t->n_buckets) return t->n_buckets - 1;
    return (int64_t)v;
}

/* Rank in a subtree of m keys where the left child's keys end: the left child takes
 * the first ceil(m / 2) keys. The builder and the query sampler both use it. */
static inline int64_t cbp_split(int64_t lo, int64_t hi) {
    return lo + (hi - lo + 1) / 2;
}

canopy_status canopy_cbp_pointer_build(const float *keys, const int64_t *values, int64_t n,
                                       cbp_pointer_tree **out);
void canopy_cbp_pointer_free(cbp_pointer_tree *p);
/* Looks up queries [0, nq) in parallel; returns the number found. */
int64_t canopy_cbp_pointer_lookup(const cbp_pointer_tree *p, const float *queries, int64_t nq,
                                  int64_t not_found, int64_t *out);

#endif
