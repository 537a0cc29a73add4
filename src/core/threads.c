/* SPDX-License-Identifier: MIT */
#include "canopy.h"

#include <omp.h>
#include <stdlib.h>

static int explicit_threads;

void canopy_set_threads(int n) {
    explicit_threads = n > 0 ? n : 0;
}

/* Work (node visits) that pays for one more thread (canopy_threads_for): 0.5-1.5 ms of
 * kNN (20-50 ns a visit with its leaf scan). A 1,000-point 3-D kNN8 samples 2.3e4 (one
 * thread), 13,500 city queries 5.6e5 (all of 16). */
#define WORK_PER_THREAD 3e4

int canopy_threads_for(double work) {
    int most = canopy_threads();
    if (!(work > 0.0)) return most;
    double t = work / WORK_PER_THREAD;
    return t < 1.0 ? 1 : t >= (double)most ? most : (int)t;
}

int canopy_threads(void) {
    if (explicit_threads > 0) return explicit_threads;
    const char *env = getenv("CANOPY_THREADS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v > 0 && v <= 4096) return (int)v;
    }
    return omp_get_num_procs();
}
