/* SPDX-License-Identifier: MIT */
/* Mixtures of isotropic Gaussians: `clusters` (k equal-weight clusters of one spread)
 * and `cities` (Zipf weights, spreads over 100x, a uniform background; the density of
 * points varies over more than 1000x, as city locations do). Centre c is drawn from
 * stream UINT64_MAX - c of the seed and row i from stream i, so centres and rows never
 * share a stream and the output does not depend on the thread count. */
#include "gen/gen.h"

#include <math.h>

/* |canopy_rng_normal| < 13 (its polar method cannot return more), so this bound keeps
 * every coordinate finite in float32. */
#define MAX_SPREAD 1e36

/* cities: the share of points in the uniform background, and the ratio of the widest
 * to the narrowest cluster spread. */
#define CITIES_BACKGROUND 0.125
#define CITIES_SPREAD_RANGE 100.0

static canopy_status gen_mixture_rows(float *out, int32_t *labels, int64_t first, int64_t n,
                                      int32_t d, int32_t k, double spread, uint64_t seed,
                                      int cities) {
    const char *name = cities ? "cities" : "clusters";
    if (n < 0 || first < 0 || first > INT64_MAX - n)
        return canopy_fail(CANOPY_ERR_INVALID, "gen %s: bad row range (first %lld, n %lld)", name,
                           (long long)first, (long long)n);
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "gen %s: d = %d, must be >= 1", name, d);
    if (k < 1)
        return canopy_fail(CANOPY_ERR_INVALID, "gen %s: k = %d clusters, must be >= 1", name, k);
    if (!(spread >= 0.0 && spread <= MAX_SPREAD))
        return canopy_fail(CANOPY_ERR_INVALID, "gen %s: spread %g must be in [0, %g]", name, spread,
                           MAX_SPREAD);
    if (n > 0 && !out) return canopy_fail(CANOPY_ERR_INVALID, "gen %s: out is NULL", name);

    /* Per cluster: d centre coordinates, then (cities) its spread and the cumulative
     * Zipf weight sum_{i <= c} 1 / (i + 1). */
    int32_t row = d + 2;
    double *centres;
    size_t kd;
    canopy_status s = canopy_mul_size((size_t)k, (size_t)row, &kd);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&centres, kd, sizeof *centres);
    if (s != CANOPY_OK) return s;
    double total = 0.0;
    for (int32_t c = 0; c < k; c++) {
        canopy_rng r = canopy_rng_make(seed, canopy_gen_centre_stream(c));
        double *cc = centres + (size_t)c * row;
        for (int32_t j = 0; j < d; j++) cc[j] = canopy_rng_uniform(&r);
        cc[d] = cities ? spread * pow(CITIES_SPREAD_RANGE, -canopy_rng_uniform(&r)) : spread;
        total += 1.0 / (c + 1.0);
        cc[d + 1] = total;
    }

#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)(first + i));
        float *x = out + i * (int64_t)d;
        int32_t c;
        if (!cities) {
            c = (int32_t)canopy_rng_below(&r, (uint64_t)k);
        } else if (canopy_rng_uniform(&r) < CITIES_BACKGROUND) {
            for (int32_t j = 0; j < d; j++) x[j] = (float)canopy_rng_uniform(&r);
            if (labels) labels[i] = -1;
            continue;
        } else {
            /* the first cluster whose cumulative weight exceeds u * total */
            double u = canopy_rng_uniform(&r) * total;
            int32_t lo = 0, hi = k - 1;
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                if (centres[(size_t)mid * row + d + 1] > u)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            c = lo;
        }
        const double *centre = centres + (size_t)c * row;
        for (int32_t j = 0; j < d; j++)
            x[j] = (float)(centre[j] + centre[d] * canopy_rng_normal(&r));
        if (labels) labels[i] = c;
    }
    canopy_free(centres);
    return CANOPY_OK;
}

canopy_status canopy_gen_clusters_rows(float *out, int32_t *labels, int64_t first, int64_t n,
                                       int32_t d, int32_t k, double spread, uint64_t seed) {
    return gen_mixture_rows(out, labels, first, n, d, k, spread, seed, 0);
}

canopy_status canopy_gen_cities_rows(float *out, int32_t *labels, int64_t first, int64_t n,
                                     int32_t d, int32_t k, double spread, uint64_t seed) {
    return gen_mixture_rows(out, labels, first, n, d, k, spread, seed, 1);
}

canopy_status canopy_gen_cities(float *out, int32_t *labels, int64_t n, int32_t d, int32_t k,
                                double spread, uint64_t seed) {
    return gen_mixture_rows(out, labels, 0, n, d, k, spread, seed, 1);
}

canopy_status canopy_gen_clusters(float *out, int32_t *labels, int64_t n, int32_t d, int32_t k,
                                  double spread, uint64_t seed) {
    return canopy_gen_clusters_rows(out, labels, 0, n, d, k, spread, seed);
}
