/* SPDX-License-Identifier: MIT */
/* canopy paircount: binned pair counts DD(r), auto or cross, optionally weighted
 * and periodic (canopy_paircount). */
#include "trav_opts.h"

#include <stdio.h>

enum {
    OPT_DATA1 = OPT_FIRST_LOCAL,
    OPT_DATA2,
    OPT_RMIN,
    OPT_RMAX,
    OPT_NBINS,
    OPT_LOG,
    OPT_BOX,
    OPT_WEIGHTED
};

static void usage(FILE *f) {
    fprintf(f, "usage: canopy paircount --data1 D1 [--data2 D2] --rmax R [--rmin R0]\n"
               "       [--nbins N] [--log] [--boxsize L] [--weighted] -o COUNTS.npy\n"
               "       [--tree kd|ball|vp|oct] [--variant V] [--schedule S] [--backend B]\n"
               "       [--threads T] [--leaf-size L] [--stats]\n\n"
               "Binned pair counts DD(r) as Corrfunc and TreeCorr define them: bin b counts\n"
               "the pairs (i of D1, j of D2) with edge[b] <= |x_i - y_j| < edge[b+1]\n"
               "(compared as float32 squared distances). Without --data2 it is the\n"
               "auto-correlation of D1: every ordered pair i != j counts, so each\n"
               "unordered pair counts twice (Corrfunc's DD with autocorr=1; TreeCorr's\n"
               "NN counts it once).\n\n"
               "Output: COUNTS (nbins), int64, or float64 sums of w_i * w_j with\n"
               "--weighted. Written atomically (.npy, or .csv by name).\n\n"
               "Options:\n"
               "  --data1 D1       points, (n, d) (required)\n"
               "  --data2 D2       second set for a cross count (default: auto on D1)\n"
               "  --rmin R0        smallest edge, >= 0 (default 0; > 0 with --log)\n"
               "  --rmax R         largest edge, > rmin (required)\n"
               "  --nbins N        number of bins (default 10)\n"
               "  --log            logarithmic bins (default linear)\n"
               "  --boxsize L      periodic cube [0, L)^d, minimum-image distances;\n"
               "                   needs --tree kd and rmax <= L/2\n"
               "  --weighted       the last column of D1 (and D2) is each point's weight\n"
               "  -o, --output F   output file (required)\n"
               "  --tree K         kd (default), ball, vp, oct (d = 3)\n" TRAV_HELP
               "  Variant auto on kd trees walks node pairs of two trees (a dual-tree\n"
               "  walk, CPU or GPU, all bins at once; without --leaf-size its leaves\n"
               "  hold up to 128 points on the CPU for unweighted counts into at most\n"
               "  15 bins, 64 for more unweighted bins, else 32);\n"
               "  an explicit variant or another\n"
               "  tree walks one tree per point of D1, in passes of 26 bins (on the GPU\n"
               "  each query's histogram is added with atomics).\n");
}

/* Splits off the weight column when weighted: positions keep the stride. */
static int split_weights(const char *path, canopy_points *p, float **w) {
    *w = NULL;
    if (p->d < 2) {
        fprintf(stderr,
                "canopy paircount: %s has %d column(s); --weighted needs coordinates and a "
                "weight column\n",
                path, (int)p->d);
        return CLI_ERROR;
    }
    if (canopy_alloc((void **)w, (size_t)(p->n + 1), sizeof **w))
        return cli_runtime_error("paircount");
    for (int64_t i = 0; i < p->n; i++) (*w)[i] = canopy_point(*p, i)[p->d - 1];
    p->d--;
    return CLI_OK;
}

int cmd_paircount(int argc, char **argv) {
    static const struct option opts[] = {{"data1", required_argument, NULL, OPT_DATA1},
                                         {"data2", required_argument, NULL, OPT_DATA2},
                                         {"rmin", required_argument, NULL, OPT_RMIN},
                                         {"rmax", required_argument, NULL, OPT_RMAX},
                                         {"nbins", required_argument, NULL, OPT_NBINS},
                                         {"log", no_argument, NULL, OPT_LOG},
                                         {"boxsize", required_argument, NULL, OPT_BOX},
                                         {"weighted", no_argument, NULL, OPT_WEIGHTED},
                                         {"output", required_argument, NULL, 'o'},
                                         TRAV_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *p1 = NULL, *p2 = NULL, *out = NULL;
    canopy_paircount_options po = canopy_paircount_options_default();
    po.rmax = -1.0;
    int weighted = 0;
    int64_t nbins = po.nbins;
    trav_opts to;
    trav_opts_init(&to);
    cli_parser p = cli_parser_start("paircount", "ho:", opts, usage, trav_opts_handle, &to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_DATA1:
            p1 = optarg;
            break;
        case OPT_DATA2:
            p2 = optarg;
            break;
        case OPT_RMIN:
            if (cli_parse_double("paircount", "--rmin", optarg, 0.0, 3.0e38, &po.rmin))
                return CLI_USAGE;
            break;
        case OPT_RMAX:
            if (cli_parse_double("paircount", "--rmax", optarg, 0.0, 3.0e38, &po.rmax))
                return CLI_USAGE;
            break;
        case OPT_NBINS:
            if (cli_parse_i64("paircount", "--nbins", optarg, 1, 1000000, &nbins)) return CLI_USAGE;
            break;
        case OPT_LOG:
            po.log_bins = 1;
            break;
        case OPT_BOX:
            if (cli_parse_double("paircount", "--boxsize", optarg, 0.0, 3.0e38, &po.boxsize))
                return CLI_USAGE;
            break;
        case OPT_WEIGHTED:
            weighted = 1;
            break;
        case 'o':
            out = optarg;
            break;
        }
    }
    po.nbins = (int32_t)nbins;
    if (optind < argc)
        return cli_usage_error("paircount", "unexpected argument '%s'", argv[optind]);
    if (!p1) return cli_usage_error("paircount", "--data1 is required");
    if (po.rmax < 0.0) return cli_usage_error("paircount", "--rmax is required");
    if (!out) return cli_usage_error("paircount", "-o is required");

    const char *ins[] = {p1, p2}, *outs[] = {out};
    if (cli_check_paths("paircount", ins, 2, outs, 1)) return CLI_ERROR;

    double t0 = canopy_now();
    canopy_array a1, a2;
    canopy_points d1, d2;
    if (cli_load_ref_query("paircount", p1, p2, &a1, &d1, &a2, &d2)) return CLI_ERROR;
    double t_load = canopy_now() - t0, t_write = 0.0;
    float *w1 = NULL, *w2 = NULL;
    double *counts = NULL;
    canopy_stats st;
    int rc = CLI_OK;
    if (weighted) rc = split_weights(p1, &d1, &w1);
    if (rc == CLI_OK && weighted && p2) rc = split_weights(p2, &d2, &w2);
    double total = 0.0;
    if (rc == CLI_OK && weighted) {
        if (canopy_alloc_large((void **)&counts, (size_t)po.nbins, sizeof *counts) ||
            canopy_paircount(d1, w1, d2, w2, &po, &to.run, counts, p.stats ? &st : NULL))
            rc = cli_runtime_error("paircount");
        for (int32_t b = 0; rc == CLI_OK && b < po.nbins; b++) total += counts[b];
        canopy_array a = cli_array_view(counts, CANOPY_F64, po.nbins, 0);
        if (rc == CLI_OK) rc = cli_write_arrays("paircount", 1, &out, &a, &t_write);
    } else if (rc == CLI_OK) {
        /* the counts go to the file as the merge makes them (no array of 8 MB at 10^6
           bins), summed as integers (a chain of 10^6 float adds took 1.3 ms) */
        cli_counts w;
        rc = cli_counts_open(&w, "paircount", out, po.nbins);
        if (rc == CLI_OK && canopy_paircount_blocks(d1, NULL, d2, NULL, &po, &to.run,
                                                    cli_counts_put, &w, p.stats ? &st : NULL)) {
            cli_counts_abort(&w);
            rc = cli_runtime_error("paircount");
        }
        if (rc == CLI_OK) rc = cli_counts_commit(&w);
        total = (double)w.total;
        t_write = w.seconds;
    }
    if (rc == CLI_OK) {
        cli_summary("paircount: %s, %lld x %lld points, %d %s bins in [%g, %g)%s, %s %.17g -> %s",
                    p2 ? "cross" : "auto", (long long)d1.n, (long long)(p2 ? d2.n : d1.n),
                    (int)po.nbins, po.log_bins ? "log" : "linear", po.rmin, po.rmax,
                    po.boxsize > 0.0 ? ", periodic" : "", weighted ? "weight" : "pairs", total,
                    out);
        if (p.stats) trav_print_stats("paircount", &st, t_load, t_write);
    }
    canopy_free(w1);
    canopy_free(w2);
    canopy_free(counts);
    canopy_array_release(&a1);
    canopy_array_release(&a2);
    return rc;
}
