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

#endif
