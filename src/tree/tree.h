/* SPDX-License-Identifier: MIT */
/* The one linearized spatial tree shared by every tree kind and every engine.
 *
 * Nodes live in one array of fixed-size records (the *hot* part: what truncation
 * tests read): a small topology header followed by kind-specific geometry floats.
 * Children of a node are contiguous; leaves are buckets of points stored in tree
 * order. Everything a traversal needs is reachable from a canopy_tree_view, a plain
 * struct of pointers that is valid on the host and, with device pointers, on a GPU.
 *
 * canopy_node, canopy_tree_view and the geometry per kind are public
 * (canopy/tree_view.h). Geometry per kind (geom_stride floats per node):
 *   kd   : lo[0..d), hi[0..d), dim       tight bounding box of the node's points and
 *                                         the split dimension (-1 for a leaf); the
 *                                         children are separated along dim
 *   ball : c[0..d), r                     centre (mean) and radius (max distance)
 *   vp   : v[0..d), mu, lo, hi            vantage point, split radius; children are
 *                                         (inside: dist <= mu, outside); [lo, hi] bounds
 *                                         the distances from v of the node's points
 *   oct  : com[3], mass, c[3], half      centre of mass, mass, cell centre, half width;
 *                                         the cell is the smallest cube of the root's
 *                                         dyadic grid that holds the node's points
 *   bst  : lo, hi                         smallest and largest key of the node
 */
#ifndef CANOPY_TREE_TREE_H
#define CANOPY_TREE_TREE_H

#include "canopy.h"
#include "canopy/tree_view.h"

/* Host-side owner of a tree (the public opaque canopy_tree). */
struct canopy_tree {
    canopy_tree_view view;
    unsigned char *hot;
    float *points;
    int64_t *ids;
    int32_t *rope;
    float *weights;
    int32_t *parent; /* cold: parent of each node, -1 for the root */
    int32_t *level;  /* cold: depth of each node, root = 0 */
    int64_t *min_id; /* cold: view.min_id */
    int32_t leaf_size;
    int32_t order; /* canopy_tree_order */
    double build_seconds;
    /* A device copy of this tree owned elsewhere (a resident canopy_index), which GPU
     * queries use instead of uploading; NULL: none. */
    const canopy_tree_view *device;
};

/* Fills t->min_id (and t->view.min_id) from the view's nodes and ids. */
canopy_status canopy_tree_fill_min_id(canopy_tree *t);

/* ---- builder framework (tree.c) ---- */

/* Build-time nodes, filled by build_rec or a whole-tree rule: children are allocated as
 * one contiguous block of slots (count, taken atomically, of cap). */
typedef struct canopy_tmp_tree {
    int32_t *first; /* slot of the first child, -1 for leaves */
    int32_t *nchild;
    int64_t *begin, *end;
    float *geom;
    int32_t geom_stride;
    int32_t count;
    int32_t cap;
} canopy_tmp_tree;

typedef struct canopy_tree_scratch canopy_tree_scratch;

/* A kind's split rule: given the points perm[begin, end) (indices into pts), write the
 * node's geometry (geom_stride floats); then, if may_split, either return 0 (leaf)
 * or partition perm[begin, end) in place into nchild >= 2 non-empty contiguous
 * ranges, writing their starts to child_begin[0..nchild) and returning nchild. */
typedef int (*canopy_split_fn)(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin,
                               int64_t end, int32_t depth, int may_split, float *geom,
                               int64_t *child_begin);

typedef struct canopy_tree_spec {
    canopy_tree_kind kind;
    int32_t geom_stride;
    int32_t max_children;
    canopy_split_fn split;
    const void *ctx;
    /* Positional rule: the builder passes a contiguous copy of the points in perm's
     * order (point perm[i] is row i of pts) and the rule moves rows with perm, so it
     * reads its range sequentially instead of gathering through perm; the copy ends
     * in tree order and needs no final gather. Its ctx is a canopy_tree_scratch. */
    int positional;
    /* Whole-tree rule (positional only; NULL: split node by node): fills every node of tt
     * (slot 0 the root) and writes the rows (read from pts, in canopy_points' layout) and
     * their ids in tree order to rows and perm, which it receives unfilled. It runs in
     * the build's single thread of a team and may spawn tasks. Nonzero: a rule failed. */
    int (*build_all)(const canopy_tree_scratch *sc, canopy_points pts, float *rows, int64_t *perm,
                     int32_t leaf_size, canopy_tmp_tree *tt);
} canopy_tree_spec;

/* What a positional rule receives as ctx: the spec's own ctx and a second buffer of n
 * rows and n ids, which the rule may use in its range [begin, end) only (parallel
 * tasks own disjoint ranges): out-of-place partitions then need no allocation. */
struct canopy_tree_scratch {
    const void *ctx;
    float *rows;
    int64_t *perm;
    uint64_t *words; /* a whole-tree rule's: 2n words */
};

/* Builds any kind from its split rule: parallel recursive partition, then
 * linearization in the requested order with contiguous children, points gathered
 * into tree order, static ropes and cold parent/level arrays. */
canopy_status canopy_tree_build_generic(canopy_points pts, const canopy_tree_spec *spec,
                                        const canopy_tree_options *opt, canopy_tree **out);

/* Split rules of each kind (build_<kind>.c). */
canopy_status canopy_tree_spec_kd(int32_t d, canopy_tree_spec *spec);
canopy_status canopy_tree_spec_ball(int32_t d, canopy_tree_spec *spec);
canopy_status canopy_tree_spec_vp(int32_t d, canopy_tree_spec *spec);
canopy_status canopy_tree_spec_bst(int32_t d, canopy_tree_spec *spec);

/* The tight box of m rows of d floats (kd geometry); zeros for m = 0. */
void canopy_kd_box(const float *x, int32_t d, int64_t m, float *lo, float *hi);

/* A kd tree for d <= 3 split along the bits of the points' Morton keys (build_kd_curve.c)
 * instead of at medians: one radix sort instead of a selection and a move of every row
 * per level. Children still lie apart along their node's split dimension and boxes are
 * tight, but halves are not even, so the tree differs from canopy_tree_build's (and from
 * the GPU build's): canopy_index_build uses it for host indexes queried on the CPU. */
canopy_status canopy_tree_build_kd_curve(canopy_points pts, const canopy_tree_options *opt,
                                         canopy_tree **out);
/* Its leaf size for opt->leaf_size 0: its leaves hold from 1 to leaf_size points, where
 * the median tree's hold leaf_size / 2 or more, and at 32 one-thread kNN 8 on 2-D cities
 * and clusters and 3-D uniform points ran no slower than at 16 (bench/results/edges.md). */
enum { CANOPY_KD_CURVE_LEAF = 32 };

/* The octree's split context: point weights by original index (NULL: 1/n each) and
 * the root cube, the bounding cube of all points, which fixes the grid every cell
 * lies on. It must outlive the build. */
typedef struct canopy_oct_ctx {
    const float *weights;
    double lo[3], hi[3];
} canopy_oct_ctx;
canopy_status canopy_tree_spec_oct(canopy_points pts, const float *weights, canopy_oct_ctx *ctx,
                                   canopy_tree_spec *spec);

#endif
