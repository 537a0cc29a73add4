/* SPDX-License-Identifier: MIT */
/* Distributed canopy over MPI (docs/distributed.md): space-filling-curve decomposition
 * of points among ranks, and kNN / radius counts over reference points spread over
 * ranks, with results identical to one process.
 *
 * The functions that take an MPI_Comm are declared only when CANOPY_HAVE_MPI is
 * defined: the library was built with MPI (CMake option CANOPY_MPI; canopy_have_mpi()
 * says so at run time) and the caller compiles against the same MPI (the canopy CMake
 * targets define CANOPY_HAVE_MPI for their consumers when MPI is in). Everything else
 * here exists in every build. The library never initialises MPI: the caller calls
 * MPI_Init (MPI_THREAD_FUNNELED or more) first. All calls are collective over comm. */
#ifndef CANOPY_DIST_H
#define CANOPY_DIST_H

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The curves points are ordered along before they are cut into rank domains. */
typedef enum canopy_curve {
    CANOPY_CURVE_MORTON = 0, /* Z order */
    CANOPY_CURVE_HILBERT = 1 /* Hilbert order (contiguous pieces: smaller surfaces) */
} canopy_curve;

/* What a distributed call moved and where its time went (this rank's numbers). */
typedef struct canopy_dist_stats {
    int64_t bytes_sent;     /* payload bytes this rank sent to other ranks */
    int64_t bytes_received; /* payload bytes this rank received from other ranks */
    int64_t messages;       /* other ranks this rank sent a non-empty payload to */
    int64_t remote_queries; /* queries this rank sent to other ranks for answers */
    int64_t interactions;   /* gravity: accepted cells + body terms of this rank's bodies */
    double local_seconds;   /* building and querying the local index */
    double comm_seconds;    /* in MPI collectives (waiting included) */
    double total_seconds;
    /* Gravity's split of local_seconds (walks on the GPU overlap the build; their
     * seconds are then the kernels' own): */
    double build_seconds;       /* local tree, moments, LET exports and unpacking */
    double local_walk_seconds;  /* the walk of the local tree */
    double remote_walk_seconds; /* the walk of the pieces received */
    int32_t device;             /* the GPU this rank was bound to for the call (visible
                                   ordinal): gravity walks there; kNN / radius indexes
                                   query there with backend gpu (auto: as they choose);
                                   -1: none */
    int32_t nccl;               /* 1: the LET pieces went GPU to GPU by NCCL */
    double tree_seconds;        /* of build_seconds: the local octree (GPU-built: with its
                                   download) */
    double moments_seconds;     /* of build_seconds: its quadrupoles and boxes */
    int32_t opening;            /* gravity: the canopy_opening the walks ran (list: one walk
                                   of the local tree and the received pieces, its time in
                                   local_walk_seconds) */
    int32_t tree;               /* gravity: the canopy_gravity_tree they walked */
    double cut_seconds;         /* gravity and n-body: cutting the curve into domains (keys,
                                   sort, weights and the cut's collectives), outside the
                                   other phases */
} canopy_dist_stats;

#ifdef CANOPY_HAVE_MPI
#include <mpi.h>

/* Cuts the points spread over comm's ranks into comm-size contiguous pieces of the
 * curve (keys over the global bounding box, ties broken by rank then local index) of
 * nearly equal total work, and gives each local point its destination rank in dest.
 * work (local.n values >= 0, finite) is the cost of each point, e.g. measured in the
 * previous step; NULL weighs every point 1 (a piece then holds n / ranks points,
 * within one). Keys use the first min(d, 63) coordinates. */
canopy_status canopy_dist_decompose(MPI_Comm comm, canopy_points local, const double *work,
                                    canopy_curve curve, int32_t *dest);

/* Moves rows to their destination ranks (an all-to-all): n rows of row_bytes bytes at
 * rows, row i to rank dest[i]. *out (canopy_alloc'd, free with canopy_free; NULL
 * when nothing arrives) receives the rows sent to this rank ordered by source rank,
 * then by their order on the source; *n_out their count. Call it once per array
 * (points, ids, masses) with the same dest: every array arrives in the same order. */
canopy_status canopy_dist_exchange(MPI_Comm comm, const void *rows, int64_t n, size_t row_bytes,
                                   const int32_t *dest, void **out, int64_t *n_out,
                                   canopy_dist_stats *stats);

/* The k nearest reference points of each local query among the reference points
 * of all ranks: the rows canopy_knn gives over the concatenated reference set
 * (ascending distance, ties by smaller global index, tail -1 / +inf when k exceeds the
 * candidates). ref is this rank's slice (any partition; an SFC one keeps traffic
 * small), ref_ids its global indices (>= 0, distinct over all ranks), or NULL for the
 * slices concatenated in rank order. query is this rank's queries (any number,
 * any place); idx and dist2 (query.n, k) receive their rows in the caller's order
 * (dist2 may be NULL). query.n == 0 && query.data == NULL is the self form: each
 * rank's ref slice queries the whole set, each point excluded from its own row
 * (idx and dist2 then have ref.n rows). opt's tree (kd, ball, vp), leaf size,
 * variant, schedule and backend apply to every rank's local index; results do not
 * depend on them nor on the number of ranks. */
canopy_status canopy_dist_knn(MPI_Comm comm, canopy_points ref, const int64_t *ref_ids,
                              canopy_points query, int32_t k, const canopy_run_options *opt,
                              int64_t *idx, float *dist2, canopy_dist_stats *stats);

/* Per local query, the number of reference points of all ranks within distance r
 * (dist <= r, compared as canopy_radius_count does): its counts over the
 * concatenated set. The self form counts each rank's slice against the whole set,
 * a point not counting itself. */
canopy_status canopy_dist_radius_count(MPI_Comm comm, canopy_points ref, canopy_points query,
                                       float r, const canopy_run_options *opt, int64_t *counts,
                                       canopy_dist_stats *stats);

/* Gravity over bodies spread over ranks (docs/distributed.md, "Gravity and n-body"):
 * accelerations (and potentials, pot may be NULL) of this rank's bodies (any
 * partition; global index = the slices concatenated in rank order) from all ranks'
 * bodies, in the caller's order. mass NULL gives every body 1 / (total count). The
 * bodies move to Hilbert-curve domains, each rank walks its local octree while the
 * locally essential trees (cells chosen with the opening radius about the centre of
 * mass, Liu §5.4) are exchanged, then walks the pieces it received. g as for
 * canopy_gravity_multipole (list or body opening; bucket opening on GPU ranks only);
 * opt's leaf size and backend apply: gpu walks on one GPU per rank (local rank % visible
 * devices), auto does so from 200,000 bodies when every rank has a GPU. On GPU ranks
 * body opening gives the CPU's forces; bucket opening takes each rank's own forces from
 * the single-GPU engine (tree, moments and walk on the device) and walks the pieces per
 * body, and on one rank keeps canopy_dist_nbody's state on the device. */
canopy_status canopy_dist_gravity(MPI_Comm comm, canopy_points bodies, const float *mass,
                                  const canopy_gravity_options *g, const canopy_run_options *opt,
                                  float *acc, float *pot, canopy_dist_stats *stats);

/* N-body leapfrog over ranks (canopy_nbody's integrator): each rank passes its slice
 * of n bodies; after every drift the bodies are cut again along the Hilbert curve by
 * the interactions each needed in the previous step. All calls are collective. */
typedef struct canopy_dist_nbody canopy_dist_nbody; /* opaque */
canopy_status canopy_dist_nbody_create(MPI_Comm comm, const double *pos, const double *vel,
                                       const float *mass, int64_t n,
                                       const canopy_nbody_options *opt, canopy_dist_nbody **out);
canopy_status canopy_dist_nbody_step(canopy_dist_nbody *s, int64_t steps);
/* Energies and momenta summed over ranks; the potential by float64 direct summation
 * when the total count is <= direct_max, else from tree-walk potentials at the current
 * positions (computed along the steps or by one evaluation of their own, as
 * canopy_nbody_energy_get; the GPU rank computes them every step). */
canopy_status canopy_dist_nbody_energy(canopy_dist_nbody *s, int64_t direct_max,
                                       canopy_nbody_energy *e);
/* Positions and velocities ((total, 3), global order) on root; pos or vel may be NULL. */
canopy_status canopy_dist_nbody_gather(const canopy_dist_nbody *s, int root, double *pos,
                                       double *vel);
int64_t canopy_dist_nbody_n(const canopy_dist_nbody *s);       /* bodies on all ranks */
int64_t canopy_dist_nbody_n_local(const canopy_dist_nbody *s); /* in this rank's domain now */
int64_t canopy_dist_nbody_steps_done(const canopy_dist_nbody *s);
/* The gravity options the ranks run with: theta and order resolved from an accuracy
 * target by the table of the opening and tree (accuracy then 0). */
canopy_gravity_options canopy_dist_nbody_gravity(const canopy_dist_nbody *s);
/* This rank's traffic and times, summed over the calls so far. */
canopy_dist_stats canopy_dist_nbody_stats(const canopy_dist_nbody *s);
void canopy_dist_nbody_free(canopy_dist_nbody *s);
#endif

#ifdef __cplusplus
}
#endif
#endif
