/* SPDX-License-Identifier: MIT */
#include "bench_util.h"

#include <math.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

bench_summary bench_summarise(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    bench_summary s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0], v[n - 1]};
    return s;
}

bench_errors bench_force_errors(const float *acc, const double *ref, const int64_t *sample,
                                int64_t ns) {
    double *rel = malloc(sizeof(double) * (size_t)(ns > 0 ? ns : 1)), num = 0.0, den = 0.0;
    bench_errors e = {0.0, 0.0};
    if (!rel || ns < 1) {
        free(rel);
        return e;
    }
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
    e.median = ns % 2 ? rel[ns / 2] : 0.5 * (rel[ns / 2 - 1] + rel[ns / 2]);
    e.rms = den > 0.0 ? sqrt(num / den) : 0.0;
    free(rel);
    return e;
}
