/* SPDX-License-Identifier: MIT */
/* Options of the subcommands that run the forest layouts and engines (predict,
 * bptree): one parser, so both spell and check them the same. */
#ifndef CANOPY_FOREST_OPTS_H
#define CANOPY_FOREST_OPTS_H

#include "cli.h"

#include <getopt.h>

enum {
    OPT_FOREST_LAYOUT = 1300,
    OPT_FOREST_ENGINE,
    OPT_FOREST_HIER,
    OPT_FOREST_SWITCH,
    OPT_FOREST_NOCOMPACT,
};

/* getopt_long entries; subcommands list them with their own. */
#define FOREST_LONG_OPTIONS                                                                        \
    {"layout", required_argument, NULL, OPT_FOREST_LAYOUT},                                        \
        {"engine", required_argument, NULL, OPT_FOREST_ENGINE},                                    \
        {"hier-depth", required_argument, NULL, OPT_FOREST_HIER},                                  \
        {"switch-level", required_argument, NULL, OPT_FOREST_SWITCH}, {                            \
        "no-compaction", no_argument, NULL, OPT_FOREST_NOCOMPACT                                   \
    }

/* Where the parsed values go (fields of canopy_predict_options or
 * canopy_bptree_options). */
typedef struct forest_opts {
    canopy_forest_layout *layout;
    canopy_forest_engine *engine;
    int32_t *hier_depth;
    int32_t *switch_level;
    int32_t *compaction;
} forest_opts;

/* A cli_shared_handler; ctx is a forest_opts *. */
int forest_opts_handle(const char *cmd, int opt, const char *arg, void *ctx);

#endif
