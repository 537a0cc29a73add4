/* SPDX-License-Identifier: MIT */
/* Uniform points in a box. Row i is drawn from stream i of the seed, so the output
 * does not depend on the thread count or on how rows are split between calls. */
#include "gen/gen.h"

#include <float.h>
#include <math.h>

canopy_status canopy_gen_uniform_rows(float *out, int64_t first, int64_t n, int32_t d, double lo,
                                      double hi, uint64_t seed) {
    if (n < 0 || first < 0 || first > INT64_MAX - n)
        return canopy_fail(CANOPY_ERR_INVALID, "gen uniform: bad row range (first %lld, n %lld)",
                           (long long)first, (long long)n);
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "gen uniform: d = %d, must be >= 1", d);
    /* The box must be representable in float32, the type the points are stored in. */
    if (!isfinite(lo) || !isfinite(hi) || fabs(lo) > FLT_MAX || fabs(hi) > FLT_MAX)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gen uniform: box [%g, %g) must be finite and within float32 range", lo,
                           hi);
    if (!(lo < hi))
        return canopy_fail(CANOPY_ERR_INVALID, "gen uniform: box [%g, %g) is empty (lo >= hi)", lo,
                           hi);
    if (n > 0 && !out) return canopy_fail(CANOPY_ERR_INVALID, "gen uniform: out is NULL");

    /* Rounding to float can land on hi or below lo; clamp to the floats inside [lo, hi). */
    float flo = (float)lo, fhi = (float)hi;
    if ((double)flo < lo) flo = nextafterf(flo, INFINITY);
    if ((double)fhi >= hi) fhi = nextafterf(fhi, -INFINITY);
    if (flo > fhi)
        return canopy_fail(CANOPY_ERR_INVALID, "gen uniform: box [%g, %g) holds no float32 value",
                           lo, hi);

    const double width = hi - lo;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)(first + i));
        float *x = out + i * (int64_t)d;
        for (int32_t j = 0; j < d; j++) {
            float v = (float)(lo + width * canopy_rng_uniform(&r));
            x[j] = v < flo ? flo : v > fhi ? fhi : v;
        }
    }
    return CANOPY_OK;
}

canopy_status canopy_gen_uniform(float *out, int64_t n, int32_t d, double lo, double hi,
                                 uint64_t seed) {
    return canopy_gen_uniform_rows(out, 0, n, d, lo, hi, seed);
}
