/* SPDX-License-Identifier: MIT */
/* canopy gravity and canopy nbody under mpirun (docs/distributed.md): gravity's ranks
 * read and write their own rows; nbody's rank 0 reads the inputs and writes the
 * outputs, and these helpers move the data between rank 0 and the ranks. Every call
 * is collective; without MPI they are never reached (one rank) and fail if they are. */
#ifndef CANOPY_CLI_DIST_GRAVITY_H
#define CANOPY_CLI_DIST_GRAVITY_H

#include "canopy.h"
#include "canopy/dist.h"

/* Rank 0's rc on every rank (the others' are ignored): after rank 0 read the inputs. */
int cli_dist_share_rc(int rc);

/* canopy gravity over the ranks: each rank reads its block of rows of the bodies
 * (cli_dist_read_points), the forces come from canopy_dist_gravity, and each rank
 * writes its block of the accelerations (cli_dist_write); bad input, coincident
 * bodies without softening and non-finite forces fail on every rank with nothing
 * written. stats: each rank's phases on stderr. gather_acc: rank 0 receives every
 * acceleration (res->acc, (res->n, 3), canopy_free it) for the --stats error check. */
typedef struct cli_dist_gravity_job {
    const char *bodies, *out;
    const canopy_gravity_options *g;
    const canopy_run_options *run;
    int stats, gather_acc;
} cli_dist_gravity_job;
typedef struct cli_dist_gravity_result {
    int64_t n; /* bodies in the file */
    float *acc;
} cli_dist_gravity_result;
int cli_dist_gravity(const cli_dist_gravity_job *job, cli_dist_gravity_result *res);

/* The simulation on rank 0's n bodies (pos, vel, mass: rank 0's, mass may be NULL),
 * cut into equal slices for the ranks; *out on every rank. */
typedef struct canopy_dist_nbody canopy_dist_nbody;
canopy_status cli_dist_nbody_create(const double *pos, const double *vel, const float *mass,
                                    int64_t n, const canopy_nbody_options *opt,
                                    canopy_dist_nbody **out);

/* Prints on stderr (rank 0) each rank's traffic and times. */
void cli_dist_print_stats(const char *cmd, const canopy_dist_stats *st);

#endif
