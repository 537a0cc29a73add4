/* SPDX-License-Identifier: MIT */
/* canopy index build / info: a tree built once and saved, for knn/nn/radius --index. */
#include "trav_opts.h"

#include <stdio.h>
#include <string.h>

enum { OPT_REF = OPT_FIRST_LOCAL, OPT_MASS };

static void usage(FILE *f) {
    fprintf(f, "usage: canopy index build --ref R.npy [--tree kd|ball|vp|oct|bst] [--leaf-size L]\n"
               "                          [--mass M.npy] -o R.idx\n"
               "       canopy index info R.idx\n\n"
               "build: builds the tree over the points of R (n x d) once and saves it (written\n"
               "atomically); knn, nn and radius then take --index R.idx instead of --ref and\n"
               "skip the build. oct needs d = 3 (--mass: per-point masses, default 1/n);\n"
               "bst needs d = 1 and sorted keys.\n"
               "info: prints what a saved index holds (kind, points, dimension, nodes, bytes).\n"
               "The file format (mmap'ed, checksummed) is in docs/formats.md \"Index files\".\n\n"
               "Options:\n"
               "  --ref R          points (.npy, .csv, .fvecs)\n"
               "  --tree K         kd (default), ball, vp, oct or bst\n"
               "  --leaf-size L    points per leaf bucket (default: 16; oct 8; kd with\n"
               "                   d <= 3, split along Morton-key bits: 32)\n"
               "  --mass M         oct: masses, one per point\n"
               "  -o, --output F   the index file\n"
               "  --threads T      CPU threads for the build\n"
               "  -h, --help       this help\n");
}

static int index_build(int argc, char **argv) {
    static const struct option opts[] = {{"ref", required_argument, NULL, OPT_REF},
                                         {"mass", required_argument, NULL, OPT_MASS},
                                         {"output", required_argument, NULL, 'o'},
                                         {"tree", required_argument, NULL, OPT_TREE},
                                         {"leaf-size", required_argument, NULL, OPT_LEAF_SIZE},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"help", no_argument, NULL, OPT_HELP},
                                         {NULL, 0, NULL, 0}};
    const char *ref_path = NULL, *mass_path = NULL, *out = NULL;
    trav_opts to;
    trav_opts_init(&to);
    cli_parser p = cli_parser_start("index build", "ho:", opts, usage, trav_opts_handle, &to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_REF:
            ref_path = optarg;
            break;
        case OPT_MASS:
            mass_path = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        }
    }
    const char *cmd = "index build";
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!ref_path) return cli_usage_error(cmd, "--ref is required");
    if (!out) return cli_usage_error(cmd, "-o is required");
    if (mass_path && to.run.tree != CANOPY_TREE_OCT)
        return cli_usage_error(cmd, "--mass needs --tree oct");
    const char *ins[] = {ref_path, mass_path}, *outs[] = {out};
    if (cli_check_paths(cmd, ins, 2, outs, 1)) return CLI_ERROR;

    canopy_array ra, ma = {0};
    canopy_points ref;
    if (cli_load_points(cmd, ref_path, &ra, &ref)) return CLI_ERROR;
    int rc = CLI_OK;
    canopy_index_options o = canopy_index_options_default(to.run.tree);
    o.leaf_size = to.run.leaf_size;
    if (mass_path) {
        if (canopy_array_load(mass_path, &ma) || canopy_array_convert(&ma, CANOPY_F32)) {
            rc = cli_runtime_error(cmd);
        } else if (canopy_array_count(&ma) != ref.n) {
            fprintf(stderr, "canopy %s: %s has %lld values for %lld points\n", cmd, mass_path,
                    (long long)canopy_array_count(&ma), (long long)ref.n);
            rc = CLI_ERROR;
        }
        o.weights = ma.data;
    }
    canopy_index *ix = NULL;
    if (rc == CLI_OK && (canopy_index_build(ref, &o, &ix) || canopy_index_save(ix, out)))
        rc = cli_runtime_error(cmd);
    if (rc == CLI_OK) {
        canopy_index_info info;
        canopy_index_get_info(ix, &info);
        cli_summary(
            "index build: %s tree over %lld points, d = %d, %d nodes, built in %.4f s -> %s",
            canopy_tree_kind_name(info.kind), (long long)info.n, (int)info.d, (int)info.n_nodes,
            info.build_seconds, out);
    }
    canopy_index_free(ix);
    canopy_array_release(&ma);
    canopy_array_release(&ra);
    return rc;
}

static int index_info(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, NULL, OPT_HELP}, {NULL, 0, NULL, 0}};
    cli_parser p = cli_parser_start("index info", "h", opts, usage, NULL, NULL);
    if (cli_next_option(&p, argc, argv) == CLI_STOP) return p.rc;
    if (optind + 1 != argc) return cli_usage_error("index info", "expected one index file");
    canopy_index *ix = NULL;
    const char *path = argv[optind];
    if (canopy_index_load(path, &ix)) return cli_runtime_error("index info");
    canopy_index_info info;
    canopy_index_get_info(ix, &info);
    printf("%s: canopy index, format version 1\n"
           "  tree:      %s, leaf size %d\n"
           "  points:    %lld, d = %d\n"
           "  nodes:     %d, depth %d\n"
           "  bytes:     %zu (tree arrays, used in place from the mapped file)\n",
           path, canopy_tree_kind_name(info.kind), (int)info.leaf_size, (long long)info.n,
           (int)info.d, (int)info.n_nodes, (int)info.depth, info.bytes);
    canopy_index_free(ix);
    return CLI_OK;
}

int cmd_index(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "build") == 0) return index_build(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "info") == 0) return index_info(argc - 1, argv + 1);
    if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        usage(stdout);
        return CLI_OK;
    }
    return cli_usage_error("index", "expected a subcommand: build or info");
}
