/* SPDX-License-Identifier: MIT */
/* Interaction-list multipole gravity on the CPU (ChaNGa's scheme, Liu ch. 4's
 * "interaction-list baseline"): an octree or a binary tree with leaf buckets, built
 * level by level; each bucket walks the tree once and lists the cells it accepts and
 * the bodies of the leaves it opens; a vectorised kernel then evaluates the bucket's
 * bodies against the lists (float, structure of arrays). The walk reads only 32-byte
 * hot records (centre of mass, squared opening radius, children); masses and
 * multipoles (apps/multipole_terms.h) sit in a cold array read when a listed cell is
 * gathered. */
#ifndef CANOPY_APPS_GRAVITY_LISTS_H
#define CANOPY_APPS_GRAVITY_LISTS_H

#include "canopy.h"

enum { GL_DEFAULT_BUCKET = 16, GL_DEFAULT_GROUP = 256 };

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
canopy_status gl_gravity(canopy_points bodies, const float *mass, float theta, int32_t order,
                         float eps2, const gl_config *cfg, float *acc, float *pot,
                         gl_counts *counts);
/* The same for the active bodies only (active[i] != 0, caller order), over a tree of
 * all bodies: block time steps (src/nbody) evaluate the bodies whose step ends. Leaf
 * buckets without an active body do not walk; acc and pot of inactive bodies are left
 * as they are. An all-active mask gives gl_gravity's bits. */
canopy_status gl_gravity_active(canopy_points bodies, const float *mass, float theta, int32_t order,
                                float eps2, const gl_config *cfg, const unsigned char *active,
                                float *acc, float *pot, gl_counts *counts);

#endif
