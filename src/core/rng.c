/* SPDX-License-Identifier: MIT */
/* Counter-based streams: splitmix64 (Steele, Lea & Flood 2014) started from a state
 * that mixes seed and stream, so stream i of seed s is the same on every machine. */
#include "canopy.h"

#include <math.h>

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

canopy_rng canopy_rng_make(uint64_t seed, uint64_t stream) {
    canopy_rng r;
    r.state = mix64(mix64(seed ^ 0x6a09e667f3bcc909ULL) + stream * 0x9e3779b97f4a7c15ULL);
    return r;
}

uint64_t canopy_rng_u64(canopy_rng *r) {
    r->state += 0x9e3779b97f4a7c15ULL;
    return mix64(r->state);
}

double canopy_rng_uniform(canopy_rng *r) {
    return (double)(canopy_rng_u64(r) >> 11) * 0x1.0p-53;
}

uint64_t canopy_rng_below(canopy_rng *r, uint64_t bound) {
    /* Rejection of the short last interval keeps it unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do x = canopy_rng_u64(r);
    while (x >= limit);
    return x % bound;
}

double canopy_rng_normal(canopy_rng *r) {
    double u, v, s;
    do {
        u = 2.0 * canopy_rng_uniform(r) - 1.0;
        v = 2.0 * canopy_rng_uniform(r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    return u * sqrt(-2.0 * log(s) / s);
}
