/* SPDX-License-Identifier: MIT */
#include "bench_util.h"

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
