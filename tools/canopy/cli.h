/* SPDX-License-Identifier: MIT */
/* Shared pieces of the canopy command line: exit codes, error reporting, and
 * option parsing helpers, so every subcommand behaves the same way. */
#ifndef CANOPY_CLI_H
#define CANOPY_CLI_H

#include "canopy.h"
#include "io/io.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_OK = 0, CLI_ERROR = 1, CLI_USAGE = 2 };

/* Long options that mean the same in every subcommand use these values, so
 * getopt_long tables can share them. */
enum {
    OPT_HELP = 'h',
    OPT_THREADS = 1000,
    OPT_SEED,
    OPT_STATS,
    OPT_QUIET,
    OPT_FIRST_LOCAL = 1100 /* subcommands number their own options from here */
};

/* The handler of the options a family of subcommands shares (ctx its settings):
 * returns 1 if handled, 0 if not one of them, or -1 after printing a usage error. */
typedef int (*cli_shared_handler)(const char *cmd, int opt, const char *arg, void *ctx);

/* One subcommand's option parsing: getopt_long over its tables, with the options every
 * subcommand spells the same way handled here (--help, --threads, --seed, --stats, an
 * unknown option) and, for a family of subcommands, the options the family shares
 * (trav_opts, forest_opts), so each subcommand's loop holds only its own options. */
typedef struct cli_parser {
    const char *cmd;
    const char *short_opts;
    const struct option *long_opts;
    void (*usage)(FILE *f);
    cli_shared_handler shared; /* NULL for none */
    void *shared_ctx;
    uint64_t seed; /* --seed S; only meaningful when have_seed */
    int have_seed;
    int stats; /* --stats: CLI_STATS_TEXT or CLI_STATS_JSON; 0 when not given */
    int rc;    /* the exit code once cli_next_option returned CLI_STOP */
} cli_parser;

enum { CLI_STATS_TEXT = 1, CLI_STATS_JSON = 2 };

/* cli_next_option's answer when the subcommand must return p->rc. */
enum { CLI_STOP = -2 };

/* A parser over the subcommand's tables and its family's handler (NULL for none),
 * with getopt reset to argv[1]. */
cli_parser cli_parser_start(const char *cmd, const char *short_opts, const struct option *long_opts,
                            void (*usage)(FILE *f), cli_shared_handler shared, void *shared_ctx);
/* The next option that is the subcommand's own, for its switch (getopt's optarg is
 * its argument); -1 after the last option, optind then indexing the first operand; or
 * CLI_STOP after --help (usage printed on stdout, p->rc CLI_OK) or a usage error
 * (printed, p->rc CLI_USAGE). */
int cli_next_option(cli_parser *p, int argc, char **argv);

typedef struct cli_command {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv);
} cli_command;

/* Prints "canopy CMD: message" and the --help hint to stderr; returns CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints "canopy CMD: <canopy_last_error()>" to stderr; returns CLI_ERROR. */
int cli_runtime_error(const char *cmd);

/* The single operand APP (after the options) of a subcommand with several
 * applications: its index in names[0..n), or -1 after a usage error when it is
 * missing, unknown or followed by another operand. */
int cli_app_operand(const char *cmd, int argc, char **argv, const char *const *names, int n);

/* Strict number parsing: the whole string must be a number in [lo, hi]. Return 0 on
 * success, else print a usage error naming the option and return CLI_USAGE. */
int cli_parse_i64(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
                  int64_t *out);
int cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out);
int cli_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                     double *out);
/* --threads T: T >= 1. Sets canopy_set_threads. */
int cli_parse_threads(const char *cmd, const char *s);

/* Writes each array to its path (.csv by extension, else .npy), all or nothing
 * (canopy_outfile_commit_all): if one fails, every target stays as it was and
 * CLI_ERROR is returned. NULL paths are skipped (at most 8 outputs). Stores the seconds the writes
 * took in *seconds unless it is NULL. */
int cli_write_arrays(const char *cmd, int n, const char *const *paths, const canopy_array *arrays,
                     double *seconds);
/* n counts (doubles that hold whole numbers) written as an int64 array as they come,
 * from canopy_paircount_blocks' sink cli_counts_put: a .npy (or '-') a block at a time
 * (with 10^6 bins no array of 8 MB), other formats kept and written by the commit.
 * total is their sum, seconds the time spent writing. */
enum { CLI_COUNTS_BLOCK = 8192 };
typedef struct cli_counts {
    const char *cmd, *path;
    int64_t n, total;
    double seconds;
    int npy;
    canopy_outfile o; /* .npy: the open output */
    int64_t *all;     /* other formats: every count */
    int64_t buf[CLI_COUNTS_BLOCK];
} cli_counts;
/* A usage or runtime error (returned, printed) or 0. */
int cli_counts_open(cli_counts *w, const char *cmd, const char *path, int64_t n);
canopy_status cli_counts_put(void *w, int32_t first, int32_t n, const double *counts);
/* The output committed (a runtime error is printed and returned), or abandoned. */
int cli_counts_commit(cli_counts *w);
void cli_counts_abort(cli_counts *w);
/* Writes one array in the format its name's extension names (.npy, .csv, .fvecs,
 * .ivecs; '-' is .npy on standard output); another extension is refused. */
canopy_status cli_write_array(const char *path, const canopy_array *a);
/* A usage error (returned) when an output's extension names no array format, so a
 * command refuses it before any work; 0 when all are fine (NULL entries skipped). */
int cli_check_array_outputs(const char *cmd, int n, const char *const *paths);
/* Checks a subcommand's file names before any work (NULL entries skipped): an output
 * that exists must be a regular file (the atomic rename would replace a device or
 * FIFO), must not be one of the inputs, nor the same file as another output (device
 * and inode for existing files, resolved directory + name for new ones); at most one
 * output may be "-" (standard output, not a terminal), and then the summary line is
 * left out. Returns 0, or CLI_ERROR after a message naming the path. */
int cli_check_paths(const char *cmd, const char *const *inputs, int n_in,
                    const char *const *outputs, int n_out);
int cli_stdout_data(void); /* an output is standard output */
/* Flushes and closes standard output at exit; a write error (a full disk, /dev/full)
 * prints a message and turns exit code 0 into CLI_ERROR. Returns the exit code. */
int cli_close_stdout(int rc);

/* A non-owning array over existing memory; cols 0 makes it 1-D. */
canopy_array cli_array_view(void *data, canopy_dtype t, int64_t rows, int64_t cols);

/* The one summary line a subcommand prints on stdout after success ("knn: 1000 queries
 * ... -> out.npy"), unless --quiet was given: every subcommand that writes files ends with
 * exactly one (gen one per file). --quiet is accepted by every subcommand that parses with
 * cli_parser, without listing it in its table. */
void cli_summary(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
int cli_is_quiet(void);

/* The name in names[0..n) closest to word (edit distance at most 2, or word a prefix of
 * it), for "did you mean" hints; NULL when none is close. */
const char *cli_suggest(const char *word, const char *const *names, int n);

/* --stats=json: one JSON object on one line of stderr per run, the same schema for every
 * subcommand (docs/stats.md):
 *   {"schema": "canopy-stats/1", "command": ..., "version": ..., "threads": ...,
 *    "seconds": {phase: s, ...}, "counts": {name: number, ...},
 *    "choices": {name: "what ran", ...}, "note": "..."}
 * Phases: "load" (inputs), "load_model", "build", "schedule", "transfer", "run" (the
 * work itself), "write", and GPU "upload", "kernel", "download". A subcommand fills a
 * cli_json with these calls, then cli_json_emit prints and frees it. */
typedef struct cli_json cli_json;
int cli_stats_json(void); /* --stats=json was given */
cli_json *cli_json_begin(const char *cmd);
void cli_json_seconds(cli_json *j, const char *phase, double seconds);
void cli_json_count(cli_json *j, const char *name, double value);
void cli_json_choice(cli_json *j, const char *name, const char *value);
void cli_json_emit(cli_json *j, const char *note);

/* Every subcommand, defined in cmd_<name>.c. */
int cmd_info(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_knn(int argc, char **argv);
int cmd_nn(int argc, char **argv);
int cmd_radius(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_gravity(int argc, char **argv);
int cmd_nbody(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_paircount(int argc, char **argv);
int cmd_kde(int argc, char **argv);
int cmd_graph(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_forest(int argc, char **argv);
int cmd_forest_compile(int argc, char **argv); /* canopy forest compile (cmd_forest_compile.c) */
int cmd_grep(int argc, char **argv);
int cmd_bptree(int argc, char **argv);

#endif
