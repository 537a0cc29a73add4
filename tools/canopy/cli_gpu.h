/* SPDX-License-Identifier: MIT */
/* CUDA's start-up on a thread: loading the CUDA module, the driver's initialisation and
 * the context cost 0.2-0.4 s on the H100 machines (bench/results/gpu-index.md), more than
 * a whole kNN run there, so a command that will use the GPU starts them on a thread (for
 * backend gpu before it reads its input, for auto once the input's size says the GPU)
 * and joins the thread before its first GPU call. */
#ifndef CANOPY_CLI_GPU_H
#define CANOPY_CLI_GPU_H

#include "canopy.h"

#include <pthread.h>

typedef struct cli_gpu_start {
    pthread_t thread;
    int started;   /* a thread runs */
    int context;   /* it also creates the context (backend gpu) */
    double began;  /* canopy_now() when it was started */
    double took;   /* the thread's own seconds (set once joined) */
    double waited; /* seconds the join waited for it */
} cli_gpu_start;

/* Starts the thread before the input is read for backend gpu (module, device count,
 * context); nothing for cpu or auto, nor where threads cannot start (the first GPU
 * call then pays as before). CANOPY_CLI_EARLY_CUDA=0 in the environment turns it off
 * (bench/cli_knn_gpu.sh measures the difference). */
void cli_gpu_start_begin(cli_gpu_start *g, canopy_backend backend);
/* Once the input is read: starts it for backend auto (module and device count, which
 * auto's choice reads) when `queries` is enough for auto to take the GPU, so a run that
 * stays on the CPU never loads CUDA. */
void cli_gpu_start_sized(cli_gpu_start *g, canopy_backend backend, int64_t queries);
/* Waits for the thread (no-op when none): the GPU calls after it find CUDA started. */
void cli_gpu_start_join(cli_gpu_start *g);
/* One --stats line (text) saying what ran on the thread and what it overlapped. */
void cli_gpu_start_print(const cli_gpu_start *g);

#endif
