/* SPDX-License-Identifier: MIT */
/* Whether an MPI launcher started this process, from its environment alone (no libmpi):
 * the MPI layer starts MPI only then, and the plain CLI hands over to canopy-mpi. */
#ifndef CANOPY_CORE_MPI_LAUNCHER_H
#define CANOPY_CORE_MPI_LAUNCHER_H

#include <stdlib.h>

/* 1 under mpirun / mpiexec / srun: Open MPI, MPICH/Hydra (PMI), PMIx launchers and
 * Slurm set one of these. */
static inline int canopy_mpi_launched(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "MPI_LOCALNRANKS"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) return 1;
    return 0;
}

#endif
