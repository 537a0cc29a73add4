/* SPDX-License-Identifier: MIT */
/* Whether an MPI launcher started this process, from its environment alone (no libmpi):
 * the MPI layer starts MPI only then, and the plain CLI hands over to canopy-mpi. */
#ifndef CANOPY_CORE_MPI_LAUNCHER_H
#define CANOPY_CORE_MPI_LAUNCHER_H

#include <stdlib.h>

/* The job's rank count as the launcher announced it (Open MPI, MPICH/Hydra's PMI), or 0
 * where it did not say. */
static inline long canopy_mpi_launched_size(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return strtol(v, NULL, 10);
    }
    return 0;
}

/* 1 under mpirun / mpiexec / srun (Open MPI, MPICH/Hydra (PMI), PMIx launchers and Slurm
 * set one of these) with more than one rank or an unknown count. A job of one rank runs as
 * a plain process: MPI_Init and MPI_Finalize would cost it 0.1-0.2 s for nothing. */
static inline int canopy_mpi_launched(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return canopy_mpi_launched_size() != 1;
    return 0;
}

#endif
