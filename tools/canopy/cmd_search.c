/* SPDX-License-Identifier: MIT */
/* canopy search: binary search of sorted keys, as a top-down tree traversal. */
#include "trav_opts.h"

#include <stdio.h>

enum { OPT_KEYS = OPT_FIRST_LOCAL, OPT_QUERIES };

static void usage(FILE *f) {
    fprintf(f, "usage: canopy search --keys K.npy --queries Q.npy -o IDX.npy\n"
               "       [--variant V] [--schedule S] [--threads T] [--leaf-size L] [--stats]\n\n"
               "For each query x, the index of the first key >= x in the sorted (ascending)\n"
               "keys, or the number of keys when there is none (numpy.searchsorted with\n"
               "side='left'). Keys and queries are 1-D (or one column); keys must be sorted\n"
               "and finite, queries must not be NaN. Both are compared as float32: float64\n"
               "keys or queries are rounded to float32 first, so values that differ only\n"
               "beyond float32's 24 bits compare equal (and the index may differ from\n"
               "numpy.searchsorted on the float64 values).\n\n"
               "Output: IDX int64 (nq), written atomically.\n\n"
               "Options:\n"
               "  --keys K         sorted keys (required)\n"
               "  --queries Q      query values (required)\n"
               "  -o, --output F   output file (required)\n" TRAV_HELP);
}

int cmd_search(int argc, char **argv) {
    static const struct option opts[] = {{"keys", required_argument, NULL, OPT_KEYS},
                                         {"queries", required_argument, NULL, OPT_QUERIES},
                                         {"output", required_argument, NULL, 'o'},
                                         TRAV_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *keys_path = NULL, *queries_path = NULL, *out = NULL;
    trav_opts to;
    trav_opts_init(&to);
    to.tree_fixed = "search always uses a bst";
    cli_parser p = cli_parser_start("search", "ho:", opts, usage, trav_opts_handle, &to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_KEYS:
            keys_path = optarg;
            break;
        case OPT_QUERIES:
            queries_path = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        }
    }
    if (optind < argc) return cli_usage_error("search", "unexpected argument '%s'", argv[optind]);
    if (!keys_path || !queries_path)
        return cli_usage_error("search", "--keys and --queries are required");
    if (!out) return cli_usage_error("search", "-o is required");

    const char *ins[] = {keys_path, queries_path}, *outs[] = {out};
    if (cli_check_paths("search", ins, 2, outs, 1)) return CLI_ERROR;

    double t0 = canopy_now();
    canopy_array ka, qa;
    canopy_points k, q;
    if (cli_load_ref_query("search", keys_path, queries_path, &ka, &k, &qa, &q)) return CLI_ERROR;
    double t_load = canopy_now() - t0, t_write = 0.0;
    int rc = CLI_OK;
    int64_t *idx = NULL;
    canopy_stats st;
    if (k.d != 1 || q.d != 1) {
        fprintf(stderr, "canopy search: keys and queries must be 1-D (got %d and %d columns)\n",
                (int)k.d, (int)q.d);
        rc = CLI_ERROR;
    } else if (canopy_alloc((void **)&idx, (size_t)(q.n + 1), sizeof *idx) ||
               canopy_search(k.data, k.n, q.data, q.n, &to.run, idx, p.stats ? &st : NULL)) {
        rc = cli_runtime_error("search");
    }
    if (rc == CLI_OK) {
        canopy_array a = cli_array_view(idx, CANOPY_I64, q.n, 0);
        rc = cli_write_arrays("search", 1, &out, &a, &t_write);
    }
    if (rc == CLI_OK) {
        cli_summary("search: %lld queries over %lld keys -> %s", (long long)q.n, (long long)k.n,
                    out);
        if (p.stats) trav_print_stats("search", &st, t_load, t_write);
    }
    canopy_free(idx);
    canopy_array_release(&ka);
    canopy_array_release(&qa);
    return rc;
}
