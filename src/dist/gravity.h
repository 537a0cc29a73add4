/* SPDX-License-Identifier: MIT */
/* Internal: the force evaluation of canopy_dist_gravity and canopy_dist_nbody on
 * bodies already placed in this rank's curve domain. */
#ifndef CANOPY_DIST_GRAVITY_H
#define CANOPY_DIST_GRAVITY_H

#include "dist/comm.h"

/* Checks the gravity options shared by the distributed calls and resolves
 * g->accuracy into theta and order by the opening's calibration table (the same on
 * every rank: options are global). List opening (orders 0, 2-4, binary or oct tree)
 * and body opening (orders 0 and 2, octree) are implemented. */
canopy_status dist_gravity_resolve(canopy_gravity_options *g, const canopy_run_options *o);

/* Whether the walks run on the ranks' GPUs (one per rank, dist/gpu_bind.h) for this
 * backend and n_all bodies in all: gpu always, auto from GPU_MP_AUTO_MIN bodies when
 * every rank has a GPU; never with list opening (the GPU ranks walk by body opening
 * only: backend gpu with list opening is refused). Collective; the status is agreed. */
canopy_status dist_gravity_backend(MPI_Comm comm, canopy_backend backend,
                                   const canopy_gravity_options *g, int64_t n_all, int *use_gpu);

/* Accelerations and potentials (pot may be NULL) of this rank's n bodies x (masses,
 * global indices gid) from all ranks' bodies: the local tree walked while the
 * locally essential trees are exchanged (one non-blocking all-to-all), then the
 * pieces received; use_gpu: both walks on this rank's GPU (the local one launched
 * before the exports), the same sums as on the CPU. work (may be NULL) receives each
 * body's interaction count. Collective; the status is agreed over comm. */
canopy_status dist_domain_forces(MPI_Comm comm, canopy_points x, const float *mass,
                                 const int64_t *gid, const canopy_gravity_options *g,
                                 int32_t leaf_size, int use_gpu, float *acc, float *pot,
                                 double *work, canopy_dist_stats *stats);

/* dist_domain_forces with list opening (g->opening CANOPY_OPENING_LIST, CPU ranks):
 * the single-process list engine, the pieces of the other ranks' trees imported into
 * this rank's interaction lists (dist/gravity_list.c). */
canopy_status dist_list_forces(MPI_Comm comm, canopy_points x, const float *mass,
                               const canopy_gravity_options *g, int32_t leaf_size, float *acc,
                               float *pot, double *work, canopy_dist_stats *stats);

/* Adds to st the pieces' bytes this rank sent and received (sent[r], received[r] for
 * rank r) and the ranks it sent a non-empty piece to. */
void dist_count_traffic(canopy_dist_stats *st, const int64_t *sent, const int64_t *received,
                        int size, int rank);

/* This rank's first global index (the counts of the lower ranks) and the total. */
void dist_offsets(MPI_Comm comm, int64_t n, int64_t *first, int64_t *total);

#endif
