/* SPDX-License-Identifier: MIT */
/* canopy/tree_view.h — the read-only view of a built tree: node records, per-kind
 * geometry, points in tree order. canopy/traverse.h includes it and documents its use;
 * it stands alone so the tree builders (layer 2, docs/architecture.md) need nothing of
 * the traversal layer above them. */
#ifndef CANOPY_TREE_VIEW_H
#define CANOPY_TREE_VIEW_H

#include "canopy.h"

#include <stddef.h>
#include <stdint.h>

#ifndef CANOPY_HD
#ifdef __CUDACC__
#define CANOPY_HD static __host__ __device__ __forceinline__
#else
#define CANOPY_HD static inline __attribute__((always_inline))
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Nodes live in one array of fixed-size records: this header followed by the
 * kind's geometry floats (canopy/traverse_geom.h reads them). Children of a node are
 * contiguous; a leaf holds the points [begin, end) in tree order. */
typedef struct canopy_node {
    int32_t child;  /* index of the first child, -1 for a leaf */
    int32_t nchild; /* number of children, contiguous from `child` */
    int32_t begin;  /* first point of the subtree, in tree order */
    int32_t end;    /* one past its last point */
} canopy_node;

/* The read-only tree a traversal sees; node 0 is the root. Host and device copies
 * differ only in their pointers.
 *
 * Geometry per kind (geom_stride floats per node, canopy_tv_geom):
 *   kd   : lo[0..d), hi[0..d), dim       tight bounding box of the node's points and
 *                                         the split dimension (-1 for a leaf)
 *   ball : c[0..d), r                     centre (mean) and radius (max distance)
 *   vp   : v[0..d), mu, lo, hi            vantage point, split radius; children are
 *                                         (inside: dist <= mu, outside); [lo, hi] bounds
 *                                         the distances from v of the node's points
 *   oct  : com[3], mass, c[3], half      centre of mass, mass, cell centre, half width
 *   bst  : lo, hi                         smallest and largest key of the node */
typedef struct canopy_tree_view {
    const unsigned char *hot; /* n_nodes records of hot_stride bytes */
    const float *points;      /* n * d floats in tree order */
    const int64_t *ids;       /* original index of each tree-order point */
    const int32_t *rope;      /* static rope per node (-1: end), or NULL */
    const float *weights;     /* per tree-order point weight (masses), or NULL */
    const int64_t *min_id;    /* smallest original index under each node (host views and a
                                 resident index's kNN on the GPU), or NULL: lets kNN
                                 prune ties at the k-th distance */
    int32_t hot_stride;       /* bytes, a multiple of 16 */
    int32_t geom_stride;      /* floats of geometry per node */
    int32_t n_nodes;
    int32_t d;
    int64_t n;
    int32_t depth; /* levels, root = 1 */
    int32_t max_children;
    int32_t kind; /* canopy_tree_kind */
} canopy_tree_view;

/* The host view of a built tree (valid until canopy_tree_free). */
const canopy_tree_view *canopy_tree_get_view(const canopy_tree *t);

CANOPY_HD const canopy_node *canopy_tv_node(const canopy_tree_view *t, int32_t i) {
    return (const canopy_node *)(t->hot + (int64_t)i * t->hot_stride);
}
CANOPY_HD const float *canopy_tv_geom(const canopy_tree_view *t, int32_t i) {
    return (const float *)(t->hot + (int64_t)i * t->hot_stride + sizeof(canopy_node));
}
/* Point i in tree order (d floats); its original index is t->ids[i]. */
CANOPY_HD const float *canopy_tv_point(const canopy_tree_view *t, int64_t i) {
    return t->points + i * t->d;
}

/* Entries an explicit depth-first stack needs at most for this tree: each level
 * leaves at most (fan-out - 1) siblings pending, plus the node being expanded. */
CANOPY_HD int64_t canopy_tree_stack_capacity(const canopy_tree_view *t) {
    return (int64_t)t->depth * (t->max_children > 1 ? t->max_children - 1 : 1) + 1;
}

/* Squared Euclidean distance in float, summed in dimension order (every engine,
 * bound and brute-force reference computes distances this same way). */
CANOPY_HD float canopy_dist2(const float *a, const float *b, int32_t d) {
    float s = 0.0f;
    for (int32_t j = 0; j < d; j++) {
        float t = a[j] - b[j];
        s += t * t;
    }
    return s;
}

#ifdef __cplusplus
}
#endif

#endif
