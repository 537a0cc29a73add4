/* SPDX-License-Identifier: MIT */
/* Shared check of the model-importer fuzz targets. */
#ifndef CANOPY_FUZZ_FOREST_H
#define CANOPY_FUZZ_FOREST_H

#include "canopy.h"

#include <stdlib.h>
#include <string.h>

/* A loaded model must describe itself consistently; an error leaves none and names
 * the input. */
static inline void fuzz_forest_check(canopy_forest_format fmt, const uint8_t *data, size_t size) {
    canopy_forest *f = NULL;
    canopy_status s = canopy_forest_load_mem((const char *)data, size, "fuzz", fmt, &f);
    if (s != CANOPY_OK) {
        if (f || strncmp(canopy_last_error(), "fuzz", 4) != 0) abort();
        return;
    }
    canopy_forest_info in;
    canopy_forest_get_info(f, &in);
    if (in.n_trees < 0 || in.n_features < 1 || in.n_outputs < 1) abort();
    canopy_forest_free(f);
}

#endif
