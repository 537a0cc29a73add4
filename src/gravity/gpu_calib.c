/* SPDX-License-Identifier: MIT */
/* Which backend multipole gravity takes, and the GPU walk's accuracy table (its tree
 * and bucket opening give other errors at a theta than the CPU octree's). */
#include "core/device.h"
#include "gravity/gpu_multipole.h"

#include <math.h>

int canopy_gpu_mp_wanted(canopy_backend b, int64_t n) {
    return b == CANOPY_BACKEND_GPU ||
           (b == CANOPY_BACKEND_AUTO && n >= GPU_MP_AUTO_MIN && canopy_gpu_usable());
}

/* canopy-bench-nbody-gpu on an H200 (bench/results/nbody.md, GPU): plummer1m, eps
 * 0.05, leaf 8, 32-body buckets; median relative error on 10,000 random bodies against
 * float64 direct summation, and the evaluation's median ms (tree build included). */
typedef struct gpu_calib_row {
    int32_t order;
    float theta;
    double err, ms;
} gpu_calib_row;
static const gpu_calib_row rows[] = {
    {0, 0.30f, 4.134e-04, 15.542}, {0, 0.40f, 8.100e-04, 8.139},  {0, 0.50f, 1.373e-03, 5.386},
    {2, 0.30f, 1.890e-05, 25.039}, {2, 0.40f, 5.941e-05, 13.136}, {2, 0.45f, 8.848e-05, 10.405},
    {2, 0.50f, 1.401e-04, 8.428},  {2, 0.55f, 2.036e-04, 7.035},  {2, 0.60f, 2.771e-04, 5.944},
    {2, 0.65f, 3.897e-04, 5.105},  {2, 0.70f, 5.838e-04, 4.518},  {2, 0.80f, 9.796e-04, 3.686},
};
enum { N_ROWS = sizeof rows / sizeof rows[0] };

canopy_status canopy_gpu_mp_choose(double accuracy, float *theta, int32_t *order,
                                   double *expected) {
    if (!(accuracy >= 1e-6 && accuracy <= 0.1))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: accuracy must be in [1e-6, 0.1] (got %g)",
                           accuracy);
    int best = -1;
    for (int i = 0; i < N_ROWS; i++)
        if (rows[i].err <= accuracy && (best < 0 || rows[i].ms < rows[best].ms)) best = i;
    if (best < 0)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: accuracy %g is below the GPU's calibrated range (best %g); "
                           "give --theta and --order instead",
                           accuracy, rows[3].err);
    *theta = rows[best].theta;
    *order = rows[best].order;
    if (expected) *expected = rows[best].err;
    return CANOPY_OK;
}

/* Log-log interpolation in theta among the rows of this order; the end segments
 * extrapolate. */
double canopy_gpu_mp_expected_error(float theta, int32_t order) {
    int32_t o = order >= 2 ? 2 : 0;
    int lo = -1, hi = -1;
    for (int i = 0; i < N_ROWS; i++) {
        if (rows[i].order != o) continue;
        if (lo < 0 || (rows[i].theta <= theta && rows[i].theta > rows[lo].theta) ||
            (rows[lo].theta > theta && rows[i].theta < rows[lo].theta))
            lo = i;
    }
    for (int i = 0; i < N_ROWS; i++)
        if (rows[i].order == o && rows[i].theta > rows[lo].theta &&
            (hi < 0 || rows[i].theta < rows[hi].theta))
            hi = i;
    if (hi < 0) { /* theta at or past the last row: the last segment's slope */
        hi = lo;
        lo = -1;
        for (int i = 0; i < N_ROWS; i++)
            if (rows[i].order == o && rows[i].theta < rows[hi].theta &&
                (lo < 0 || rows[i].theta > rows[lo].theta))
                lo = i;
    }
    double x0 = log(rows[lo].theta), x1 = log(rows[hi].theta);
    double y0 = log(rows[lo].err), y1 = log(rows[hi].err);
    return exp(y0 + (y1 - y0) * (log(theta) - x0) / (x1 - x0));
}
