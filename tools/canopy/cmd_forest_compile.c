/* SPDX-License-Identifier: MIT */
/* canopy forest compile: a model's prediction plan made once and saved, for
 * canopy predict --model M.cpf (loaded by mmap, no rebuild of the choices). */
#include "cli.h"
#include "forest_opts.h"

#include <getopt.h>
#include <stdio.h>

static void usage(FILE *f) {
    fprintf(f, "usage: canopy forest compile --model M [--format F] -o M.cpf [--layout L]\n"
               "       [--engine E] [--hier-depth D] [--switch-level X] [--no-compaction]\n"
               "       [--backend cpu|gpu]\n\n"
               "Saves the model with its layout and engine choices (the options of canopy\n"
               "predict) as a compiled predictor, written atomically. canopy predict --model\n"
               "M.cpf maps it and predicts with no model parsing; the file format is in\n"
               "docs/formats.md \"Compiled forest files\".\n\n"
               "Options:\n"
               "  --model M       XGBoost JSON, LightGBM text or canopy JSON model\n"
               "  --format F      auto (default), xgboost, lightgbm, canopy\n"
               "  -o, --output F  the compiled predictor\n"
               "  --backend B     cpu (default) or gpu\n"
               "  -h, --help      this help\n");
}

enum { OPT_MODEL = OPT_FIRST_LOCAL, OPT_FORMAT, OPT_BACKEND };

int cmd_forest_compile(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, NULL, OPT_HELP},
                                         {"model", required_argument, NULL, OPT_MODEL},
                                         {"format", required_argument, NULL, OPT_FORMAT},
                                         {"output", required_argument, NULL, 'o'},
                                         {"backend", required_argument, NULL, OPT_BACKEND},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         FOREST_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *cmd = "forest compile", *model = NULL, *outp = NULL;
    canopy_forest_format fmt = CANOPY_FOREST_FORMAT_AUTO;
    canopy_predict_options o = canopy_predict_options_default();
    o.output = CANOPY_FOREST_OUTPUT_PROB;
    forest_opts fo = {&o.layout, &o.engine, &o.hier_depth, &o.switch_level, &o.compaction};
    cli_parser p = cli_parser_start(cmd, "ho:", opts, usage, forest_opts_handle, &fo);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_MODEL:
            model = optarg;
            break;
        case 'o':
            outp = optarg;
            break;
        case OPT_FORMAT:
            if (canopy_forest_format_parse(optarg, &fmt))
                return cli_usage_error(cmd, "--format: %s", canopy_last_error());
            break;
        case OPT_BACKEND:
            if (canopy_backend_parse(optarg, &o.backend))
                return cli_usage_error(cmd, "--backend: %s", canopy_last_error());
            break;
        }
    }
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!model) return cli_usage_error(cmd, "--model is required");
    if (!outp) return cli_usage_error(cmd, "-o is required");
    const char *ins[] = {model}, *outs[] = {outp};
    if (cli_check_paths(cmd, ins, 1, outs, 1)) return CLI_ERROR;
    canopy_forest *f = NULL;
    canopy_predictor *pred = NULL;
    int rc = CLI_OK;
    if (canopy_forest_load(model, fmt, &f) || canopy_predictor_compile(f, &o, &pred) ||
        canopy_predictor_save(pred, outp))
        rc = cli_runtime_error(cmd);
    if (rc == CLI_OK) {
        canopy_forest_info info;
        canopy_forest_get_info(f, &info);
        cli_summary("forest compile: %s, %d trees, %lld nodes, layout built in %.3f ms -> %s",
                    model, info.n_trees, (long long)info.n_nodes,
                    canopy_predictor_build_seconds(pred) * 1e3, outp);
    }
    canopy_predictor_free(pred);
    canopy_forest_free(f);
    return rc;
}
