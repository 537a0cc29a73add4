/* SPDX-License-Identifier: MIT */
/* canopy grep: count or print the lines matching any of many extended regular
 * expressions, with grep -E's options, output format and exit codes (0 a line was
 * selected, 1 none, 2 an error), so it can stand in for `grep -E` in scripts. */
#define _DEFAULT_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { GREP_MATCH = 0, GREP_NONE = 1, GREP_TROUBLE = 2 };
enum { OPT_ENGINE = OPT_FIRST_LOCAL, OPT_PER_PATTERN };

static void usage(FILE *f) {
    fprintf(f, "usage: canopy grep [OPTIONS] PATTERNS [FILE]...\n"
               "       canopy grep [OPTIONS] -e PATTERN... [-f FILE]... [FILE]...\n\n"
               "Selects the lines of each FILE (standard input when there is none, or for\n"
               "'-') that match any of the POSIX extended regular expressions, like grep -E\n"
               "in the C locale: bytes are characters, lines end at '\\n' (a CR stays part of\n"
               "the line). PATTERNS holding newlines are several patterns. All patterns are\n"
               "compiled into one bytecode program (Ren et al.'s IR) and matched without\n"
               "backtracking, in parallel blocks of lines; output keeps the file order.\n\n"
               "Options:\n"
               "  -e, --regexp=PATTERN   a pattern (repeatable; may be empty: matches all)\n"
               "  -f, --file=FILE        patterns, one per line (repeatable)\n"
               "  -E, --extended-regexp  accepted for compatibility (the only syntax)\n"
               "  -i, --ignore-case      ignore the case of ASCII letters\n"
               "  -v, --invert-match     select the lines matching no pattern\n"
               "  -x, --line-regexp      a pattern must match the whole line\n"
               "  -w, --word-regexp      a match must have no word byte [_[:alnum:]] just\n"
               "                         before or after it (-x wins over -w)\n"
               "  -c, --count            print the number of selected lines per file\n"
               "  -l, --files-with-matches  print only the names of files with a\n"
               "                         selected line\n"
               "  -L, --files-without-match  print only the names of files without one\n"
               "  -o, --only-matching    print each match (leftmost-longest, POSIX) on its\n"
               "                         own line instead of the line; empty matches are\n"
               "                         not printed; with -v nothing is printed\n"
               "  -n, --line-number      prefix each line with its 1-based number\n"
               "  -H, --with-filename    prefix each output with the file name\n"
               "  -h, --no-filename      never prefix the file name (default: with 2+ files)\n"
               "  -q, --quiet            print nothing; exit 0 if some line is selected\n"
               "  -s, --no-messages      no messages about missing or unreadable files\n"
               "  --count-per-pattern    per file, one line per pattern, in pattern order:\n"
               "                         [FILE:]COUNT<TAB>PATTERN, COUNT the lines matching\n"
               "                         that pattern (with -v: not matching it)\n"
               "  --engine=E             auto (= dfa), pike (scalar Thompson/Pike VM, the\n"
               "                         reference), simd (Pike VM on AVX2/AVX-512 lanes),\n"
               "                         dfa (lazy DFA + required-literal prefilter)\n"
               "  --threads=T            CPU threads (default: CANOPY_THREADS, else all)\n"
               "  --stats                engine, ISA, DFA states, literal prefilter strings (the\n"
               "                         patterns giving sets of them, those filtered on a\n"
               "                         rarer window), the lanes of its filter, bytes run by\n"
               "                         the DFA and by the 3-byte literal filter, and time\n"
               "                         per file on stderr\n"
               "  --help                 this help\n\n"
               "Syntax: literals, \\-escapes, '.', bracket expressions with ranges, negation\n"
               "and [:alpha:]-style classes, * + ? {m} {m,} {m,n} {,n}, |, ( ), ^ and $\n"
               "(anchors anywhere), \\w \\W \\s \\S. Back-references and \\b \\< \\> are\n"
               "rejected (not regular). See docs/regex.md for the differences from grep.\n\n"
               "Exit status: 0 if a line was selected, 1 if none, 2 on an error (a bad\n"
               "pattern, a missing file: the other files are still searched).\n");
}

typedef struct pattern_list {
    char **pat;
    size_t *len;
    int32_t n, cap;
} pattern_list;

static int add_pattern(pattern_list *l, const char *s, size_t len) {
    if (l->n == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 8;
        char **p = realloc(l->pat, (size_t)cap * sizeof *p);
        if (p) l->pat = p;
        size_t *n = realloc(l->len, (size_t)cap * sizeof *n);
        if (n) l->len = n;
        if (!p || !n) return -1;
        l->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c) return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    l->pat[l->n] = c;
    l->len[l->n++] = len;
    return 0;
}

/* A pattern argument with newlines is one pattern per line, as in grep. */
static int add_lines(pattern_list *l, const char *s, size_t len, int drop_last_empty) {
    const char *end = s + len;
    for (;;) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl) {
            if (!(drop_last_empty && s == end) && add_pattern(l, s, (size_t)(end - s))) return -1;
            return 0;
        }
        if (add_pattern(l, s, (size_t)(nl - s))) return -1;
        s = nl + 1;
    }
}

static void free_patterns(pattern_list *l) {
    for (int32_t i = 0; i < l->n; i++) free(l->pat[i]);
    free(l->pat);
    free(l->len);
}

/* A whole input: mapped when it is a regular file, else read. */
typedef struct input {
    char *data;
    size_t len;
    int mapped;
} input;

static int read_fd(int fd, input *in) {
    size_t cap = 1 << 16;
    in->data = malloc(cap);
    in->len = 0;
    in->mapped = 0;
    if (!in->data) return ENOMEM;
    for (;;) {
        if (in->len == cap) {
            char *d = realloc(in->data, cap * 2);
            if (!d) return ENOMEM;
            in->data = d;
            cap *= 2;
        }
        ssize_t r = read(fd, in->data + in->len, cap - in->len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return errno;
        if (r == 0) return 0;
        in->len += (size_t)r;
    }
}

/* 0 or an errno value. */
static int load(const char *path, input *in) {
    memset(in, 0, sizeof *in);
    if (!path) return read_fd(STDIN_FILENO, in);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return errno;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = errno;
    } else if (S_ISDIR(st.st_mode)) {
        rc = EISDIR;
    } else if (S_ISREG(st.st_mode) && st.st_size > 0) {
        /* no MAP_POPULATE: it maps the file page by page up front, where a fault of the
         * first pass maps 16 pages at a time (16.7 MB: 0.26-0.29 ms less CPU a run) */
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            in->data = m;
            in->len = (size_t)st.st_size;
            in->mapped = 1;
        } else {
            rc = read_fd(fd, in);
        }
    } else {
        rc = read_fd(fd, in);
    }
    close(fd);
    return rc;
}

static void unload(input *in) {
    if (in->mapped)
        munmap(in->data, in->len);
    else
        free(in->data);
    memset(in, 0, sizeof *in);
}

typedef struct grep_opts {
    int count, invert, number, with_name, quiet, silent, per_pattern, stats;
    int list, list_none, only; /* -l, -L, -o */
    canopy_regex_engine engine;
} grep_opts;

static void print_prefix(const grep_opts *o, const char *name, int64_t line) {
    if (o->with_name) printf("%s:", name);
    if (o->number) printf("%lld:", (long long)(line + 1));
}

/* grep -o on one selected line: each leftmost-longest match, left to right; an
 * empty match prints nothing and the search goes on one byte further. */
static int print_matches(const canopy_regex *re, const grep_opts *o, const char *name, int64_t line,
                         const char *p, size_t len) {
    for (size_t from = 0; from <= len;) {
        size_t b, e;
        int found;
        if (canopy_regex_find(re, p, len, from, &b, &e, &found)) {
            fprintf(stderr, "canopy grep: %s: %s\n", name, canopy_last_error());
            return -1;
        }
        if (!found) break;
        if (e == b) {
            from = b + 1;
            continue;
        }
        print_prefix(o, name, line);
        fwrite(p + b, 1, e - b, stdout);
        putchar('\n');
        from = e;
    }
    return 0;
}

/* Matches one input and writes its output; returns 1 if a line was selected, 0 if
 * none, -1 on an error (already reported). */
static int grep_one(const canopy_regex *re, const pattern_list *pl, const grep_opts *o,
                    const char *name, const input *in) {
    canopy_regex_match_options mo = {o->engine, o->invert};
    int32_t np = canopy_regex_pattern_count(re);
    /* as grep: -q, then -l/-L, then the counts, then -o, then lines */
    int names = o->list || o->list_none;
    int print_lines = !o->quiet && !names && !o->count && !o->per_pattern;
    uint8_t *sel = NULL;
    int64_t *counts = NULL;
    if (print_lines) {
        int64_t lines = canopy_regex_count_lines(in->data, in->len);
        sel = malloc((size_t)lines + 1);
        if (!sel) {
            fprintf(stderr, "canopy grep: out of memory\n");
            return -1;
        }
    }
    if (o->per_pattern && !names && !(counts = calloc((size_t)np + 1, sizeof *counts))) {
        free(sel);
        fprintf(stderr, "canopy grep: out of memory\n");
        return -1;
    }
    canopy_regex_result r;
    double t0 = canopy_now();
    canopy_status st = canopy_regex_match(re, in->data, in->len, &mo, sel, counts, &r);
    double t1 = canopy_now();
    if (st) {
        fprintf(stderr, "canopy grep: %s: %s\n", name, canopy_last_error());
        free(sel);
        free(counts);
        return -1;
    }
    if (o->stats)
        fprintf(stderr,
                "canopy grep: %s: %lld lines, %lld selected, engine %s, isa %s, dfa states %lld, "
                "fallbacks %lld, literal prefilter %d%s, %d patterns by set product, %d on a rarer "
                "window, literal isa %s, dfa bytes %lld, 3-byte filter bytes %lld, %.3f ms\n",
                name, (long long)r.lines, (long long)r.selected, canopy_regex_engine_name(r.engine),
                canopy_isa_name(r.isa), (long long)r.dfa_states, (long long)r.dfa_fallbacks,
                (int)r.literals,
                r.literals ? (r.literals_exact ? " (exact: no DFA)" : " (then the DFA)") : "",
                (int)r.literal_products, (int)r.literals_shifted, canopy_isa_name(r.literal_isa),
                (long long)r.dfa_bytes, (long long)r.literal_bytes3, (t1 - t0) * 1e3);
    int rc = r.selected > 0;
    if (o->quiet) {
    } else if (names) {
        if (o->list ? r.selected > 0 : r.selected == 0) printf("%s\n", name);
    } else if (o->per_pattern) {
        for (int32_t q = 0; q < np; q++) {
            if (o->with_name) printf("%s:", name);
            printf("%lld\t", (long long)counts[q]);
            fwrite(pl->pat[q], 1, pl->len[q], stdout);
            putchar('\n');
        }
    } else if (o->count) {
        if (o->with_name) printf("%s:", name);
        printf("%lld\n", (long long)r.selected);
    } else if (r.selected > 0 && memchr(in->data, '\0', in->len)) {
        /* grep's habit: a file with NUL bytes gets one notice instead of its lines */
        fprintf(stderr, "canopy grep: %s: binary file matches\n", name);
    } else if (r.selected > 0 && !(o->only && o->invert)) {
        const char *p = in->data, *end = in->data + in->len;
        for (int64_t i = 0; p < end && rc >= 0; i++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            const char *le = nl ? nl : end;
            if (sel[i] && o->only) {
                if (print_matches(re, o, name, i, p, (size_t)(le - p))) rc = -1;
            } else if (sel[i]) {
                print_prefix(o, name, i);
                fwrite(p, 1, (size_t)(le - p), stdout);
                putchar('\n');
            }
            p = le + 1;
        }
    }
    free(sel);
    free(counts);
    return rc;
}

static const struct option grep_long_opts[] = {
    {"regexp", required_argument, NULL, 'e'},
    {"file", required_argument, NULL, 'f'},
    {"extended-regexp", no_argument, NULL, 'E'},
    {"ignore-case", no_argument, NULL, 'i'},
    {"invert-match", no_argument, NULL, 'v'},
    {"line-regexp", no_argument, NULL, 'x'},
    {"word-regexp", no_argument, NULL, 'w'},
    {"files-with-matches", no_argument, NULL, 'l'},
    {"files-without-match", no_argument, NULL, 'L'},
    {"only-matching", no_argument, NULL, 'o'},
    {"count", no_argument, NULL, 'c'},
    {"line-number", no_argument, NULL, 'n'},
    {"with-filename", no_argument, NULL, 'H'},
    {"no-filename", no_argument, NULL, 'h'},
    {"quiet", no_argument, NULL, 'q'},
    {"silent", no_argument, NULL, 'q'},
    {"no-messages", no_argument, NULL, 's'},
    {"count-per-pattern", no_argument, NULL, OPT_PER_PATTERN},
    {"engine", required_argument, NULL, OPT_ENGINE},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"stats", no_argument, NULL, OPT_STATS},
    {"help", no_argument, NULL, OPT_HELP + 256},
    {NULL, 0, NULL, 0}};

/* The options that only switch one field of grep_opts on. */
static const struct {
    int opt;
    size_t field;
} grep_switches[] = {{'o', offsetof(grep_opts, only)},
                     {'v', offsetof(grep_opts, invert)},
                     {'c', offsetof(grep_opts, count)},
                     {'n', offsetof(grep_opts, number)},
                     {'q', offsetof(grep_opts, quiet)},
                     {'s', offsetof(grep_opts, silent)},
                     {OPT_PER_PATTERN, offsetof(grep_opts, per_pattern)},
                     {OPT_STATS, offsetof(grep_opts, stats)}};

/* The options that add a compile flag. */
static const struct {
    int opt;
    uint32_t flag;
} grep_flags[] = {{'i', CANOPY_REGEX_ICASE}, {'x', CANOPY_REGEX_LINE}, {'w', CANOPY_REGEX_WORD}};

/* Everything the command line says. */
typedef struct grep_args {
    grep_opts o;
    int name_opt; /* -H: 1, -h: 0, default (-1): by file count */
    uint32_t flags;
    int have_patterns;
    pattern_list pl;
} grep_args;

/* grep_option's answer when parsing goes on; anything else is the exit code. */
enum { GREP_GO_ON = -1 };

static int out_of_memory(void) {
    fprintf(stderr, "canopy grep: out of memory\n");
    return GREP_TROUBLE;
}

/* -f FILE: its lines are patterns ('-' standard input). */
static int add_pattern_file(grep_args *a, const char *path) {
    input in;
    int err = load(strcmp(path, "-") ? path : NULL, &in);
    if (err) {
        fprintf(stderr, "canopy grep: %s: %s\n", path, strerror(err));
        return GREP_TROUBLE;
    }
    int bad = add_lines(&a->pl, in.data ? in.data : "", in.len, 1);
    unload(&in);
    return bad ? out_of_memory() : GREP_GO_ON;
}

/* One option c (argument optarg): GREP_GO_ON, or the exit code after a message. */
static int grep_option(grep_args *a, int c) {
    for (size_t i = 0; i < sizeof grep_switches / sizeof *grep_switches; i++)
        if (c == grep_switches[i].opt) {
            *(int *)((char *)&a->o + grep_switches[i].field) = 1;
            return GREP_GO_ON;
        }
    for (size_t i = 0; i < sizeof grep_flags / sizeof *grep_flags; i++)
        if (c == grep_flags[i].opt) {
            a->flags |= grep_flags[i].flag;
            return GREP_GO_ON;
        }
    switch (c) {
    case OPT_HELP + 256:
        usage(stdout);
        return GREP_MATCH;
    case 'e':
        a->have_patterns = 1;
        return add_lines(&a->pl, optarg, strlen(optarg), 0) ? out_of_memory() : GREP_GO_ON;
    case 'f':
        a->have_patterns = 1;
        return add_pattern_file(a, optarg);
    case 'E':
        return GREP_GO_ON;
    case 'l':
    case 'L':
        a->o.list = c == 'l';
        a->o.list_none = c == 'L';
        return GREP_GO_ON;
    case 'H':
    case 'h':
        a->name_opt = c == 'H';
        return GREP_GO_ON;
    case OPT_ENGINE:
        if (canopy_regex_engine_parse(optarg, &a->o.engine))
            return cli_usage_error("grep", "%s", canopy_last_error());
        return GREP_GO_ON;
    case OPT_THREADS:
        return cli_parse_threads("grep", optarg) ? CLI_USAGE : GREP_GO_ON;
    default:
        return cli_usage_error("grep", "unknown option");
    }
}

/* Compiles the patterns and searches each file (standard input when there is none). */
static int grep_files(grep_args *a, int nfiles, char **files) {
    canopy_regex *re = NULL;
    if (canopy_regex_compile((const char *const *)a->pl.pat, a->pl.len, a->pl.n, a->flags, &re)) {
        fprintf(stderr, "canopy grep: %s\n", canopy_last_error());
        return GREP_TROUBLE;
    }
    a->o.with_name = a->name_opt >= 0 ? a->name_opt : nfiles > 1;
    static char outbuf[1 << 16];
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    int trouble = 0, rc = GREP_NONE;
    for (int i = 0; i < (nfiles > 0 ? nfiles : 1); i++) {
        const char *path = nfiles > 0 ? files[i] : "-";
        int is_stdin = strcmp(path, "-") == 0;
        const char *name = is_stdin ? "(standard input)" : path;
        input in;
        int err = load(is_stdin ? NULL : path, &in);
        if (err) {
            if (!a->o.silent) fprintf(stderr, "canopy grep: %s: %s\n", name, strerror(err));
            trouble = 1;
            unload(&in);
            continue;
        }
        int r = grep_one(re, &a->pl, &a->o, name, &in);
        unload(&in);
        if (r < 0) trouble = 1;
        if (r > 0) rc = GREP_MATCH;
    }
    fflush(stdout);
    canopy_regex_free(re);
    if (ferror(stdout)) {
        fprintf(stderr, "canopy grep: write error\n");
        return GREP_TROUBLE;
    }
    /* as grep: an error wins over a match, except that -q reports the match */
    if (trouble && !(a->o.quiet && rc == GREP_MATCH)) return GREP_TROUBLE;
    return rc;
}

int cmd_grep(int argc, char **argv) {
    grep_args a;
    memset(&a, 0, sizeof a);
    a.name_opt = -1;
    int c, rc = GREP_GO_ON;
    optind = 1;
    while (rc == GREP_GO_ON &&
           (c = getopt_long(argc, argv, "e:f:EivxwlLocnHhqs", grep_long_opts, NULL)) != -1)
        rc = grep_option(&a, c);
    if (rc == GREP_GO_ON && !a.have_patterns) {
        if (optind >= argc) {
            rc = cli_usage_error("grep", "no pattern given");
        } else {
            const char *pat = argv[optind++];
            if (add_lines(&a.pl, pat, strlen(pat), 0)) rc = out_of_memory();
        }
    }
    if (rc == GREP_GO_ON) rc = grep_files(&a, argc - optind, argv + optind);
    free_patterns(&a.pl);
    return rc;
}
