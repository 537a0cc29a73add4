/* SPDX-License-Identifier: MIT */
#include "cli_gpu.h"

#include "cli.h"
#include "core/device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *start_cuda(void *arg) {
    cli_gpu_start *g = arg;
    /* failures are left for the first GPU call to report (errors are per thread) */
    if (canopy_gpu_usable() && g->context) canopy_gpu_warm_up();
    g->took = canopy_now() - g->began;
    return NULL;
}

void cli_gpu_start_begin(cli_gpu_start *g, canopy_backend backend) {
    memset(g, 0, sizeof *g);
    const char *early = getenv("CANOPY_CLI_EARLY_CUDA");
    if (backend == CANOPY_BACKEND_CPU || (early && strcmp(early, "0") == 0)) return;
    g->context = backend == CANOPY_BACKEND_GPU;
    g->began = canopy_now();
    g->started = pthread_create(&g->thread, NULL, start_cuda, g) == 0;
}

void cli_gpu_start_join(cli_gpu_start *g) {
    if (!g->started) return;
    double t0 = canopy_now();
    pthread_join(g->thread, NULL);
    g->waited = canopy_now() - t0;
    g->started = 0;
}

void cli_gpu_start_print(const cli_gpu_start *g, double load_seconds) {
    if (g->took <= 0.0 || cli_stats_json()) return;
    fprintf(stderr,
            "  CUDA start-up %.4f s (%s) on a thread from before loading, overlapped with "
            "load %.4f s and the result buffers' first touch; the first GPU call waited %.4f s "
            "for it\n",
            g->took, g->context ? "module, device count, context" : "module, device count",
            load_seconds, g->waited);
}
