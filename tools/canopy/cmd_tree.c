/* SPDX-License-Identifier: MIT */
/* canopy tree: bottom-up aggregations (heights, descendants, mass) over a generated
 * random tree or a parent-array file, with a choice of PTSD strategy. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#define CMD "tree"

enum { OPT_GEN = OPT_FIRST_LOCAL, OPT_TREE, OPT_STRATEGY, OPT_BACKEND, OPT_MAX_NODES, OPT_SAVE };

typedef enum { APP_HEIGHTS, APP_DESC, APP_MASS, APP_COUNT } app_kind;
static const char *const app_names[APP_COUNT] = {"heights", "descendants", "mass"};

/* Leaf masses and positions come from streams above 2^62, clear of the streams the
 * tree generator uses for node i. */
#define BODY_STREAM (UINT64_C(1) << 62)

static void usage(FILE *f) {
    fprintf(f, "usage: canopy tree APP (--gen random1|random2 [--seed S] [--max-nodes N]\n"
               "                        | --tree PARENTS.npy) -o OUT.npy\n"
               "                   [--strategy rec|flat|crec|hier] [--backend auto|cpu|gpu]\n"
               "                   [--threads T] [--save-tree PARENTS.npy] [--stats]\n\n"
               "Aggregates a rooted tree from the leaves up (the PTSD pattern).\n\n"
               "Applications and their output (.npy, row i for node i):\n"
               "  heights      int64 edges on the longest path down to a leaf (leaves 0)\n"
               "  descendants  int64 nodes below the node (itself excluded)\n"
               "  mass         float64 (n, 4): subtree mass and centre of mass x, y, z. Every\n"
               "               leaf i is a body of mass 0.5 + u and position (u, u, u), u\n"
               "               uniform in [0, 1), drawn from stream 2^62 + i of --seed\n\n"
               "Trees (one of):\n"
               "  --gen random1   depth 14, fan-out 4-8, 50 %% of non-root nodes have children\n"
               "                  (about 3.8 M nodes with seed 1)\n"
               "  --gen random2   depth 10, fan-out 32-64, 12.5 %% have children; capped at\n"
               "                  8,000,000 nodes, which cuts it short in its 9th level\n"
               "                  Nodes are numbered breadth-first; --seed S (default 1);\n"
               "                  --max-nodes N lowers the cap (families that would pass it\n"
               "                  are not added)\n"
               "  --tree FILE     a parent array: 1-D integer .npy, parent[i] the parent of\n"
               "                  node i, -1 for the single root\n\n"
               "Strategies (--strategy, default crec):\n"
               "  rec    serial post-order recursion, the reference (depth <= 10,000)\n"
               "  flat   every node walks to the root with atomic updates, O(n x depth)\n"
               "  crec   consolidated recursion: one parallel step per level, down then up\n"
               "  hier   parallel over children (tasks), loops over grandchildren\n"
               "         (depth <= 10,000)\n"
               "  With --backend gpu the same four run on the GPU (needs a GPU):\n"
               "  rec    a child kernel launch per internal node, the node's folding a tail\n"
               "         launch (the dynamic-parallelism baseline; depth <= 22)\n"
               "  flat   a thread per node walks to the root with atomics\n"
               "  crec   one launch per level; levels whose nodes have >= 16 children on\n"
               "         average are block-mapped, others thread-mapped\n"
               "  hier   two levels per launch: a block per node, a thread per child\n"
               "         folding that child's children\n"
               "  (also selectable as --strategy gpu-rec, gpu-flat, gpu-crec, gpu-hier)\n\n"
               "Other options:\n"
               "  -o OUT.npy              the result (written atomically)\n"
               "  --save-tree FILE.npy    also write the parent array (int64)\n"
               "  --threads T             CPU threads\n"
               "  --stats                 nodes, depth, leaves, load and run times; GPU:\n"
               "                          upload/kernel/download times, launches, levels,\n"
               "                          largest level buffer (stderr)\n"
               "  -h, --help              this help\n\n"
               "Example: canopy tree descendants --gen random2 --strategy flat -o d.npy --stats\n"
               "Exit codes: 0 success, 1 runtime error, 2 usage error. See docs/graphs.md.\n");
}

static canopy_status load_tree(const char *path, canopy_ptree *t) {
    canopy_array a = {0};
    canopy_status s = canopy_array_load(path, &a);
    if (s != CANOPY_OK) return s;
    if (a.ndim != 1 || a.dtype == CANOPY_F32 || a.dtype == CANOPY_F64) {
        canopy_array_release(&a);
        return canopy_fail(CANOPY_ERR_FORMAT, "%s: a tree file is a 1-D integer array of parents",
                           path);
    }
    s = canopy_array_convert(&a, CANOPY_I64);
    if (s == CANOPY_OK) {
        s = canopy_ptree_from_parents(a.data, a.shape[0], t);
        if (s != CANOPY_OK) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", canopy_last_error());
            s = canopy_fail(s, "%s: %s", path, msg);
        }
    }
    canopy_array_release(&a);
    return s;
}

static canopy_status make_bodies(const canopy_ptree *t, uint64_t seed, canopy_array *mass,
                                 canopy_array *pos) {
    int64_t shape[2] = {t->n, 3};
    canopy_status s = canopy_array_alloc(mass, CANOPY_F64, 1, shape);
    if (s == CANOPY_OK) s = canopy_array_alloc(pos, CANOPY_F64, 2, shape);
    if (s != CANOPY_OK) return s;
    double *m = mass->data, *p = pos->data;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < t->n; i++) {
        canopy_rng r = canopy_rng_make(seed, BODY_STREAM + (uint64_t)i);
        m[i] = 0.5 + canopy_rng_uniform(&r);
        for (int j = 0; j < 3; j++) p[3 * i + j] = canopy_rng_uniform(&r);
    }
    return CANOPY_OK;
}

int cmd_tree(int argc, char **argv) {
    static const struct option opts[] = {{"help", no_argument, NULL, OPT_HELP},
                                         {"threads", required_argument, NULL, OPT_THREADS},
                                         {"seed", required_argument, NULL, OPT_SEED},
                                         {"stats", no_argument, NULL, OPT_STATS},
                                         {"gen", required_argument, NULL, OPT_GEN},
                                         {"tree", required_argument, NULL, OPT_TREE},
                                         {"strategy", required_argument, NULL, OPT_STRATEGY},
                                         {"backend", required_argument, NULL, OPT_BACKEND},
                                         {"max-nodes", required_argument, NULL, OPT_MAX_NODES},
                                         {"save-tree", required_argument, NULL, OPT_SAVE},
                                         {NULL, 0, NULL, 0}};
    const char *gen = NULL, *tree_path = NULL, *out_path = NULL, *save_path = NULL;
    int64_t max_nodes = 0;
    canopy_ptsd_strategy strategy = CANOPY_PTSD_CREC;
    canopy_backend backend = CANOPY_BACKEND_AUTO;
    cli_parser p = cli_parser_start(CMD, "ho:", opts, usage, NULL, NULL);
    int c, rc = 0;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        switch (c) {
        case CLI_STOP:
            return p.rc;
        case OPT_GEN:
            gen = optarg;
            break;
        case OPT_TREE:
            tree_path = optarg;
            break;
        case OPT_STRATEGY:
            if (canopy_ptsd_strategy_parse(optarg, &strategy))
                return cli_usage_error(CMD, "%s", canopy_last_error());
            break;
        case OPT_BACKEND:
            if (canopy_backend_parse(optarg, &backend))
                return cli_usage_error(CMD, "--backend: '%s' is not auto, cpu or gpu", optarg);
            break;
        case OPT_MAX_NODES:
            rc = cli_parse_i64(CMD, "--max-nodes", optarg, 1, 8000000, &max_nodes);
            break;
        case OPT_SAVE:
            save_path = optarg;
            break;
        case 'o':
            out_path = optarg;
            break;
        }
        if (rc) return rc;
    }
    int app = cli_app_operand(CMD, argc, argv, app_names, APP_COUNT);
    if (app < 0) return CLI_USAGE;
    if (!gen == !tree_path) return cli_usage_error(CMD, "give exactly one of --gen and --tree");
    if (gen && strcmp(gen, "random1") && strcmp(gen, "random2"))
        return cli_usage_error(CMD, "unknown --gen '%s' (random1, random2)", gen);
    if (max_nodes && !gen) return cli_usage_error(CMD, "--max-nodes applies only to --gen");
    if (p.have_seed && !gen && app != APP_MASS)
        return cli_usage_error(CMD, "--seed applies to --gen and to mass");
    if (!out_path) return cli_usage_error(CMD, "missing -o OUT.npy");
    if (backend == CANOPY_BACKEND_GPU && strategy < CANOPY_PTSD_GPU_REC)
        strategy = (canopy_ptsd_strategy)(strategy + CANOPY_PTSD_GPU_REC);
    else if (backend == CANOPY_BACKEND_CPU && strategy >= CANOPY_PTSD_GPU_REC)
        return cli_usage_error(CMD, "--backend cpu conflicts with GPU strategy '%s'",
                               canopy_ptsd_strategy_name(strategy));

    uint64_t seed = p.have_seed ? p.seed : 1;
    canopy_ptree t = {0};
    canopy_array out = {0}, mass = {0}, pos = {0};
    const char *ins[] = {tree_path}, *outs[] = {save_path, out_path};
    if (cli_check_paths(CMD, ins, 1, outs, 2)) return CLI_ERROR;
    if (cli_check_array_outputs(CMD, 2, outs)) return CLI_USAGE;

    double t0 = canopy_now();
    canopy_ptsd_stats st = {0};
    canopy_status s;
    if (gen && max_nodes) {
        int r1 = !strcmp(gen, "random1");
        s = canopy_gen_ptree(r1 ? 14 : 10, r1 ? 4 : 32, r1 ? 8 : 64, r1 ? 0.5 : 0.125, max_nodes,
                             seed, &t);
    } else {
        s = gen ? canopy_ptree_gen(gen, seed, &t) : load_tree(tree_path, &t);
    }
    if (s == CANOPY_OK && app == APP_MASS) s = make_bodies(&t, seed, &mass, &pos);
    double t_load = canopy_now() - t0;
    if (s == CANOPY_OK) {
        int64_t shape[2] = {t.n, 4};
        s = canopy_array_alloc(&out, app == APP_MASS ? CANOPY_F64 : CANOPY_I64,
                               app == APP_MASS ? 2 : 1, shape);
    }
    if (s == CANOPY_OK)
        s = canopy_ptsd_run(&t, (canopy_ptsd_app)app, mass.data, pos.data, strategy, out.data, &st);
    rc = s == CANOPY_OK ? CLI_OK : cli_runtime_error(CMD);
    if (rc == CLI_OK) { /* both files or neither */
        canopy_array arrays[2] = {out, {t.parent, CANOPY_I64, 1, {t.n}}};
        const char *paths[2] = {out_path, save_path};
        rc = cli_write_arrays(CMD, 2, paths, arrays, NULL);
    }
    if (rc == CLI_OK)
        cli_summary("tree %s: %lld nodes, %s, %.3f s -> %s", app_names[app], (long long)t.n,
                    canopy_ptsd_strategy_name(strategy), st.seconds, out_path);
    if (rc == CLI_OK && p.stats == CLI_STATS_JSON) {
        cli_json *j = cli_json_begin(CMD);
        cli_json_seconds(j, "load", t_load);
        cli_json_seconds(j, "run", st.seconds);
        if (strategy >= CANOPY_PTSD_GPU_REC) {
            cli_json_seconds(j, "upload", st.upload_seconds);
            cli_json_seconds(j, "kernel", st.kernel_seconds);
            cli_json_seconds(j, "download", st.download_seconds);
            cli_json_count(j, "launches", (double)st.launches);
        }
        cli_json_count(j, "nodes", (double)t.n);
        cli_json_count(j, "depth", (double)t.depth);
        cli_json_choice(j, "app", app_names[app]);
        cli_json_choice(j, "strategy", canopy_ptsd_strategy_name(strategy));
        cli_json_choice(j, "backend", strategy >= CANOPY_PTSD_GPU_REC ? "gpu" : "cpu");
        cli_json_emit(j, "");
    } else if (rc == CLI_OK && p.stats) {
        int64_t leaves = 0;
        for (int64_t i = 0; i < t.n; i++) leaves += t.child_ptr[i] == t.child_ptr[i + 1];
        fprintf(stderr,
                "tree stats:\n"
                "  %s: %lld nodes, %lld leaves, depth %d; app %s, strategy %s, threads %d\n"
                "  load %.4f s, run %.4f s\n",
                gen ? gen : tree_path, (long long)t.n, (long long)leaves, (int)t.depth,
                app_names[app], canopy_ptsd_strategy_name(strategy),
                strategy == CANOPY_PTSD_REC ? 1 : canopy_threads(), t_load, st.seconds);
        if (strategy >= CANOPY_PTSD_GPU_REC)
            fprintf(stderr,
                    "  gpu: upload %.4f s, kernels %.4f s, download %.4f s\n"
                    "  launches %lld (host and device), levels %lld, largest level buffer %lld\n",
                    st.upload_seconds, st.kernel_seconds, st.download_seconds,
                    (long long)st.launches, (long long)st.levels, (long long)st.buffer_high_water);
    }
    canopy_ptree_release(&t);
    canopy_array_release(&out);
    canopy_array_release(&mass);
    canopy_array_release(&pos);
    return rc;
}
