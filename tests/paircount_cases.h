/* SPDX-License-Identifier: MIT */
/* Random inputs of the pair-count tests (test_paircount.c, gpu/test_gpu_paircount.c)
 * and their comparison with a reference. */
#ifndef CANOPY_TEST_PAIRCOUNT_CASES_H
#define CANOPY_TEST_PAIRCOUNT_CASES_H

#include "canopy.h"

#include <math.h>
#include <stdlib.h>

static uint64_t rng;
static float uniform(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng >> 40) / (float)(1u << 24);
}

/* Coordinates in [0, 8): uniform, or on a grid of step 1 (duplicates, ties at edges). */
static float *points(int64_t n, int32_t d, int coarse) {
    float *p = malloc((size_t)(n * d + 1) * sizeof *p);
    for (int64_t i = 0; i < n * d; i++)
        p[i] = coarse ? (float)(int)(uniform() * 8.0f) : uniform() * 8.0f;
    return p;
}

static float *weights(int64_t n) {
    float *w = malloc((size_t)(n + 1) * sizeof *w);
    for (int64_t i = 0; i < n; i++) w[i] = 0.25f + uniform();
    return w;
}

/* Counts equal (weighted sums to 1e-9 relative); else *bad is the first bin that is not. */
static int same(const double *a, const double *b, int32_t n, int weighted, int32_t *bad) {
    for (int32_t i = 0; i < n; i++) {
        double tol = weighted ? 1e-9 * (fabs(b[i]) + 1.0) : 0.0;
        if (fabs(a[i] - b[i]) > tol) {
            *bad = i;
            return 0;
        }
    }
    return 1;
}

/* One case's data: data2 empty for auto-correlation, weights1 (and weights2 when
 * cross) with `weighted`, a periodic box of side 8 with `periodic`; the caller sets
 * po.rmin and po.rmax. want and got hold nbins counts. */
typedef struct pc_case {
    float *x1, *x2, *w1, *w2;
    canopy_points p1, p2;
    canopy_paircount_options po;
    double *want, *got;
} pc_case;

static pc_case pc_case_make(int64_t n1, int64_t n2, int32_t d, int cross, int weighted,
                            int periodic, int log_bins, int32_t nbins, int coarse) {
    pc_case c;
    c.x1 = points(n1, d, coarse);
    c.x2 = points(n2, d, coarse);
    c.w1 = weighted ? weights(n1) : NULL;
    c.w2 = weighted && cross ? weights(n2) : NULL;
    c.p1 = canopy_points_make(c.x1, n1, d);
    c.p2 = cross ? canopy_points_make(c.x2, n2, d) : canopy_points_make(NULL, 0, d);
    c.po = canopy_paircount_options_default();
    c.po.nbins = nbins;
    c.po.log_bins = log_bins;
    c.po.boxsize = periodic ? 8.0 : 0.0;
    c.want = calloc((size_t)nbins, sizeof *c.want);
    c.got = calloc((size_t)nbins, sizeof *c.got);
    return c;
}

static void pc_case_free(pc_case *c) {
    free(c->x1);
    free(c->x2);
    free(c->w1);
    free(c->w2);
    free(c->want);
    free(c->got);
}

#endif
