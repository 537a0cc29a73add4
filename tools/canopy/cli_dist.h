/* SPDX-License-Identifier: MIT */
/* The CLI under mpirun (builds with CANOPY_MPI): which commands run over several
 * ranks, and the rank facts commands need. Without MPI, or outside mpirun, there is
 * one rank and every command runs as usual. */
#ifndef CANOPY_CLI_DIST_H
#define CANOPY_CLI_DIST_H

#include "canopy.h"

/* Ranks of the job (1 without MPI or outside mpirun) and this process's rank. */
int cli_dist_size(void);
int cli_dist_rank(void);
/* 1 when `cmd` may run in this job: always on one rank; on several, only the
 * commands with a distributed path (cli_dist.c lists them). Otherwise rank 0 says so on
 * stderr and it returns 0 on every rank (the caller exits 1). */
int cli_runs_distributed(const char *cmd);

/* knn / nn / radius on several ranks (docs/distributed.md): rank 0 reads the inputs
 * and scatters them, each rank indexes a Hilbert-curve piece of the reference points,
 * rank 0 gathers the rows and writes the outputs atomically. Every rank returns the
 * same exit code; a failure on any rank is reported on every rank. */
typedef struct cli_dist_job {
    const char *cmd;
    int radius; /* 0: knn (k, dist_out), 1: radius counts (r) */
    const char *ref_path, *query_path, *out, *dist_out;
    int64_t k;
    double r;
    const canopy_run_options *run;
    int stats;
} cli_dist_job;
int cli_dist_neighbours(const cli_dist_job *job);

#endif
