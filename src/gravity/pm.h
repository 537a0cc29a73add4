/* SPDX-License-Identifier: MIT */
/* The particle-mesh half of TreePM gravity in a periodic cube (docs/nbody.md, "Periodic
 * boxes: TreePM"): the potential 1/r is split as erf(r / 2 r_s) / r (long range, here)
 * plus erfc(r / 2 r_s) / r (short range, the tree walk of gravity_lists.c). The long
 * range is solved on a mesh of grid^3 cells: masses assigned with the triangular-shaped
 * cloud (TSC), one real FFT, the Green's function -4 pi / k^2 times the Gaussian
 * exp(-k^2 r_s^2) over the TSC window squared (assignment and interpolation both
 * deconvolved), the gradient by i k in Fourier space (three inverse FFTs, one more for
 * the potential), and TSC interpolation back to the bodies. The mean density drops
 * out with the k = 0 mode: the neutralising background of the Ewald sum. */
#ifndef CANOPY_GRAVITY_PM_H
#define CANOPY_GRAVITY_PM_H

#include "canopy.h"

/* Whether the library was built with FFTW (the mesh's FFTs), and the status saying so:
 * CANOPY_OK, or CANOPY_ERR_UNSUPPORTED with a message naming FFTW. */
int canopy_pm_available(void);
canopy_status canopy_pm_require(void);

/* Adds the long-range acceleration and potential (pot NULL: none), G = 1, of the n
 * bodies at (x[i], y[i], z[i]) (wrapped into [0, box)) with masses m[i], to
 * acc[3 id..3 id + 2] and pot[id], id = ids[i] (ids NULL: i), for the bodies with
 * active[id] set (active NULL: all). grid: cells per side, even, 8..1024; rs: the split
 * scale in box units. Deterministic: the masses are summed on the mesh in 64-bit fixed
 * point and each FFT is the same sequence of 2-D and 1-D transforms on any number of
 * threads, so the result does not depend on the threads. */
canopy_status canopy_pm_long_range(const float *x, const float *y, const float *z, const float *m,
                                   const int64_t *ids, int64_t n, float box, int32_t grid,
                                   double rs, const unsigned char *active, float *acc, float *pot);

#endif
