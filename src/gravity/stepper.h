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

/* Whether steps compute potentials along with the forces after an energy request at
 * step `now` (the previous one at `last`, -1 before any): only while requests come at
 * most 4 steps apart, since potentials cost an evaluation 2-15 % and a request without
 * them costs one evaluation of its own. */
static inline int canopy_nbody_potentials_along(int64_t last, int64_t now) {
    return last >= 0 && now - last <= 4;
}

#endif
