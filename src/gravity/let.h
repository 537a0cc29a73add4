/* SPDX-License-Identifier: MIT */
/* Locally essential trees (LET) for gravity split over domains (docs/distributed.md,
 * Liu ch. 5). Each domain holds a contiguous run of bodies along a space-filling
 * curve, its own octree and multipoles. Domain i needs from domain j every cell that
 * some body of i accepts or opens in j's tree; a cell that every body of i accepts
 * is sent as its expansion alone (pruned), a leaf that some body opens is sent with
 * its bodies. The pieces are flat arrays of plain records, so they travel as bytes.
 *
 * The inclusion condition: the receiver walks a piece with the same body opening
 * test as the single-domain walk (mp_body_truncate: |q - com| > r_open with
 * r_open = side / theta + |com - centre|). The sender may prune a cell only if that
 * test accepts it for every point of i's bounding box, so its radius must be taken
 * about the expansion centre (com). LET_RADIUS_NAIVE takes the same radius about
 * the geometric centre, as a naive port of a geometric opening test would; bodies
 * on the com side then meet pruned cells they must open, and those interactions are
 * lost (counted in let_walk_stats.dropped). */
#ifndef CANOPY_NBODY_LET_H
#define CANOPY_NBODY_LET_H

#include "gravity/multipole.h"
#include "canopy.h"

typedef enum let_radius {
    LET_RADIUS_CORRECTED = 0, /* r_open about the centre of mass (the walk's test) */
    LET_RADIUS_NAIVE = 1,     /* r_open about the geometric centre (drops interactions) */
    LET_RADIUS_ALL = 2,       /* no pruning: the whole tree (the local piece, references) */
    LET_RADIUS_TOP = 3,       /* the top tree: cells down to the box cells, those pruned */
} let_radius;

/* A cell of a piece: the octree's hot geometry and its order-2 moments (80 bytes). */
typedef struct let_cell {
    float g[8];                 /* com[3], mass, centre[3], half width */
    float quad[MP_QUAD_FLOATS]; /* Q and T about com; zeros for order 0 */
    int32_t child, nchild;      /* children, contiguous in the piece (-1, 0: none) */
    int32_t begin, end;         /* a leaf's bodies in the piece's body array */
    int32_t pruned;             /* 1: sent as its expansion only */
} let_cell;

typedef struct let_body {
    float x[3];
    float m;
    int64_t id; /* global index (self-interaction is skipped by it) */
} let_body;

/* Cell 0 is the root (n_cells == 0: nothing from this domain). */
typedef struct let_piece {
    let_cell *cells;
    let_body *bodies;
    int32_t n_cells, n_bodies;
    int32_t depth; /* levels, for the walk's stack */
    int32_t order; /* 0 or 2: whether the walk reads quad */
} let_piece;

/* Boxes a domain describes itself by: the tight bounding boxes of the bodies of its
 * top tree cells (a level of at most this many non-empty cells), so a domain whose
 * curve run spans a wide region is not taken for its whole bounding box. */
enum { LET_MAX_BOXES = 64 };

/* One domain: its bodies' tree, moments and boxes. */
typedef struct let_domain {
    canopy_tree *tree; /* NULL when the domain has no bodies */
    const canopy_tree_view *tv;
    float *quad;                     /* n_nodes * MP_QUAD_FLOATS, NULL for order 0 */
    const int64_t *gid;              /* global index of each local body (caller's, borrowed) */
    float lo[3], hi[3];              /* bounding box of the bodies (lo > hi when empty) */
    float boxes[LET_MAX_BOXES][6];   /* lo[3], hi[3] each; together they hold every body */
    int32_t box_node[LET_MAX_BOXES]; /* the tree cell of each box (the top tree's frontier) */
    int32_t n_boxes;                 /* 0 when empty */
    int32_t order;
    double tree_seconds;    /* building the octree (on the GPU: with bringing it back) */
    double moments_seconds; /* the quadrupoles and the boxes */
} let_domain;

/* Builds domain d from its n bodies (float (n, 3)), masses and global indices (the
 * arrays must outlive d: the tree keeps positions and masses copied, gid borrowed). */
canopy_status canopy_let_domain_build(canopy_points bodies, const float *mass, const int64_t *gid,
                                      int32_t order, int32_t leaf_size, let_domain *d);
/* The same with the octree built on the GPU (canopy_tree_build_gpu) and brought back:
 * the host build's cells and leaf bodies, masses and centres of mass within float
 * rounding (tests/gpu/test_gpu_build.c), so walks may accept a few other cells. */
canopy_status canopy_let_domain_build_gpu(canopy_points bodies, const float *mass,
                                          const int64_t *gid, int32_t order, int32_t leaf_size,
                                          let_domain *d);
void canopy_let_domain_free(let_domain *d);

/* The piece of src that a domain described by n_boxes boxes (6 floats each: lo, hi)
 * needs: a cell is pruned only when every box accepts it. LET_RADIUS_TOP ignores the
 * boxes and gives src's top tree: every cell above its box cells, and the box cells
 * themselves as pruned cells (expansion only; their subtrees stay with src). Every
 * rank holds every other rank's top tree (the shared top of the global tree). */
canopy_status canopy_let_export(const let_domain *src, const float *boxes, int32_t n_boxes,
                                float inv_theta, let_radius radius, let_piece *out);
void canopy_let_piece_free(let_piece *p);
/* Bytes the piece occupies on the wire (cells then bodies). */
int64_t canopy_let_piece_bytes(const let_piece *p);

/* Whether the top tree `top` (canopy_let_export with LET_RADIUS_TOP) is all that a domain
 * described by n_boxes boxes needs of its source: every box cell reached (its
 * ancestors not accepted by every box) is accepted by every box. Then every body in
 * the boxes walks top exactly as it walks the exported piece (same cells, same order,
 * bit for bit), and the source sends nothing. Sender and receiver decide it alike from
 * data both hold. */
int canopy_let_top_suffices(const let_piece *top, const float *boxes, int32_t n_boxes,
                            float inv_theta);

typedef struct let_walk_stats {
    int64_t expansions; /* cells accepted */
    int64_t direct;     /* body-body terms */
    int64_t dropped;    /* pruned cells a body had to open: lost interactions */
} let_walk_stats;

/* Accelerations (and potentials, pot may be NULL) on the n bodies q (global indices
 * qid) from the pieces, walked in order with the single-domain body opening test;
 * each body's terms are summed in the same order whatever the thread count. work,
 * if not NULL, receives each body's interaction count (expansions + direct terms). */
canopy_status canopy_let_forces(const let_piece *pieces, int32_t n_pieces, canopy_points q,
                                const int64_t *qid, float inv_theta, float eps2, float *acc,
                                float *pot, int64_t *work, let_walk_stats *stats);

/* Splits n bodies along a space-filling curve (CANOPY_SCHEDULE_MORTON or _HILBERT,
 * keys over the bodies' bounding box, as canopy_dist_decompose cuts them) into r
 * contiguous runs of about equal work (work NULL: equal counts): order receives the
 * curve permutation, start[0..r] the run boundaries in it. */
canopy_status canopy_let_split_curve(canopy_points bodies, canopy_schedule curve,
                                     const double *work, int32_t r, int64_t *order, int64_t *start);

#endif
