/* SPDX-License-Identifier: MIT */
/* How far computed accelerations are from a reference: shared by `canopy gravity
 * --stats`, the n-body benches and tests. */
#ifndef CANOPY_NBODY_FORCE_ERROR_H
#define CANOPY_NBODY_FORCE_ERROR_H

#include <stdint.h>

/* The relative errors |acc - ref| / |ref| of acc (n, 3) at the bodies sample[0..ns)
 * against ref (ns, 3), into rel[0..ns) sorted ascending (0 where ref is 0); returns the
 * global rms sqrt(sum |acc - ref|^2 / sum |ref|^2) (0 when ref is all 0). */
double canopy_nbody_relative_errors(const float *acc, const double *ref, const int64_t *sample,
                                    int64_t ns, double *rel);

#endif
