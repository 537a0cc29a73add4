/* SPDX-License-Identifier: MIT */
/* The n-body stepper canopy_nbody (one process, gravity/nbody.c) and canopy_dist_nbody
 * (MPI ranks, dist/nbody.c) share, the interface the distributed layer steps with: the
 * checks of a state and the two halves of a leapfrog step. */
#ifndef CANOPY_GRAVITY_STEPPER_H
#define CANOPY_GRAVITY_STEPPER_H

#include "canopy.h"

/* dt, softening, and the n bodies' positions, velocities and masses (mass may be
 * NULL); n itself is the caller's to check. */
canopy_status canopy_nbody_check_state(const double *pos, const double *vel, const float *mass,
                                       int64_t n, const canopy_nbody_options *o);

/* v += a h, then x += v dt (the first kick and the drift). */
void canopy_nbody_kick_drift(double *pos, double *vel, const float *acc, int64_t n, double h,
                             double dt);
/* v += a h (the second kick). */
void canopy_nbody_kick(double *vel, const float *acc, int64_t n, double h);

#endif
