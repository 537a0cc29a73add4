/* SPDX-License-Identifier: MIT */
/* Mixture of k equal-weight isotropic Gaussians. Centre c is drawn from stream
 * UINT64_MAX - c of the seed and row i from stream i, so centres and rows never share
 * a stream and the output does not depend on the thread count. */
#include "gen/gen.h"

#include <math.h>

/* |canopy_rng_normal| < 13 (its polar method cannot return more), so this bound keeps
 * every coordinate finite in float32. */
#define MAX_SPREAD 1e36

canopy_status canopy_gen_clusters_rows(float *out, int32_t *labels, int64_t first, int64_t n,
                                       int32_t d, int32_t k, double spread, uint64_t seed) {
    if (n < 0 || first < 0 || first > INT64_MAX - n)
        return canopy_fail(CANOPY_ERR_INVALID, "gen clusters: bad row range (first %lld, n %lld)",
                           (long long)first, (long long)n);
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "gen clusters: d = %d, must be >= 1", d);
    if (k < 1)
        return canopy_fail(CANOPY_ERR_INVALID, "gen clusters: k = %d clusters, must be >= 1", k);
    if (!(spread >= 0.0 && spread <= MAX_SPREAD))
        return canopy_fail(CANOPY_ERR_INVALID, "gen clusters: spread %g must be in [0, %g]", spread,
                           MAX_SPREAD);
    if (n > 0 && !out) return canopy_fail(CANOPY_ERR_INVALID, "gen clusters: out is NULL");

    double *centres;
    size_t kd;
    canopy_status s = canopy_mul_size((size_t)k, (size_t)d, &kd);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&centres, kd, sizeof *centres);
    if (s != CANOPY_OK) return s;
    for (int32_t c = 0; c < k; c++) {
        canopy_rng r = canopy_rng_make(seed, canopy_gen_centre_stream(c));
        for (int32_t j = 0; j < d; j++) centres[(size_t)c * d + j] = canopy_rng_uniform(&r);
    }

#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)(first + i));
        int32_t c = (int32_t)canopy_rng_below(&r, (uint64_t)k);
        const double *centre = centres + (size_t)c * d;
        float *x = out + i * (int64_t)d;
        for (int32_t j = 0; j < d; j++) x[j] = (float)(centre[j] + spread * canopy_rng_normal(&r));
        if (labels) labels[i] = c;
    }
    canopy_free(centres);
    return CANOPY_OK;
}

canopy_status canopy_gen_clusters(float *out, int32_t *labels, int64_t n, int32_t d, int32_t k,
                                  double spread, uint64_t seed) {
    return canopy_gen_clusters_rows(out, labels, 0, n, d, k, spread, seed);
}
