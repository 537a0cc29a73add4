/* SPDX-License-Identifier: MIT */
/* canopy bptree: key lookups in a B+-tree forest (a hash over key-range buckets into
 * binary search subtrees run on the forest layouts and engines). */
#include "cli.h"
#include "forest_opts.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f) {
    fprintf(f,
            "usage: canopy bptree --keys K.npy [--values V.npy] --queries Q.npy -o OUT.npy\n"
            "       [--buckets B] [--method forest|pointer] [--layout L] [--engine E] [options]\n\n"
            "Looks up every query among the keys: OUT[i] is the value of the key equal to\n"
            "Q[i], or the not-found marker (-1 unless --not-found says otherwise). The keys\n"
            "become a B+ tree whose top levels are a hash into B key-range buckets, each a\n"
            "binary search subtree stored and run like a decision tree (Ren et al. 2014).\n\n"
            "Input: .npy or .csv, 1-D or one column. Keys and queries are float32 (float64 is\n"
            "rounded to float32; integers must lie within +-2^24 to stay exact). Keys may\n"
            "come in any order but must be finite and distinct; a NaN query is never found.\n"
            "Values are integers, one per key; without --values a key's value is its row in K.\n\n"
            "Output: OUT int64 (nq), written atomically.\n\n"
            "Options:\n"
            "  --keys K           the keys (required)\n"
            "  --values V         their values (default: the key's row)\n"
            "  --queries Q        the keys to look up (required)\n"
            "  -o, --output F     output file (required)\n"
            "  --buckets B        hash buckets = independent subtrees (default: one per 256\n"
            "                     keys)\n"
            "  --method M         forest (default) or pointer (the baseline: a classic\n"
            "                     pointer-based B+ tree, 16 keys a node)\n"
            "  --layout L         forest layout: auto (default: Ren's cache model picks sll,\n"
            "                     cc or hybrid), csr, hier, df, bf, ll, sll, cc, hybrid\n"
            "  --engine E         auto (vm for linked layouts, else scalar), scalar, vm,\n"
            "                     vm_simd (AVX2 lanes with stream compaction)\n"
            "  --hier-depth D     subtree depth of the hier layout (3-5, default 4)\n"
            "  --switch-level X   first cc level of the hybrid layout (default: the model's)\n"
            "  --no-compaction    vm_simd without stream compaction\n"
            "  --not-found V      marker for absent keys (default -1)\n"
            "  --threads T        CPU threads (default: CANOPY_THREADS or all cores)\n"
            "  --stats            print the tree shape, choices and timings to stderr\n"
            "  -h, --help         this help\n\n"
            "Exit codes: 0 success, 1 bad input (missing file, NaN or repeated key, ...),\n"
            "2 usage error. See docs/bptree.md.\n");
}

enum { OPT_KEYS = OPT_FIRST_LOCAL, OPT_VALUES, OPT_QUERIES, OPT_BUCKETS, OPT_METHOD, OPT_NOTFOUND };

/* Loads a 1-D (or one-column) array of `path` converted to dtype t; integer input
 * for float32 must be exact. Prints the error and returns CLI_ERROR on failure. */
static int load_column(const char *path, canopy_dtype t, canopy_array *a) {
    memset(a, 0, sizeof *a);
    if (canopy_array_load(path, a)) return cli_runtime_error("bptree");
    if (a->ndim > 2 || (a->ndim == 2 && a->shape[1] != 1)) {
        fprintf(stderr, "canopy bptree: %s: expected one column, got shape (%lld, %lld)\n", path,
                (long long)a->shape[0], (long long)(a->ndim == 2 ? a->shape[1] : 0));
        canopy_array_release(a);
        return CLI_ERROR;
    }
    int64_t n = canopy_array_count(a);
    if (t == CANOPY_F32 && (a->dtype == CANOPY_I32 || a->dtype == CANOPY_I64)) {
        for (int64_t i = 0; i < n; i++) {
            int64_t v = a->dtype == CANOPY_I32 ? ((int32_t *)a->data)[i] : ((int64_t *)a->data)[i];
            if (v > (1 << 24) || v < -(1 << 24)) {
                fprintf(stderr,
                        "canopy bptree: %s: element %lld (%lld) is not exact in float32 "
                        "(integers must lie within +-2^24)\n",
                        path, (long long)i, (long long)v);
                canopy_array_release(a);
                return CLI_ERROR;
            }
        }
    }
    if (canopy_array_convert(a, t)) {
        fprintf(stderr, "canopy bptree: %s: %s\n", path, canopy_last_error());
        canopy_array_release(a);
        return CLI_ERROR;
    }
    return CLI_OK;
}

int cmd_bptree(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, NULL, OPT_HELP},
                                         {"keys", required_argument, NULL, OPT_KEYS},
                                         {"values", required_argument, NULL, OPT_VALUES},
                                         {"queries", required_argument, NULL, OPT_QUERIES},
                                         {"output", required_argument, NULL, 'o'},
                                         {"buckets", required_argument, NULL, OPT_BUCKETS},
                                         {"method", required_argument, NULL, OPT_METHOD},
                                         {"not-found", required_argument, NULL, OPT_NOTFOUND},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"stats", no_argument, NULL, OPT_STATS},
                                         FOREST_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *keys_path = NULL, *values_path = NULL, *queries_path = NULL, *outp = NULL;
    canopy_bptree_options o = canopy_bptree_options_default();
    int64_t buckets = 0;
    forest_opts fo = {&o.layout, &o.engine, &o.hier_depth, &o.switch_level, &o.compaction};
    cli_parser p = cli_parser_start("bptree", "ho:", opts, usage, forest_opts_handle, &fo);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_KEYS:
            keys_path = optarg;
            break;
        case OPT_VALUES:
            values_path = optarg;
            break;
        case OPT_QUERIES:
            queries_path = optarg;
            break;
        case 'o':
            outp = optarg;
            break;
        case OPT_BUCKETS:
            if (cli_parse_i64("bptree", "--buckets", optarg, 1, (int64_t)1 << 28, &buckets))
                return CLI_USAGE;
            break;
        case OPT_METHOD:
            if (canopy_bptree_method_parse(optarg, &o.method))
                return cli_usage_error("bptree", "--method: %s", canopy_last_error());
            break;
        case OPT_NOTFOUND:
            if (cli_parse_i64("bptree", "--not-found", optarg, INT64_MIN, INT64_MAX, &o.not_found))
                return CLI_USAGE;
            break;
        }
    }
    if (optind < argc) return cli_usage_error("bptree", "unexpected argument '%s'", argv[optind]);
    if (!keys_path || !queries_path)
        return cli_usage_error("bptree", "--keys and --queries are required");
    if (!outp) return cli_usage_error("bptree", "-o OUT.npy is required");
    if (o.method == CANOPY_BPTREE_POINTER &&
        (o.layout || o.engine || o.hier_depth || o.switch_level || !o.compaction))
        return cli_usage_error("bptree", "--layout, --engine and their options apply to "
                                         "--method forest only");

    const char *ins[] = {keys_path, values_path, queries_path}, *outs[] = {outp};
    if (cli_check_paths("bptree", ins, 3, outs, 1)) return CLI_ERROR;

    double t0 = canopy_now();
    canopy_array ka, va, qa;
    memset(&va, 0, sizeof va);
    memset(&qa, 0, sizeof qa);
    int rc = load_column(keys_path, CANOPY_F32, &ka);
    if (rc) return rc;
    if (values_path) rc = load_column(values_path, CANOPY_I64, &va);
    if (!rc) rc = load_column(queries_path, CANOPY_F32, &qa);
    int64_t n = canopy_array_count(&ka), nq = canopy_array_count(&qa);
    if (!rc && values_path && canopy_array_count(&va) != n) {
        fprintf(stderr, "canopy bptree: %s has %lld values but %s has %lld keys\n", values_path,
                (long long)canopy_array_count(&va), keys_path, (long long)n);
        rc = CLI_ERROR;
    }
    double t_load = canopy_now() - t0;
    canopy_bptree *t = NULL;
    int64_t *out = NULL;
    canopy_bptree_stats st;
    double t_build = 0;
    if (!rc) {
        double t1 = canopy_now();
        if (canopy_bptree_build(ka.data, values_path ? va.data : NULL, n, buckets, &t)) {
            fprintf(stderr, "canopy bptree: %s: %s\n", keys_path, canopy_last_error());
            rc = CLI_ERROR;
        }
        t_build = canopy_now() - t1;
    }
    if (!rc && (canopy_alloc((void **)&out, (size_t)(nq > 0 ? nq : 1), sizeof *out) ||
                canopy_bptree_lookup(t, qa.data, nq, &o, out, &st)))
        rc = cli_runtime_error("bptree");
    if (!rc) {
        canopy_array a = cli_array_view(out, CANOPY_I64, nq, 0);
        rc = cli_write_arrays("bptree", 1, &outp, &a, NULL);
    }
    if (!rc) {
        cli_summary("bptree: %lld queries over %lld keys, %lld found -> %s", (long long)nq,
                    (long long)n, (long long)st.found, outp);
        if (p.stats == CLI_STATS_JSON) {
            cli_json *j = cli_json_begin("bptree");
            cli_json_seconds(j, "load", t_load);
            cli_json_seconds(j, "build", t_build + st.build_seconds);
            cli_json_seconds(j, "run", st.lookup_seconds);
            cli_json_count(j, "queries", (double)nq);
            cli_json_count(j, "keys", (double)n);
            cli_json_count(j, "found", (double)st.found);
            cli_json_count(j, "layout_bytes", (double)st.layout_bytes);
            cli_json_choice(j, "method", canopy_bptree_method_name(st.method));
            cli_json_choice(j, "layout", canopy_forest_layout_name(st.layout));
            cli_json_choice(j, "engine", canopy_forest_engine_name(st.engine));
            cli_json_emit(j, st.note);
        } else if (p.stats) {
            canopy_bptree_info info;
            canopy_bptree_get_info(t, &info);
            fprintf(stderr,
                    "tree: %lld keys, %lld buckets (%lld empty, largest %lld keys), %lld nodes, "
                    "depth mean %.2f max %d\n",
                    (long long)info.n_keys, (long long)info.n_buckets,
                    (long long)info.n_empty_buckets, (long long)info.largest_bucket,
                    (long long)info.n_nodes, info.mean_depth, info.max_depth);
            fprintf(stderr, "ran: %s\n", st.note);
            if (st.layout == CANOPY_FOREST_LAYOUT_HYBRID)
                fprintf(stderr, "switch level: %d\n", st.switch_level);
            if (o.method == CANOPY_BPTREE_FOREST && o.layout == CANOPY_FOREST_LAYOUT_AUTO)
                fprintf(stderr, "sampled bias (share of left decisions): %.3f\n", st.beta);
            fprintf(stderr,
                    "time: load %.3f ms, build %.3f ms, layout %.3f ms (%zu bytes), lookup "
                    "%.3f ms (%.0f lookups/s, measured)\n",
                    t_load * 1e3, t_build * 1e3, st.build_seconds * 1e3, st.layout_bytes,
                    st.lookup_seconds * 1e3, st.lookup_seconds > 0 ? nq / st.lookup_seconds : 0.0);
        }
    }
    canopy_free(out);
    canopy_bptree_free(t);
    canopy_array_release(&ka);
    canopy_array_release(&va);
    canopy_array_release(&qa);
    return rc;
}
