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

/* Collective: CLI_OK when every rank's s is CANOPY_OK; otherwise CLI_ERROR on every
 * rank, the lowest failing rank printing its message and the others saying which
 * rank failed. */
int cli_dist_agree(const char *cmd, canopy_status s);
/* Collective: the worst exit code of the ranks' rc on every rank; the ranks whose rc
 * was CLI_OK say which rank failed (its own message is above). */
int cli_dist_agree_rc(const char *cmd, int rc);
/* The rank blocks of n rows: rank r holds rows [first, first + count); the owner of a
 * row is the rank whose block holds it. */
void cli_dist_block(int64_t n, int rank, int size, int64_t *first, int64_t *count);
int cli_dist_block_owner(int64_t row, int64_t n, int size);

/* This rank's block of a points file (float32, n rows of d in the whole file).
 * Collective. A .npy file is read by every rank at its own rows (parallel = 1);
 * other formats are read and checked by rank 0, which scatters the blocks. */
typedef struct cli_dist_points {
    float *data; /* count rows of d */
    int64_t n, first, count;
    int32_t d;
    int parallel, scattered;
    canopy_array owner; /* the buffer of a parallel read */
} cli_dist_points;
int cli_dist_read_points(const char *cmd, const char *path, cli_dist_points *p);
void cli_dist_points_release(cli_dist_points *p);

/* Writes n outputs (NULL paths skipped) of total rows, this rank's block of rows
 * (rows[i]: its shape[0] rows from row `first` on) in each. Collective, all or
 * nothing. When every output is a .npy file, each rank writes its rows in place into
 * one temporary per output, which rank 0 pre-sized and renames once all ranks
 * succeeded (a shared file system); otherwise rank 0 gathers the rows and writes
 * them as one process does. *seconds (may be NULL): the time it took. */
int cli_dist_write(const char *cmd, int n, const char *const *paths, const canopy_array *rows,
                   int64_t first, int64_t total, double *seconds);

/* knn / nn / radius on several ranks (docs/distributed.md): each rank reads its
 * block of the inputs, indexes a Hilbert-curve piece of the reference points and
 * writes the rows of its block of queries (cli_dist_read_points, cli_dist_write). Every rank
 * returns the same exit code; a failure on any rank is reported on every rank. */
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
