/* SPDX-License-Identifier: MIT */
/* Regular expressions: random extended regular expressions (every operator, nested
 * repetition, anchors, bracket classes with ranges and negation, the empty pattern)
 * and hand-written ones, on random lines. Every line's verdict must equal an
 * independent reference written here (position-set semantics over the generator's
 * own tree, not the library's parser or bytecode), and every engine (Pike VM,
 * SIMD per available ISA, DFA, DFA with a tiny cache) must equal the scalar Pike
 * VM, for selection, inversion and per-pattern counts. Malformed patterns must fail
 * with grep's messages. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include "check.h"
#include "core/cpu_internal.h"
#include "regex/dfa.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the generator's tree and its reference semantics ---- */
enum { G_LIT, G_DOT, G_SET, G_CAT, G_ALT, G_REP, G_BOL, G_EOL, G_EMPTY };
#define G_MAXKIDS 4
typedef struct gnode {
    int kind;
    int c;           /* G_LIT */
    uint8_t in[256]; /* G_SET: members before negation and folding */
    int negate;
    int nkids;
    struct gnode *kid[G_MAXKIDS];
    int min, max; /* G_REP; max -1 unbounded */
    int paren;    /* rendered in a group */
} gnode;

static const char alphabet[] = "abcAB1 .-";

static gnode *gnew(int kind) {
    gnode *n = calloc(1, sizeof *n);
    n->kind = kind;
    return n;
}

static void gfree(gnode *n) {
    if (!n) return;
    for (int i = 0; i < n->nkids; i++) gfree(n->kid[i]);
    free(n);
}

static int pick(canopy_rng *r, int n) {
    return (int)canopy_rng_below(r, (uint64_t)n);
}

static gnode *gen(canopy_rng *r, int depth, int in_rep) {
    int k = pick(r, depth <= 0 ? 4 : 10);
    gnode *n;
    switch (k) {
    case 0:
    case 1:
        n = gnew(G_LIT);
        n->c = alphabet[pick(r, (int)sizeof alphabet - 1)];
        return n;
    case 2:
        return gnew(G_DOT);
    case 3: {
        n = gnew(G_SET);
        n->negate = pick(r, 3) == 0;
        int items = 1 + pick(r, 3);
        for (int i = 0; i < items; i++) {
            switch (pick(r, 5)) {
            case 0:
                for (int c = 'a'; c <= 'b'; c++) n->in[c] = 1;
                break;
            case 1:
                for (int c = 'A'; c <= 'Z'; c++) n->in[c] = 1;
                break;
            case 2:
                for (int c = 0; c < 128; c++)
                    if (isdigit(c) || isspace(c)) n->in[c] = 1;
                break;
            default:
                n->in[(unsigned char)alphabet[pick(r, (int)sizeof alphabet - 1)]] = 1;
            }
        }
        return n;
    }
    case 4:
    case 5:
    case 6:
        n = gnew(G_CAT);
        n->nkids = 2 + pick(r, 3);
        for (int i = 0; i < n->nkids; i++) n->kid[i] = gen(r, depth - 1, in_rep);
        return n;
    case 7:
        n = gnew(G_ALT);
        n->nkids = 2 + pick(r, 2);
        for (int i = 0; i < n->nkids; i++)
            n->kid[i] = pick(r, 8) == 0 ? gnew(G_EMPTY) : gen(r, depth - 1, in_rep);
        return n;
    case 8: {
        n = gnew(G_REP);
        n->nkids = 1;
        n->kid[0] = gen(r, depth - 1, 1);
        static const int forms[][2] = {{0, -1}, {1, -1}, {0, 1}, {2, 2},
                                       {1, 3},  {2, -1}, {0, 2}, {0, 0}};
        int f = pick(r, 8);
        n->min = forms[f][0];
        n->max = forms[f][1];
        return n;
    }
    default:
        if (in_rep) return gen(r, depth - 1, in_rep);
        return gnew(pick(r, 2) ? G_BOL : G_EOL);
    }
}

/* Fold a byte to the other case (ASCII). */
static int other_case(int c) {
    if (c >= 'a' && c <= 'z') return c - 'a' + 'A';
    if (c >= 'A' && c <= 'Z') return c - 'A' + 'a';
    return c;
}

typedef uint64_t pset; /* positions 0..63 */

/* Positions where a match of n starting at a position of `from` can end. */
static pset ends(const gnode *n, pset from, const uint8_t *s, int len, int icase) {
    pset out = 0;
    switch (n->kind) {
    case G_EMPTY:
        return from;
    case G_BOL:
        return from & 1;
    case G_EOL:
        return from & (1ull << len);
    case G_LIT:
    case G_DOT:
    case G_SET:
        for (int p = 0; p < len; p++) {
            if (!((from >> p) & 1)) continue;
            int c = s[p], ok;
            if (n->kind == G_DOT)
                ok = 1;
            else if (n->kind == G_LIT)
                ok = c == n->c || (icase && other_case(c) == n->c);
            else
                ok = (n->in[c] || (icase && n->in[other_case(c)])) != n->negate;
            if (ok) out |= 1ull << (p + 1);
        }
        return out;
    case G_CAT:
        out = from;
        for (int i = 0; i < n->nkids; i++) out = ends(n->kid[i], out, s, len, icase);
        return out;
    case G_ALT:
        for (int i = 0; i < n->nkids; i++) out |= ends(n->kid[i], from, s, len, icase);
        return out;
    case G_REP: {
        pset cur = from;
        for (int i = 0; i < n->min; i++) cur = ends(n->kid[0], cur, s, len, icase);
        out = cur;
        for (int i = n->min; n->max < 0 || i < n->max; i++) {
            pset nx = ends(n->kid[0], cur, s, len, icase);
            if ((nx | out) == out) break; /* a fixpoint: more copies add nothing */
            out |= nx;
            cur = nx;
        }
        return out;
    }
    }
    return 0;
}

static int ref_match(const gnode *n, const uint8_t *s, int len, int icase) {
    pset all = len >= 63 ? ~0ull : (2ull << len) - 1;
    return ends(n, all, s, len, icase) != 0;
}

/* ---- rendering as ERE text ---- */
typedef struct sbuf {
    char s[4096];
    int n;
} sbuf;

static void put(sbuf *b, const char *t) {
    size_t k = strlen(t);
    if (b->n + (int)k < (int)sizeof b->s - 1) {
        memcpy(b->s + b->n, t, k);
        b->n += (int)k;
        b->s[b->n] = 0;
    }
}

static void render(const gnode *n, sbuf *b, canopy_rng *r);

static int is_atom(const gnode *n) {
    return n->kind == G_LIT || n->kind == G_DOT || n->kind == G_SET;
}

static void render_set(const gnode *n, sbuf *b, canopy_rng *r) {
    put(b, n->negate ? "[^" : "[");
    int alpha_all = 1, upper = 1, digit_space = 1;
    for (int c = 'A'; c <= 'Z'; c++) upper &= n->in[c];
    for (int c = 0; c < 128; c++)
        if (isdigit(c) || isspace(c)) digit_space &= n->in[c];
    alpha_all = n->in['a'] && n->in['b'];
    uint8_t done[256] = {0};
    if (upper) {
        put(b, pick(r, 2) ? "[:upper:]" : "A-Z");
        for (int c = 'A'; c <= 'Z'; c++) done[c] = 1;
    }
    if (digit_space) {
        put(b, "[:digit:][:space:]");
        for (int c = 0; c < 128; c++)
            if (isdigit(c) || isspace(c)) done[c] = 1;
    }
    if (alpha_all && !done['a']) {
        put(b, "a-b");
        done['a'] = done['b'] = 1;
    }
    int dash = 0;
    for (int c = 1; c < 256; c++) {
        if (!n->in[c] || done[c]) continue;
        if (c == '-') {
            dash = 1;
            continue;
        }
        char t[2] = {(char)c, 0};
        put(b, t);
    }
    if (dash) put(b, "-"); /* last: literal */
    put(b, "]");
}

static void render_rep_child(const gnode *k, sbuf *b, canopy_rng *r) {
    if (is_atom(k) || (k->kind == G_REP && pick(r, 2))) {
        render(k, b, r);
    } else {
        put(b, "(");
        render(k, b, r);
        put(b, ")");
    }
}

static void render(const gnode *n, sbuf *b, canopy_rng *r) {
    char t[32];
    switch (n->kind) {
    case G_EMPTY:
        return;
    case G_BOL:
        put(b, "^");
        return;
    case G_EOL:
        put(b, "$");
        return;
    case G_DOT:
        put(b, ".");
        return;
    case G_LIT:
        if (strchr(".[]()*+?{}|^$\\", n->c)) put(b, "\\");
        t[0] = (char)n->c;
        t[1] = 0;
        put(b, t);
        return;
    case G_SET:
        render_set(n, b, r);
        return;
    case G_CAT:
        for (int i = 0; i < n->nkids; i++) {
            const gnode *k = n->kid[i];
            int wrap = k->kind == G_ALT;
            if (wrap) put(b, "(");
            render(k, b, r);
            if (wrap) put(b, ")");
        }
        return;
    case G_ALT:
        for (int i = 0; i < n->nkids; i++) {
            if (i) put(b, "|");
            render(n->kid[i], b, r);
        }
        return;
    case G_REP:
        render_rep_child(n->kid[0], b, r);
        if (n->min == 0 && n->max == -1)
            put(b, "*");
        else if (n->min == 1 && n->max == -1)
            put(b, "+");
        else if (n->min == 0 && n->max == 1)
            put(b, "?");
        else if (n->max == -1)
            snprintf(t, sizeof t, "{%d,}", n->min), put(b, t);
        else if (n->min == n->max)
            snprintf(t, sizeof t, "{%d}", n->min), put(b, t);
        else if (n->min == 0 && pick(r, 2))
            snprintf(t, sizeof t, "{,%d}", n->max), put(b, t);
        else
            snprintf(t, sizeof t, "{%d,%d}", n->min, n->max), put(b, t);
        return;
    }
}

/* ---- running the library ---- */
static const canopy_regex_engine engines[] = {CANOPY_REGEX_ENGINE_PIKE, CANOPY_REGEX_ENGINE_SIMD,
                                              CANOPY_REGEX_ENGINE_DFA};

/* Buffer of lines joined by '\n' (last one unterminated when `tail`). */
static size_t join(char *buf, uint8_t lines[][48], const int *lens, int n, int tail) {
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        memcpy(buf + k, lines[i], (size_t)lens[i]);
        k += (size_t)lens[i];
        if (i + 1 < n || !tail) buf[k++] = '\n';
    }
    return k;
}

/* Every engine (and ISA, and a 3-state DFA cache) gives the same selection and
 * per-pattern counts as `want` (selection) and `want_counts`. */
static void check_all_engines(const canopy_regex *re, const char *buf, size_t len, int64_t nlines,
                              const uint8_t *want, const int64_t *want_counts, const char *what) {
    int32_t np = canopy_regex_pattern_count(re);
    uint8_t *sel = malloc((size_t)nlines + 1);
    int64_t *counts = calloc((size_t)np + 1, sizeof *counts);
    for (int invert = 0; invert <= 1; invert++) {
        for (size_t e = 0; e < sizeof engines / sizeof engines[0]; e++) {
            for (int variant = 0; variant < 4; variant++) {
                /* simd: every ISA this CPU has; dfa: default, tiny cache, no SIMD (the
                 * literal prefilter's scalar path) and AVX2 (its AVX2 filter where the
                 * default is AVX-512) */
                if (engines[e] == CANOPY_REGEX_ENGINE_PIKE && variant) continue;
                if (engines[e] == CANOPY_REGEX_ENGINE_SIMD && variant == 3) continue;
                if (engines[e] == CANOPY_REGEX_ENGINE_DFA && variant >= 2) {
                    int isa = variant == 2 ? CANOPY_ISA_SCALAR : CANOPY_ISA_AVX2;
                    canopy_cpu_isa_override(isa);
                    if ((int)canopy_cpu_isa() != isa) continue;
                }
                if (engines[e] == CANOPY_REGEX_ENGINE_SIMD) {
                    int isa = variant == 0   ? CANOPY_ISA_SCALAR
                              : variant == 1 ? CANOPY_ISA_AVX2
                                             : CANOPY_ISA_AVX512;
                    canopy_cpu_isa_override(isa);
                    if ((int)canopy_cpu_isa() != isa) continue;
                }
                if (engines[e] == CANOPY_REGEX_ENGINE_DFA)
                    canopy_cre_dfa_limit_override(variant == 1 ? 3 : 0);
                canopy_regex_match_options o = {engines[e], invert};
                canopy_regex_result res;
                memset(sel, 0xee, (size_t)nlines + 1);
                CHECK_OK(canopy_regex_match(re, buf, len, &o, sel, NULL, &res));
                int64_t nsel = 0, bad = -1;
                for (int64_t i = 0; i < nlines; i++) {
                    nsel += sel[i];
                    if (sel[i] != (uint8_t)(want[i] ^ invert) && bad < 0) bad = i;
                }
                CHECK_MSG(bad < 0 && res.lines == nlines && res.selected == nsel,
                          "%s: engine %s v%d invert %d: line %lld differs (lines %lld/%lld)", what,
                          canopy_regex_engine_name(engines[e]), variant, invert, (long long)bad,
                          (long long)res.lines, (long long)nlines);
                /* count only: engines count lines themselves (no per-line output) */
                CHECK_OK(canopy_regex_match(re, buf, len, &o, NULL, NULL, &res));
                CHECK_MSG(res.lines == nlines && res.selected == nsel,
                          "%s: engine %s v%d invert %d: count-only %lld/%lld lines %lld/%lld", what,
                          canopy_regex_engine_name(engines[e]), variant, invert,
                          (long long)res.selected, (long long)nsel, (long long)res.lines,
                          (long long)nlines);
                if (want_counts) {
                    CHECK_OK(canopy_regex_match(re, buf, len, &o, NULL, counts, &res));
                    int okc = res.selected == nsel;
                    for (int32_t q = 0; q < np; q++)
                        okc &= counts[q] == (invert ? nlines - want_counts[q] : want_counts[q]);
                    CHECK_MSG(okc, "%s: engine %s v%d invert %d: per-pattern counts differ", what,
                              canopy_regex_engine_name(engines[e]), variant, invert);
                }
                canopy_cpu_isa_override(-1);
                canopy_cre_dfa_limit_override(0);
            }
        }
    }
    free(sel);
    free(counts);
}

static int word_at(const uint8_t *s, int len, int i) {
    return i >= 0 && i < len && (isalnum(s[i]) || s[i] == '_');
}

/* The ends of matches of any of the patterns that start at i; with word 1, only
 * those with no word byte on either side; with word 2, only the whole line. */
static pset ends_from(gnode *const *g, int np, const uint8_t *s, int len, int icase, int i,
                      int word) {
    pset e = 0;
    for (int q = 0; q < np; q++) e |= ends(g[q], 1ull << i, s, len, icase);
    if (word == 2) return i == 0 ? e & (1ull << len) : 0; /* the whole line */
    if (word) {
        if (word_at(s, len, i - 1)) return 0;
        for (int j = 0; j <= len; j++)
            if (word_at(s, len, j)) e &= ~(1ull << j);
    }
    return e;
}

/* CANOPY_REGEX_LINE / WORD (grep -x / -w) on the lines of a random set, every engine,
 * and canopy_regex_find (grep -o) from every start against the brute force:
 * the leftmost start with a match, then its longest end. */
static void line_and_word(gnode *const *g, const char **pats, int np, int icase,
                          uint8_t lines[][48], const int *lens, const char *buf, size_t len,
                          uint64_t seed, int set) {
    enum { NL = 40 };
    static const uint32_t kinds[3] = {CANOPY_REGEX_LINE, CANOPY_REGEX_WORD, 0};
    static const int rule[3] = {2, 1, 0}; /* ends_from's word argument */
    static const char *const names[3] = {"-x", "-w", "plain"};
    for (int kind = 0; kind < 3; kind++) {
        uint32_t flags = (icase ? CANOPY_REGEX_ICASE : 0) | kinds[kind];
        uint8_t want[NL];
        for (int i = 0; i < NL; i++) {
            want[i] = 0;
            for (int b = 0; b <= lens[i] && !want[i]; b++) {
                want[i] = ends_from(g, np, lines[i], lens[i], icase, b, rule[kind]) != 0;
            }
        }
        canopy_regex *re = NULL;
        CHECK_OK(canopy_regex_compile(pats, NULL, np, flags, &re));
        if (!re) continue;
        char what[256];
        snprintf(what, sizeof what, "seed %llu set %d '%s'%s %s", (unsigned long long)seed, set,
                 pats[0], np > 1 ? " + more" : "", names[kind]);
        check_all_engines(re, buf, len, NL, want, NULL, what);
        for (int i = 0; i < NL; i++)
            for (int from = 0; from <= lens[i]; from++) {
                int wb = -1, we = -1;
                for (int b = from; b <= lens[i] && wb < 0; b++) {
                    pset e = ends_from(g, np, lines[i], lens[i], icase, b, rule[kind]);
                    if (e) {
                        wb = b;
                        we = 63 - __builtin_clzll(e);
                    }
                }
                size_t fb = 0, fe = 0;
                int found = -1;
                CHECK_OK(canopy_regex_find(re, (const char *)lines[i], (size_t)lens[i],
                                           (size_t)from, &fb, &fe, &found));
                CHECK_MSG(found == (wb >= 0) && (!found || ((int)fb == wb && (int)fe == we)),
                          "%s: find in line %d from %d: %d [%zu, %zu) want [%d, %d)", what, i, from,
                          found, fb, fe, wb, we);
            }
        canopy_regex_free(re);
    }
}

/* Random pattern sets against the reference. */
static void random_sets(uint64_t seed, int sets) {
    canopy_rng r = canopy_rng_make(seed, 0);
    enum { NL = 40, MAXP = 5 };
    uint8_t lines[NL][48];
    int lens[NL];
    char buf[NL * 49];
    for (int s = 0; s < sets; s++) {
        int np = 1 + pick(&r, MAXP), icase = pick(&r, 4) == 0;
        gnode *g[MAXP];
        sbuf text[MAXP];
        const char *pats[MAXP];
        for (int q = 0; q < np; q++) {
            g[q] = pick(&r, 30) == 0 ? gnew(G_EMPTY) : gen(&r, 1 + pick(&r, 4), 0);
            text[q].n = 0;
            text[q].s[0] = 0;
            render(g[q], &text[q], &r);
            pats[q] = text[q].s;
        }
        for (int i = 0; i < NL; i++) {
            lens[i] = pick(&r, 4) == 0 ? pick(&r, 3) : pick(&r, 14);
            for (int j = 0; j < lens[i]; j++)
                lines[i][j] = (uint8_t)alphabet[pick(&r, (int)sizeof alphabet - 1)];
        }
        int tail = pick(&r, 2);
        if (tail && lens[NL - 1] == 0) lines[NL - 1][lens[NL - 1]++] = 'a'; /* else no line */
        size_t len = join(buf, lines, lens, NL, tail);
        uint8_t want[NL];
        int64_t want_counts[MAXP] = {0};
        for (int i = 0; i < NL; i++) {
            want[i] = 0;
            for (int q = 0; q < np; q++) {
                int m = ref_match(g[q], lines[i], lens[i], icase);
                want[i] |= (uint8_t)m;
                want_counts[q] += m;
            }
        }
        canopy_regex *re = NULL;
        canopy_status st =
            canopy_regex_compile(pats, NULL, np, icase ? CANOPY_REGEX_ICASE : 0, &re);
        CHECK_MSG(st == CANOPY_OK, "compile '%s' (of %d): %s", pats[0], np, canopy_last_error());
        if (re) {
            char what[256];
            snprintf(what, sizeof what, "seed %llu set %d '%s'%s%s", (unsigned long long)seed, s,
                     pats[0], np > 1 ? " + more" : "", icase ? " -i" : "");
            check_all_engines(re, buf, len, NL, want, want_counts, what);
            canopy_regex_free(re);
        }
        line_and_word(g, pats, np, icase, lines, lens, buf, len, seed, s);
        for (int q = 0; q < np; q++) gfree(g[q]);
    }
}

/* ---- hand-written cases ---- */
typedef struct hand {
    const char *pat;
    int icase;
    const char *line;
    int want;
} hand;

static const hand hands[] = {
    {"", 0, "", 1},
    {"", 0, "abc", 1},
    {"^$", 0, "", 1},
    {"^$", 0, "a", 0},
    {"a^b", 0, "a^b", 0},
    {"a$b", 0, "a$b", 0},
    {"a\\$b", 0, "a$b", 1},
    {"x$", 0, "abx", 1},
    {"x$", 0, "xa", 0},
    {"^(a|b)*c$", 0, "ababc", 1},
    {"^(a|b)*c$", 0, "abxc", 0},
    {"(a*)*b", 0, "aaab", 1},
    {"(a*)+$", 0, "b", 1},
    {"(^a|b)c", 0, "xac", 0},
    {"(^a|b)c", 0, "xbc", 1},
    {"a{3}", 0, "aa", 0},
    {"a{3}", 0, "aaa", 1},
    {"^a{2,3}$", 0, "aaaa", 0},
    {"^a{,2}$", 0, "aa", 1},
    {"^a{,2}$", 0, "aaa", 0},
    {"^a{2,}$", 0, "aaaaaa", 1},
    {"^(ab){2}{2}$", 0, "abababab", 1},
    {"a{1", 0, "a{1", 1},
    {"x{a}", 0, "x{a}", 1},
    {"a)", 0, "a)", 1},
    {"[]a]", 0, "]", 1},
    {"[^]a]", 0, "]", 0},
    {"[a-]", 0, "-", 1},
    {"[[:digit:]]+", 0, "abc", 0},
    {"[[:digit:]]+", 0, "a1c", 1},
    {"[[:alpha:][:digit:]]", 0, "-", 0},
    {"[[.-.]]", 0, "-", 1},
    {"[[=a=]]", 0, "a", 1},
    {"\\w\\W", 0, "a-", 1},
    {"\\s", 0, "ab", 0},
    {"\\S", 0, " ", 0},
    {"[\\]", 0, "\\", 1},
    {"ABC", 1, "xabcx", 1},
    {"[^a]", 1, "aA", 0},
    {"[[:upper:]]", 1, "a", 1},
    {"[b-d]", 1, "C", 1},
    {".", 0, "", 0},
    {"a.c", 0, "a\rc", 1},
    {"ab$", 0, "ab\r", 0},
    {"a|b|c", 0, "c", 1},
    {"(|a)b", 0, "b", 1},
    {"a**", 0, "b", 1},
    {"a+?b", 0, "b", 1},
    {"th.*e$", 0, "the", 1},
    {".*ab", 0, "xxaxb", 0},
    {".*ab", 0, "xxab", 1},
    {"ab.*cd", 0, "cd ab", 0},
    {"ab.*cd", 0, "ab cd", 1},
};

static void hand_cases(void) {
    for (size_t i = 0; i < sizeof hands / sizeof hands[0]; i++) {
        const hand *h = &hands[i];
        canopy_regex *re = NULL;
        canopy_status st =
            canopy_regex_compile(&h->pat, NULL, 1, h->icase ? CANOPY_REGEX_ICASE : 0, &re);
        CHECK_MSG(st == CANOPY_OK, "compile '%s': %s", h->pat, canopy_last_error());
        if (!re) continue;
        uint8_t want = (uint8_t)h->want;
        int64_t wc = h->want;
        char what[128], line[64];
        snprintf(what, sizeof what, "'%s' on '%s'", h->pat, h->line);
        snprintf(line, sizeof line, "%s\n", h->line); /* "" alone would be no line at all */
        check_all_engines(re, line, strlen(line), 1, &want, &wc, what);
        canopy_regex_free(re);
    }
}

typedef struct bad {
    const char *pat;
    const char *msg;
} bad;

static void malformed(void) {
    static const bad bads[] = {
        {"a(", "Unmatched ( or \\("},
        {"(a|b", "Unmatched ( or \\("},
        {"[a", "Unmatched [, [^, [:, [., or [="},
        {"[[:alpha:]", "Unmatched [, [^, [:, [., or [="},
        {"[b-a]", "Invalid range end"},
        {"[[:alpha:]-z]", "Invalid range end"},
        {"[[:foo:]]", "Invalid character class name"},
        {"a{2,1}", "Invalid content of \\{\\}"},
        {"a{99999}", "Regular expression too big"},
        {"*a", "Invalid preceding regular expression"},
        {"a|+b", "Invalid preceding regular expression"},
        {"(?a)", "Invalid preceding regular expression"},
        {"{1}a", "Invalid preceding regular expression"},
        {"a\\", "Trailing backslash"},
        {"(a)\\1", "back-references"},
        {"\\bword", "word-boundary"},
        {"((a{1000}){1000}){100}", "Regular expression too big"},
        {"a{32767}{33}", "Regular expression too big"}, /* 1,081,311 instructions */
    };
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        canopy_regex *re = NULL;
        const char *pats[2] = {"ok", bads[i].pat};
        CHECK_FAILS(canopy_regex_compile(pats, NULL, 2, 0, &re), CANOPY_ERR_INVALID, bads[i].msg);
        CHECK(re == NULL);
    }
    canopy_regex *re = NULL;
    /* just under the limit (1,020,001 instructions): unrolled copies keep their jumps */
    const char *big = "(ab|c?){1000}{170}";
    size_t ms = 9, me = 9;
    int found = 0;
    CHECK_OK(canopy_regex_compile(&big, NULL, 1, 0, &re));
    CHECK_OK(canopy_regex_find(re, "xabcab", 6, 1, &ms, &me, &found));
    CHECK(found && ms == 1 && me == 6);
    canopy_regex_free(re);
    re = NULL;
    CHECK_FAILS(canopy_regex_compile(NULL, NULL, -1, 0, &re), CANOPY_ERR_INVALID, "pattern list");
    canopy_regex_engine e;
    CHECK_FAILS(canopy_regex_engine_parse("nfa", &e), CANOPY_ERR_INVALID, "pike");
}

/* Buffer edge cases: empty, no final newline, no patterns, NUL bytes, lines across
 * block boundaries (a buffer of several blocks on two threads), patterns with
 * literals (exact and not), more literals than the prefilter takes, -i. */
static void buffers(uint64_t seed) {
    canopy_regex *re = NULL;
    const char *pats[20] = {"ab", ".*cd", "e.*f", "^gh", "x[yz]"};
    CHECK_OK(canopy_regex_compile(pats, NULL, 5, 0, &re));
    canopy_regex_result res;
    CHECK_OK(canopy_regex_match(re, "", 0, NULL, NULL, NULL, &res));
    CHECK(res.lines == 0 && res.selected == 0);
    CHECK(canopy_regex_count_lines("a\n\nb", 4) == 3 && canopy_regex_count_lines("\n", 1) == 1);
    canopy_regex_free(re);
    CHECK_OK(canopy_regex_compile(NULL, NULL, 0, 0, &re));
    CHECK_OK(canopy_regex_match(re, "a\nb\n", 4, NULL, NULL, NULL, &res));
    CHECK(res.lines == 2 && res.selected == 0);
    canopy_regex_free(re);

    canopy_rng r = canopy_rng_make(seed, 7);
    /* a dozen blocks on two threads; quick: six, still several a thread, with lines across
     * their boundaries */
    canopy_cre_block_override(8 << 10);
    size_t len = (size_t)(check_quick() ? 48 : 96) << 10;
    char *buf = malloc(len);
    static const char bytes[] = "abcdefghxyz \r\0\n\n";
    for (size_t i = 0; i < len; i++) buf[i] = bytes[pick(&r, (int)sizeof bytes - 1)];
    for (size_t i = 0; i < len; i += 200 + (size_t)pick(&r, 3000))
        buf[i] = '\n'; /* long lines too */
    int64_t nlines = canopy_regex_count_lines(buf, len);
    uint8_t *want = malloc((size_t)nlines);
    static const char *const sets[][20] = {
        {"ab", ".*cd", "e.*f", "^gh", "x[yz]"},
        {".*ab", ".*cd", ".*ef", ".*gh", ".*xy"},
        {"a", "b.*c"},
        {"a[^b]c$", "(ab|ba)+x"},
        {"AB", "Cd"},
        {"aa", "bb", "cc", "dd", "ee", "ff", "gg", "hh", "xx", "yy", "zz", "ab", "ba", "cd", "dc",
         "ef", "fe"},
    };
    static const int counts[] = {5, 5, 2, 2, 2, 17};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int icase = k == 4;
        CHECK_OK(
            canopy_regex_compile(sets[k], NULL, counts[k], icase ? CANOPY_REGEX_ICASE : 0, &re));
        if (!re) continue;
        canopy_set_threads(1);
        canopy_regex_match_options o = {CANOPY_REGEX_ENGINE_PIKE, 0};
        int64_t *wc = calloc((size_t)counts[k], sizeof *wc);
        CHECK_OK(canopy_regex_match(re, buf, len, &o, want, wc, &res));
        CHECK(res.selected > 0 && res.selected < nlines);
        canopy_set_threads(2);
        char what[64];
        snprintf(what, sizeof what, "big buffer set %zu", k);
        check_all_engines(re, buf, len, nlines, want, wc, what);
        canopy_set_threads(0);
        free(wc);
        canopy_regex_free(re);
    }
    canopy_cre_block_override(0);
    free(want);
    free(buf);
}

/* Literal sets (the prefilter and its exact line counter): 1-15 literals (one filter
 * bucket each) or 17-45 (shared buckets) of 1-5 bytes, some (in a quarter of the sets
 * all) of 6-11 (confirmed past the first 8 bytes), bare or between `.*`s (exact) or
 * followed by `.*x` (not exact), on buffers of every length around the 64-byte
 * steps, with literals across steps, at the very end, and cut short (near misses);
 * half of them in chunks of 200 bytes (the counter's switch between two- and
 * three-byte filters); long literals filtered on a rarer window than their first
 * bytes among them. With `single`, each set is one literal of 1-32 bytes (the
 * AVX-512 byte filter: its rarest bytes up to 31 bytes into the literal, buffers
 * ending within those 31 bytes of a step). The reference is a plain substring search
 * per line. */
static void literal_sets(uint64_t seed, int sets, int single) {
    canopy_rng r = canopy_rng_make(seed, 11);
    static const char bytes[] = "abcd\n\n";
    char pats[48][48];
    const char *pp[48];
    char lits[48][40];
    int llen[48], shifted = 0;
    for (int s = 0; s < sets; s++) {
        int np = single ? 1 : pick(&r, 2) ? 1 + pick(&r, 15) : 17 + pick(&r, 29);
        int kind = pick(&r, 3), long_lits = pick(&r, 4) == 0; /* 0 bare, 1 .*lit.*, 2 lit.*x */
        canopy_cre_literal_chunk_override(pick(&r, 2) ? 200 : 0);
        for (int q = 0; q < np; q++) {
            llen[q] = 1 + (pick(&r, 2) ? pick(&r, 1) : pick(&r, 4));
            if (long_lits || pick(&r, 5) == 0) llen[q] = 6 + pick(&r, 6);
            if (single) llen[q] = 1 + pick(&r, 32);
            for (int j = 0; j < llen[q]; j++) lits[q][j] = "abcd"[pick(&r, 3)];
            lits[q][llen[q]] = '\0';
            snprintf(pats[q], sizeof pats[q],
                     kind == 0   ? "%s"
                     : kind == 1 ? ".*%s.*"
                                 : "%s.*x",
                     lits[q]);
            pp[q] = pats[q];
        }
        size_t len = (size_t)pick(&r, 3) ? (size_t)pick(&r, 200) : (size_t)pick(&r, 5000);
        char *buf = malloc(len + 1);
        for (size_t i = 0; i < len; i++)
            buf[i] = kind == 2 && pick(&r, 5) == 0 ? 'x' : bytes[pick(&r, (int)sizeof bytes - 2)];
        /* near misses: literals cut short, so confirmations past a prefix are tested */
        for (size_t k = 0; len > 40 && k < len / 40; k++) {
            int q = pick(&r, np), cut = 1 + pick(&r, llen[q]);
            memcpy(buf + (size_t)pick(&r, (int)(len - 40)), lits[q], (size_t)cut);
        }
        int64_t nlines = canopy_regex_count_lines(buf, len);
        uint8_t *want = malloc((size_t)nlines + 1);
        const char *b = buf, *e = buf + len;
        for (int64_t i = 0; i < nlines; i++) {
            const char *nl = memchr(b, '\n', (size_t)(e - b));
            const char *le = nl ? nl : e;
            want[i] = 0;
            for (int q = 0; q < np && !want[i]; q++)
                for (const char *x = b; x + llen[q] <= le && !want[i]; x++)
                    if (memcmp(x, lits[q], (size_t)llen[q]) == 0)
                        want[i] = kind != 2 || memchr(x + llen[q], 'x', (size_t)(le - x - llen[q]));
            b = le + 1;
        }
        canopy_regex *re = NULL;
        CHECK_OK(canopy_regex_compile(pp, NULL, np, 0, &re));
        if (re) {
            char what[160];
            snprintf(what, sizeof what, "seed %llu literal set %d '%s' (of %d) len %zu",
                     (unsigned long long)seed, s, pats[0], np, len);
            check_all_engines(re, buf, len, nlines, want, NULL, what);
            canopy_regex_result res;
            CHECK_OK(canopy_regex_match(re, buf, len, NULL, NULL, NULL, &res));
            shifted += res.literals_shifted > 0;
            canopy_regex_free(re);
        }
        free(want);
        free(buf);
    }
    canopy_cre_literal_chunk_override(0);
    /* long literals of "abc" have rarer windows past their start ("bb" in "aabb..."):
     * the confirmation at a moved window is among what was tested */
    CHECK_MSG(single || shifted > 0, "seed %llu: no literal set filtered on a moved window",
              (unsigned long long)seed);
}

/* Required factors as sets of strings: patterns of strings, small classes,
 * alternations and bounded repetitions (finite: the product of their strings is the
 * prefilter's literal set, exact when nothing else is in the pattern) mixed with
 * unbounded items and `.*` ends, 1-3 per set, on random lines of "abcd"; the Pike VM
 * gives the reference selection for every other engine and variant. */
static void factor_sets(uint64_t seed, int sets) {
    static const char *const items[] = {"a",           "bc",     "dab",       "[ab]", "[cd]",
                                        "[abc]",       "(ab|c)", "(a|bc|dd)", "a{2}", "[ab]{2}",
                                        "(ab|c){1,2}", "b?",     "(cd)?",     "a*",   "b+",
                                        ".",           "[a-d]*", "(a|b*)c"};
    enum { N_ITEMS = sizeof items / sizeof items[0] };
    canopy_rng r = canopy_rng_make(seed, 12);
    int products = 0;
    for (int s = 0; s < sets; s++) {
        char pats[3][96];
        const char *pp[3];
        int np = 1 + pick(&r, 3);
        for (int q = 0; q < np; q++) {
            int k = 0, n = 1 + pick(&r, 4);
            if (pick(&r, 3) == 0) k += snprintf(pats[q] + k, sizeof pats[q] - (size_t)k, ".*");
            for (int i = 0; i < n; i++)
                k += snprintf(pats[q] + k, sizeof pats[q] - (size_t)k, "%s",
                              items[pick(&r, N_ITEMS)]);
            if (pick(&r, 3) == 0) snprintf(pats[q] + k, sizeof pats[q] - (size_t)k, ".*");
            pp[q] = pats[q];
        }
        size_t len = (size_t)pick(&r, 3000);
        char *buf = malloc(len + 1);
        for (size_t i = 0; i < len; i++) buf[i] = "abcdabcd\n"[pick(&r, 9)];
        int64_t nlines = canopy_regex_count_lines(buf, len);
        uint8_t *want = malloc((size_t)nlines + 1);
        canopy_regex *re = NULL;
        CHECK_OK(canopy_regex_compile(pp, NULL, np, 0, &re));
        if (re) {
            canopy_regex_match_options o = {CANOPY_REGEX_ENGINE_PIKE, 0};
            canopy_regex_result res;
            CHECK_OK(canopy_regex_match(re, buf, len, &o, want, NULL, &res));
            char what[160];
            snprintf(what, sizeof what, "seed %llu factor set %d '%s' (of %d) len %zu",
                     (unsigned long long)seed, s, pats[0], np, len);
            check_all_engines(re, buf, len, nlines, want, NULL, what);
            CHECK_OK(canopy_regex_match(re, buf, len, NULL, NULL, NULL, &res));
            products += res.literal_products > 0;
            canopy_regex_free(re);
        }
        free(want);
        free(buf);
    }
    CHECK_MSG(products > 0, "seed %llu: no pattern set took literals from a set product",
              (unsigned long long)seed);
}

/* Issue 21: hostile patterns are refused or compiled fast, never overflow the stack
 * (on the main thread and, through canopy_regex_match, on OpenMP workers), and find
 * is one pass over a long line. Times are generous bounds against the old seconds. */
static char *repeat3(const char *pre, int n, const char *mid, const char *post, int m) {
    size_t lp = strlen(pre), lm = strlen(mid), lq = strlen(post);
    char *s = malloc(lp * (size_t)n + lm + lq * (size_t)m + 1), *w = s;
    for (int i = 0; i < n; i++, w += lp) memcpy(w, pre, lp);
    memcpy(w, mid, lm);
    w += lm;
    for (int i = 0; i < m; i++, w += lq) memcpy(w, post, lq);
    *w = 0;
    return s;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void hostile(void) {
    static const struct {
        const char *pre, *mid, *post;
        int n, m, ok;
    } cases[] = {
        {"(", "a", ")", 70000, 70000, 0}, {"", "a", "*", 0, 100000, 0},
        {"", "a", "{1}", 0, 50000, 0},    {"(a|", "b", ")", 30000, 30000, 0},
        {"(", "a", ")+", 5000, 5000, 0},  {"(", "b", ")", 900, 900, 1},
        {"", "b", "+", 0, 900, 1},        {"(b|", "b", ")", 900, 900, 1},
        {"zz|", "b", "", 10000, 0, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *pat = repeat3(cases[k].pre, cases[k].n, cases[k].mid, cases[k].post, cases[k].m);
        for (int flags = 0; flags < 3; flags++) {
            static const uint32_t fl[3] = {0, CANOPY_REGEX_WORD, CANOPY_REGEX_LINE};
            canopy_regex *re = NULL;
            const char *pp[1] = {pat};
            if (!cases[k].ok) {
                CHECK_FAILS(canopy_regex_compile(pp, NULL, 1, fl[flags], &re), CANOPY_ERR_INVALID,
                            "regular expression too complex");
                continue;
            }
            CHECK_OK(canopy_regex_compile(pp, NULL, 1, fl[flags], &re));
            if (!re) continue;
            for (int e = 1; e < CANOPY_REGEX_ENGINE_COUNT; e++) {
                canopy_regex_match_options o = {(canopy_regex_engine)e, 0};
                canopy_regex_result r;
                CHECK_OK(canopy_regex_match(re, "b\nc\n", 4, &o, NULL, NULL, &r));
                CHECK_MSG(r.selected == 1, "case %zu flags %d engine %d: %lld lines", k, flags, e,
                          (long long)r.selected);
            }
            canopy_regex_free(re);
        }
        free(pat);
    }
    /* 38 bytes whose epsilon closures once took 1.5 s to tabulate */
    static const char *const slow[] = {"]???????$??????????????????????{1108}",
                                       "(a?){1000}(b?){1000}c"};
    for (int k = 0; k < 2; k++) {
        canopy_regex *re = NULL;
        double t0 = now_s();
        CHECK_OK(canopy_regex_compile(&slow[k], NULL, 1, 0, &re));
        double t = now_s() - t0;
        CHECK_MSG(t < 0.25, "'%s' compiled in %.3f s", slow[k], t);
        canopy_regex_free(re);
    }
    /* find on 100 KB lines: (ab)*c|x took 45 s when it scanned per start */
    const char *pat = "(ab)*c|x";
    canopy_regex *re = NULL;
    CHECK_OK(canopy_regex_compile(&pat, NULL, 1, 0, &re));
    if (!re) return;
    char *line = repeat3("ab", 50000, "x", "ab", 50000);
    size_t len = strlen(line), b = 0, e = 0;
    int found = 0;
    double t0 = now_s();
    CHECK_OK(canopy_regex_find(re, line, len, 0, &b, &e, &found));
    CHECK_MSG(found && b == 100000 && e == 100001, "find: %d [%zu, %zu)", found, b, e);
    CHECK_OK(canopy_regex_find(re, line, len, e, &b, &e, &found));
    CHECK_MSG(!found, "find after x: %d [%zu, %zu)", found, b, e);
    free(line);
    line = repeat3("ab", 100000, "c", "", 0); /* (ab)*c matches the whole line */
    len = strlen(line);
    CHECK_OK(canopy_regex_find(re, line, len, 0, &b, &e, &found));
    CHECK_MSG(found && b == 0 && e == len, "find (ab)*c: %d [%zu, %zu)", found, b, e);
    double t = now_s() - t0;
    CHECK_MSG(t < 1.0, "three finds on a 200 KB line took %.3f s", t);
    free(line);
    canopy_regex_free(re);
}

/* The DFA's idle-state skip (runs of bytes no thread can take are jumped over, 32
 * at a time): every byte value, long runs of filler, sets with high bytes and
 * anchors, against the Pike VM line by line. */
static void idle_skip(uint64_t seed) {
    static const char *const pats[] = {"[0-9]{3,}",         "[\x80-\xff]{2}", "\xe9t",
                                       "[A-Z][a-z]+ [A-Z]", "x$|^y",          "[\x7f\x80]a|b\xff",
                                       "(AAT|CCG)T{2}",     "q[^q]"};
    canopy_rng r = canopy_rng_make(seed, 21);
    for (size_t k = 0; k < sizeof pats / sizeof pats[0]; k++)
        for (int rep = 0; rep < 6; rep++) {
            size_t len = 64 + (size_t)pick(&r, 3000);
            char *buf = malloc(len);
            int filler = pick(&r, 3); /* how often a random byte breaks the filler */
            for (size_t j = 0; j < len; j++) {
                int c = pick(&r, 8 << filler) == 0 ? pick(&r, 256) : 'q';
                if (pick(&r, 200) == 0) c = '\n';
                buf[j] = (char)c;
            }
            const char *pp[1] = {pats[k]};
            canopy_regex *re = NULL;
            CHECK_OK(canopy_regex_compile(pp, NULL, 1, 0, &re));
            if (!re) {
                free(buf);
                continue;
            }
            int64_t n = canopy_regex_count_lines(buf, len);
            uint8_t *want = malloc((size_t)n + 1);
            canopy_regex_match_options o = {CANOPY_REGEX_ENGINE_PIKE, 0};
            CHECK_OK(canopy_regex_match(re, buf, len, &o, want, NULL, NULL));
            char what[96];
            snprintf(what, sizeof what, "seed %llu idle skip '%s' rep %d", (unsigned long long)seed,
                     pats[k], rep);
            check_all_engines(re, buf, len, n, want, NULL, what);
            free(want);
            free(buf);
            canopy_regex_free(re);
        }
}

int main(void) {
    hand_cases();
    malformed();
    hostile();
    static const uint64_t seeds[] = {1, 2, 3, 4, 5};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) random_sets(seeds[i], 80);
    random_sets(check_seed(), 80);
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) literal_sets(seeds[i], 60, 0);
    literal_sets(check_seed(), 60, 0);
    literal_sets(7, 60, 1);
    literal_sets(check_seed(), 60, 1);
    factor_sets(20, 40);
    factor_sets(check_seed(), 40);
    buffers(check_seed());
    idle_skip(1);
    idle_skip(check_seed());
    return check_finish();
}
