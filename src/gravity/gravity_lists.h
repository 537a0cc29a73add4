/* SPDX-License-Identifier: MIT */
/* Interaction-list multipole gravity on the CPU (ChaNGa's scheme, Liu ch. 4's
 * "interaction-list baseline"): an octree or a binary tree with leaf buckets, built
 * level by level; each bucket walks the tree once and lists the cells it accepts and
 * the bodies of the leaves it opens; a vectorised kernel then evaluates the bucket's
 * bodies against the lists (float, structure of arrays). The walk reads only 32-byte
 * hot records (centre of mass, squared opening radius, children); masses and
 * multipoles (gravity/multipole_terms.h) sit in a cold array read when a listed cell is
 * gathered. */
#ifndef CANOPY_APPS_GRAVITY_LISTS_H
#define CANOPY_APPS_GRAVITY_LISTS_H

#include "canopy.h"

enum { GL_DEFAULT_BUCKET = 16, GL_DEFAULT_GROUP = 256 };
/* TreePM's sink groups: a group lists what lies within the cut of any of its bodies, so
 * smaller groups list fewer bodies beyond each one's cut (100k uniform bodies: 1515 per
 * body at 256, 598 at 32; at 200k, groups of 16 to 64 cost within 8% of each other;
 * bench/results/nbody.md, session 15). */
enum { GL_TREEPM_GROUP = 32 };

typedef struct gl_config {
    int binary;     /* 1: binary tree (longest-side midpoint splits), 0: octree */
    int per_body;   /* 1: every body walks alone (particle opening), 0: per bucket */
    int fused;      /* 1: moments stored inside the walk's records (no hot/cold split) */
    int32_t bucket; /* leaf size, > 0 */
    int32_t group;  /* bucket walk: sink groups are the largest nodes of at most this
                       many bodies (or leaves); they walk once and share lists */
} gl_config;

/* What one evaluation did: walks (buckets or bodies), nodes tested, body-body and
 * body-cell interactions, and where the time went. */
typedef struct gl_counts {
    int64_t walks, tests, pp, pc;
    int32_t nodes, leaves, depth;
    double build_seconds, walk_seconds;
} gl_counts;

/* Accelerations (n, 3) and potentials (n, or pot NULL) in caller order; mass is
 * not NULL. Inputs are checked by the caller; theta > 0, order 0, 2, 3 or 4, eps2 >= 0.
 * The result does not depend on the number of threads. */
canopy_status canopy_gl_gravity(canopy_points bodies, const float *mass, float theta, int32_t order,
                                float eps2, const gl_config *cfg, float *acc, float *pot,
                                gl_counts *counts);
/* The same for the active bodies only (active[i] != 0, caller order), over a tree of
 * all bodies: block time steps (src/gravity/nbody.c) evaluate the bodies whose step ends. Leaf
 * buckets without an active body do not walk; acc and pot of inactive bodies are left
 * as they are. An all-active mask gives canopy_gl_gravity's bits. */
canopy_status canopy_gl_gravity_active(canopy_points bodies, const float *mass, float theta,
                                       int32_t order, float eps2, const gl_config *cfg,
                                       const unsigned char *active, float *acc, float *pot,
                                       gl_counts *counts);

/* A periodic cube [0, box)^3 with Ewald summation (gravity/ewald.h): bodies are wrapped
 * into it; grid is the Ewald table's (EWALD_GRID_MIN..EWALD_GRID_MAX). Or, with pm_grid
 * > 0, TreePM (gravity/pm.h): the tree walk takes the short range erfc(r / 2 rs) / r
 * within pm_cut * rs (order 0 or 2 only), the mesh of pm_grid^3 cells the rest; rs in
 * boxes. */
typedef struct gl_periodic {
    float box;
    int32_t grid;
    int32_t pm_grid;
    double pm_rs, pm_cut;
} gl_periodic;
/* g->periodic resolved where g has a box (auto: Ewald) and checked. */
canopy_status canopy_gravity_resolve_periodic(canopy_gravity_options *g);
/* TreePM's split for g's box at n bodies (src/gravity/multipole.c). */
gl_periodic canopy_gravity_treepm_split(const canopy_gravity_options *g, int64_t n);
/* canopy_gl_gravity_active in a periodic box (per NULL: open boundaries). Each sink group
 * takes every cell and body at its image nearest the group's centre and walks with the
 * box of its open-boundary group (cells up to 0.3 box, 0.1 on the octree); the Newtonian terms are
 * the open kernel's, and the Ewald correction of all sources is summed once per group as a Taylor
 * series about its centre (Gadget-4's scheme), then evaluated at each sink. Potentials include each
 * body's own images. */
canopy_status canopy_gl_gravity_periodic(canopy_points bodies, const float *mass, float theta,
                                         int32_t order, float eps2, const gl_config *cfg,
                                         const gl_periodic *per, const unsigned char *active,
                                         float *acc, float *pot, gl_counts *counts);

/* The engine over several processes (dist/gravity_list.c; open boundaries only): each builds a tree
 * of its own bodies, exports to every other a piece of it pruned for that one's bounding box (cells
 * the box accepts as a whole go without their subtrees), and its sink groups then walk their own
 * tree and the received pieces into one set of lists. */
typedef struct gl_tree gl_tree;

/* A tree of n >= 1 bodies (mass not NULL), as canopy_gl_gravity builds it. */
canopy_status canopy_gl_tree_build(canopy_points bodies, const float *mass, float theta,
                                   int32_t order, const gl_config *cfg, gl_tree **out);
void canopy_gl_tree_free(gl_tree *t);
/* The tight bounding box of the tree's bodies: lo[3], hi[3]. */
void canopy_gl_tree_box(const gl_tree *t, float box[6]);
/* The piece of t that sink groups inside box[6] walk (canopy_alloc'd, *bytes long, a
 * whole number of 4-byte words; free with canopy_free). */
canopy_status canopy_gl_export(const gl_tree *t, const float box[6], void **out, int64_t *bytes);
/* A received piece (4-byte aligned, bytes long; checked) as a tree that borrows buf,
 * for canopy_gl_forces; free with canopy_gl_tree_free before buf. */
canopy_status canopy_gl_piece_open(const void *buf, int64_t bytes, gl_tree **out);
/* Accelerations and potentials (pot may be NULL) of local's bodies, in the order they
 * were given to canopy_gl_tree_build, from local's bodies and the pieces (same order);
 * work (may be NULL): each body's interaction count. */
canopy_status canopy_gl_forces(const gl_tree *local, const gl_tree *const *remote, int n_remote,
                               float eps2, float *acc, float *pot, double *work, gl_counts *counts);

/* Block time steps (src/gravity/nbody.c) keep one open-boundary tree between rebuilds:
 * the bodies of t (built by canopy_gl_tree_build) given their new positions, in the
 * caller's order; every node keeps its bodies, its box, moments and opening radius are
 * recomputed bottom-up, O(n) without the build's partitioning. Bodies that have not
 * moved give the built tree's bits. */
canopy_status canopy_gl_tree_refit(gl_tree *t, canopy_points bodies);
/* canopy_gl_gravity_active's bucket walk on a kept tree: forces of the active bodies
 * (caller order; active NULL: all) from all of t's bodies. */
canopy_status canopy_gl_tree_forces_active(const gl_tree *t, const unsigned char *active,
                                           float eps2, float *acc, float *pot, gl_counts *counts);

#endif
