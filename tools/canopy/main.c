/* SPDX-License-Identifier: MIT */
/* canopy: command-line front end. One file per subcommand (cmd_*.c). */
#define _GNU_SOURCE /* readlink, dl_iterate_phdr */
#include "cli.h"
#include "cli_dist.h"

#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef CANOPY_HAVE_MPI
#include "dist/comm.h"
#elif defined(CANOPY_MPI_SIBLING)
#include "core/mpi_launcher.h"

#include <errno.h>
#endif

static const cli_command commands[] = {
    {"info", "version, compiled backends, CPU ISA, GPU, threads", cmd_info},
    {"gen", "generate a data set or a named workload (rand7, clust2, ...)", cmd_gen},
    {"knn", "k nearest neighbours of queries among reference points", cmd_knn},
    {"nn", "nearest neighbour (knn with k = 1)", cmd_nn},
    {"radius", "per-query count of reference points within a radius", cmd_radius},
    {"index", "build a search tree once and save it (knn/nn/radius --index)", cmd_index},
    {"gravity", "Barnes-Hut gravitational accelerations", cmd_gravity},
    {"nbody", "n-body time stepping: leapfrog, multipole tree forces, checkpoints", cmd_nbody},
    {"search", "binary search of sorted keys", cmd_search},
    {"paircount", "binned pair counts DD(r), auto or cross, weights, periodic box", cmd_paircount},
    {"kde", "kernel density estimates (log-density of queries), error-bounded", cmd_kde},
    {"graph", "graph algorithms: sssp, bfs, pagerank, spmv, color", cmd_graph},
    {"tree", "bottom-up tree aggregations: heights, descendants, mass", cmd_tree},
    {"predict", "decision-forest inference (XGBoost, LightGBM, canopy models)", cmd_predict},
    {"forest", "inspect a decision-forest model", cmd_forest},
    {"grep", "lines matching any of many extended regular expressions", cmd_grep},
    {"bptree", "key lookups in a B+-tree forest (hash + subtrees)", cmd_bptree},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void print_help(FILE *f) {
    fprintf(f, "usage: canopy COMMAND [OPTIONS]\n"
               "       canopy COMMAND --help\n\n"
               "Fast irregular workloads (tree searches, n-body, graphs, forests, regex)\n"
               "on multicore SIMD CPUs and NVIDIA GPUs.\n\n"
               "Commands:\n");
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nOptions:\n"
               "  -h, --help     this help\n"
               "  -V, --version  print the version\n\n"
               "Environment: CANOPY_THREADS (CPU threads), CANOPY_ISA (cap the SIMD ISA:\n"
               "scalar, sse4.2, avx2, avx512), OMP_WAIT_POLICY (default here: passive, idle\n"
               "threads sleep instead of spinning).\n"
               "Exit codes: 0 success, 1 runtime error, 2 usage error.\n");
}

static int run(int argc, char **argv) {
    if (argc < 2) {
        print_help(stderr);
        return CLI_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
        if (argc >= 3 && strcmp(name, "help") == 0) {
            for (int i = 0; i < N_COMMANDS; i++)
                if (!strcmp(argv[2], commands[i].name)) {
                    char *sub[] = {argv[2], "--help", NULL};
                    return commands[i].run(2, sub);
                }
        }
        print_help(stdout);
        return CLI_OK;
    }
    if (!strcmp(name, "-V") || !strcmp(name, "--version")) {
        printf("canopy %s\n", canopy_version());
        return CLI_OK;
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (!strcmp(name, commands[i].name)) {
            if (!cli_runs_distributed(name)) return CLI_ERROR;
            return commands[i].run(argc - 1, argv + 1);
        }
    const char *names[N_COMMANDS];
    for (int i = 0; i < N_COMMANDS; i++) names[i] = commands[i].name;
    const char *guess = cli_suggest(name, names, N_COMMANDS);
    if (guess)
        fprintf(stderr, "canopy: unknown command '%s'; did you mean '%s'?\n", name, guess);
    else
        fprintf(stderr, "canopy: unknown command '%s'\n", name);
    fprintf(stderr, "Try 'canopy --help'.\n");
    return CLI_USAGE;
}

#if !defined(CANOPY_HAVE_MPI) && defined(CANOPY_MPI_SIBLING)
/* This CLI links no libmpi (loading it costs every run ~1 ms); under an MPI launcher the
 * MPI build beside it, CANOPY_MPI_SIBLING, runs instead with the same arguments. */
static void run_mpi_sibling(char **argv) {
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) n = 0;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    if (dir + sizeof CANOPY_MPI_SIBLING > sizeof path) dir = 0;
    memcpy(path + dir, CANOPY_MPI_SIBLING, sizeof CANOPY_MPI_SIBLING);
    execv(path, argv);
    fprintf(stderr, "canopy: started by an MPI launcher, but its MPI build %s cannot run: %s\n",
            path, strerror(errno));
    exit(1);
}
#endif

/* GNU OpenMP reads OMP_WAIT_POLICY once, as it starts: idle threads then spin for a
 * while, taking time slices from the working ones on a busy machine. Unless the user
 * chose a policy, the CLI sets "passive" (threads sleep between parallel regions) in a
 * constructor that runs before libgomp's own where the CLI links libgomp's archive
 * (CMakeLists.txt); with a shared libgomp, started before any constructor here, it runs
 * itself again instead (one process start more); where the exec fails it runs on. */
static int passive_set;

__attribute__((constructor(101))) static void wait_passively(void) {
    passive_set = !getenv("OMP_WAIT_POLICY") && setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
}

/* A shared libgomp is in the loader's list: reading the list touches no file, where a
 * dlopen RTLD_NOLOAD probe maps ld.so.cache and opens the library on every run. */
static int gomp_is_shared(struct dl_phdr_info *info, size_t size, void *unused) {
    (void)size;
    (void)unused;
    return info->dlpi_name && strstr(info->dlpi_name, "libgomp.so") != NULL;
}

static void wait_passively_shared(char **argv) {
    if (passive_set && dl_iterate_phdr(gomp_is_shared, NULL)) execv("/proc/self/exe", argv);
}

int main(int argc, char **argv) {
    wait_passively_shared(argv);
#if !defined(CANOPY_HAVE_MPI) && defined(CANOPY_MPI_SIBLING)
    if (canopy_mpi_launched()) run_mpi_sibling(argv);
#endif
    canopy_outfile_remove_on_signal();
#ifdef CANOPY_HAVE_MPI
    /* Under mpirun (and only there) MPI starts before any command runs. */
    canopy_dist_start(&argc, &argv);
#endif
    int rc = cli_close_stdout(run(argc, argv));
#ifdef CANOPY_HAVE_MPI
    canopy_dist_stop();
#endif
    return rc;
}
