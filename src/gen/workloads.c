/* SPDX-License-Identifier: MIT */
/* The named workloads of the design, with fixed seeds so every run and every
 * machine benchmarks the same points. A workload's query half is rows
 * n .. n + n_query - 1 of the same generation (streams n.. of the same seed): it is
 * independent of the reference rows, yet drawn from the same distribution, which
 * for clust2 means around the same cluster centres. */
#include "canopy.h"

#include <string.h>

static const canopy_workload table[] = {
    {"rand7", "uniform in [0,1)^7, reference + query (kNN)", CANOPY_GEN_UNIFORM, 200000, 200000, 7,
     0, 0.0, 7},
    /* spread 0.01 is 8 % of the mean spacing of 64 centres in the unit square (1/8), so
     * clusters are dense and mostly apart, with some overlapping as random centres do. */
    {"clust2", "64 Gaussian clusters in [0,1)^2, spread 0.01, reference + query (kNN)",
     CANOPY_GEN_CLUSTERS, 200000, 200000, 2, 64, 0.01, 2},
    /* 256 clusters of Zipf sizes and spreads 2e-4..2e-2 over a 1/8 uniform background:
     * the local density varies over more than 1000x (docs/generators.md), as in city
     * locations, where low-dimensional real data differ most from clust2. */
    {"city2", "256 Gaussian clusters of Zipf sizes, spreads 2e-4..0.02, 1/8 uniform, ref + query",
     CANOPY_GEN_CITIES, 200000, 200000, 2, 256, 0.02, 5},
    {"plummer1m", "Plummer sphere, 1M equal-mass bodies, Henon units (n-body)", CANOPY_GEN_PLUMMER,
     1000000, 0, 3, 0, 0.0, 1},
    {"rand1m3", "uniform in [0,1)^3, 1M points (n-body, tree build)", CANOPY_GEN_UNIFORM, 1000000,
     0, 3, 0, 0.0, 3},
    {NULL, NULL, CANOPY_GEN_UNIFORM, 0, 0, 0, 0, 0.0, 0},
};

const canopy_workload *canopy_workloads(void) {
    return table;
}

const canopy_workload *canopy_workload_find(const char *name) {
    if (!name) return NULL;
    for (const canopy_workload *w = table; w->name; w++)
        if (strcmp(w->name, name) == 0) return w;
    return NULL;
}
