/* SPDX-License-Identifier: MIT */
#include "gravity/force_error.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double canopy_nbody_relative_errors(const float *acc, const double *ref, const int64_t *sample,
                                    int64_t ns, double *rel) {
    double num = 0.0, den = 0.0;
    for (int64_t k = 0; k < ns; k++) {
        double d2 = 0.0, r2 = 0.0;
        for (int j = 0; j < 3; j++) {
            double d = acc[3 * sample[k] + j] - ref[3 * k + j];
            d2 += d * d;
            r2 += ref[3 * k + j] * ref[3 * k + j];
        }
        rel[k] = r2 > 0.0 ? sqrt(d2 / r2) : 0.0;
        num += d2;
        den += r2;
    }
    qsort(rel, (size_t)ns, sizeof *rel, cmp_double);
    return den > 0.0 ? sqrt(num / den) : 0.0;
}
