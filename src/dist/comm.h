/* SPDX-License-Identifier: MIT */
/* Internal MPI layer (compiled only with CANOPY_MPI): starting MPI from programs,
 * ending the whole job on a failure, agreeing on errors, and collectives over
 * variable-size arrays with 64-bit counts checked against MPI's int counts. */
#ifndef CANOPY_DIST_COMM_H
#define CANOPY_DIST_COMM_H

#include "canopy/dist.h"
#include "core/mpi_launcher.h"

#include <mpi.h>

/* MPI_Init_thread with MPI_THREAD_FUNNELED (OpenMP threads inside a rank, MPI from
 * the main thread only) when canopy_mpi_launched() and MPI is not yet initialised;
 * installs canopy_dist_fatal_handler on MPI_COMM_WORLD. Under Open MPI with every
 * rank on one node it sets OMPI_MCA_pml=ob1 first, unless set. Returns 1 when MPI is
 * running after the call (initialised here or before), 0 when not launched. */
int canopy_dist_start(int *argc, char ***argv);
/* MPI_Finalize when canopy_dist_start initialised MPI. */
void canopy_dist_stop(void);

/* Rank and size of comm (0 and 1 when MPI is not running). */
int canopy_dist_rank(MPI_Comm comm);
int canopy_dist_size(MPI_Comm comm);

/* Installs, on comm, an error handler that prints the failing call's MPI error with
 * the rank and aborts the whole job (MPI_Abort): a failing rank never leaves the
 * others waiting in a collective. */
void canopy_dist_set_fatal_handler(MPI_Comm comm);
/* Prints "canopy [rank r/R]: message" on stderr and aborts the job with exit code 1. */
_Noreturn void canopy_dist_abort(MPI_Comm comm, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Collective error agreement: every rank passes its local status; all receive
 * CANOPY_OK when every rank succeeded, otherwise the failure of the lowest failing
 * rank, with that rank's message (prefixed "rank r: ") set as canopy_last_error on
 * every rank. */
canopy_status canopy_dist_agree(MPI_Comm comm, canopy_status local);

/* Counts and displacements (in elements) for the v-collectives, checked to fit int. */
canopy_status canopy_dist_displs(const int64_t *counts, int n, int *icounts, int *idispls,
                                 int64_t *total);

/* Gathers a variable number of elem_bytes-byte elements from every rank to root:
 * on root, *out (canopy_alloc'd, NULL when all ranks sent none) receives them in rank
 * order, counts (size entries, may be NULL) how many each rank sent, *n_out the total.
 * On other ranks *out is NULL and *n_out 0. */
canopy_status canopy_dist_gatherv(MPI_Comm comm, int root, const void *send, int64_t n,
                                  size_t elem_bytes, void **out, int64_t *counts, int64_t *n_out);
/* The same to every rank. */
canopy_status canopy_dist_allgatherv(MPI_Comm comm, const void *send, int64_t n, size_t elem_bytes,
                                     void **out, int64_t *counts, int64_t *n_out);
/* Root's n elements cut into size pieces of counts[r] elements (counts read on root
 * only): each rank receives its piece in *out (canopy_alloc'd), its length in *n_out. */
canopy_status canopy_dist_scatterv(MPI_Comm comm, int root, const void *send, const int64_t *counts,
                                   size_t elem_bytes, void **out, int64_t *n_out);
/* All-to-all of variable-size byte blocks: send_counts[r] bytes at send_displs[r]
 * for rank r; *recv (canopy_alloc'd, may be NULL when empty) receives recv_counts[r]
 * bytes from rank r at recv_displs[r]. Adds the bytes to stats (may be NULL). */
canopy_status canopy_dist_alltoallv_bytes(MPI_Comm comm, const void *send,
                                          const int64_t *send_counts, void **recv,
                                          int64_t *recv_counts, int64_t *recv_displs,
                                          canopy_dist_stats *stats);
/* The same started without waiting (MPI_Ialltoallv; the byte counts go round first,
 * blocking): send must stay untouched and *recv unread until canopy_dist_pending_wait.
 * Open MPI moves the data only inside MPI calls of the main thread, so work done
 * meanwhile calls canopy_dist_pending_test now and then. Time in these calls counts as
 * stats->comm_seconds. */
typedef struct canopy_dist_pending canopy_dist_pending;
canopy_status canopy_dist_ialltoallv_bytes(MPI_Comm comm, const void *send,
                                           const int64_t *send_counts, void **recv,
                                           int64_t *recv_counts, int64_t *recv_displs,
                                           canopy_dist_stats *stats, canopy_dist_pending **pending);
/* Lets MPI progress the exchange (NULL: nothing to do). */
void canopy_dist_pending_test(canopy_dist_pending *p);
/* Completes the exchange and frees p (NULL: nothing to do). */
void canopy_dist_pending_wait(canopy_dist_pending *p);

/* canopy_dist_decompose on a coarser curve: bits_per_dim bits per coordinate (0 or
 * more than canopy_curve_bits(d): the full curve). Points in one cell of the coarse
 * grid tie and are ordered by (rank, index); for a cut whose pieces need only be
 * compact (kNN's reference pieces) 10 bits do as well as 21 and cost half the keys and
 * sort passes. slack (0 <= slack < 0.5; 0: exact) lets each cut move by up to slack
 * W / R of work to the coarsest curve boundary in reach, so a piece's work is within
 * 2 slack W / R plus one point's of W / R, and its faces are those of curve blocks;
 * where every cut finds a boundary of the 2^16 top blocks, nothing is sorted. */
canopy_status canopy_dist_decompose_bits(MPI_Comm comm, canopy_points local, const double *work,
                                         canopy_curve curve, int32_t bits_per_dim, double slack,
                                         int32_t *dest);

/* A gravity walk's work per body before any is measured (collective): 1 + 0.06 per decade
 * of density above the mean over all ranks (at least 0.2), the density measured along
 * the Hilbert curve among the rank's own bodies; for canopy_dist_decompose, so that
 * dense regions get smaller pieces. Where all ranks hold random samples of the bodies, or
 * all hold regions, their densities compare; a mix is off by log10(ranks) decades at most. */
canopy_status canopy_dist_density_work(MPI_Comm comm, canopy_points local, double *work);

/* canopy_dist_decompose on the Hilbert curve with canopy_dist_density_work's weights
 * (written to work, local.n values, where there are two ranks or more): the same
 * pieces, one key sort instead of two. */
canopy_status canopy_dist_decompose_by_density(MPI_Comm comm, canopy_points local, double *work,
                                               int32_t *dest);

#endif
