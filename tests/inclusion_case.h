/* SPDX-License-Identifier: MIT */
/* The configuration that breaks a naive LET radius (tests/test_let.c and
 * tests/mpi/test_dist_gravity.c): k bodies of mass 1/k, k - 1 of them in a clump in
 * [0, 0.02]^3 and one at (1, 1, 1), so the root cell of their octree has its centre of
 * mass far from its centre; and m light bodies (mass 1e-6, so the clump dominates
 * their forces) on the com side, inside the walk's opening sphere about com but
 * outside the same sphere about the centre. */
#ifndef CANOPY_TEST_INCLUSION_CASE_H
#define CANOPY_TEST_INCLUSION_CASE_H

#include "check.h"
#include "gravity/let.h"

#include <math.h>
#include <stdlib.h>

static inline void inclusion_case(float *clump, float *clump_mass, int64_t k, float *light,
                                  float *light_mass, int64_t m, float theta, uint64_t seed) {
    canopy_rng g = canopy_rng_make(seed, 11);
    for (int64_t i = 0; i < 3 * (k - 1); i++) clump[i] = (float)(0.02 * canopy_rng_uniform(&g));
    for (int j = 0; j < 3; j++) clump[3 * (k - 1) + j] = 1.0f;
    for (int64_t i = 0; i < k; i++) clump_mass[i] = 1.0f / (float)k;
    for (int64_t i = 0; i < m; i++) light_mass[i] = 1e-6f;
    /* The clump's root cell, read back from a build of its bodies. */
    int64_t *gid = malloc((size_t)k * sizeof *gid);
    for (int64_t i = 0; i < k; i++) gid[i] = i;
    let_domain d;
    CHECK_OK(canopy_let_domain_build(canopy_points_make(clump, k, 3), clump_mass, gid, 2, 0, &d));
    const float *root = canopy_tv_geom(d.tv, 0);
    double off[3], len = 0.0;
    for (int j = 0; j < 3; j++) {
        off[j] = (double)root[j] - root[4 + j];
        len += off[j] * off[j];
    }
    len = sqrt(len);
    double r_open = 2.0 * root[7] / theta + len;
    CHECK_MSG(len > 0.3 * root[7], "the clump's com is near the cell centre (%g)", len);
    for (int64_t i = 0; i < m; i++)
        for (int j = 0; j < 3; j++)
            light[3 * i + j] = (float)(root[j] + off[j] / len * (r_open - 0.3 * len) +
                                       0.02 * len * (canopy_rng_uniform(&g) - 0.5));
    canopy_let_domain_free(&d);
    free(gid);
}

#endif
