// SPDX-License-Identifier: MIT
#include "cli_dist.h"

#include <stdio.h>
#include <string.h>
#ifdef CANOPY_HAVE_MPI
#include "dist/comm.h"
#endif

int cli_dist_size(void) {
#ifdef CANOPY_HAVE_MPI
    return canopy_dist_size(MPI_COMM_WORLD);
#else
    return 1;
#endif
}

int cli_dist_rank(void) {
#ifdef CANOPY_HAVE_MPI
    return canopy_dist_rank(MPI_COMM_WORLD);
#else
    return 0;
#endif
}

int cli_runs_distributed(const char *cmd) {
    static const char *const distributed[] = {"knn", "nn", "radius", "gravity", "nbody", NULL};
    int size = cli_dist_size();
    if (size == 1) return 1;
    for (size_t i = 0; distributed[i]; i++)
        if (!strcmp(cmd, distributed[i])) return 1;
    if (cli_dist_rank() == 0)
        fprintf(stderr,
                "canopy %s: has no distributed path and was started on %d MPI ranks; run it "
                "without mpirun (or with -np 1)\n",
                cmd, size);
    return 0;
}
