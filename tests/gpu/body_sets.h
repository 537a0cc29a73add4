// SPDX-License-Identifier: MIT
/* Body sets shared by the GPU gravity tests: a seeded generator and three kinds of
 * bodies (uniform cube, Plummer sphere, clumps with duplicate positions). */
#ifndef CANOPY_TESTS_BODY_SETS_H
#define CANOPY_TESTS_BODY_SETS_H

#include "canopy.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t rng_state;
static double rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* kind 0 uniform cube, 1 Plummer, 2 clumps with duplicate positions */
static float *make_bodies(int64_t n, int kind, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(3 * n + 3));
    rng_state = seed;
    if (kind == 1 && n > 0) {
        canopy_gen_plummer(p, NULL, n, seed);
        return p;
    }
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) {
            double v = rnd() * 2.0 - 1.0;
            if (kind == 2) v = floor(v * 4.0) / 4.0 + 0.01 * (double)(i % 3);
            p[3 * i + j] = (float)v;
        }
    return p;
}

#endif
