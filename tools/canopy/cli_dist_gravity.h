/* SPDX-License-Identifier: MIT */
/* canopy gravity and canopy nbody under mpirun (docs/distributed.md): rank 0 reads
 * the inputs and writes the outputs; these helpers move the data between rank 0 and
 * the ranks. Every call is collective; without MPI they are never reached (one rank)
 * and fail if they are. */
#ifndef CANOPY_CLI_DIST_GRAVITY_H
#define CANOPY_CLI_DIST_GRAVITY_H

#include "canopy.h"
#include "canopy/dist.h"

/* Rank 0's rc on every rank (the others' are ignored): after rank 0 read the inputs. */
int cli_dist_share_rc(int rc);

/* Accelerations of rank 0's bodies b (mass may be NULL) into acc on rank 0, computed
 * over all ranks (b, mass and acc are read and written on rank 0 only). */
canopy_status cli_dist_gravity_forces(canopy_points b, const float *mass,
                                      const canopy_gravity_options *g,
                                      const canopy_run_options *run, float *acc,
                                      canopy_dist_stats *stats);

/* The simulation on rank 0's n bodies (pos, vel, mass: rank 0's, mass may be NULL),
 * cut into equal slices for the ranks; *out on every rank. */
typedef struct canopy_dist_nbody canopy_dist_nbody;
canopy_status cli_dist_nbody_create(const double *pos, const double *vel, const float *mass,
                                    int64_t n, const canopy_nbody_options *opt,
                                    canopy_dist_nbody **out);

/* Prints on stderr (rank 0) each rank's traffic and times. */
void cli_dist_print_stats(const char *cmd, const canopy_dist_stats *st);

#endif
