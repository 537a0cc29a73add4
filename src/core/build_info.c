/* SPDX-License-Identifier: MIT */
/* What this build is (the GPU it sees: core/cuda_load.c). */
#include "canopy.h"

const char *canopy_version(void) {
    return CANOPY_VERSION_STRING;
}
