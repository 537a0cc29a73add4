/* SPDX-License-Identifier: MIT */
#include "canopy.h"

#include <omp.h>
#include <stdlib.h>

static int explicit_threads;

void canopy_set_threads(int n) {
    explicit_threads = n > 0 ? n : 0;
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
