/* SPDX-License-Identifier: MIT */
/* CUDA's start-up on a thread: loading the CUDA module, the driver's initialisation and
 * the context cost 0.2-0.4 s on the H100 machines (bench/results/gpu-index.md), more than
 * a whole kNN run there, so a command that will use the GPU starts them before it reads
 * its input and joins the thread before its first GPU call. */
#ifndef CANOPY_CLI_GPU_H
#define CANOPY_CLI_GPU_H

#include "canopy.h"

#include <pthread.h>

typedef struct cli_gpu_start {
    pthread_t thread;
    int started;   /* a thread runs (backend auto or gpu) */
    int context;   /* it also creates the context (backend gpu) */
    double began;  /* canopy_now() when it was started */
    double took;   /* the thread's own seconds (set once joined) */
    double waited; /* seconds the join waited for it */
} cli_gpu_start;

/* Starts the thread for backend auto (module and device count, which auto's choice
 * reads anyway) or gpu (the context too); nothing for cpu, nor where threads cannot
 * start (the first GPU call then pays as before). CANOPY_CLI_EARLY_CUDA=0 in the
 * environment turns it off (bench/cli_knn_gpu.sh measures the difference). */
void cli_gpu_start_begin(cli_gpu_start *g, canopy_backend backend);
/* Waits for the thread (no-op when none): the GPU calls after it find CUDA started. */
void cli_gpu_start_join(cli_gpu_start *g);
/* One --stats line (text) saying what ran on the thread and what it overlapped. */
void cli_gpu_start_print(const cli_gpu_start *g, double load_seconds);

#endif
