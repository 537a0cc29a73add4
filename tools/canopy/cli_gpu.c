/* SPDX-License-Identifier: MIT */
#include "cli_gpu.h"

#include "cli.h"
#include "core/device.h"
#include "traverse/run.h"

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

static void start(cli_gpu_start *g, int context) {
    g->context = context;
    g->began = canopy_now();
    g->started = pthread_create(&g->thread, NULL, start_cuda, g) == 0;
}

static int early_off(void) {
    const char *early = getenv("CANOPY_CLI_EARLY_CUDA");
    return early && strcmp(early, "0") == 0;
}

void cli_gpu_start_begin(cli_gpu_start *g, canopy_backend backend) {
    memset(g, 0, sizeof *g);
    if (backend == CANOPY_BACKEND_GPU && !early_off()) start(g, 1);
}

void cli_gpu_start_sized(cli_gpu_start *g, canopy_backend backend, int64_t queries) {
    if (backend == CANOPY_BACKEND_AUTO && queries >= CANOPY_GPU_AUTO_MIN_QUERIES && !g->started &&
        !early_off())
        start(g, 0);
}

void cli_gpu_start_join(cli_gpu_start *g) {
    if (!g->started) return;
    double t0 = canopy_now();
    pthread_join(g->thread, NULL);
    g->waited = canopy_now() - t0;
    g->started = 0;
}

void cli_gpu_start_print(const cli_gpu_start *g) {
    if (g->took <= 0.0 || cli_stats_json()) return;
    fprintf(stderr,
            "  CUDA start-up %.4f s (%s) on a thread, overlapped with %sthe result "
            "buffers' first touch; the first GPU call waited %.4f s for it\n",
            g->took, g->context ? "module, device count, context" : "module, device count",
            g->context ? "the load and " : "", g->waited);
}
