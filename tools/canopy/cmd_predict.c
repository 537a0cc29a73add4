/* SPDX-License-Identifier: MIT */
/* canopy predict: decision-forest inference on a data file. */
#include "cli.h"
#include "forest_opts.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(
        f, "usage: canopy predict --model M --data X.npy|X.csv -o Y.npy [options]\n\n"
           "Predicts every row of X with a decision forest trained elsewhere; the\n"
           "predictions equal the training framework's to float rounding.\n\n"
           "Options:\n"
           "  --model M          model file, or a compiled predictor (canopy forest compile:\n"
           "                     loaded by mmap, layout and engine as compiled; --layout,\n"
           "                     --engine and the like are then ignored)\n"
           "  --format F         auto (default: detected from the content), xgboost (JSON from\n"
           "                     save_model(\"m.json\"), gbtree/dart), lightgbm (text from\n"
           "                     save_model(\"m.txt\")), canopy (canopy JSON; scikit-learn\n"
           "                     forests via scripts/sklearn_to_canopy.py)\n"
           "  --data X           rows to predict: .npy (any float/int dtype) or .csv; NaN is a\n"
           "                     missing value and follows the model's default direction;\n"
           "                     columns must equal the model's feature count\n"
           "  -o, --output Y     .npy written atomically: float64 (rows,) or (rows, outputs),\n"
           "                     int64 (rows,) for --kind class (--output-file: the same)\n"
           "  --kind K           what to predict: raw (margin: base score + summed/averaged\n"
           "                     leaves), prob (default; the objective's link: sigmoid,\n"
           "                     softmax, exp or identity), class (class index; regression:\n"
           "                     the prediction). The C library's default is raw: see\n"
           "                     docs/c-api.md\n"
           "  --layout L         auto (default: bf for the walkers; for vm and vm_simd Ren's\n"
           "                     cache model picks ll or cc),\n"
           "                     csr (Wu's baseline arrays), hier (complete subtrees of depth\n"
           "                     --hier-depth, 3-5, with a connection table), df, bf (per tree,\n"
           "                     depth-/breadth-first), ll (trees interleaved level by level),\n"
           "                     sll (ll, left-side pairs first: for biased inputs), cc\n"
           "                     (cache-line blocks), hybrid (sll above --switch-level, cc below)\n"
           "  --engine E         auto (default: linked layouts simd with AVX-512, else scalar;\n"
           "                     csr and hier scalar), scalar (a walker per layout; linked\n"
           "                     layouts: level-synchronous, 8 rows interleaved), simd (that\n"
           "                     walker with rows on AVX2/AVX-512 lanes), vm (Ren's bytecode\n"
           "                     interpreter), vm_simd (the interpreter on AVX-512 or AVX2 lanes\n"
           "                     with stream compaction; scalar fallback). simd, vm and vm_simd\n"
           "                     run the linked layouts df, bf, ll, sll, cc, hybrid.\n"
           "                     GPU engines: iter (a thread walks a tree; csr, hier or a\n"
           "                     linked layout), enc (hier; nested if/else compiled at run\n"
           "                     time with NVRTC), collab (hier; a warp evaluates a\n"
           "                     subtree), ren (linked layouts; a warp per bag of 32 trees\n"
           "                     sorted by path length; the GPU default). On the GPU, layout\n"
           "                     auto is the cache model's for ren and hier for the others\n"
           "  --backend B        auto (default: the GPU when usable and the batch has at\n"
           "                     least 20000 rows and 4M row x tree walks), cpu, gpu\n"
           "  --mapping M        GPU: auto (= atomic), atomic (a row's trees split over\n"
           "                     threads, atomic sums), atomic_free (a thread or warp per row)\n"
           "  --hier-depth D     subtree depth of the hier layout (3-5, default 4)\n"
           "  --switch-level X   first cc level of the hybrid layout (default: the model's)\n"
           "  --no-compaction    vm_simd without stream compaction (the paper's baseline)\n"
           "  --threads T        CPU threads (default: CANOPY_THREADS or all cores)\n"
           "  --stats            print the choices and timings to stderr\n"
           "  -h, --help         this help\n\n"
           "Exit codes: 0 success, 1 runtime error (bad model or data), 2 usage error.\n"
           "See docs/forests.md for the formats and when to use each layout.\n");
}

enum {
    OPT_MODEL = OPT_FIRST_LOCAL,
    OPT_FORMAT,
    OPT_DATA,
    OPT_OUTPUT,
    OPT_KIND,
    OPT_BACKEND,
    OPT_MAPPING
};

/* A compiled predictor file (canopy forest compile) starts with its magic. */
static int is_compiled(const char *path) {
    char magic[8] = {0};
    FILE *fp = fopen(path, "rb");
    size_t got = fp ? fread(magic, 1, sizeof magic, fp) : 0;
    if (fp) fclose(fp);
    return got == sizeof magic && memcmp(magic, "CNPYCPF1", 8) == 0;
}

static const struct option predict_long_opts[] = {{"help", no_argument, NULL, OPT_HELP},
                                                  {"model", required_argument, NULL, OPT_MODEL},
                                                  {"format", required_argument, NULL, OPT_FORMAT},
                                                  {"data", required_argument, NULL, OPT_DATA},
                                                  {"output", required_argument, NULL, OPT_OUTPUT},
                                                  {"output-file", required_argument, NULL, 'o'},
                                                  {"kind", required_argument, NULL, OPT_KIND},
                                                  {"backend", required_argument, NULL, OPT_BACKEND},
                                                  {"mapping", required_argument, NULL, OPT_MAPPING},
                                                  {"threads", required_argument, NULL, OPT_THREADS},
                                                  {"stats", no_argument, NULL, OPT_STATS},
                                                  FOREST_LONG_OPTIONS,
                                                  {NULL, 0, NULL, 0}};

/* The command line, once parsed. */
typedef struct predict_args {
    const char *model, *data, *outp;
    canopy_forest_format fmt;
    canopy_predict_options o;
} predict_args;

/* predict_option's answer when parsing goes on; anything else is the exit code. */
enum { PREDICT_GO_ON = -1 };

/* Option c (argument optarg) of predict's own: PREDICT_GO_ON, or the exit code after a
 * usage error. */
static int predict_option(predict_args *a, int c) {
    canopy_forest_output k;
    switch (c) {
    case OPT_MODEL:
        a->model = optarg;
        break;
    case OPT_DATA:
        a->data = optarg;
        break;
    case 'o':
        a->outp = optarg;
        break;
    case OPT_FORMAT:
        if (canopy_forest_format_parse(optarg, &a->fmt))
            return cli_usage_error("predict", "--format: %s", canopy_last_error());
        break;
    case OPT_OUTPUT:
        /* --output used to name the prediction kind; it is the output file now, as in
         * every other command, so an old command line fails instead of writing "prob". */
        if (canopy_forest_output_parse(optarg, &k) == CANOPY_OK)
            return cli_usage_error("predict",
                                   "--output is the output file; for the prediction kind "
                                   "use --kind %s",
                                   optarg);
        a->outp = optarg;
        break;
    case OPT_KIND:
        if (canopy_forest_output_parse(optarg, &a->o.output))
            return cli_usage_error("predict", "--kind: %s", canopy_last_error());
        break;
    case OPT_BACKEND:
        if (canopy_backend_parse(optarg, &a->o.backend))
            return cli_usage_error("predict", "--backend: %s", canopy_last_error());
        break;
    case OPT_MAPPING:
        if (canopy_forest_mapping_parse(optarg, &a->o.mapping))
            return cli_usage_error("predict", "--mapping: %s", canopy_last_error());
        break;
    }
    return PREDICT_GO_ON;
}

/* What --stats reports of one run. */
typedef struct predict_report {
    const char *model;
    const canopy_forest_info *info;
    const canopy_predict_stats *st;
    canopy_forest_output kind;
    int64_t n;
    double t_model, t_data, t_write;
} predict_report;

static void print_stats_json(const predict_report *r) {
    cli_json *j = cli_json_begin("predict");
    cli_json_seconds(j, "load_model", r->t_model);
    cli_json_seconds(j, "load", r->t_data);
    cli_json_seconds(j, "build", r->st->build_seconds);
    cli_json_seconds(j, "run", r->st->predict_seconds);
    cli_json_seconds(j, "write", r->t_write);
    if (r->st->backend == CANOPY_BACKEND_GPU) {
        cli_json_seconds(j, "upload", r->st->upload_seconds);
        cli_json_seconds(j, "compile", r->st->compile_seconds);
        cli_json_seconds(j, "kernel", r->st->kernel_seconds);
        cli_json_seconds(j, "download", r->st->download_seconds);
    }
    cli_json_count(j, "rows", (double)r->n);
    cli_json_count(j, "trees", r->info->n_trees);
    cli_json_count(j, "nodes", (double)r->info->n_nodes);
    cli_json_count(j, "max_depth", r->info->max_depth);
    cli_json_count(j, "layout_bytes", (double)r->st->layout_bytes);
    cli_json_choice(j, "backend", canopy_backend_name(r->st->backend));
    cli_json_choice(j, "layout", canopy_forest_layout_name(r->st->layout));
    cli_json_choice(j, "engine", canopy_forest_engine_name(r->st->engine));
    cli_json_choice(j, "kind", canopy_forest_output_name(r->kind));
    cli_json_emit(j, r->st->note);
}

static void print_stats_text(const predict_report *r) {
    fprintf(stderr, "model: %s (%s, %s), %d trees, %lld nodes, max depth %d\n", r->model,
            r->info->source, r->info->objective, r->info->n_trees, (long long)r->info->n_nodes,
            r->info->max_depth);
    fprintf(stderr, "load: model %.3f ms, data %.3f ms\n", r->t_model * 1e3, r->t_data * 1e3);
    fprintf(stderr, "ran: %s\n", r->st->note);
    if (r->st->layout == CANOPY_FOREST_LAYOUT_HYBRID)
        fprintf(stderr, "switch level: %d\n", r->st->switch_level);
    if (r->st->model_cost[CANOPY_FOREST_LAYOUT_SLL] > 0) {
        fprintf(stderr, "cache model");
        if (r->st->beta > 0) fprintf(stderr, " (beta = %.3f)", r->st->beta);
        fprintf(stderr, ": picks %s", canopy_forest_layout_name(r->st->model_layout));
        if (r->st->model_layout == CANOPY_FOREST_LAYOUT_HYBRID)
            fprintf(stderr, " (switch level %d)", r->st->model_switch_level);
        fprintf(stderr, "; predicted cost relative to that:");
        double base =
            r->st->model_cost[r->st->model_layout] > 0 ? r->st->model_cost[r->st->model_layout] : 1;
        for (int l = 0; l < CANOPY_FOREST_LAYOUT_COUNT; l++)
            if (r->st->model_cost[l] > 0)
                fprintf(stderr, " %s %.2f", canopy_forest_layout_name((canopy_forest_layout)l),
                        r->st->model_cost[l] / base);
        fprintf(stderr, "\n");
    }
    fprintf(stderr, "layout: %zu bytes, built in %.3f ms\n", r->st->layout_bytes,
            r->st->build_seconds * 1e3);
    fprintf(stderr, "predict: %lld rows in %.3f ms (%.0f rows/s, measured)\n", (long long)r->n,
            r->st->predict_seconds * 1e3,
            r->st->predict_seconds > 0 ? r->n / r->st->predict_seconds : 0.0);
    if (r->st->backend == CANOPY_BACKEND_GPU) {
        static const char *const cache[] = {"n/a", "compiled (miss)", "in-memory hit",
                                            "on-disk hit"};
        fprintf(
            stderr,
            "gpu: upload %.3f ms, compile %.3f ms (kernel cache: %s), kernel %.3f ms, "
            "download %.3f ms, model on device %zu bytes\n",
            r->st->upload_seconds * 1e3, r->st->compile_seconds * 1e3,
            cache[r->st->kernel_cache >= 0 && r->st->kernel_cache <= 3 ? r->st->kernel_cache : 0],
            r->st->kernel_seconds * 1e3, r->st->download_seconds * 1e3, r->st->device_bytes);
    }
}

int cmd_predict(int argc, char **argv) {
    predict_args a = {NULL, NULL, NULL, CANOPY_FOREST_FORMAT_AUTO,
                      canopy_predict_options_default()};
    a.o.output = CANOPY_FOREST_OUTPUT_PROB;
    forest_opts fo = {&a.o.layout, &a.o.engine, &a.o.hier_depth, &a.o.switch_level,
                      &a.o.compaction};
    cli_parser p =
        cli_parser_start("predict", "ho:", predict_long_opts, usage, forest_opts_handle, &fo);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        if (c == CLI_STOP) return p.rc;
        int rc = predict_option(&a, c);
        if (rc != PREDICT_GO_ON) return rc;
    }
    const char *model = a.model, *data = a.data, *outp = a.outp;
    canopy_predict_options o = a.o;
    if (optind < argc) return cli_usage_error("predict", "unexpected argument '%s'", argv[optind]);
    if (!model) return cli_usage_error("predict", "--model is required");
    if (!data) return cli_usage_error("predict", "--data is required");
    if (!outp) return cli_usage_error("predict", "-o OUTPUT.npy is required");

    canopy_forest *owned = NULL;
    canopy_predictor *pred = NULL;
    canopy_array X = {0}, Y = {0};
    const char *ins[] = {model, data}, *outs[] = {outp};
    if (cli_check_paths("predict", ins, 2, outs, 1)) return CLI_ERROR;
    if (cli_check_array_outputs("predict", 1, outs)) return CLI_USAGE;

    double t0 = canopy_now();
    if (is_compiled(model) ? canopy_predictor_load(model, &pred)
                           : canopy_forest_load(model, a.fmt, &owned))
        return cli_runtime_error("predict");
    const canopy_forest *f = pred ? canopy_predictor_forest(pred) : owned;
    double t_model = canopy_now() - t0;
    int rc = CLI_OK;
    t0 = canopy_now();
    if (canopy_array_load(data, &X) || canopy_array_convert(&X, CANOPY_F32)) {
        rc = cli_runtime_error("predict");
        goto done;
    }
    if (X.ndim != 2 && X.ndim != 1) {
        fprintf(stderr, "canopy predict: %s: expected a 2-D array of rows, got %d dimensions\n",
                data, X.ndim);
        rc = CLI_ERROR;
        goto done;
    }
    double t_data = canopy_now() - t0;
    int64_t n = X.shape[0];
    int32_t d = X.ndim == 2 ? (int32_t)X.shape[1] : 1;
    canopy_forest_info info;
    canopy_forest_get_info(f, &info);
    if (d != info.n_features) {
        fprintf(stderr, "canopy predict: %s has %d columns but the model %s has %d features\n",
                data, d, model, info.n_features);
        rc = CLI_ERROR;
        goto done;
    }
    int32_t W = canopy_forest_output_width(f, o.output);
    int64_t shape[2] = {n, W};
    double *out = NULL;
    if (canopy_alloc((void **)&out, (size_t)(n > 0 ? n : 1) * (size_t)W, sizeof *out)) {
        rc = cli_runtime_error("predict");
        goto done;
    }
    canopy_predict_stats st;
    canopy_points P = {X.data, n, d, d};
    if (pred ? canopy_predictor_predict(pred, P, o.output, out, &st)
             : canopy_forest_predict(f, P, &o, out, &st)) {
        canopy_free(out);
        rc = cli_runtime_error("predict");
        goto done;
    }
    int is_class = o.output == CANOPY_FOREST_OUTPUT_CLASS && info.n_classes > 0;
    if (canopy_array_alloc(&Y, is_class ? CANOPY_I64 : CANOPY_F64, W == 1 ? 1 : 2, shape)) {
        canopy_free(out);
        rc = cli_runtime_error("predict");
        goto done;
    }
    for (int64_t i = 0; i < n * W; i++) {
        if (is_class)
            ((int64_t *)Y.data)[i] = (int64_t)out[i];
        else
            ((double *)Y.data)[i] = out[i];
    }
    canopy_free(out);
    double t_write = canopy_now();
    if (cli_write_array(outp, &Y)) {
        rc = cli_runtime_error("predict");
        goto done;
    }
    cli_summary("predict: %lld rows, %d trees, %s -> %s", (long long)n, info.n_trees,
                canopy_forest_output_name(o.output), outp);
    t_write = canopy_now() - t_write;
    predict_report r = {model, &info, &st, o.output, n, t_model, t_data, t_write};
    if (p.stats == CLI_STATS_JSON)
        print_stats_json(&r);
    else if (p.stats)
        print_stats_text(&r);
done:
    canopy_array_release(&X);
    canopy_array_release(&Y);
    canopy_forest_free(owned);
    canopy_predictor_free(pred);
    return rc;
}
