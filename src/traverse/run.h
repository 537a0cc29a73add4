/* SPDX-License-Identifier: MIT */
/* The driver shared by every traversal application: resolve auto choices, schedule
 * the queries, run the chosen engine, fill the statistics. */
#ifndef CANOPY_TRAVERSE_RUN_H
#define CANOPY_TRAVERSE_RUN_H

#include "canopy/traverse.h"
#include "tree/curve_key.h"

/* Smallest query count for which backend auto moves work to the GPU: below it the
 * tree upload and launch cost more than the traversal (run.c; index.c and knn.c take
 * their device paths by the same rule). */
enum { CANOPY_GPU_AUTO_MIN_QUERIES = 20000 };

/* Query orders (schedule.c). order receives a permutation of [0, nq). */
canopy_status canopy_schedule_queries(canopy_schedule s, canopy_points queries,
                                      const canopy_tree_view *t, int64_t *order);

/* Sort records; the index is the tie-break, so orders are deterministic. */
typedef struct canopy_keyed {
    uint64_t key;
    int64_t idx;
} canopy_keyed;

/* Stable LSD radix sort by key, 11 bits per pass over the bits keys use, on a team of
 * canopy_threads() for large n: entries with equal keys keep their relative order
 * (schedule.c). */
canopy_status canopy_sort_keyed(canopy_keyed *a, int64_t n);

/* Curve keys (s morton or hilbert; k[i].idx = i) of points quantized over the box
 * [lo, hi] of their first min(d, 63) coordinates, canopy_curve_bits(d) bits each
 * (_bits: `bits` each, 1 to canopy_curve_bits(d)); points outside the box clamp to
 * its faces. */
int32_t canopy_curve_bits(int32_t d);
void canopy_curve_keys(canopy_schedule s, canopy_points pts, const float *lo, const float *hi,
                       canopy_keyed *k);
void canopy_curve_keys_bits(canopy_schedule s, canopy_points pts, const float *lo, const float *hi,
                            int32_t bits, canopy_keyed *k);

#endif
