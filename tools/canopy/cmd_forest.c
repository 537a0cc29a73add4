/* SPDX-License-Identifier: MIT */
/* canopy forest info: what a model holds and what each layout would cost. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f, "usage: canopy forest info --model M [--format F] [--data X]\n"
               "       canopy forest compile --model M -o M.cpf [options] (see its --help)\n\n"
               "Prints the model's source, objective, trees, outputs, nodes, leaves, the\n"
               "histogram of tree depths, the bytes of every layout, and the layout the cache\n"
               "model would choose for the vm engines, with the machine's cache latencies it\n"
               "uses (measured once, kept in $XDG_CACHE_HOME/canopy; CANOPY_CALIBRATE=off\n"
               "uses built-in ones, =redo measures again). With --data, also the bias beta\n"
               "(share of decisions taking the more-taken child, on a 5 %% sample of the rows).\n\n"
               "Options:\n"
               "  --model M    XGBoost JSON, LightGBM text or canopy JSON model\n"
               "  --format F   auto (default), xgboost, lightgbm, canopy\n"
               "  --data X     .npy or .csv rows (optional)\n"
               "  -h, --help   this help\n");
}

enum { OPT_MODEL = OPT_FIRST_LOCAL, OPT_FORMAT, OPT_DATA };

int cmd_forest(int argc, char **argv) {
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return CLI_OK;
    }
    if (argc >= 2 && strcmp(argv[1], "compile") == 0) return cmd_forest_compile(argc - 1, argv + 1);
    if (argc < 2 || strcmp(argv[1], "info") != 0)
        return cli_usage_error("forest", "expected the subcommand 'info' or 'compile'");
    static const struct option opts[] = {{"help", no_argument, NULL, OPT_HELP},
                                         {"model", required_argument, NULL, OPT_MODEL},
                                         {"format", required_argument, NULL, OPT_FORMAT},
                                         {"data", required_argument, NULL, OPT_DATA},
                                         {NULL, 0, NULL, 0}};
    const char *model = NULL, *data = NULL;
    canopy_forest_format fmt = CANOPY_FOREST_FORMAT_AUTO;
    int c;
    argc--;
    argv++;
    cli_parser p = cli_parser_start("forest", "h", opts, usage, NULL, NULL);
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_MODEL:
            model = optarg;
            break;
        case OPT_DATA:
            data = optarg;
            break;
        case OPT_FORMAT:
            if (canopy_forest_format_parse(optarg, &fmt))
                return cli_usage_error("forest", "--format: %s", canopy_last_error());
            break;
        }
    }
    if (optind < argc) return cli_usage_error("forest", "unexpected argument '%s'", argv[optind]);
    if (!model) return cli_usage_error("forest", "--model is required");
    canopy_forest *f;
    if (canopy_forest_load(model, fmt, &f)) return cli_runtime_error("forest");
    canopy_forest_info in;
    canopy_forest_get_info(f, &in);
    printf("model: %s\nsource: %s\nobjective: %s\n", model, in.source, in.objective);
    printf("trees: %d\nfeatures: %d\noutputs: %d\nclasses: %d\nlink: %s\naggregation: %s\n",
           in.n_trees, in.n_features, in.n_outputs, in.n_classes, canopy_forest_link_name(in.link),
           in.aggregation == CANOPY_AGG_MEAN ? "mean" : "sum");
    printf("nodes: %lld\nleaves: %lld\nmax depth: %d\ndepth histogram:", (long long)in.n_nodes,
           (long long)in.n_leaves, in.max_depth);
    for (int d = 0; d < CANOPY_FOREST_MAX_DEPTH_HIST; d++)
        if (in.depth_hist[d]) printf(" %d:%d", d, in.depth_hist[d]);
    printf("\nbytes per layout:");
    for (int l = CANOPY_FOREST_LAYOUT_CSR; l < CANOPY_FOREST_LAYOUT_COUNT; l++) {
        size_t b = 0;
        if (canopy_forest_layout_bytes(f, (canopy_forest_layout)l, &b) == CANOPY_OK)
            printf(" %s=%zu", canopy_forest_layout_name((canopy_forest_layout)l), b);
    }
    printf("\n");
    int rc = CLI_OK;
    canopy_array X = {0};
    canopy_predict_options o = canopy_predict_options_default();
    o.output = CANOPY_FOREST_OUTPUT_RAW;
    canopy_predict_stats st;
    int64_t n = 0;
    if (data) {
        if (canopy_array_load(data, &X) || canopy_array_convert(&X, CANOPY_F32)) {
            rc = cli_runtime_error("forest");
            goto done;
        }
        n = X.shape[0];
        if ((X.ndim == 2 ? X.shape[1] : 1) != in.n_features) {
            fprintf(stderr, "canopy forest: %s does not have %d columns\n", data, in.n_features);
            rc = CLI_ERROR;
            goto done;
        }
    }
    /* Resolve auto on (a 5 % sample of) the data: predicting nothing still reports it. */
    double *out = NULL;
    canopy_points P = {data ? X.data : NULL, n, in.n_features, in.n_features};
    if (n > 0 && canopy_alloc((void **)&out, (size_t)n * in.n_outputs, sizeof *out)) {
        rc = cli_runtime_error("forest");
        goto done;
    }
    /* the default engines take bf without the branch sample; the vm engine's auto
     * samples the data and asks the cache model */
    canopy_predict_options vo = o;
    vo.engine = CANOPY_FOREST_ENGINE_VM;
    vo.backend = CANOPY_BACKEND_CPU;
    canopy_predict_stats vst;
    if (canopy_forest_predict(f, P, &o, out, &st) || canopy_forest_predict(f, P, &vo, out, &vst)) {
        canopy_free(out);
        rc = cli_runtime_error("forest");
        goto done;
    }
    canopy_free(out);
    if (data)
        printf("beta (share of decisions taking the more-taken child, 5%% sample): %.4f\n",
               vst.beta);
    printf("auto layout: %s (%s engine)\n", canopy_forest_layout_name(st.layout),
           canopy_forest_engine_name(st.engine));
    printf("cache model (vm engines): %s", canopy_forest_layout_name(vst.model_layout));
    if (vst.model_layout == CANOPY_FOREST_LAYOUT_HYBRID)
        printf(" (switch level %d)", vst.model_switch_level);
    printf(", relative costs:");
    for (int l = 0; l < CANOPY_FOREST_LAYOUT_COUNT; l++)
        if (vst.model_cost[l] > 0)
            printf(" %s %.2f", canopy_forest_layout_name((canopy_forest_layout)l),
                   vst.model_cost[l] / vst.model_cost[vst.model_layout]);
    printf("\n");
    double ns[4];
    const char *from;
    canopy_cache_latencies(ns, &from);
    printf("cache model latencies: L1 %.2f ns, L2 %.2f ns, L3 %.2f ns, memory %.2f ns (%s)\n",
           ns[0], ns[1], ns[2], ns[3], from);
done:
    canopy_array_release(&X);
    canopy_forest_free(f);
    return rc;
}
