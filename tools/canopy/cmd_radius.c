/* SPDX-License-Identifier: MIT */
/* canopy radius: per-query count of reference points within a radius. */
#include "cli_dist.h"
#include "trav_opts.h"

#include <stdio.h>

enum { OPT_REF = OPT_FIRST_LOCAL, OPT_QUERY };

static void usage(FILE *f) {
    fprintf(f, "usage: canopy radius (--ref R.npy | --index R.idx) [--query Q.npy] -r RADIUS -o "
               "COUNTS.npy\n"
               "       [--tree kd|ball|vp] [--variant V] [--schedule S] [--backend B]\n"
               "       [--threads T] [--leaf-size L] [--stats]\n\n"
               "For each query, the number of reference points within Euclidean distance\n"
               "RADIUS (dist <= r, compared as squared distances in float32). Without\n"
               "--query, R queries itself and a point does not count itself.\n\n"
               "Output: COUNTS int64 (nq). Written atomically (.npy, or .csv by name).\n\n"
               "Under mpirun -np R (builds with MPI): the reference points are split among\n"
               "the ranks and the counts are identical to one process's; --ref only.\n"
               "Each rank reads its rows of .npy inputs and writes its rows of a .npy\n"
               "output (a shared file system); rank 0 reads or writes other formats\n"
               "(docs/distributed.md).\n\n"
               "Options:\n"
               "  --ref R          reference points (required)\n" TRAV_INDEX_HELP
               "  --query Q        query points (default: R itself)\n"
               "  -r, --radius X   radius, finite and >= 0 (required)\n"
               "  -o, --output F   output file (required)\n"
               "  --tree K         kd (default), ball or vp\n" TRAV_HELP);
}

int cmd_radius(int argc, char **argv) {
    static const struct option opts[] = {{"ref", required_argument, NULL, OPT_REF},
                                         {"query", required_argument, NULL, OPT_QUERY},
                                         {"radius", required_argument, NULL, 'r'},
                                         {"output", required_argument, NULL, 'o'},
                                         TRAV_INDEX_OPTION,
                                         TRAV_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *ref_path = NULL, *query_path = NULL, *out = NULL;
    double r = -1.0;
    trav_opts to;
    trav_opts_init(&to);
    cli_parser p = cli_parser_start("radius", "hr:o:", opts, usage, trav_opts_handle, &to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_REF:
            ref_path = optarg;
            break;
        case OPT_QUERY:
            query_path = optarg;
            break;
        case 'r':
            if (cli_parse_double("radius", "-r", optarg, 0.0, 3.0e38, &r)) return CLI_USAGE;
            break;
        case 'o':
            out = optarg;
            break;
        }
    }
    if (optind < argc) return cli_usage_error("radius", "unexpected argument '%s'", argv[optind]);
    if (!ref_path == !to.index_path)
        return cli_usage_error("radius", "exactly one of --ref and --index is required");
    if (r < 0.0) return cli_usage_error("radius", "-r is required");
    if (!out) return cli_usage_error("radius", "-o is required");
    if (cli_dist_size() > 1) {
        if (to.index_path)
            return cli_usage_error("radius",
                                   "--index does not run on several MPI ranks; use --ref");
        cli_dist_job job = {"radius", 1, ref_path, query_path, out, NULL, 0, r, &to.run, p.stats};
        return cli_dist_neighbours(&job);
    }

    const char *ins[] = {ref_path, query_path, to.index_path}, *outs[] = {out};
    if (cli_check_paths("radius", ins, 3, outs, 1)) return CLI_ERROR;

    double t0 = canopy_now();
    canopy_array ra = {0}, qa;
    canopy_points ref, query;
    canopy_index *ix = NULL;
    if (to.index_path) {
        if (cli_load_index("radius", to.index_path, &ix, &ref)) return CLI_ERROR;
        if (cli_load_ref_query("radius", NULL, query_path, &ra, &ref, &qa, &query)) {
            canopy_index_free(ix);
            return CLI_ERROR;
        }
    } else if (cli_load_ref_query("radius", ref_path, query_path, &ra, &ref, &qa, &query))
        return CLI_ERROR;
    double t_load = canopy_now() - t0, t_write = 0.0;
    int64_t nq = query_path ? query.n : ref.n;
    int64_t *counts = NULL;
    canopy_stats st;
    int rc = CLI_OK;
    if (canopy_alloc((void **)&counts, (size_t)(nq + 1), sizeof *counts) ||
        (ix ? canopy_index_radius_count(ix, query, (float)r, &to.run, counts, p.stats ? &st : NULL)
            : canopy_radius_count(ref, query, (float)r, &to.run, counts, p.stats ? &st : NULL)))
        rc = cli_runtime_error("radius");
    if (rc == CLI_OK) {
        canopy_array a = cli_array_view(counts, CANOPY_I64, nq, 0);
        rc = cli_write_arrays("radius", 1, &out, &a, &t_write);
    }
    if (rc == CLI_OK) {
        int64_t total = 0;
        for (int64_t i = 0; i < nq; i++) total += counts[i];
        cli_summary("radius: %lld queries, r = %g, mean %.2f neighbours -> %s", (long long)nq, r,
                    nq ? (double)total / (double)nq : 0.0, out);
        if (p.stats) trav_print_stats("radius", &st, t_load, t_write);
    }
    canopy_free(counts);
    canopy_array_release(&ra);
    canopy_array_release(&qa);
    canopy_index_free(ix);
    return rc;
}
