/* SPDX-License-Identifier: MIT */
/* Helpers for the MPI tests (run by ctest through mpirun -np 1, 2, 4): start MPI with
 * the fatal handler, one seed for all ranks (rank 0's, printed), the exit code agreed
 * over ranks, and each rank's block slice of a global array. */
#ifndef CANOPY_TEST_MPI_CHECK_H
#define CANOPY_TEST_MPI_CHECK_H

#include "check.h"
#include "dist/comm.h"

static inline void mpi_check_init(int *argc, char ***argv) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    canopy_dist_set_fatal_handler(MPI_COMM_WORLD);
}

/* Rank 0's check_seed() on every rank. */
static inline uint64_t mpi_check_seed(void) {
    uint64_t seed = canopy_dist_rank(MPI_COMM_WORLD) == 0 ? check_seed() : 0;
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return seed;
}

/* check_finish on every rank; the job fails when any rank failed. */
static inline int mpi_check_finish(void) {
    int rc = check_finish(), worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst;
}

/* Rows [*lo, *hi) of n: rank r of R holds the r-th of R nearly equal blocks. */
static inline void mpi_check_block(int64_t n, int64_t *lo, int64_t *hi) {
    int r = canopy_dist_rank(MPI_COMM_WORLD), R = canopy_dist_size(MPI_COMM_WORLD);
    *lo = n * r / R;
    *hi = n * (r + 1) / R;
}

#endif
