/* SPDX-License-Identifier: MIT */
#include "canopy/dist.h"
#include "cli.h"
#include "core/device.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *f) {
    fprintf(f, "usage: canopy info [--threads T]\n\n"
               "Prints the version, the backends available, whether the MPI layer is built\n"
               "in (distributed commands under mpirun), the CPU's SIMD ISA as detected (and\n"
               "capped by CANOPY_ISA), the number of CPU threads canopy will use (and how idle\n"
               "ones wait: OMP_WAIT_POLICY, passive unless set), the CUDA\n"
               "module (libcanopy_cuda, loaded at run time: where it was found, or why not;\n"
               "CANOPY_CUDA_MODULE names the file to use) and the GPU's name and memory when\n"
               "one is visible.\n");
}

int cmd_info(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, NULL, OPT_HELP},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {NULL, 0, NULL, 0}};
    cli_parser p = cli_parser_start("info", "h", opts, usage, NULL, NULL);
    if (cli_next_option(&p, argc, argv) == CLI_STOP) return p.rc;
    if (optind < argc) return cli_usage_error("info", "unexpected argument '%s'", argv[optind]);

    printf("canopy %s\n", canopy_version());
    printf("backends: cpu%s\n", canopy_have_cuda() ? " cuda" : "");
    printf("mpi:      %s\n", canopy_have_mpi() ? "yes (distributed commands under mpirun)"
                                               : "no (built without MPI)");
    printf("cpu isa:  %s\n", canopy_isa_name(canopy_cpu_isa()));
    const char *wait = getenv("OMP_WAIT_POLICY");
    printf("threads:  %d (OpenMP wait policy %s)\n", canopy_threads(), wait ? wait : "default");
    if (!canopy_have_cuda()) {
        printf("cuda:     not loaded (%s)\n", canopy_gpu_why_not());
        printf("gpu:      none (no CUDA module)\n");
        return CLI_OK;
    }
    printf("cuda:     %s\n", canopy_cuda_path());
    char name[256];
    size_t bytes = 0;
    if (canopy_gpu_info(name, sizeof name, &bytes) == CANOPY_OK)
        printf("gpu:      %s, %.1f GiB\n", name, (double)bytes / (1024.0 * 1024.0 * 1024.0));
    else
        printf("gpu:      none (%s)\n", canopy_last_error());
    return CLI_OK;
}
