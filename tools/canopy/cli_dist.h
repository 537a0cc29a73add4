/* SPDX-License-Identifier: MIT */
/* The CLI under mpirun (builds with CANOPY_MPI): which commands run over several
 * ranks, and the rank facts commands need. Without MPI, or outside mpirun, there is
 * one rank and every command runs as usual. */
#ifndef CANOPY_CLI_DIST_H
#define CANOPY_CLI_DIST_H

/* Ranks of the job (1 without MPI or outside mpirun) and this process's rank. */
int cli_dist_size(void);
int cli_dist_rank(void);
/* 1 when `cmd` may run in this job: always on one rank; on several, only the
 * commands with a distributed path (cli_dist.c lists them). Otherwise rank 0 says so on
 * stderr and it returns 0 on every rank (the caller exits 1). */
int cli_runs_distributed(const char *cmd);

#endif
