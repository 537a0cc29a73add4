/* SPDX-License-Identifier: MIT */
#define _XOPEN_SOURCE 700 /* pthread_condattr_setclock, clock_gettime, isatty, realpath */
#include "cli.h"
#include "io/io.h"

#include "core/device.h"

#include <errno.h>
#include <json.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int cli_quiet;          /* --quiet: no summary line, no progress line */
static int cli_stdout_is_data; /* an output is "-": no summary line on stdout */

/* ---- progress on stderr for long runs ---- */

/* After 2 s, a line on stderr ("canopy knn: running, 12 s") refreshed each second while
 * the command works, when stderr is a terminal and --quiet was not given; cleared
 * before anything else is printed. It only tells the run is alive: the library has no
 * progress callbacks to give a fraction done. */
static struct {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int running, stop;
    const char *cmd;
} cli_prog = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *cli_progress_main(void *arg) {
    (void)arg;
    struct timespec t0, wake;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    wake = t0;
    int shown = 0;
    pthread_mutex_lock(&cli_prog.mu);
    while (!cli_prog.stop) {
        wake.tv_sec += 1;
        if (pthread_cond_timedwait(&cli_prog.cv, &cli_prog.mu, &wake) == 0) continue;
        long elapsed = (long)(wake.tv_sec - t0.tv_sec);
        if (!cli_prog.stop && elapsed >= 2) {
            fprintf(stderr, "\rcanopy %s: running, %ld s", cli_prog.cmd, elapsed);
            fflush(stderr);
            shown = 1;
        }
    }
    if (shown) fputs("\r\033[K", stderr);
    pthread_mutex_unlock(&cli_prog.mu);
    return NULL;
}

static void cli_progress_stop(void) {
    pthread_mutex_lock(&cli_prog.mu);
    int running = cli_prog.running;
    cli_prog.stop = 1;
    cli_prog.running = 0;
    pthread_cond_signal(&cli_prog.cv);
    pthread_mutex_unlock(&cli_prog.mu);
    if (running) pthread_join(cli_prog.thread, NULL);
}

static void cli_progress_start(const char *cmd) {
    if (cli_prog.running || cli_quiet || !isatty(STDERR_FILENO)) return;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cli_prog.cv, &attr);
    pthread_condattr_destroy(&attr);
    cli_prog.cmd = cmd;
    cli_prog.stop = 0;
    if (pthread_create(&cli_prog.thread, NULL, cli_progress_main, NULL) != 0) return;
    cli_prog.running = 1;
    atexit(cli_progress_stop);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    cli_progress_stop();
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "canopy %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'canopy %s --help'.\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

int cli_runtime_error(const char *cmd) {
    cli_progress_stop();
    /* the library names its function ("knn: ..."); beside "canopy knn: " that repeats */
    const char *e = canopy_last_error();
    size_t n = strlen(cmd);
    if (strncmp(e, cmd, n) == 0 && e[n] == ':' && e[n + 1] == ' ') e += n + 2;
    fprintf(stderr, "canopy %s: %s\n", cmd, e);
    return CLI_ERROR;
}

int cli_parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                  int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno == ERANGE)
        return cli_usage_error(cmd, "%s: '%s' is not an integer", opt, s);
    if (v < lo || v > hi)
        return cli_usage_error(cmd, "%s: %lld is out of range [%lld, %lld]", opt, v, (long long)lo,
                               (long long)hi);
    *out = v;
    return 0;
}

int cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (*s == '\0' || *s == '-' || *end != '\0' || errno == ERANGE)
        return cli_usage_error(cmd, "%s: '%s' is not a non-negative integer", opt, s);
    *out = v;
    return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                     double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v))
        return cli_usage_error(cmd, "%s: '%s' is not a finite number", opt, s);
    if (v < lo || v > hi)
        return cli_usage_error(cmd, "%s: %g is out of range [%g, %g]", opt, v, lo, hi);
    *out = v;
    return 0;
}

int cli_parse_threads(const char *cmd, const char *s) {
    int64_t t = 0;
    int rc = cli_parse_i64(cmd, "--threads", s, 1, 4096, &t);
    if (rc) return rc;
    canopy_set_threads((int)t);
    return 0;
}

/* ---- the options every subcommand shares, summary line and typo suggestions ---- */

int cli_is_quiet(void) {
    return cli_quiet;
}

void cli_summary(const char *fmt, ...) {
    cli_progress_stop();
    if (cli_quiet || cli_stdout_is_data) return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

static int cli_has_long(const struct option *opts, const char *name) {
    for (; opts->name; opts++)
        if (!strcmp(opts->name, name)) return 1;
    return 0;
}

/* A subcommand's long options plus the ones every subcommand spells the same way:
 * --quiet, and --output for -o (so -o/--output is always the output file). */
static const struct option *cli_merge_common(const struct option *own, const char *short_opts) {
    static struct option merged[128];
    int n = 0;
    while (own[n].name) n++;
    if (n + 3 > (int)(sizeof merged / sizeof merged[0])) return own;
    memcpy(merged, own, (size_t)n * sizeof *own);
    if (!cli_has_long(own, "quiet"))
        merged[n++] = (struct option){"quiet", no_argument, NULL, OPT_QUIET};
    /* --stats takes an optional format: --stats=json. */
    for (int i = 0; i < n; i++)
        if (!strcmp(merged[i].name, "stats")) merged[i].has_arg = optional_argument;
    if (strstr(short_opts, "o:") && !cli_has_long(own, "output"))
        merged[n++] = (struct option){"output", required_argument, NULL, 'o'};
    memset(&merged[n], 0, sizeof merged[n]);
    return merged;
}

/* Levenshtein distance of two short strings (longer ones count as far apart). */
static int cli_edit_distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int row[64];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *cli_suggest(const char *word, const char *const *names, int n) {
    const char *best = NULL;
    int best_d = 3;
    size_t wl = strlen(word);
    for (int i = 0; i < n; i++) {
        int d = wl > 0 && !strncmp(names[i], word, wl) ? 1 : cli_edit_distance(word, names[i]);
        if (d < best_d) best_d = d, best = names[i];
    }
    return best;
}

/* getopt's '?': an unknown or ambiguous option, or one missing its argument, in one
 * line, with the closest long option when there is one. */
static int cli_bad_option(const cli_parser *p, int argc, char **argv) {
    const char *prev = optind > 0 && optind <= argc ? argv[optind - 1] : "";
    int is_long = !strncmp(prev, "--", 2);
    if (optopt != 0 && is_long && strchr(prev, '='))
        return cli_usage_error(p->cmd, "option '%.*s' takes no argument", (int)strcspn(prev, "="),
                               prev);
    if (optopt != 0 && is_long)
        return cli_usage_error(p->cmd, "option '%s' requires an argument", prev);
    if (optopt != 0 && strchr(p->short_opts, optopt))
        return cli_usage_error(p->cmd, "option '-%c' requires an argument", optopt);
    if (optopt != 0) return cli_usage_error(p->cmd, "unknown option '-%c'", optopt);
    char word[64];
    snprintf(word, sizeof word, "%s", prev + (is_long ? 2 : 0));
    word[strcspn(word, "=")] = '\0';
    const char *names[128];
    int n = 0;
    for (const struct option *o = p->long_opts; o->name && n < 128; o++) names[n++] = o->name;
    const char *s = cli_suggest(word, names, n);
    if (s) return cli_usage_error(p->cmd, "unknown option '--%s'; did you mean '--%s'?", word, s);
    return cli_usage_error(p->cmd, "unknown option '--%s'", word);
}

/* ---- --stats=json ---- */

static int cli_stats_mode;

int cli_stats_json(void) {
    return cli_stats_mode == CLI_STATS_JSON;
}

struct cli_json {
    json_object *root, *seconds, *counts, *choices;
};

cli_json *cli_json_begin(const char *cmd) {
    cli_json *j = calloc(1, sizeof *j);
    if (!j) return NULL;
    j->root = json_object_new_object();
    j->seconds = json_object_new_object();
    j->counts = json_object_new_object();
    j->choices = json_object_new_object();
    json_object_object_add(j->root, "schema", json_object_new_string("canopy-stats/1"));
    json_object_object_add(j->root, "command", json_object_new_string(cmd));
    json_object_object_add(j->root, "version", json_object_new_string(canopy_version()));
    json_object_object_add(j->root, "threads", json_object_new_int(canopy_threads()));
    return j;
}

void cli_json_seconds(cli_json *j, const char *phase, double seconds) {
    if (j) json_object_object_add(j->seconds, phase, json_object_new_double(seconds));
}

void cli_json_count(cli_json *j, const char *name, double value) {
    if (!j) return;
    /* Whole numbers print as integers, so counts read as counts. */
    json_object *v = value == (double)(int64_t)value && fabs(value) < 9e15
                         ? json_object_new_int64((int64_t)value)
                         : json_object_new_double(value);
    json_object_object_add(j->counts, name, v);
}

void cli_json_choice(cli_json *j, const char *name, const char *value) {
    if (j) json_object_object_add(j->choices, name, json_object_new_string(value ? value : ""));
}

void cli_json_emit(cli_json *j, const char *note) {
    if (!j) return;
    json_object_object_add(j->root, "seconds", j->seconds);
    json_object_object_add(j->root, "counts", j->counts);
    json_object_object_add(j->root, "choices", j->choices);
    json_object_object_add(j->root, "note", json_object_new_string(note ? note : ""));
    /* read last: whether anything in this run reached for CUDA (CPU work must not) */
    json_object *cuda = json_object_new_object();
    json_object_object_add(cuda, "load_attempts", json_object_new_int(canopy_cuda_load_attempts()));
    json_object_object_add(cuda, "loaded", json_object_new_boolean(canopy_cuda_loaded()));
    json_object_object_add(j->root, "cuda", cuda);
    fprintf(stderr, "%s\n", json_object_to_json_string_ext(j->root, JSON_C_TO_STRING_PLAIN));
    json_object_put(j->root);
    free(j);
}

cli_parser cli_parser_start(const char *cmd, const char *short_opts, const struct option *long_opts,
                            void (*usage)(FILE *f), cli_shared_handler shared, void *shared_ctx) {
    cli_parser p;
    memset(&p, 0, sizeof p);
    p.cmd = cmd;
    p.short_opts = short_opts;
    p.long_opts = cli_merge_common(long_opts, short_opts);
    p.usage = usage;
    p.shared = shared;
    p.shared_ctx = shared_ctx;
    optind = 1;
    opterr = 0; /* cli_next_option prints its own one-line messages, with a suggestion */
    return p;
}

int cli_next_option(cli_parser *p, int argc, char **argv) {
    int c;
    while ((c = getopt_long(argc, argv, p->short_opts, p->long_opts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case OPT_HELP:
            p->usage(stdout);
            printf("\nEvery command also takes --quiet (no summary line on success); those "
                   "with\n--stats also take --stats=json (one JSON line, one schema: "
                   "docs/stats.md).\n");
            if (strstr(p->short_opts, "o:") && strcmp(p->cmd, "gen"))
                printf("An output named '-' is standard output (.npy; docs/formats.md).\n");
            p->rc = CLI_OK;
            return CLI_STOP;
        case OPT_THREADS:
            rc = cli_parse_threads(p->cmd, optarg);
            break;
        case OPT_SEED:
            rc = cli_parse_u64(p->cmd, "--seed", optarg, &p->seed);
            p->have_seed = 1;
            break;
        case OPT_STATS:
            if (!optarg || !strcmp(optarg, "text"))
                p->stats = CLI_STATS_TEXT;
            else if (!strcmp(optarg, "json"))
                p->stats = cli_stats_mode = CLI_STATS_JSON;
            else
                rc = cli_usage_error(p->cmd,
                                     "--stats=%s: expected --stats, --stats=text or "
                                     "--stats=json",
                                     optarg);
            break;
        case OPT_QUIET:
            cli_quiet = 1;
            break;
        case '?':
            rc = cli_bad_option(p, argc, argv);
            break;
        default: {
            int h = p->shared ? p->shared(p->cmd, c, optarg, p->shared_ctx) : 0;
            if (h == 0) return c;
            if (h < 0) rc = CLI_USAGE;
        }
        }
        if (rc) {
            p->rc = rc;
            return CLI_STOP;
        }
    }
    cli_progress_start(p->cmd);
    return -1;
}

int cli_app_operand(const char *cmd, int argc, char **argv, const char *const *names, int n) {
    char list[256] = ""; /* "a, b or c" */
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof list; i++) {
        const char *sep = i == 0 ? "" : i < n - 1 ? ", " : " or ";
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", sep, names[i]);
    }
    if (optind >= argc) return cli_usage_error(cmd, "missing APP (%s)", list), -1;
    int app = 0;
    while (app < n && strcmp(argv[optind], names[app])) app++;
    if (app == n) return cli_usage_error(cmd, "unknown APP '%s' (%s)", argv[optind], list), -1;
    if (optind + 1 < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]), -1;
    return app;
}

/* The writer an output's extension names (case ignored; '-' is .npy), or NULL. */
typedef canopy_status (*cli_writer)(canopy_outfile *o, const canopy_array *a);
static canopy_status cli_write_csv_to(canopy_outfile *o, const canopy_array *a) {
    return canopy_csv_write_to(o, a, NULL);
}
static cli_writer cli_writer_for(const char *path) {
    const char *dot = strrchr(path, '.');
    if (!strcmp(path, "-") || (dot && !strcasecmp(dot, ".npy"))) return canopy_npy_write_to;
    if (dot && !strcasecmp(dot, ".csv")) return cli_write_csv_to;
    if (dot && (!strcasecmp(dot, ".fvecs") || !strcasecmp(dot, ".ivecs")))
        return canopy_vecs_write_to;
    return NULL;
}

canopy_status cli_write_array(const char *path, const canopy_array *a) {
    cli_writer w = cli_writer_for(path);
    if (!w)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "unknown output file type '%s' (expected .npy, .csv, .fvecs or .ivecs)",
                           path);
    canopy_outfile o;
    canopy_status s = canopy_outfile_open(&o, path);
    if (s) return s;
    if ((s = w(&o, a))) {
        canopy_outfile_abort(&o);
        return s;
    }
    return canopy_outfile_commit(&o);
}

int cli_check_array_outputs(const char *cmd, int n, const char *const *paths) {
    for (int i = 0; i < n; i++)
        if (paths[i] && !cli_writer_for(paths[i]))
            return cli_usage_error(cmd,
                                   "unknown output file type '%s' (expected .npy, .csv, .fvecs "
                                   "or .ivecs)",
                                   paths[i]);
    return 0;
}

int cli_write_arrays(const char *cmd, int n, const char *const *paths, const canopy_array *arrays,
                     double *seconds) {
    enum { MAX = 8 };
    double t0 = canopy_now();
    int rc = cli_check_array_outputs(cmd, n, paths); /* before writing any of them */
    if (rc) return rc;
    canopy_outfile o[MAX];
    int m = 0;
    canopy_status s = n > MAX ? canopy_fail(CANOPY_ERR_INTERNAL, "too many outputs") : CANOPY_OK;
    /* All or nothing: every output is written to its temporary first, and the set is
     * renamed together only once all were written (canopy_outfile_commit_all). */
    for (int i = 0; i < n && !s; i++) {
        if (!paths[i]) continue;
        if ((s = canopy_outfile_open(&o[m], paths[i]))) break;
        s = cli_writer_for(paths[i])(&o[m], &arrays[i]);
        m++;
    }
    if (!s)
        s = canopy_outfile_commit_all(o, m);
    else
        for (int i = 0; i < m; i++) canopy_outfile_abort(&o[i]);
    if (s) return cli_runtime_error(cmd);
    if (seconds) *seconds = canopy_now() - t0;
    return 0;
}

int cli_counts_open(cli_counts *w, const char *cmd, const char *path, int64_t n) {
    double t0 = canopy_now();
    w->cmd = cmd;
    w->path = path;
    w->n = n;
    w->total = 0;
    w->seconds = 0.0;
    w->all = NULL;
    w->npy = cli_writer_for(path) == canopy_npy_write_to;
    int rc = cli_check_array_outputs(cmd, 1, &path);
    if (rc) return rc;
    canopy_status s = CANOPY_OK;
    if (w->npy) {
        unsigned char head[CANOPY_NPY_HEADER_MAX];
        size_t len = 0;
        canopy_array a = cli_array_view(w->buf, CANOPY_I64, n, 0);
        s = canopy_npy_header(&a, head, &len);
        if (!s) s = canopy_outfile_open(&w->o, path);
        if (!s && (s = canopy_io_write(&w->o, head, len))) canopy_outfile_abort(&w->o);
    } else {
        s = canopy_alloc((void **)&w->all, (size_t)n, sizeof *w->all);
    }
    w->seconds = canopy_now() - t0;
    return s ? cli_runtime_error(cmd) : 0;
}

canopy_status cli_counts_put(void *vw, int32_t first, int32_t n, const double *counts) {
    cli_counts *w = (cli_counts *)vw;
    double t0 = canopy_now();
    canopy_status s =
        first + (int64_t)n <= w->n
            ? CANOPY_OK
            : canopy_fail(CANOPY_ERR_INTERNAL, "counts past the %lld announced", (long long)w->n);
    for (int32_t i0 = 0; i0 < n && !s; i0 += CLI_COUNTS_BLOCK) {
        int32_t m = n - i0 < CLI_COUNTS_BLOCK ? n - i0 : CLI_COUNTS_BLOCK;
        int64_t *to = w->npy ? w->buf : w->all + first + i0, sum = 0;
        const double *v = counts + i0;
        /* in [0, 2^52) a whole number is the low bits of itself + 2^52: a loop that
           vectorises without AVX-512's conversion (10^6 scalar ones took 1 ms); a
           block with another value is converted again one by one */
        int64_t outside = 0;
        for (int32_t i = 0; i < m; i++) {
            double y = v[i] + 0x1p52;
            int64_t bits;
            memcpy(&bits, &y, sizeof bits);
            sum += to[i] = bits - 0x4330000000000000;
            outside |= (bits >> 52) ^ 0x433; /* not in [2^52, 2^53) */
        }
        if (outside) {
            sum = 0;
            for (int32_t i = 0; i < m; i++) sum += to[i] = (int64_t)v[i];
        }
        w->total += sum;
        if (w->npy) s = canopy_io_write(&w->o, w->buf, sizeof *w->buf * (size_t)m);
    }
    w->seconds += canopy_now() - t0;
    return s;
}

int cli_counts_commit(cli_counts *w) {
    double t0 = canopy_now();
    int rc = 0;
    if (w->npy) {
        if (canopy_outfile_commit(&w->o)) rc = cli_runtime_error(w->cmd);
    } else {
        canopy_array a = cli_array_view(w->all, CANOPY_I64, w->n, 0);
        rc = cli_write_arrays(w->cmd, 1, &w->path, &a, NULL);
        canopy_free(w->all);
        w->all = NULL;
    }
    w->seconds += canopy_now() - t0;
    return rc;
}

void cli_counts_abort(cli_counts *w) {
    if (w->npy) canopy_outfile_abort(&w->o);
    canopy_free(w->all);
    w->all = NULL;
}

canopy_array cli_array_view(void *data, canopy_dtype t, int64_t rows, int64_t cols) {
    canopy_array a;
    memset(&a, 0, sizeof a);
    a.data = data;
    a.dtype = t;
    a.ndim = cols > 0 ? 2 : 1;
    a.shape[0] = rows;
    a.shape[1] = cols;
    return a;
}

/* ---- output paths and standard output ---- */

/* Where a not-yet-existing path would be created: its directory resolved (symbolic
 * links, "..", "./") plus its last component, so "x.npy" and "./d/../x.npy" compare
 * equal. NULL when the directory cannot be resolved (the write then fails anyway). */
static char *cli_resolved_new_path(const char *path) {
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
    if (!dir) return NULL;
    char *real = realpath(dir, NULL);
    free(dir);
    if (!real) return NULL;
    size_t n = strlen(real) + strlen(base) + 2;
    char *out = malloc(n);
    if (out) snprintf(out, n, "%s/%s", real, base);
    free(real);
    return out;
}

typedef struct cli_file_id {
    const char *path;
    int exists;
    dev_t dev;
    ino_t ino;
    char *resolved; /* for a new output */
} cli_file_id;

static int cli_same_file(const cli_file_id *a, const cli_file_id *b) {
    if (a->exists && b->exists) return a->dev == b->dev && a->ino == b->ino;
    if (!a->exists && !b->exists && a->resolved && b->resolved)
        return !strcmp(a->resolved, b->resolved);
    return 0;
}

int cli_check_paths(const char *cmd, const char *const *inputs, int n_in,
                    const char *const *outputs, int n_out) {
    enum { MAX = 16 };
    cli_file_id in[MAX], out[MAX];
    int ni = 0, no = 0, n_stdout = 0, rc = 0;
    for (int i = 0; i < n_in && ni < MAX; i++) {
        struct stat st;
        if (!inputs[i] || stat(inputs[i], &st) != 0) continue; /* the load reports it */
        in[ni++] = (cli_file_id){inputs[i], 1, st.st_dev, st.st_ino, NULL};
    }
    for (int i = 0; i < n_out && no < MAX && !rc; i++) {
        const char *p = outputs[i];
        if (!p) continue;
        if (!strcmp(p, "-")) {
            if (++n_stdout > 1) {
                fprintf(stderr, "canopy %s: only one output can be standard output ('-')\n", cmd);
                rc = CLI_ERROR;
            } else if (isatty(STDOUT_FILENO)) {
                fprintf(stderr,
                        "canopy %s: standard output is a terminal; redirect it to write "
                        "the output there\n",
                        cmd);
                rc = CLI_ERROR;
            }
            cli_stdout_is_data = 1;
            continue;
        }
        struct stat st;
        cli_file_id id = {p, 0, 0, 0, NULL};
        if (stat(p, &st) == 0) {
            if (!S_ISREG(st.st_mode)) {
                fprintf(stderr,
                        "canopy %s: output '%s' exists and is not a regular file; refusing "
                        "to replace it (use '-' for standard output)\n",
                        cmd, p);
                rc = CLI_ERROR;
                break;
            }
            id.exists = 1, id.dev = st.st_dev, id.ino = st.st_ino;
        } else {
            id.resolved = cli_resolved_new_path(p);
        }
        for (int j = 0; j < ni && !rc; j++)
            if (cli_same_file(&id, &in[j])) {
                fprintf(stderr,
                        "canopy %s: output '%s' is the input '%s'; refusing to overwrite it\n", cmd,
                        p, in[j].path);
                rc = CLI_ERROR;
            }
        for (int j = 0; j < no && !rc; j++)
            if (cli_same_file(&id, &out[j])) {
                fprintf(stderr, "canopy %s: outputs '%s' and '%s' are the same file\n", cmd,
                        out[j].path, p);
                rc = CLI_ERROR;
            }
        out[no++] = id;
    }
    for (int j = 0; j < no; j++) free(out[j].resolved);
    return rc;
}

int cli_stdout_data(void) {
    return cli_stdout_is_data;
}

int cli_close_stdout(int rc) {
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno ? errno : EIO;
    /* A closed stdout (EBADF) that nothing was written to is not an error. */
    if (fclose(stdout) != 0 && !bad && errno != EBADF) bad = 1, e = errno;
    if (!bad || rc) return rc; /* a failed command already said what went wrong */
    fprintf(stderr, "canopy: error writing standard output: %s\n", strerror(e));
    return rc ? rc : CLI_ERROR;
}
