/* SPDX-License-Identifier: MIT */
/* Options shared by the traversal subcommands (knn, nn, radius, gravity, search):
 * one parser and one --stats printer, so they spell and behave the same. */
#ifndef CANOPY_TRAV_OPTS_H
#define CANOPY_TRAV_OPTS_H

#include "cli.h"

#include <getopt.h>

enum {
    OPT_TREE = 1200,
    OPT_VARIANT,
    OPT_SCHEDULE,
    OPT_BACKEND,
    OPT_LEAF_SIZE,
    OPT_PROFILE_DEPTH,
    OPT_INDEX, /* knn, nn, radius: a saved index instead of --ref */
};

/* getopt_long entries for the shared options; subcommands append them. */
#define TRAV_LONG_OPTIONS                                                                          \
    {"tree", required_argument, NULL, OPT_TREE},                                                   \
        {"variant", required_argument, NULL, OPT_VARIANT},                                         \
        {"schedule", required_argument, NULL, OPT_SCHEDULE},                                       \
        {"backend", required_argument, NULL, OPT_BACKEND},                                         \
        {"leaf-size", required_argument, NULL, OPT_LEAF_SIZE},                                     \
        {"profile-depth", required_argument, NULL, OPT_PROFILE_DEPTH},                             \
        {"threads", required_argument, NULL, OPT_THREADS},                                         \
        {"stats", no_argument, NULL, OPT_STATS}, {                                                 \
        "help", no_argument, NULL, OPT_HELP                                                        \
    }

#define TRAV_HELP                                                                                  \
    "  --variant V      rec, dr, sr, gdr (CPU and GPU); simd_l (CPU); dr_l, sr_l, fsm_l\n"         \
    "                   (GPU lockstep); auto (default): chosen from a sample of the\n"             \
    "                   queries (docs/variants.md). sr and sr_l need an unguided\n"                \
    "                   traversal (not knn/nn)\n"                                                  \
    "  --schedule S     query order: none, tree, morton, hilbert, hybrid (profile each\n"          \
    "                   query in the top tree, sort by what it reached), auto (default:\n"         \
    "                   from the sample); results never depend on it\n"                            \
    "  --profile-depth D  hybrid: levels of the profiled top tree (default 0: the deepest\n"       \
    "                   cut with at most 256 top-tree leaves; at most 512 allowed)\n"              \
    "  --backend B      cpu, gpu, auto (default auto: the GPU when this build has CUDA,\n"         \
    "                   a device is visible and there are >= 20000 queries)\n"                     \
    "  --leaf-size L    points per leaf bucket (default: 16; oct 8; 8 for a kd tree built\n"       \
    "                   on the GPU)\n"                                                             \
    "  --threads T      CPU threads (default: CANOPY_THREADS or all cores)\n"                      \
    "  --stats          print per-phase times (build, schedule, transfer, traverse), nodes\n"      \
    "                   visited per query and per warp/packet, work expansion, and the\n"          \
    "                   choices auto made with the sample numbers behind them, to stderr\n"        \
    "  -h, --help       this help\n"

typedef struct trav_opts {
    canopy_run_options run;
    /* For a subcommand whose tree is fixed: the usage error --tree gets, else NULL. */
    const char *tree_fixed;
    const char *index_path; /* --index FILE, or NULL */
} trav_opts;

void trav_opts_init(trav_opts *o);
/* gravity and nbody: --opening body|bucket|list and --tree oct|binary (their --tree
 * entry precedes TRAV_LONG_OPTIONS, whose --tree names the generic tree kinds).
 * Return 0, or a usage error naming the bad value. */
enum { OPT_GRAVITY_TREE = 1250 };
int grav_parse_opening(const char *cmd, const char *arg, canopy_opening *o);
int grav_parse_tree(const char *cmd, const char *arg, canopy_gravity_tree *t);
/* --periodic auto|ewald|treepm: 0, or a usage error naming the bad value. */
int grav_parse_periodic(const char *cmd, const char *arg, canopy_periodic_method *m);
const char *grav_periodic_name(canopy_periodic_method m);
/* The help of gravity's and nbody's --periodic and --pm-grid, indented by pad. */
#define GRAV_PERIODIC_HELP(pad)                                                                    \
    "  --periodic M" pad "with --box, how the long range is summed: ewald\n"                       \
    "  " pad "            (default, also auto: nearest images plus Ewald\n"                        \
    "  " pad "            corrections) or treepm (FFTs on a mesh, the tree walk\n"                 \
    "  " pad "            within ~8 mesh cells; orders 0 and 2; builds with FFTW;\n"               \
    "  " pad "            its error does not grow with n, its cost is 1.4x\n"                      \
    "  " pad "            Ewald's on uniform boxes, more on clustered ones);\n"                    \
    "  " pad "            --stats names it\n"                                                      \
    "  --pm-grid N " pad "TreePM mesh cells per side, even, 18..1024 (default:\n"                  \
    "  " pad "            about 2 n^(1/3), at most 512)\n"
const char *grav_opening_name(canopy_opening o);
const char *grav_tree_name(canopy_gravity_tree t);
/* A cli_shared_handler; ctx is a trav_opts *. */
int trav_opts_handle(const char *cmd, int opt, const char *arg, void *ctx);
void trav_print_stats(const char *cmd, const canopy_stats *st, double load_seconds,
                      double write_seconds);

/* --index FILE: the options entry and help line of the subcommands that take it. */
#define TRAV_INDEX_OPTION                                                                          \
    { "index", required_argument, NULL, OPT_INDEX }
#define TRAV_INDEX_HELP                                                                            \
    "  --index F        a saved index (canopy index build) instead of --ref: no tree\n"            \
    "                   build; --tree and --leaf-size come from the file\n"

/* Loads the saved index of --index (mmap); prints the error itself. */
int cli_load_index(const char *cmd, const char *path, canopy_index **ix, canopy_points *ref);

/* Loads a points file (npy, csv, fvecs) as float32 2-D; prints the error itself. */
int cli_load_points(const char *cmd, const char *path, canopy_array *a, canopy_points *p);
/* Loads the reference points (ref_path NULL: none, *ra and *ref left as they are) and, when
 * query_path is not NULL, the query points (else *qa and *query stay empty); prints the error and
 * releases what it loaded on failure. */
int cli_load_ref_query(const char *cmd, const char *ref_path, const char *query_path,
                       canopy_array *ra, canopy_points *ref, canopy_array *qa,
                       canopy_points *query);

#endif
