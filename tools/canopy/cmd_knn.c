/* SPDX-License-Identifier: MIT */
/* canopy knn / canopy nn: k nearest neighbours through the generic traversal engine. */
#include "cli_dist.h"
#include "cli_gpu.h"
#include "trav_opts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_REF = OPT_FIRST_LOCAL, OPT_QUERY, OPT_DISTANCES };

static void usage(const char *cmd, FILE *f) {
    int nn = strcmp(cmd, "nn") == 0;
    fprintf(
        f,
        "usage: canopy %s (--ref R.npy | --index R.idx) [--query Q.npy]%s -o IDX.npy [--distances "
        "D.npy]\n"
        "       [--tree kd|ball|vp] [--variant V] [--schedule S] [--backend B]\n"
        "       [--threads T] [--leaf-size L] [--stats]\n\n"
        "%s of each query among the reference points R (n x d). Without\n"
        "--query, R queries itself and each point is excluded from its own result.\n"
        "Points: .npy (float32/float64/int), .csv or .fvecs; NaN/Inf are rejected.\n\n"
        "Output: IDX int64 (nq, %s) indices into R, nearest first, ties broken by the\n"
        "smaller index; D float32 (nq, %s) Euclidean distances. A .csv output name\n"
        "writes CSV instead of .npy. Files are written atomically.\n\n"
        "Under mpirun -np R (builds with MPI; `canopy info` says): the reference points are\n"
        "split among the ranks and the files are identical to one process's; --ref only.\n"
        "Each rank reads its rows of .npy inputs and writes its rows of .npy outputs\n"
        "(files on a shared file system); rank 0 reads or writes other formats\n"
        "(docs/distributed.md).\n\n"
        "With --ref and --query on the GPU (--backend gpu, or auto from 20000 queries), the\n"
        "kd tree is built on the device (no host build, no tree upload). CUDA starts on a\n"
        "thread: with backend gpu while the input is read, with auto once the query count\n"
        "says auto takes the GPU; runs on the CPU never load it (CANOPY_CLI_EARLY_CUDA=0:\n"
        "at the first GPU call instead); --stats shows both.\n\n"
        "Options:\n"
        "  --ref R          reference points (required)\n" TRAV_INDEX_HELP
        "  --query Q        query points (default: R itself, self excluded)\n"
        "%s"
        "  -o, --output F   indices output file (required)\n"
        "  --distances F    also write the distances\n"
        "  --tree K         kd (default), ball or vp (the paper's vp/bt applications)\n" TRAV_HELP
        "\nExample: canopy gen rand7 -o r.npy --query-out q.npy &&\n"
        "         canopy %s --ref r.npy --query q.npy%s -o nbrs.npy --stats\n",
        cmd, nn ? "" : " -k K", nn ? "Nearest neighbour" : "The k nearest neighbours",
        nn ? "1" : "k", nn ? "1" : "k",
        nn ? "" : "  -k, --k K        neighbours per query, 1 <= K <= number of candidates\n", cmd,
        nn ? "" : " -k 8");
}

static void usage_knn(FILE *f) {
    usage("knn", f);
}
static void usage_nn(FILE *f) {
    usage("nn", f);
}

static int run_knn(const char *cmd, int argc, char **argv, int nn) {
    static const struct option opts[] = {{"ref", required_argument, NULL, OPT_REF},
                                         {"query", required_argument, NULL, OPT_QUERY},
                                         {"k", required_argument, NULL, 'k'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"distances", required_argument, NULL, OPT_DISTANCES},
                                         TRAV_INDEX_OPTION,
                                         TRAV_LONG_OPTIONS,
                                         {NULL, 0, NULL, 0}};
    const char *ref_path = NULL, *query_path = NULL, *out = NULL, *dist_out = NULL;
    int64_t k = nn ? 1 : 0;
    trav_opts to;
    trav_opts_init(&to);
    cli_parser p = cli_parser_start(cmd, nn ? "ho:" : "hk:o:", opts, nn ? usage_nn : usage_knn,
                                    trav_opts_handle, &to);
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
        case 'k':
            if (nn) return cli_usage_error(cmd, "nn has no -k (it is knn with k = 1)");
            if (cli_parse_i64(cmd, "-k", optarg, 1, 1 << 20, &k)) return CLI_USAGE;
            break;
        case 'o':
            out = optarg;
            break;
        case OPT_DISTANCES:
            dist_out = optarg;
            break;
        }
    }
    if (optind < argc) return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!ref_path == !to.index_path)
        return cli_usage_error(cmd, "exactly one of --ref and --index is required");
    if (!k) return cli_usage_error(cmd, "-k is required");
    if (!out) return cli_usage_error(cmd, "-o is required");
    if (cli_dist_size() > 1) {
        if (to.index_path)
            return cli_usage_error(cmd, "--index does not run on several MPI ranks; use --ref");
        cli_dist_job job = {cmd, 0, ref_path, query_path, out, dist_out, k, 0.0, &to.run, p.stats};
        return cli_dist_neighbours(&job);
    }

    const char *ins[] = {ref_path, query_path, to.index_path}, *outs[] = {out, dist_out};
    if (cli_check_paths(cmd, ins, 3, outs, 2)) return CLI_ERROR;

    cli_gpu_start gpu;
    cli_gpu_start_begin(&gpu, to.run.backend);
    double t0 = canopy_now();
    canopy_array ra = {0}, qa;
    canopy_points ref, query;
    canopy_index *ix = NULL;
    int loaded = 0;
    if (to.index_path) {
        ref_path = to.index_path;
        if (!cli_load_index(cmd, ref_path, &ix, &ref)) {
            loaded = !cli_load_ref_query(cmd, NULL, query_path, &ra, &ref, &qa, &query);
            if (!loaded) canopy_index_free(ix);
        }
    } else {
        loaded = !cli_load_ref_query(cmd, ref_path, query_path, &ra, &ref, &qa, &query);
    }
    double t_load = canopy_now() - t0;
    if (!loaded) {
        cli_gpu_start_join(&gpu);
        return CLI_ERROR;
    }
    int rc = CLI_OK;
    int64_t candidates = query_path ? ref.n : ref.n - 1;
    int64_t nq = query_path ? query.n : ref.n;
    int64_t *idx = NULL;
    float *d2 = NULL;
    if (query_path && query.d != ref.d) {
        fprintf(stderr, "canopy %s: %s has %d columns but %s has %d\n", cmd, query_path,
                (int)query.d, ref_path, (int)ref.d);
        rc = CLI_ERROR;
    } else if (k > candidates) {
        fprintf(stderr, "canopy %s: k = %lld exceeds the %lld candidate points in %s%s\n", cmd,
                (long long)k, (long long)(candidates > 0 ? candidates : 0), ref_path,
                query_path ? "" : " (self excluded)");
        rc = CLI_ERROR;
    } else if (canopy_alloc((void **)&idx, (size_t)(nq * k + 1), sizeof *idx) ||
               /* distances only for --distances: the walk then writes a third less */
               (dist_out && canopy_alloc((void **)&d2, (size_t)(nq * k + 1), sizeof *d2))) {
        rc = cli_runtime_error(cmd);
    }
    if (rc == CLI_OK) cli_gpu_start_sized(&gpu, to.run.backend, nq);
    if (rc == CLI_OK && gpu.started) {
        /* the result pages fault in now, while CUDA starts, not during the copies back */
        memset(idx, 0, sizeof *idx * (size_t)(nq * k + 1));
        if (d2) memset(d2, 0, sizeof *d2 * (size_t)(nq * k + 1));
    }
    cli_gpu_start_join(&gpu); /* the first GPU call comes next */
    canopy_stats st;
    if (rc == CLI_OK &&
        (ix ? canopy_index_knn(ix, query, (int32_t)k, &to.run, idx, d2, p.stats ? &st : NULL)
            : canopy_knn(ref, query, (int32_t)k, &to.run, idx, d2, p.stats ? &st : NULL)))
        rc = cli_runtime_error(cmd);
    double t_write = 0.0;
    if (rc == CLI_OK) {
        if (d2) {
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
            for (int64_t i = 0; i < nq * k; i++) d2[i] = sqrtf(d2[i]);
        }
        const char *paths[2] = {out, dist_out};
        canopy_array arrays[2] = {cli_array_view(idx, CANOPY_I64, nq, k),
                                  cli_array_view(d2, CANOPY_F32, nq, k)};
        rc = cli_write_arrays(cmd, 2, paths, arrays, &t_write);
    }
    if (rc == CLI_OK) {
        cli_summary("%s: %lld queries, k = %lld, %lld reference points, d = %d -> %s%s%s", cmd,
                    (long long)nq, (long long)k, (long long)ref.n, (int)ref.d, out,
                    dist_out ? ", " : "", dist_out ? dist_out : "");
        if (p.stats) {
            trav_print_stats(cmd, &st, t_load, t_write);
            cli_gpu_start_print(&gpu);
        }
    }
    canopy_free(idx);
    canopy_free(d2);
    canopy_array_release(&ra);
    canopy_array_release(&qa);
    canopy_index_free(ix);
    return rc;
}

int cmd_knn(int argc, char **argv) {
    return run_knn("knn", argc, argv, 0);
}
int cmd_nn(int argc, char **argv) {
    return run_knn("nn", argc, argv, 1);
}
