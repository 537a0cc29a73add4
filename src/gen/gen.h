/* SPDX-License-Identifier: MIT */
/* Row-range forms of the point generators. Row i of a generation is drawn from
 * stream i of the seed alone, so rows [first, first + n) can be produced without the
 * rows before them: the CLI writes a workload's query half (rows n .. n + nq - 1)
 * this way, identical to the tail of one call for n + nq points. */
#ifndef CANOPY_GEN_GEN_H
#define CANOPY_GEN_GEN_H

#include "canopy.h"

canopy_status canopy_gen_uniform_rows(float *out, int64_t first, int64_t n, int32_t d, double lo,
                                      double hi, uint64_t seed);
canopy_status canopy_gen_clusters_rows(float *out, int32_t *labels, int64_t first, int64_t n,
                                       int32_t d, int32_t k, double spread, uint64_t seed);
canopy_status canopy_gen_cities_rows(float *out, int32_t *labels, int64_t first, int64_t n,
                                     int32_t d, int32_t k, double spread, uint64_t seed);

/* Stream of cluster centre c: counted down from the top so it never meets a row's. */
static inline uint64_t canopy_gen_centre_stream(int32_t c) {
    return UINT64_MAX - (uint64_t)c;
}

#endif
