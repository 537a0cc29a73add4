/* SPDX-License-Identifier: MIT */
#include "forest_opts.h"

int forest_opts_handle(const char *cmd, int opt, const char *arg, void *ctx) {
    const forest_opts o = *(const forest_opts *)ctx;
    int64_t v = 0;
    switch (opt) {
    case OPT_FOREST_LAYOUT:
        if (canopy_forest_layout_parse(arg, o.layout))
            return cli_usage_error(cmd, "--layout: %s", canopy_last_error()), -1;
        return 1;
    case OPT_FOREST_ENGINE:
        if (canopy_forest_engine_parse(arg, o.engine))
            return cli_usage_error(cmd, "--engine: %s", canopy_last_error()), -1;
        return 1;
    case OPT_FOREST_HIER:
        if (cli_parse_i64(cmd, "--hier-depth", arg, 3, 5, &v)) return -1;
        *o.hier_depth = (int32_t)v;
        return 1;
    case OPT_FOREST_SWITCH:
        if (cli_parse_i64(cmd, "--switch-level", arg, 1, 64, &v)) return -1;
        *o.switch_level = (int32_t)v;
        return 1;
    case OPT_FOREST_NOCOMPACT:
        *o.compaction = 0;
        return 1;
    default:
        return 0;
    }
}
