#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage_error(const char *cmd, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "canopy %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'canopy %s --help'.\n", cmd);
    va_end(ap);
    return CLI_USAGE;
}

int cli_runtime_error(const char *cmd) {
    fprintf(stderr, "canopy %s: %s\n", cmd, canopy_last_error());
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

cli_parser cli_parser_start(const char *cmd, const char *short_opts, const struct option *long_opts,
                            void (*usage)(FILE *f), cli_shared_handler shared, void *shared_ctx) {
    cli_parser p;
    memset(&p, 0, sizeof p);
    p.cmd = cmd;
    p.short_opts = short_opts;
    p.long_opts = long_opts;
    p.usage = usage;
    p.shared = shared;
    p.shared_ctx = shared_ctx;
    optind = 1;
    return p;
}

int cli_next_option(cli_parser *p, int argc, char **argv) {
    int c;
    while ((c = getopt_long(argc, argv, p->short_opts, p->long_opts, NULL)) != -1) {
        int rc = 0;
        switch (c) {
        case OPT_HELP:
            p->usage(stdout);
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
            p->stats = 1;
            break;
        case '?':
            rc = cli_usage_error(p->cmd, "unknown option");
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

int cli_write_arrays(const char *cmd, int n, const char *const *paths, const canopy_array *arrays,
                     double *seconds) {
    double t0 = canopy_now();
    for (int i = 0; i < n; i++) {
        if (!paths[i]) continue;
        const char *dot = strrchr(paths[i], '.');
        canopy_status s = dot && strcmp(dot, ".csv") == 0
                              ? canopy_csv_write(paths[i], &arrays[i], NULL)
                              : canopy_npy_write(paths[i], &arrays[i]);
        if (s) {
            /* All or nothing: remove what this run already wrote. */
            for (int j = 0; j < i; j++)
                if (paths[j]) remove(paths[j]);
            return cli_runtime_error(cmd);
        }
    }
    if (seconds) *seconds = canopy_now() - t0;
    return 0;
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
