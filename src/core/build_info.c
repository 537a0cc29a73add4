/* SPDX-License-Identifier: MIT */
/* What this build is (the GPU it sees: core/cuda_load.c). CANOPY_MPI_LAYER: the
 * sibling library libcanopy_dist (src/dist) was built with this one. */
#include "canopy.h"

const char *canopy_version(void) {
    return CANOPY_VERSION_STRING;
}

int canopy_have_mpi(void) {
#ifdef CANOPY_MPI_LAYER
    return 1;
#else
    return 0;
#endif
}
