/* SPDX-License-Identifier: MIT */
/* Pieces the benchmark programs share, so each reports its timings the same way. */
#ifndef CANOPY_BENCH_UTIL_H
#define CANOPY_BENCH_UTIL_H

/* A quantity timed over repeated runs: its median and extremes. */
typedef struct bench_summary {
    double med, min, max;
} bench_summary;

/* The summary of v[0..n), n >= 1; sorts v in place. */
bench_summary bench_summarise(double *v, int n);

/* The fields every raw JSON line starts with, without braces:
 * "commit":"...","machine":"...","date":"..." (bench/bench_meta.py writes the same for
 * the Python scripts). commit: $CANOPY_COMMIT, else the source tree's git HEAD, else
 * "unknown"; machine: $CANOPY_MACHINE, else the CPU model, its logical CPUs and the GPU
 * (if any); date: UTC, ISO 8601, at the first call. Computed once per process. */
const char *bench_meta_json(void);

#include <stdint.h>

/* Relative force errors of acc (n, 3) at the bodies sample[0..ns) against ref (ns, 3):
 * median of |a - ref| / |ref| and global rms sqrt(sum |a - ref|^2 / sum |ref|^2). */
typedef struct bench_errors {
    double median, rms;
} bench_errors;
bench_errors bench_force_errors(const float *acc, const double *ref, const int64_t *sample,
                                int64_t ns);

#endif
