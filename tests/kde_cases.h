/* SPDX-License-Identifier: MIT */
/* Random inputs of the kde tests (test_kde.c, gpu/test_gpu_kde.c) and the bound they
 * check query by query. */
#ifndef CANOPY_TEST_KDE_CASES_H
#define CANOPY_TEST_KDE_CASES_H

#include "canopy.h"

#include <math.h>
#include <stdlib.h>

static canopy_rng rng;

/* n points of dimension d in [0, 1)^d, or on the grid {0, 1/4, ..., 1} (duplicates). */
static float *points(int64_t n, int32_t d, int coarse) {
    float *p = malloc(sizeof *p * (size_t)(n * d + 1));
    for (int64_t i = 0; i < n * d; i++) {
        double u = canopy_rng_uniform(&rng);
        p[i] = coarse ? (float)(floor(u * 5.0) / 4.0) : (float)u;
    }
    return p;
}

/* Every query within the tolerance (plus a rounding allowance for the order of the
 * sums); returns the number of queries outside it, *first the first of them. */
static int64_t outside(const double *got, const double *want, int64_t nq, double atol, double rtol,
                       int64_t *first) {
    int64_t bad = 0;
    for (int64_t i = 0; i < nq; i++) {
        double p = exp(want[i]), q = exp(got[i]);
        if (!(fabs(q - p) <= atol + rtol * p + 1e-9 * p) || isnan(got[i])) {
            if (!bad) *first = i;
            bad++;
        }
    }
    return bad;
}

#endif
