/* SPDX-License-Identifier: MIT */
/* Two points at exactly one position: gravity without softening refuses them. */
#ifndef CANOPY_CORE_COINCIDENT_H
#define CANOPY_CORE_COINCIDENT_H

#include "canopy.h"

/* Sets *a < *b to two rows of p with equal coordinates (0.0 equal to -0.0) and returns
 * 1, or returns 0 when all rows differ, or -1 when out of memory. The rows must be
 * finite. Expected O(n): one pass over a hash table, not a sort. */
int canopy_points_find_coincident(canopy_points p, int64_t *a, int64_t *b);

#endif
