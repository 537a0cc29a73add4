/* SPDX-License-Identifier: MIT */
/* canopy gen: generate points from a generator or a named workload and write them.
 *
 * Everything is generated first, then each file is written to a temporary name and
 * renamed only when all writes have succeeded, so a failed run leaves no new file and
 * replaces no old one. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include "cli.h"
#include "gen/gen.h"
#include "io/io.h"

#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CMD "gen"

enum {
    OPT_N = OPT_FIRST_LOCAL,
    OPT_D,
    OPT_NQ,
    OPT_CLUSTERS,
    OPT_SPREAD,
    OPT_BOX,
    OPT_QUERY_OUT,
    OPT_VELOCITIES,
    OPT_LABELS
};

/* Defaults of the raw generators (a named workload replaces them with its own). */
#define DEFAULT_N 100000
#define DEFAULT_D 3
#define DEFAULT_SEED 42
#define DEFAULT_CLUSTERS 64
#define DEFAULT_SPREAD 0.01

static const struct {
    const char *name;
    canopy_gen_kind kind;
    const char *summary;
} generators[] = {
    {"uniform", CANOPY_GEN_UNIFORM, "uniform in the box [LO,HI)^d"},
    {"clusters", CANOPY_GEN_CLUSTERS, "k equal-weight Gaussians, centres uniform in [0,1)^d"},
    {"cities", CANOPY_GEN_CITIES,
     "k Gaussians of Zipf sizes, spreads S/100..S, 1/8 uniform background in [0,1)^d"},
    {"plummer", CANOPY_GEN_PLUMMER, "Plummer sphere, 3-D, Henon units, centre-of-mass frame"},
};
enum { N_GENERATORS = sizeof generators / sizeof generators[0] };

static const char *kind_name(canopy_gen_kind k) {
    for (int i = 0; i < N_GENERATORS; i++)
        if (generators[i].kind == k) return generators[i].name;
    return "?";
}

static void usage(FILE *f) {
    fprintf(f, "usage: canopy gen NAME -o FILE [--n N] [--d D] [--seed S] [--threads T]\n"
               "  uniform:            [--box LO:HI]\n"
               "  clusters, cities:   [--clusters K] [--spread S] [--labels FILE]\n"
               "  all but plummer:    [--query-out FILE [--nq NQ]]\n"
               "  plummer:            [--velocities FILE]\n\n"
               "Generates float32 points deterministically (the same for any thread count) and\n"
               "writes them as .npy or .csv, chosen by each file's extension.\n\n"
               "Generators:\n");
    for (int i = 0; i < N_GENERATORS; i++)
        fprintf(f, "  %-10s %s\n", generators[i].name, generators[i].summary);
    fprintf(f,
            "  defaults: n %d, d %d, seed %d, box 0:1, clusters %d, spread %g; plummer is\n"
            "  always 3-D.\n\n"
            "Named workloads (their values are the defaults; options override them):\n",
            DEFAULT_N, DEFAULT_D, DEFAULT_SEED, DEFAULT_CLUSTERS, DEFAULT_SPREAD);
    for (const canopy_workload *w = canopy_workloads(); w->name; w++) {
        fprintf(f, "  %-10s %s, n %lld", w->name, kind_name(w->kind), (long long)w->n);
        if (w->n_query) fprintf(f, ", nq %lld", (long long)w->n_query);
        fprintf(f, ", d %d", (int)w->d);
        if (w->kind == CANOPY_GEN_CLUSTERS || w->kind == CANOPY_GEN_CITIES)
            fprintf(f, ", clusters %d, spread %g", (int)w->clusters, w->spread);
        fprintf(f, ", seed %llu\n  %-10s %s\n", (unsigned long long)w->seed, "", w->summary);
    }
    fprintf(f, "\nOptions:\n"
               "  -o FILE             the points (reference half), (n, d) float32\n"
               "  --n N               number of points (bodies for plummer)\n"
               "  --d D               dimension\n"
               "  --seed S            seed (unsigned 64-bit)\n"
               "  --box LO:HI         uniform box, LO < HI\n"
               "  --clusters K        number of clusters\n"
               "  --spread S          standard deviation of each cluster (cities: the widest)\n"
               "  --query-out FILE    also write the query half: rows n .. n+nq-1 of the same\n"
               "                      generation, (nq, d) float32\n"
               "  --nq NQ             query points (default: the workload's, else n)\n"
               "  --labels FILE       cluster of each reference point, (n,) int32 (cities:\n"
               "                      -1 for the background)\n"
               "  --velocities FILE   plummer velocities, (n, 3) float32\n"
               "  --threads T         CPU threads (the output does not depend on it)\n"
               "  -h, --help          this help\n\n"
               "Prints one line per file written. Exit codes: 0 success, 1 runtime error,\n"
               "2 usage error. See docs/generators.md.\n");
}

typedef enum { FMT_NPY, FMT_CSV } file_format;

/* One file to write: its array, where it goes and the summary line's details. */
typedef struct output {
    const char *path;
    const char *option;
    file_format format;
    canopy_array array;
    char desc[192];
    double seconds;
} output;

static int format_of(const char *option, const char *path, file_format *out) {
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot && (!slash || dot > slash)) {
        if (!strcmp(dot, ".npy")) {
            *out = FMT_NPY;
            return 0;
        }
        if (!strcmp(dot, ".csv")) {
            *out = FMT_CSV;
            return 0;
        }
    }
    return cli_usage_error(CMD, "%s '%s': the file name must end in .npy or .csv", option, path);
}

/* Writes every output to its temporary, then commits them as one set: on any failure
 * every target stays as it was (canopy_outfile_commit_all). */
static canopy_status write_all(output *outs, int n_out) {
    canopy_outfile f[4];
    canopy_status s = CANOPY_OK;
    int m = 0;
    for (; m < n_out && !s; m++) {
        output *o = &outs[m];
        double t0 = canopy_now();
        if ((s = canopy_outfile_open(&f[m], o->path))) break;
        s = o->format == FMT_NPY ? canopy_npy_write_to(&f[m], &o->array)
                                 : canopy_csv_write_to(&f[m], &o->array, NULL);
        o->seconds += canopy_now() - t0;
    }
    if (!s) return canopy_outfile_commit_all(f, m);
    for (int i = 0; i < m; i++) canopy_outfile_abort(&f[i]);
    return s;
}

static canopy_status alloc_points(output *o, canopy_dtype t, int64_t rows, int64_t cols) {
    int64_t shape[2] = {rows, cols};
    return canopy_array_alloc(&o->array, t, cols ? 2 : 1, shape);
}

static const struct option gen_long_opts[] = {
    {"help", no_argument, NULL, OPT_HELP},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"seed", required_argument, NULL, OPT_SEED},
    {"n", required_argument, NULL, OPT_N},
    {"d", required_argument, NULL, OPT_D},
    {"nq", required_argument, NULL, OPT_NQ},
    {"clusters", required_argument, NULL, OPT_CLUSTERS},
    {"spread", required_argument, NULL, OPT_SPREAD},
    {"box", required_argument, NULL, OPT_BOX},
    {"query-out", required_argument, NULL, OPT_QUERY_OUT},
    {"velocities", required_argument, NULL, OPT_VELOCITIES},
    {"labels", required_argument, NULL, OPT_LABELS},
    {NULL, 0, NULL, 0}};

/* The command line, once parsed; have_* says the option was given. */
typedef struct gen_args {
    int64_t n, d, nq, k;
    double spread, lo, hi;
    int have_n, have_d, have_nq, have_k, have_spread, have_box;
    const char *out_path, *query_path, *vel_path, *labels_path;
} gen_args;

/* --box LO:HI. */
static int parse_box(gen_args *a, const char *arg) {
    char buf[256];
    char *colon;
    if (strlen(arg) >= sizeof buf || !(colon = strchr(strcpy(buf, arg), ':')))
        return cli_usage_error(CMD, "--box: '%s' is not LO:HI", arg);
    *colon = '\0';
    int rc = cli_parse_double(CMD, "--box", buf, -FLT_MAX, FLT_MAX, &a->lo);
    if (!rc) rc = cli_parse_double(CMD, "--box", colon + 1, -FLT_MAX, FLT_MAX, &a->hi);
    if (!rc && !(a->lo < a->hi))
        return cli_usage_error(CMD, "--box: LO %g must be below HI %g", a->lo, a->hi);
    a->have_box = 1;
    return rc;
}

/* Option c (argument optarg) of gen's own: 0, or the exit code after a usage error. */
static int gen_option(gen_args *a, int c) {
    switch (c) {
    case OPT_N:
        a->have_n = 1;
        return cli_parse_i64(CMD, "--n", optarg, 1, INT64_MAX, &a->n);
    case OPT_D:
        a->have_d = 1;
        return cli_parse_i64(CMD, "--d", optarg, 1, INT32_MAX, &a->d);
    case OPT_NQ:
        a->have_nq = 1;
        return cli_parse_i64(CMD, "--nq", optarg, 1, INT64_MAX, &a->nq);
    case OPT_CLUSTERS:
        a->have_k = 1;
        return cli_parse_i64(CMD, "--clusters", optarg, 1, INT32_MAX, &a->k);
    case OPT_SPREAD:
        a->have_spread = 1;
        return cli_parse_double(CMD, "--spread", optarg, 0.0, 1e36, &a->spread);
    case OPT_BOX:
        return parse_box(a, optarg);
    case 'o':
        a->out_path = optarg;
        return 0;
    case OPT_QUERY_OUT:
        a->query_path = optarg;
        return 0;
    case OPT_VELOCITIES:
        a->vel_path = optarg;
        return 0;
    case OPT_LABELS:
        a->labels_path = optarg;
        return 0;
    }
    return 0;
}

/* NAME as a named workload (*w) or a raw generator (*w NULL): its kind, or a usage
 * error with the closest name. */
static int resolve_name(const char *name, canopy_gen_kind *kind, const canopy_workload **w) {
    *w = canopy_workload_find(name);
    if (*w) {
        *kind = (*w)->kind;
        return 0;
    }
    for (int i = 0; i < N_GENERATORS; i++)
        if (!strcmp(name, generators[i].name)) {
            *kind = generators[i].kind;
            return 0;
        }
    const char *names[64];
    int nn = 0;
    for (int i = 0; i < N_GENERATORS && nn < 64; i++) names[nn++] = generators[i].name;
    for (const canopy_workload *t = canopy_workloads(); t->name && nn < 64; t++)
        names[nn++] = t->name;
    const char *guess = cli_suggest(name, names, nn);
    if (guess)
        return cli_usage_error(CMD, "unknown generator or workload '%s'; did you mean '%s'?", name,
                               guess);
    return cli_usage_error(CMD, "unknown generator or workload '%s'", name);
}

/* Options that do not apply to this generator are mistakes, not no-ops. */
static int check_applicable(const gen_args *a, canopy_gen_kind kind) {
    const char *gen = kind_name(kind);
    int mixture = kind == CANOPY_GEN_CLUSTERS || kind == CANOPY_GEN_CITIES;
    if (a->have_box && kind != CANOPY_GEN_UNIFORM)
        return cli_usage_error(CMD, "--box applies only to uniform, not %s", gen);
    const char *cluster_opt = a->have_k        ? "--clusters"
                              : a->have_spread ? "--spread"
                              : a->labels_path ? "--labels"
                                               : NULL;
    if (cluster_opt && !mixture)
        return cli_usage_error(CMD, "%s applies only to clusters and cities, not %s", cluster_opt,
                               gen);
    if (a->vel_path && kind != CANOPY_GEN_PLUMMER)
        return cli_usage_error(CMD, "--velocities applies only to plummer, not %s", gen);
    if (a->have_d && kind == CANOPY_GEN_PLUMMER)
        return cli_usage_error(CMD, "--d does not apply to plummer (always 3-D)");
    if (a->query_path && kind == CANOPY_GEN_PLUMMER)
        return cli_usage_error(CMD, "--query-out does not apply to plummer");
    if (a->have_nq && !a->query_path) return cli_usage_error(CMD, "--nq needs --query-out");
    if (a->query_path && a->nq > INT64_MAX - a->n)
        return cli_usage_error(CMD, "--n plus --nq is too large");
    if (!a->out_path) return cli_usage_error(CMD, "missing -o FILE");
    return 0;
}

/* The points, with the velocities (second) or labels their generator gives. */
static canopy_status gen_points(const gen_args *a, canopy_gen_kind kind, uint64_t seed,
                                output *points, output *second, output *labels) {
    unsigned long long useed = (unsigned long long)seed;
    canopy_status s = CANOPY_OK;
    switch (kind) {
    case CANOPY_GEN_UNIFORM:
        s = canopy_gen_uniform(points->array.data, a->n, (int32_t)a->d, a->lo, a->hi, seed);
        snprintf(points->desc, sizeof points->desc, "uniform [%g,%g), seed %llu", a->lo, a->hi,
                 useed);
        break;
    case CANOPY_GEN_CLUSTERS:
    case CANOPY_GEN_CITIES:
        s = (kind == CANOPY_GEN_CITIES ? canopy_gen_cities_rows : canopy_gen_clusters_rows)(
            points->array.data, labels ? labels->array.data : NULL, 0, a->n, (int32_t)a->d,
            (int32_t)a->k, a->spread, seed);
        snprintf(points->desc, sizeof points->desc, "%lld %s, spread %g, seed %llu",
                 (long long)a->k, kind == CANOPY_GEN_CITIES ? "cities" : "clusters", a->spread,
                 useed);
        if (labels) snprintf(labels->desc, sizeof labels->desc, "cluster labels, seed %llu", useed);
        break;
    case CANOPY_GEN_PLUMMER:
        s = canopy_gen_plummer(points->array.data, second ? second->array.data : NULL, a->n, seed);
        snprintf(points->desc, sizeof points->desc, "plummer positions, Henon units, seed %llu",
                 useed);
        if (second)
            snprintf(second->desc, sizeof second->desc,
                     "plummer velocities, Henon units, seed %llu", useed);
        break;
    }
    return s;
}

/* The query rows: the rows after the points' of the same generator and seed. */
static canopy_status gen_queries(const gen_args *a, canopy_gen_kind kind, uint64_t seed,
                                 output *second) {
    unsigned long long useed = (unsigned long long)seed;
    canopy_status s;
    if (kind == CANOPY_GEN_UNIFORM) {
        s = canopy_gen_uniform_rows(second->array.data, a->n, a->nq, (int32_t)a->d, a->lo, a->hi,
                                    seed);
        snprintf(second->desc, sizeof second->desc,
                 "uniform [%g,%g) query rows %lld-%lld, seed %llu", a->lo, a->hi, (long long)a->n,
                 (long long)(a->n + a->nq - 1), useed);
    } else {
        s = (kind == CANOPY_GEN_CITIES ? canopy_gen_cities_rows : canopy_gen_clusters_rows)(
            second->array.data, NULL, a->n, a->nq, (int32_t)a->d, (int32_t)a->k, a->spread, seed);
        snprintf(second->desc, sizeof second->desc,
                 "%lld %s, spread %g, query rows %lld-%lld, seed %llu", (long long)a->k,
                 kind == CANOPY_GEN_CITIES ? "cities" : "clusters", a->spread, (long long)a->n,
                 (long long)(a->n + a->nq - 1), useed);
    }
    return s;
}

int cmd_gen(int argc, char **argv) {
    gen_args a;
    memset(&a, 0, sizeof a);
    a.hi = 1.0;
    cli_parser p = cli_parser_start(CMD, "ho:", gen_long_opts, usage, NULL, NULL);
    int c, rc = 0;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        if (c == CLI_STOP) return p.rc;
        if ((rc = gen_option(&a, c))) return rc;
    }
    if (optind >= argc) return cli_usage_error(CMD, "missing NAME (a generator or workload)");
    const char *name = argv[optind];
    if (optind + 1 < argc)
        return cli_usage_error(CMD, "unexpected argument '%s'", argv[optind + 1]);

    /* Resolve NAME, then fill in what the options left unset. */
    canopy_gen_kind kind = CANOPY_GEN_UNIFORM;
    const canopy_workload *w;
    if ((rc = resolve_name(name, &kind, &w))) return rc;
    if (!a.have_n) a.n = w ? w->n : DEFAULT_N;
    if (!a.have_d) a.d = w ? w->d : DEFAULT_D;
    uint64_t seed = p.have_seed ? p.seed : w ? w->seed : DEFAULT_SEED;
    int mixture = kind == CANOPY_GEN_CLUSTERS || kind == CANOPY_GEN_CITIES;
    if (!a.have_k) a.k = w && mixture ? w->clusters : DEFAULT_CLUSTERS;
    if (!a.have_spread) a.spread = w && mixture ? w->spread : DEFAULT_SPREAD;
    if (!a.have_nq) a.nq = w && w->n_query ? w->n_query : a.n;
    if ((rc = check_applicable(&a, kind))) return rc;
    if (kind == CANOPY_GEN_PLUMMER) a.d = 3;

    output outs[3];
    memset(outs, 0, sizeof outs);
    int n_out = 0;
    const char *paths[3] = {a.out_path, a.query_path ? a.query_path : a.vel_path, a.labels_path};
    const char *options[3] = {"-o", a.query_path ? "--query-out" : "--velocities", "--labels"};
    for (int i = 0; i < 3; i++) {
        if (!paths[i]) continue;
        for (int j = 0; j < n_out; j++)
            if (!strcmp(paths[i], outs[j].path))
                return cli_usage_error(CMD, "%s and %s name the same file '%s'", outs[j].option,
                                       options[i], paths[i]);
        outs[n_out].path = paths[i];
        outs[n_out].option = options[i];
        if ((rc = format_of(options[i], paths[i], &outs[n_out].format))) return rc;
        n_out++;
    }

    if (cli_check_paths(CMD, NULL, 0, paths, 3)) return CLI_ERROR;

    /* outs[0] holds the points; outs[1] the query half or the velocities; the labels
     * come last. */
    output *points = &outs[0];
    output *second = paths[1] ? &outs[1] : NULL;
    output *labels = a.labels_path ? &outs[n_out - 1] : NULL;
    canopy_status s = alloc_points(points, CANOPY_F32, a.n, a.d);
    if (s == CANOPY_OK && second)
        s = alloc_points(second, CANOPY_F32, a.query_path ? a.nq : a.n, a.d);
    if (s == CANOPY_OK && labels) s = alloc_points(labels, CANOPY_I32, a.n, 0);

    double t0 = canopy_now();
    if (s == CANOPY_OK) s = gen_points(&a, kind, seed, points, second, labels);
    points->seconds = canopy_now() - t0; /* labels and velocities come with the points */

    if (s == CANOPY_OK && a.query_path) {
        t0 = canopy_now();
        s = gen_queries(&a, kind, seed, second);
        second->seconds = canopy_now() - t0;
    }
    if (s == CANOPY_OK) s = write_all(outs, n_out);
    if (s == CANOPY_OK) {
        for (int i = 0; i < n_out; i++) {
            const canopy_array *arr = &outs[i].array;
            char cols[32] = ",";
            if (arr->ndim == 2) snprintf(cols, sizeof cols, ", %lld", (long long)arr->shape[1]);
            cli_summary("wrote %s: %s (%lld%s), %s, %.2f s", outs[i].path,
                        canopy_dtype_name(arr->dtype), (long long)arr->shape[0], cols, outs[i].desc,
                        outs[i].seconds);
        }
    }
    for (int i = 0; i < n_out; i++) canopy_array_release(&outs[i].array);
    return s == CANOPY_OK ? CLI_OK : cli_runtime_error(CMD);
}
