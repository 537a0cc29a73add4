/* SPDX-License-Identifier: MIT */
/* canopy kde: log-density of each query under a kernel density estimate of the
 * data (canopy_kde). */
#include "trav_opts.h"

#include <stdio.h>

enum { OPT_DATA = OPT_FIRST_LOCAL, OPT_QUERIES, OPT_KERNEL, OPT_BANDWIDTH, OPT_ATOL, OPT_RTOL };

static void usage(FILE *f) {
    fprintf(f, "usage: canopy kde --data D [--queries Q] --bandwidth H [--kernel K]\n"
               "       [--atol A] [--rtol R] -o LOGDENS.npy [--variant V] [--backend B]\n"
               "       [--threads T] [--leaf-size L] [--stats]\n\n"
               "Kernel density estimate: the log-density of each point of Q (default: of D\n"
               "itself) under kernels of bandwidth H centred on the points of D, as\n"
               "scikit-learn's KernelDensity.score_samples: log((1/n) sum_j K_H(|q - x_j|)),\n"
               "each kernel normalised to integrate to 1; -inf where the density is 0.\n"
               "Every query's density p is within A + R * p of the exact one (exact when\n"
               "both are 0): a dual-tree walk over kd trees of Q and D accepts a pair of\n"
               "nodes whole when the kernel varies within the tolerance over their\n"
               "distances.\n\n"
               "Output: LOGDENS (nq), float64, written atomically (.npy, or .csv by name).\n\n"
               "Options:\n"
               "  --data D         points, (n, d) (required, n >= 1)\n"
               "  --queries Q      points, (nq, d) (default: D)\n"
               "  --bandwidth H    kernel bandwidth, > 0 (required)\n"
               "  --kernel K       gaussian (default), tophat, epanechnikov, exponential,\n"
               "                   linear, cosine\n"
               "  --atol A         absolute tolerance on each density, >= 0 (default 0)\n"
               "  --rtol R         relative tolerance on each density, >= 0 (default 0)\n"
               "  -o, --output F   output file (required)\n"
               "  --variant V      rec, dr, auto (default: dr): how the CPU walks node pairs\n"
               "                   (the GPU runs dr only)\n"
               "  --backend B      cpu, gpu, auto (default: the GPU from 50000 queries when\n"
               "                   the CUDA module and a GPU are usable, else the CPU); the\n"
               "                   same tolerance on both\n"
               "  --leaf-size L    points per leaf of both trees (default 32)\n"
               "  --threads T      CPU threads (default: CANOPY_THREADS or all cores)\n"
               "  --stats          per-phase times and node pairs walked, to stderr\n"
               "  -h, --help       this help\n");
}

int cmd_kde(int argc, char **argv) {
    static const struct option opts[] = {{"data", required_argument, NULL, OPT_DATA},
                                         {"queries", required_argument, NULL, OPT_QUERIES},
                                         {"kernel", required_argument, NULL, OPT_KERNEL},
                                         {"bandwidth", required_argument, NULL, OPT_BANDWIDTH},
                                         {"atol", required_argument, NULL, OPT_ATOL},
                                         {"rtol", required_argument, NULL, OPT_RTOL},
                                         {"output", required_argument, NULL, 'o'},
                                         {"variant", required_argument, NULL, OPT_VARIANT},
                                         {"backend", required_argument, NULL, OPT_BACKEND},
                                         {"leaf-size", required_argument, NULL, OPT_LEAF_SIZE},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"stats", no_argument, NULL, OPT_STATS},
                                         {"help", no_argument, NULL, OPT_HELP},
                                         {NULL, 0, NULL, 0}};
    const char *pd = NULL, *pq = NULL, *out = NULL;
    canopy_kde_options ko = canopy_kde_options_default();
    ko.bandwidth = -1.0;
    trav_opts to;
    trav_opts_init(&to);
    cli_parser p = cli_parser_start("kde", "ho:", opts, usage, trav_opts_handle, &to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_DATA:
            pd = optarg;
            break;
        case OPT_QUERIES:
            pq = optarg;
            break;
        case OPT_KERNEL:
            if (canopy_kde_kernel_parse(optarg, &ko.kernel))
                return cli_usage_error("kde",
                                       "--kernel: unknown kernel '%s' (gaussian, tophat, "
                                       "epanechnikov, exponential, linear, cosine)",
                                       optarg);
            break;
        case OPT_BANDWIDTH:
            if (cli_parse_double("kde", "--bandwidth", optarg, 1e-300, 3.0e38, &ko.bandwidth))
                return CLI_USAGE;
            break;
        case OPT_ATOL:
            if (cli_parse_double("kde", "--atol", optarg, 0.0, 3.0e38, &ko.atol)) return CLI_USAGE;
            break;
        case OPT_RTOL:
            if (cli_parse_double("kde", "--rtol", optarg, 0.0, 3.0e38, &ko.rtol)) return CLI_USAGE;
            break;
        case 'o':
            out = optarg;
            break;
        }
    }
    if (optind < argc) return cli_usage_error("kde", "unexpected argument '%s'", argv[optind]);
    if (!pd) return cli_usage_error("kde", "--data is required");
    if (ko.bandwidth < 0.0) return cli_usage_error("kde", "--bandwidth is required");
    if (!out) return cli_usage_error("kde", "-o is required");

    const char *ins[] = {pd, pq}, *outs[] = {out};
    if (cli_check_paths("kde", ins, 2, outs, 1)) return CLI_ERROR;
    double t0 = canopy_now();
    canopy_array ad, aq;
    canopy_points data, queries;
    if (cli_load_ref_query("kde", pd, pq, &ad, &data, &aq, &queries)) return CLI_ERROR;
    if (!pq) queries = data;
    double t_load = canopy_now() - t0, t_write = 0.0;
    double *dens = NULL;
    canopy_stats st;
    int rc = CLI_OK;
    if (canopy_alloc((void **)&dens, (size_t)queries.n + 1, sizeof *dens) ||
        canopy_kde(data, queries, &ko, &to.run, dens, p.stats ? &st : NULL))
        rc = cli_runtime_error("kde");
    if (rc == CLI_OK) {
        canopy_array a = cli_array_view(dens, CANOPY_F64, queries.n, 0);
        rc = cli_write_arrays("kde", 1, &out, &a, &t_write);
    }
    if (rc == CLI_OK) {
        cli_summary("kde: %s, bandwidth %g, atol %g, rtol %g, %lld data points, %lld queries -> "
                    "%s",
                    canopy_kde_kernel_name(ko.kernel), ko.bandwidth, ko.atol, ko.rtol,
                    (long long)data.n, (long long)queries.n, out);
        if (p.stats && queries.n > 0) trav_print_stats("kde", &st, t_load, t_write);
    }
    canopy_free(dens);
    canopy_array_release(&ad);
    canopy_array_release(&aq);
    return rc;
}
