/* SPDX-License-Identifier: MIT */
/* The required-literal prefilter. A pattern that is a concatenation holding a run
 * of single bytes ("ab" in ".*ab.*c") cannot match a line without that run, so when
 * every pattern has one, lines are found by searching for the runs (a SIMD compare
 * of the first two bytes per 32-byte window, then memcmp) and only those lines go
 * through the DFA. When a pattern is just its literal, optionally between `.*`s,
 * an occurrence is the match itself and the DFA is skipped (Ren's `.*ab` workload):
 * lines are then counted 64 bytes at a time without looking at them one by one. */
#define _GNU_SOURCE /* qsort_r */
#include "regex/dfa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

/* The single byte of a set, or -1 when it has none or several. */
static int single_byte(const uint32_t *set) {
    int found = -1;
    for (int w = 0; w < 8; w++) {
        if (!set[w]) continue;
        if (found >= 0 || (set[w] & (set[w] - 1))) return -1;
        found = w * 32 + __builtin_ctz(set[w]);
    }
    return found;
}

static int is_dot_star(const cre_tree *t, int32_t i) {
    const cre_node *n = &t->nodes[i];
    return n->kind == CRE_REP && n->min == 0 && n->max < 0 && t->nodes[n->a].kind == CRE_DOT;
}

/* The bytes an item of a concatenation always contributes as a plain run: a single
 * byte (1), or a single byte repeated a fixed number of times (`T{4}`: 4); 0 when
 * the item is anything else. *c gets the byte. */
static int32_t item_run(const cre_tree *t, int32_t i, int *c) {
    const cre_node *x = &t->nodes[i];
    if (x->kind == CRE_REP && x->min == x->max && x->min > 0) {
        int32_t n = x->min;
        x = &t->nodes[x->a];
        *c = x->kind == CRE_SET ? single_byte(x->set) : -1;
        return *c >= 0 && *c != '\n' ? n : 0;
    }
    *c = x->kind == CRE_SET ? single_byte(x->set) : -1;
    return *c >= 0 && *c != '\n' ? 1 : 0;
}

/* The longest run of single bytes in the top-level concatenation of a pattern
 * (fixed repetitions of a byte count as that many bytes; up to CRE_LIT_LEN bytes,
 * '\n' never included); *exact when the pattern is the run alone between `.*`s.
 * Returns its length, 0 when there is none. */
static int32_t pattern_literal(const cre_tree *t, uint8_t *lit, int *exact) {
    int32_t items[4096], n = 0;
    int32_t i = t->root;
    while (t->nodes[i].kind == CRE_CAT) {
        if (n == 4096) return 0;
        items[n++] = t->nodes[i].b;
        i = t->nodes[i].a;
    }
    items[n++] = i;
    /* items are in reverse order */
    int64_t best = 0, run = 0;
    int32_t best_end = 0, first = 0, run_first = 0;
    for (int32_t k = n - 1; k >= 0; k--) {
        int c;
        int32_t w = item_run(t, items[k], &c);
        if (w == 0) {
            run = 0;
            continue;
        }
        if (run == 0) run_first = k;
        run += w;
        if (run > best) {
            best = run;
            best_end = k;
            first = run_first; /* index in items of the run's first item */
        }
    }
    if (best == 0) return 0;
    *exact = best <= CRE_LIT_LEN;
    for (int32_t k = n - 1; k > first && *exact; k--) *exact = is_dot_star(t, items[k]);
    for (int32_t k = best_end - 1; k >= 0 && *exact; k--) *exact = is_dot_star(t, items[k]);
    int32_t len = 0;
    for (int32_t k = first; k >= best_end && len < CRE_LIT_LEN; k--) {
        int c;
        for (int32_t w = item_run(t, items[k], &c); w > 0 && len < CRE_LIT_LEN; w--)
            lit[len++] = (uint8_t)c;
    }
    return len;
}

/* A branch that is a plain string of 1..CRE_LIT_LEN single bytes (no '\n'): its length
 * and bytes, else 0. The CAT spine is left-deep, so the bytes come out last first. */
static int32_t branch_string(const cre_tree *t, int32_t i, uint8_t *lit) {
    int32_t n = 0, j = i;
    while (t->nodes[j].kind == CRE_CAT) {
        j = t->nodes[j].a;
        n++;
    }
    n++;
    if (n > CRE_LIT_LEN) return 0;
    for (int32_t k = n - 1; k >= 0; k--) {
        const cre_node *x = &t->nodes[k == 0 ? j : t->nodes[i].b];
        int c = x->kind == CRE_SET ? single_byte(x->set) : -1;
        if (c < 0 || c == '\n') return 0;
        lit[k] = (uint8_t)c;
        if (k > 0) i = t->nodes[i].a;
    }
    return n;
}

/* A top-level item that is an alternation of plain strings ((Latin|Greek)) is a
 * required factor too: a line without any of its strings cannot match. Fills up to
 * max strings and returns their count, 0 when the pattern has no such item (or it
 * has more strings); *exact when the item stands alone between `.*`s. */
static int32_t pattern_alternation(const cre_tree *t, uint8_t (*lits)[CRE_LIT_LEN], int32_t *lens,
                                   int32_t max, int *exact) {
    int32_t items[4096], n = 0;
    int32_t i = t->root;
    while (t->nodes[i].kind == CRE_CAT) {
        if (n == 4096) return 0;
        items[n++] = t->nodes[i].b;
        i = t->nodes[i].a;
    }
    items[n++] = i;
    for (int32_t k = 0; k < n; k++) {
        if (t->nodes[items[k]].kind != CRE_ALT) continue;
        int32_t m = 0, j = items[k], ok = 1;
        for (;;) {
            int32_t br = t->nodes[j].kind == CRE_ALT ? t->nodes[j].b : j;
            ok = m < max && (lens[m] = branch_string(t, br, lits[m])) > 0;
            if (!ok) break;
            m++;
            if (t->nodes[j].kind != CRE_ALT) break;
            j = t->nodes[j].a;
        }
        if (!ok) continue;
        *exact = 1;
        for (int32_t o = 0; o < n && *exact; o++) *exact = o == k || is_dot_star(t, items[o]);
        return m;
    }
    return 0;
}

/* ---- required factors as small finite sets of strings ----
 * An item of a pattern's top-level concatenation whose language is a small finite
 * set (a string, a class of a few bytes, an alternation or fixed repetition of
 * such) and a run of neighbouring such items give a set of strings one of which
 * every match holds: `(AAT|CCG|GTA)T{4}` holds AATTTTT, CCGTTTT or GTATTTT, and is
 * nothing else, so those three are its exact literals. */
#define FSET_MAX 256 /* strings of a set */
#define FSET_CLASS 8 /* bytes of a class taken as that many strings */
#define FSET_DEPTH 8 /* nesting followed below a top-level item */
typedef struct fset {
    int32_t n; /* strings, -1: not a small finite set */
    int32_t len[FSET_MAX];
    uint8_t s[FSET_MAX][CRE_LIT_LEN];
} fset;

/* Adds string x unless present (checked only when dedup: products of sets whose
 * strings each have one length are distinct, and -i words make 256 of them). */
static void fset_put(fset *a, const uint8_t *x, int32_t len, int dedup) {
    for (int32_t i = 0; dedup && i < a->n; i++)
        if (a->len[i] == len && memcmp(a->s[i], x, (size_t)len) == 0) return;
    if (a->n == FSET_MAX || len > CRE_LIT_LEN) {
        a->n = -1;
        return;
    }
    memcpy(a->s[a->n], x, (size_t)len);
    a->len[a->n++] = len;
}

static void fset_add(fset *a, const uint8_t *x, int32_t len) {
    fset_put(a, x, len, 1);
}

static int fset_one_length(const fset *a) {
    for (int32_t i = 1; i < a->n; i++)
        if (a->len[i] != a->len[0]) return 0;
    return 1;
}

/* a = a b (every string of a followed by every string of b); tmp is scratch. */
static void fset_cat(fset *a, const fset *b, fset *tmp) {
    if (a->n < 0 || b->n < 0 || (int64_t)a->n * b->n > FSET_MAX) {
        a->n = -1;
        return;
    }
    tmp->n = 0;
    uint8_t x[2 * CRE_LIT_LEN];
    int dedup = !fset_one_length(a) || !fset_one_length(b);
    for (int32_t i = 0; i < a->n && tmp->n >= 0; i++)
        for (int32_t j = 0; j < b->n && tmp->n >= 0; j++) {
            memcpy(x, a->s[i], (size_t)a->len[i]);
            memcpy(x + a->len[i], b->s[j], (size_t)b->len[j]);
            fset_put(tmp, x, a->len[i] + b->len[j], dedup);
        }
    a->n = tmp->n; /* the strings in use only: a whole set is 9 KiB */
    if (a->n > 0) {
        memcpy(a->len, tmp->len, (size_t)a->n * sizeof *a->len);
        memcpy(a->s, tmp->s, (size_t)a->n * sizeof *a->s);
    }
}

static void fset_empty_string(fset *a) {
    a->n = 1;
    a->len[0] = 0;
}

static void fset_union(fset *a, const fset *b) {
    if (b->n < 0) a->n = -1;
    for (int32_t j = 0; j < b->n && a->n >= 0; j++) fset_add(a, b->s[j], b->len[j]);
}

/* The language of node i when a small finite set, else out->n = -1. */
static void node_fset(const cre_tree *t, int32_t i, int depth, fset *out) {
    const cre_node *x = &t->nodes[i];
    out->n = -1;
    if (depth > FSET_DEPTH) return;
    if (x->kind == CRE_EMPTY) {
        fset_empty_string(out);
    } else if (x->kind == CRE_SET) {
        int count = 0;
        for (int w = 0; w < 8; w++) count += __builtin_popcount(x->set[w]);
        if (count == 0 || count > FSET_CLASS || cre_set_has(x->set, '\n')) return;
        out->n = 0;
        for (int w = 0; w < 8; w++)
            for (uint32_t m = x->set[w]; m; m &= m - 1) {
                uint8_t b = (uint8_t)(w * 32 + __builtin_ctz(m));
                fset_add(out, &b, 1);
            }
    } else if (x->kind == CRE_CAT || x->kind == CRE_ALT) {
        /* along the left-deep spine, then its last right child */
        int32_t items[64], n = 0, j = i;
        while (t->nodes[j].kind == x->kind && n < 63) {
            items[n++] = t->nodes[j].b;
            j = t->nodes[j].a;
        }
        if (t->nodes[j].kind == x->kind) return;
        items[n++] = j;
        fset *part = malloc(sizeof *part), *tmp = malloc(sizeof *tmp);
        if (part && tmp) {
            out->n = 0;
            if (x->kind == CRE_CAT) fset_empty_string(out);
            for (int32_t k = n - 1; k >= 0 && out->n >= 0; k--) {
                node_fset(t, items[k], depth + 1, part);
                if (x->kind == CRE_CAT)
                    fset_cat(out, part, tmp);
                else
                    fset_union(out, part);
            }
        }
        free(part);
        free(tmp);
    } else if (x->kind == CRE_REP && x->max >= 0 && x->max <= FSET_CLASS) {
        fset *part = malloc(sizeof *part), *pow = malloc(sizeof *pow), *tmp = malloc(sizeof *tmp);
        if (part && pow && tmp) {
            node_fset(t, x->a, depth + 1, part);
            fset_empty_string(pow); /* part^k, k = 0.. */
            out->n = part->n < 0 ? -1 : 0;
            for (int32_t k = 0; k <= x->max && out->n >= 0 && pow->n >= 0; k++) {
                if (k >= x->min) fset_union(out, pow);
                if (k < x->max) fset_cat(pow, part, tmp);
            }
            if (pow->n < 0) out->n = -1;
        }
        free(part);
        free(pow);
        free(tmp);
    }
}

/* The required factor of a pattern as a set of strings: the run of neighbouring
 * finite items of its top-level concatenation whose strings are all non-empty and
 * longest at their shortest (fewer strings on ties), at most max strings. Fills
 * lits/lens, returns the count (0: none); *exact when the run and `.*`s are the
 * whole pattern. */
static int32_t pattern_factor_set(const cre_tree *t, uint8_t (*lits)[CRE_LIT_LEN], int32_t *lens,
                                  int32_t max, int *exact) {
    int32_t items[256], n = 0, i = t->root;
    while (t->nodes[i].kind == CRE_CAT) {
        if (n == 255) return 0;
        items[n++] = t->nodes[i].b;
        i = t->nodes[i].a;
    }
    items[n++] = i; /* in reverse order */
    /* each item's set once (items of a long literal are single bytes: no allocation
     * beyond these) */
    fset *sets = malloc((size_t)n * sizeof *sets), *run = malloc(sizeof *run),
         *tmp = malloc(sizeof *tmp);
    int32_t best = 0, best_min = 0;
    /* only items with several strings, or groups (`(ab){2}`), can beat pattern_literal's
     * run of bytes */
    int some = 0;
    for (int32_t k = 0; sets && k < n; k++) {
        node_fset(t, items[k], 0, &sets[k]);
        const cre_node *x = &t->nodes[items[k]];
        int plain = x->kind == CRE_SET || (x->kind == CRE_REP && t->nodes[x->a].kind == CRE_SET);
        some |= sets[k].n > 1 || (sets[k].n == 1 && !plain);
    }
    if (!some) n = 0;
    for (int32_t first = n - 1; sets && run && tmp && first >= 0; first--) {
        fset_empty_string(run);
        for (int32_t last = first; last >= 0; last--) {
            fset_cat(run, &sets[last], tmp);
            if (run->n <= 0) break;
            int32_t shortest = CRE_LIT_LEN + 1;
            for (int32_t k = 0; k < run->n; k++)
                if (run->len[k] < shortest) shortest = run->len[k];
            if (shortest == 0 || run->n > max) continue;
            if (shortest > best_min || (shortest == best_min && run->n < best)) {
                best = run->n;
                best_min = shortest;
                for (int32_t k = 0; k < run->n; k++) {
                    memcpy(lits[k], run->s[k], (size_t)run->len[k]);
                    lens[k] = run->len[k];
                }
                *exact = 1;
                for (int32_t o = 0; o < n && *exact; o++)
                    *exact = (o <= first && o >= last) || is_dot_star(t, items[o]);
            }
        }
    }
    free(sets);
    free(run);
    free(tmp);
    return best;
}

/* Literal j's first (up to) 8 bytes as a word and the mask of its bytes, for the
 * confirmation of a filter hit without a memcmp call. */
static void lit_words(cre_dfa_info *info) {
    for (int32_t j = 0; j < info->n_lit; j++) {
        int32_t n = info->lit_len[j] < 8 ? info->lit_len[j] : 8;
        uint8_t w[8] = {0}, m[8] = {0}; /* as bytes: the same on any byte order */
        memcpy(w, info->lit[j], (size_t)n);
        memset(m, 0xff, (size_t)n);
        memcpy(&info->lit_word[j], w, 8);
        memcpy(&info->lit_wmask[j], m, 8);
    }
}

/* Literal j at x, x < e. */
static inline int lit_eq(const cre_dfa_info *info, int32_t j, const uint8_t *x, const uint8_t *e) {
    int32_t n = info->lit_len[j], k = 0;
    if (e - x < n) return 0;
    if (e - x >= 8) {
        uint64_t v;
        memcpy(&v, x, 8);
        if ((v & info->lit_wmask[j]) != info->lit_word[j]) return 0;
        k = 8;
    }
    /* byte loops, not memcmp: a call in the filter loops makes the compiler keep their
     * vector tables and pointers on the stack (twice the time per step) */
    for (; k < n; k++)
        if (x[k] != info->lit[j][k]) return 0;
    return 1;
}

/* Literal j with its filter window at w: it starts lit_off[j] bytes before, not
 * before lo. */
__attribute__((always_inline)) static inline int lit_at_window(const cre_dfa_info *info, int32_t j,
                                                               const uint8_t *w, const uint8_t *lo,
                                                               const uint8_t *e) {
    return w - lo >= info->lit_off[j] && lit_eq(info, j, w - info->lit_off[j], e);
}

/* Literals in byte order (a prefix first). */
static int cmp_lit(const void *pa, const void *pb, void *ctx) {
    const cre_dfa_info *info = ctx;
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    int32_t n = info->lit_len[a] < info->lit_len[b] ? info->lit_len[a] : info->lit_len[b];
    int c = memcmp(info->lit[a], info->lit[b], (size_t)n);
    return c ? c : (info->lit_len[a] > info->lit_len[b]) - (info->lit_len[a] < info->lit_len[b]);
}

/* The filter's buckets: up to 16 literals one per bucket (then a bucket hit on the
 * first two or three bytes is exact for literals of up to that many bytes); more are
 * sorted and cut into 16 runs of neighbours, so literals sharing a bucket tend to
 * share its table bits, and a hit is confirmed against each literal of the bucket. */
static void buckets_build(cre_dfa_info *info) {
    int32_t order[CRE_LIT_MAX], n = info->n_lit;
    for (int32_t j = 0; j < n; j++) order[j] = j;
    if (n > CRE_BUCKETS) qsort_r(order, (size_t)n, sizeof *order, cmp_lit, info);
    int32_t nb = n < CRE_BUCKETS ? n : CRE_BUCKETS;
    info->n_buckets = nb;
    for (int32_t k = 0, j = 0; k < nb; k++) {
        info->bucket_start[k] = j;
        int32_t end = (int32_t)((int64_t)n * (k + 1) / nb);
        for (; j < end; j++) info->bucket_lit[j] = order[j];
    }
    info->bucket_start[nb] = n;
    /* a third byte costs two shuffles per 32 positions: only for longer literals */
    info->filter_bytes = 2;
    for (int32_t j = 0; j < n; j++)
        if (info->lit_len[j] > 2) info->filter_bytes = 3;
    info->exact2 = info->exact3 = n <= CRE_BUCKETS;
    for (int32_t j = 0; j < n; j++) {
        info->exact2 &= info->lit_len[j] <= 2;
        info->exact3 &= info->lit_len[j] <= 3;
    }
}

/* Rough frequency of a byte in text (per 10,000 bytes of English prose and code):
 * lowercase letters by English letter frequency, capitals an eighth of theirs. */
static double byte_freq(unsigned c) {
    static const char order[] = "etaoinsrhldcumfpgwybvkxjqz";
    static const double lower[26] = {1000, 700, 650, 600, 570, 570, 520, 500, 450,
                                     330,  330, 230, 220, 200, 180, 160, 160, 150,
                                     140,  120, 80,  60,  15,  10,  10,  7};
    if (c == ' ') return 1500;
    if (c >= 'a' && c <= 'z') return lower[strchr(order, (int)c) - order];
    if (c >= 'A' && c <= 'Z') return lower[strchr(order, (int)c - 'A' + 'a') - order] / 8 + 5;
    if (c >= '0' && c <= '9') return 50;
    if (c > ' ' && c < 127) return strchr(".,;:'\"()-_/=", (int)c) ? 50 : 10;
    return 5;
}

/* Each literal with a bucket of its own (up to 16) is filtered on its rarest window
 * of two or three bytes by byte_freq (`mpl` of `temple`, not `tem`, which log lines
 * hold at every `items`), when that is 4 times rarer than its first bytes: a moved
 * window makes every confirmation a little dearer. A hit at the window is confirmed
 * at the literal's start, lit_off bytes before it. */
static void windows_choose(cre_dfa_info *info) {
    info->n_shifted = 0;
    for (int32_t j = 0; j < info->n_lit; j++) {
        info->lit_off[j] = 0;
        int32_t w = info->filter_bytes, n = info->lit_len[j];
        if (info->n_lit > CRE_BUCKETS || n <= w) continue;
        double first = 0, best = 0;
        for (int32_t o = 0; o + w <= n; o++) {
            /* chunks run on two bytes until hits get dense: those count most */
            const uint8_t *c = info->lit[j] + o;
            double score = byte_freq(c[0]) * byte_freq(c[1]) * (w == 3 ? sqrt(byte_freq(c[2])) : 1);
            if (o == 0) first = best = score;
            if (score < best) {
                best = score;
                info->lit_off[j] = o;
            }
        }
        if (best * 4 >= first) info->lit_off[j] = 0;
        info->n_shifted += info->lit_off[j] > 0;
    }
}

/* The nibble filter's tables, built once per program (a prefilter call per candidate
 * line would otherwise rebuild them): bucket k owns bit k & 7 of table set k >> 3,
 * and for each of the two or three bytes of its literals' windows the low and high
 * nibbles (any byte past a literal's end or past the filter's bytes). */
static void nib_build(cre_dfa_info *info) {
    memset(info->nib, 0, sizeof info->nib);
    for (int32_t k = 0; k < info->n_buckets; k++) {
        uint8_t bitk = (uint8_t)(1u << (k & 7));
        uint8_t(*g)[16] = info->nib[k >> 3];
        for (int32_t i = info->bucket_start[k]; i < info->bucket_start[k + 1]; i++) {
            int32_t j = info->bucket_lit[i];
            for (int32_t pos = 0; pos < 3; pos++)
                for (int v = 0; v < 16; v++) {
                    int32_t at = info->lit_off[j] + pos;
                    int any = at >= info->lit_len[j] || pos >= info->filter_bytes;
                    if (any || (info->lit[j][at] & 15) == v) g[2 * pos][v] |= bitk;
                    if (any || (info->lit[j][at] >> 4) == v) g[2 * pos + 1][v] |= bitk;
                }
        }
    }
}

/* A single literal is filtered on byte compares instead of nibble shuffles (one load
 * and compare per byte and 64 positions, which beats the shuffles for one literal,
 * not for several): on all its bytes when it has up to 3 (exact: ' ' of
 * `[A-Z][a-z]+ [A-Z][a-z]+`, `the`), else on its two rarest by byte_freq ("eo" of
 * "timeout"), each hit confirmed at the literal's start. */
static void byte_filter_choose(cre_dfa_info *info) {
    info->bf_bytes = 0;
    if (info->n_lit != 1) return;
    int32_t n = info->lit_len[0], w = n <= 3 ? n : 2;
    uint8_t used[CRE_LIT_LEN] = {0};
    info->bf_span = 0;
    for (int32_t t = 0; t < w; t++) { /* the t-th rarest byte, the first of equals */
        int32_t best = -1;
        for (int32_t o = 0; o < n; o++)
            if (!used[o] &&
                (best < 0 || byte_freq(info->lit[0][o]) < byte_freq(info->lit[0][best])))
                best = o;
        used[best] = 1;
        info->bf_off[t] = best;
        info->bf_byte[t] = info->lit[0][best];
        if (best > info->bf_span) info->bf_span = best;
    }
    info->bf_verify = n > w;
    info->bf_bytes = w;
}

void canopy_cre_literal_analyze(const cre_prog *p, const cre_tree *trees, cre_dfa_info *info) {
    info->n_lit = 0;
    info->n_sets = 0;
    info->exact = 1;
    if (p->n_patterns == 0) return;
    for (int32_t q = 0; q < p->n_patterns; q++) {
        uint8_t lits[CRE_LIT_ALT][CRE_LIT_LEN], set_lits[CRE_LIT_ALT][CRE_LIT_LEN];
        int32_t lens[CRE_LIT_ALT], set_lens[CRE_LIT_ALT];
        int exact = 0, exact_set = 0;
        int32_t m = 1;
        lens[0] = pattern_literal(&trees[q], lits[0], &exact);
        if (lens[0] == 0) m = pattern_alternation(&trees[q], lits, lens, CRE_LIT_ALT, &exact);
        /* a set of longer strings than the run or alternation above wins, up to 16 so
         * each has a filter bucket (256 shared ones for `-i jerusalem`: 30 % slower than
         * the DFA's skip to j/J) */
        int32_t shortest = m > 0 ? lens[0] : 0, set_shortest = CRE_LIT_LEN + 1;
        for (int32_t a = 1; a < m; a++)
            if (lens[a] < shortest) shortest = lens[a];
        int32_t m_set = pattern_factor_set(&trees[q], set_lits, set_lens, CRE_BUCKETS, &exact_set);
        for (int32_t a = 0; a < m_set; a++)
            if (set_lens[a] < set_shortest) set_shortest = set_lens[a];
        if (m_set > 0 && set_shortest > shortest) {
            m = m_set;
            exact = exact_set;
            memcpy(lits, set_lits, (size_t)m * sizeof *lits);
            memcpy(lens, set_lens, (size_t)m * sizeof *lens);
            info->n_sets++;
        }
        if (m == 0) {
            info->n_lit = 0;
            return;
        }
        info->exact &= exact;
        for (int32_t a = 0; a < m; a++) {
            int dup = 0;
            for (int32_t j = 0; j < info->n_lit && !dup; j++)
                dup = info->lit_len[j] == lens[a] &&
                      memcmp(info->lit[j], lits[a], (size_t)lens[a]) == 0;
            if (dup) continue;
            if (info->n_lit == CRE_LIT_MAX) {
                info->n_lit = 0;
                return;
            }
            memcpy(info->lit[info->n_lit], lits[a], (size_t)lens[a]);
            info->lit_len[info->n_lit++] = lens[a];
        }
    }
    lit_words(info);
    buckets_build(info);
    windows_choose(info);
    nib_build(info);
    byte_filter_choose(info);
}

static int lit_at(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    for (int32_t j = 0; j < info->n_lit; j++)
        if (lit_eq(info, j, x, e)) return 1;
    return 0;
}

static const uint8_t *find_scalar(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    uint8_t first[256] = {0};
    for (int32_t j = 0; j < info->n_lit; j++) first[info->lit[j][0]] = 1;
    for (; x < e; x++)
        if (first[*x] && lit_at(info, x, e)) return x;
    return e;
}

/* For the SIMD finders: the first literal start at or after w - CRE_LIT_LEN (not
 * before lo), where w is the first filter window confirmed or the end of the vector
 * steps: a literal whose window lies at w or later may start up to that far before. */
static const uint8_t *find_from_window(const cre_dfa_info *info, const uint8_t *w,
                                       const uint8_t *lo, const uint8_t *e) {
    return find_scalar(info, w - lo < CRE_LIT_LEN ? lo : w - CRE_LIT_LEN, e);
}

/* Scalar count of the lines holding a literal (the exact case, no SIMD). */
static int64_t count_scalar(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e,
                            uint8_t *sel, int64_t *lines) {
    int64_t hits = 0, line = 0;
    while (b < e) {
        const uint8_t *nl = memchr(b, '\n', (size_t)(e - b));
        const uint8_t *le = nl ? nl : e;
        int m = find_scalar(info, b, le) < le;
        if (sel) sel[line] = (uint8_t)m;
        hits += m;
        line++;
        b = le + 1;
    }
    *lines = line;
    return hits;
}

/* The candidate positions (bits) at x whose literal is there (within [lo, e), its
 * window at the position): b0/b1 hold per position the buckets of groups 0 and 1
 * the filter found. */
__attribute__((always_inline)) static inline uint64_t
confirm_hits(const cre_dfa_info *info, const uint8_t *b0, const uint8_t *b1, uint64_t bits,
             const uint8_t *x, const uint8_t *lo, const uint8_t *e, int64_t *probes) {
    uint64_t ok = 0;
    *probes += __builtin_popcountll(bits);
    for (uint64_t m = bits; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        int found = 0;
        for (uint32_t cand = b0[i] | (uint32_t)b1[i] << 8; cand && !found; cand &= cand - 1) {
            int k = __builtin_ctz(cand);
            for (int32_t l = info->bucket_start[k]; l < info->bucket_start[k + 1] && !found; l++)
                found = lit_at_window(info, info->bucket_lit[l], x + i, lo, e);
        }
        ok |= (uint64_t)found << i;
    }
    return ok;
}

/* The counter's last step, fewer than 66 bytes [x, e) left: tail (TAIL_BYTES) gets
 * them padded with '\n' (no literal holds one) so the filter may read x[0..65], after
 * up to CRE_LIT_LEN bytes before x (from lo on: literals start there when their window
 * is at x); *tlo gets where those begin, *valid the positions inside [x, e). */
#define TAIL_BYTES (CRE_LIT_LEN + 160)
__attribute__((always_inline)) static inline const uint8_t *
pad_tail(const uint8_t *x, const uint8_t *lo, const uint8_t *e, uint8_t *tail, const uint8_t **tlo,
         uint64_t *valid) {
    size_t k = (size_t)(e - x), back = x - lo < CRE_LIT_LEN ? (size_t)(x - lo) : CRE_LIT_LEN;
    *valid = k >= 64 ? ~0ull : (1ull << k) - 1;
    memset(tail, '\n', TAIL_BYTES);
    memcpy(tail, x - back, back + k);
    *tlo = tail;
    return tail + back;
}

/* One step of the line counter (see count_loop) on literal starts m and newlines n
 * of 64 positions: the lines it ends that hold a literal; *line advances, sel (may
 * be NULL) gets their verdicts, *pending says the line running on holds one. */
__attribute__((always_inline)) static inline int64_t
count_step(uint64_t m, uint64_t n, uint64_t *pending, uint8_t *sel, int64_t *line) {
    uint64_t gaps = ~(m | n), carried;
    uint64_t out = __builtin_add_overflow((m << 1) | *pending, gaps, &carried);
    uint64_t ended = carried & n; /* newlines of lines that hold a literal */
    *pending = out | (m >> 63);
    if (sel)
        for (uint64_t t = n; t; t &= t - 1)
            sel[(*line)++] = (uint8_t)((ended >> __builtin_ctzll(t)) & 1);
    else
        *line += __builtin_popcountll(n);
    return __builtin_popcountll(ended);
}

/* The counter's end: a last line of [b, e) without '\n' holds a literal iff pending. */
__attribute__((always_inline)) static inline int64_t
count_end(const uint8_t *b, const uint8_t *e, uint64_t pending, uint8_t *sel, int64_t *line) {
    if (b == e || e[-1] == '\n') return 0;
    if (sel) sel[*line] = (uint8_t)pending;
    ++*line;
    return (int64_t)pending;
}

#if defined(__x86_64__) || defined(__i386__)
/* The nibble filter (Teddy-like): a byte x at position i and the bytes y (, z) after
 * it are in bucket k iff the low- and high-nibble tables of the two (three) positions
 * all have bit k: with one literal per bucket that is x y (z) == the literal's first
 * bytes exactly, four (six) byte shuffles per 32 positions whatever the number of
 * literals. The filter's functions take `three` as a constant, so each loop is
 * compiled for two and for three bytes. Tables: [group][lo0, hi0, lo1, hi1, lo2, hi2][16]. */
typedef struct nib_tables {
    __m256i t[2][6];
    int32_t groups;
} nib_tables;

__attribute__((target("avx2"))) static void nib_init(const cre_dfa_info *info, nib_tables *nt) {
    nt->groups = (info->n_buckets + 7) / 8;
    for (int g = 0; g < 2; g++)
        for (int k = 0; k < 6; k++)
            nt->t[g][k] =
                _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)info->nib[g][k]));
}

/* Bucket bytes of the 32 positions at x (x[33] is read): per position the buckets
 * whose literals' first three bytes may start there, group g. */
__attribute__((target("avx2"), always_inline)) static inline __m256i
nib_buckets(const nib_tables *nt, int g, __m256i v0, __m256i v1, __m256i v2, int three) {
    const __m256i low = _mm256_set1_epi8(15);
    __m256i l0 = _mm256_and_si256(v0, low), h0 = _mm256_and_si256(_mm256_srli_epi16(v0, 4), low);
    __m256i l1 = _mm256_and_si256(v1, low), h1 = _mm256_and_si256(_mm256_srli_epi16(v1, 4), low);
    __m256i r = _mm256_and_si256(_mm256_shuffle_epi8(nt->t[g][0], l0),
                                 _mm256_shuffle_epi8(nt->t[g][1], h0));
    r = _mm256_and_si256(r, _mm256_shuffle_epi8(nt->t[g][2], l1));
    r = _mm256_and_si256(r, _mm256_shuffle_epi8(nt->t[g][3], h1));
    if (three) {
        __m256i l2 = _mm256_and_si256(v2, low);
        __m256i h2 = _mm256_and_si256(_mm256_srli_epi16(v2, 4), low);
        r = _mm256_and_si256(r, _mm256_shuffle_epi8(nt->t[g][4], l2));
        r = _mm256_and_si256(r, _mm256_shuffle_epi8(nt->t[g][5], h2));
    }
    return r;
}

/* Positions (bits) among the 32 at x where a literal starts: the three-byte filter,
 * then, unless it is exact, each hit confirmed against its buckets' literals
 * (within [x, e)). */
__attribute__((target("avx2"), always_inline)) static inline uint32_t
nib_hits32(const cre_dfa_info *info, const nib_tables *nt, const uint8_t *x, const uint8_t *lo,
           const uint8_t *e, int verify, int three, int64_t *probes) {
    __m256i v0 = _mm256_loadu_si256((const __m256i *)x);
    __m256i v1 = _mm256_loadu_si256((const __m256i *)(x + 1));
    __m256i v2 = three ? _mm256_loadu_si256((const __m256i *)(x + 2)) : v1;
    const __m256i zero = _mm256_setzero_si256();
    __m256i r0 = nib_buckets(nt, 0, v0, v1, v2, three);
    uint32_t bits = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r0, zero));
    __m256i r1 = zero;
    if (nt->groups > 1) {
        r1 = nib_buckets(nt, 1, v0, v1, v2, three);
        bits |= ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(r1, zero));
    }
    if (!verify || !bits) return bits;
    _Alignas(32) uint8_t
        b[2][32]; /* aligned: a store split across cache lines is not forwarded to the byte loads */
    _mm256_storeu_si256((__m256i *)b[0], r0);
    _mm256_storeu_si256((__m256i *)b[1], r1);
    return (uint32_t)confirm_hits(info, b[0], b[1], bits, x, lo, e, probes);
}

/* 64 positions at x, x[0..65] readable: literal starts (bits) and newlines. */
__attribute__((target("avx2"), always_inline)) static inline uint64_t
nib_hits64(const cre_dfa_info *info, const nib_tables *nt, const uint8_t *x, const uint8_t *lo,
           const uint8_t *e, int verify, int three, int64_t *probes, uint64_t *nl) {
    const __m256i vnl = _mm256_set1_epi8('\n');
    uint64_t h0 = nib_hits32(info, nt, x, lo, e, verify, three, probes);
    uint64_t h1 = nib_hits32(info, nt, x + 32, lo, e, verify, three, probes);
    uint32_t n0 = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)x), vnl));
    uint32_t n1 = (uint32_t)_mm256_movemask_epi8(
        _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(x + 32)), vnl));
    *nl = n0 | (uint64_t)n1 << 32;
    return h0 | h1 << 32;
}

__attribute__((target("avx2"), always_inline)) static inline const uint8_t *
find_loop(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e, int three) {
    nib_tables nt;
    nib_init(info, &nt);
    int verify = three ? !info->exact3 : !info->exact2;
    int64_t probes = 0;
    const uint8_t *lo = x;
    for (; e - x >= 34; x += 32) {
        CRE_PREFETCH(x);
        uint32_t bits = nib_hits32(info, &nt, x, lo, e, verify, three, &probes);
        if (bits && !info->n_shifted) return x + __builtin_ctz(bits); /* windows are starts */
        if (bits) return find_from_window(info, x + __builtin_ctz(bits), lo, e);
    }
    return info->n_shifted ? find_from_window(info, x, lo, e) : find_scalar(info, x, e);
}

__attribute__((target("avx2"))) static const uint8_t *
find_avx2(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    return info->filter_bytes == 3 ? find_loop(info, x, e, 1) : find_loop(info, x, e, 0);
}

/* The lines of [b, e) holding a literal, 64 positions per step without a branch per
 * line: with M the literal starts and N the newlines of a step, a line holds a
 * literal iff the event (bit of M | N) before its newline is in M. Adding M << 1 to
 * the gaps ~(M | N) carries each match up to the next event, so (M << 1) + ~(M | N)
 * has the bit of every event right after a match; the carry out of bit 63 (or a
 * match at bit 63) says the line running past the step already holds one. */
__attribute__((target("avx2,popcnt"), always_inline)) static inline int64_t
count_loop(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e, uint8_t *sel,
           int64_t *lines, int three, int64_t *probes) {
    nib_tables nt;
    nib_init(info, &nt);
    int verify = three ? !info->exact3 : !info->exact2;
    int64_t hits = 0, line = 0;
    uint64_t pending = 0; /* the current line holds a literal */
    uint8_t tail[TAIL_BYTES];
    for (const uint8_t *x = b; x < e; x += 64) {
        uint64_t m, n, valid;
        CRE_PREFETCH(x);
        if (e - x >= 66) {
            m = nib_hits64(info, &nt, x, b, e, verify, three, probes, &n);
        } else {
            const uint8_t *tlo, *t = pad_tail(x, b, e, tail, &tlo, &valid);
            m = nib_hits64(info, &nt, t, tlo, t + (e - x), verify, three, probes, &n) & valid;
            n &= valid;
        }
        hits += count_step(m, n, &pending, sel, &line);
    }
    hits += count_end(b, e, pending, sel, &line);
    *lines = line;
    return hits;
}

/* The AVX-512 filter: the same nibble tables, 64 positions per shuffle (vpshufb
 * looks up within each 128-bit lane, as on AVX2) and the hits and newlines straight
 * into mask registers, with verify and the second bucket group fixed per compiled
 * loop, so an exact filter's step has no branch at all. About half the instructions
 * of two AVX2 steps. */
typedef struct nib_tables512 {
    __m512i t[2][6];
} nib_tables512;

__attribute__((target("avx512f,avx512bw"))) static void nib_init512(const cre_dfa_info *info,
                                                                    nib_tables512 *nt) {
    for (int g = 0; g < 2; g++)
        for (int k = 0; k < 6; k++)
            nt->t[g][k] = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)info->nib[g][k]));
}

__attribute__((target("avx512f,avx512bw"), always_inline)) static inline __m512i
nib_buckets512(const nib_tables512 *nt, int g, __m512i v0, __m512i v1, __m512i v2, int three) {
    const __m512i low = _mm512_set1_epi8(15);
    __m512i l0 = _mm512_and_si512(v0, low), h0 = _mm512_and_si512(_mm512_srli_epi16(v0, 4), low);
    __m512i l1 = _mm512_and_si512(v1, low), h1 = _mm512_and_si512(_mm512_srli_epi16(v1, 4), low);
    __m512i r = _mm512_and_si512(_mm512_shuffle_epi8(nt->t[g][0], l0),
                                 _mm512_shuffle_epi8(nt->t[g][1], h0));
    r = _mm512_and_si512(r, _mm512_shuffle_epi8(nt->t[g][2], l1));
    r = _mm512_and_si512(r, _mm512_shuffle_epi8(nt->t[g][3], h1));
    if (three) {
        __m512i l2 = _mm512_and_si512(v2, low);
        __m512i h2 = _mm512_and_si512(_mm512_srli_epi16(v2, 4), low);
        r = _mm512_and_si512(r, _mm512_shuffle_epi8(nt->t[g][4], l2));
        r = _mm512_and_si512(r, _mm512_shuffle_epi8(nt->t[g][5], h2));
    }
    return r;
}

/* nib_hits64 on 64-byte lanes (x[0..65] readable); nl may be NULL. */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"), always_inline)) static inline uint64_t
nib_hits512(const cre_dfa_info *info, const nib_tables512 *nt, const uint8_t *x, const uint8_t *lo,
            const uint8_t *e, int verify, int three, int groups2, int64_t *probes, uint64_t *nl) {
    __m512i v0 = _mm512_loadu_si512((const void *)x);
    __m512i v1 = _mm512_loadu_si512((const void *)(x + 1));
    __m512i v2 = three ? _mm512_loadu_si512((const void *)(x + 2)) : v1;
    if (nl) *nl = _mm512_cmpeq_epi8_mask(v0, _mm512_set1_epi8('\n'));
    __m512i r0 = nib_buckets512(nt, 0, v0, v1, v2, three), r1 = _mm512_setzero_si512();
    uint64_t bits = _mm512_test_epi8_mask(r0, r0);
    if (groups2) {
        r1 = nib_buckets512(nt, 1, v0, v1, v2, three);
        bits |= _mm512_test_epi8_mask(r1, r1);
    }
    if (!verify || !bits) return bits;
    _Alignas(64) uint8_t b[2][64]; /* one cache line each: split stores stall the byte loads (3x) */
    _mm512_storeu_si512((void *)b[0], r0);
    _mm512_storeu_si512((void *)b[1], r1);
    /* confirm_hits written out: through the helper this loop ran 10-25 % slower (GCC 12) */
    *probes += __builtin_popcountll(bits);
    uint64_t ok = 0;
    for (uint64_t m = bits; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        int found = 0;
        for (uint32_t cand = b[0][i] | (uint32_t)b[1][i] << 8; cand && !found; cand &= cand - 1) {
            int k = __builtin_ctz(cand);
            for (int32_t l = info->bucket_start[k]; l < info->bucket_start[k + 1] && !found; l++)
                found = verify == 2 ? lit_at_window(info, info->bucket_lit[l], x + i, lo, e)
                                    : lit_eq(info, info->bucket_lit[l], x + i, e);
        }
        ok |= (uint64_t)found << i;
    }
    return ok;
}

/* count_loop on 64-byte lanes (the same carry trick, the same padded last step). */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"), always_inline)) static inline int64_t
count_loop512(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e, uint8_t *sel,
              int64_t *lines, int three, int verify, int groups2, int64_t *probes) {
    nib_tables512 nt;
    nib_init512(info, &nt);
    int64_t hits = 0, line = 0;
    uint64_t pending = 0;
    uint8_t tail[TAIL_BYTES];
    /* one loop with the padded tail inside: a loop of its own for the tail made this
     * one 10-50 % slower on a file just mapped (not on a buffer in cache) */
    for (const uint8_t *x = b; x < e; x += 64) {
        uint64_t m, n, valid;
        CRE_PREFETCH(x);
        if (e - x >= 66) {
            m = nib_hits512(info, &nt, x, b, e, verify, three, groups2, probes, &n);
        } else {
            const uint8_t *tlo, *t = pad_tail(x, b, e, tail, &tlo, &valid);
            m = nib_hits512(info, &nt, t, tlo, t + (e - x), verify, three, groups2, probes, &n) &
                valid;
            n &= valid;
        }
        hits += count_step(m, n, &pending, sel, &line);
    }
    hits += count_end(b, e, pending, sel, &line);
    *lines = line;
    return hits;
}

/* The AVX-512 loops, one compiled per (three, verification, second group);
 * verification 2 (at the hit less the literal's window offset) only in functions of
 * their own for sets with moved windows: compiled into the same function, those
 * variants made the other loops 20-40 % slower on 19 MB from memory (code layout;
 * the same in cache). */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"))) static int64_t
loop_avx512(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e, uint8_t *sel,
            int64_t *lines, int three, int64_t *probes) {
    int verify = three ? !info->exact3 : !info->exact2;
    switch (three * 4 + verify * 2 + (info->n_buckets > 8)) {
    case 0:
        return count_loop512(info, b, e, sel, lines, 0, 0, 0, probes);
    case 1:
        return count_loop512(info, b, e, sel, lines, 0, 0, 1, probes);
    case 2:
        return count_loop512(info, b, e, sel, lines, 0, 1, 0, probes);
    case 3:
        return count_loop512(info, b, e, sel, lines, 0, 1, 1, probes);
    case 4:
        return count_loop512(info, b, e, sel, lines, 1, 0, 0, probes);
    case 5:
        return count_loop512(info, b, e, sel, lines, 1, 0, 1, probes);
    case 6:
        return count_loop512(info, b, e, sel, lines, 1, 1, 0, probes);
    default:
        return count_loop512(info, b, e, sel, lines, 1, 1, 1, probes);
    }
}

/* Moved windows: always confirmed (a moved window is in a literal longer than it). */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"))) static int64_t
loop_avx512_moved(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e, uint8_t *sel,
                  int64_t *lines, int three, int64_t *probes) {
    switch (three * 2 + (info->n_buckets > 8)) {
    case 0:
        return count_loop512(info, b, e, sel, lines, 0, 2, 0, probes);
    case 1:
        return count_loop512(info, b, e, sel, lines, 0, 2, 1, probes);
    case 2:
        return count_loop512(info, b, e, sel, lines, 1, 2, 0, probes);
    default:
        return count_loop512(info, b, e, sel, lines, 1, 2, 1, probes);
    }
}

__attribute__((target("avx2,popcnt"))) static int64_t loop_avx2(const cre_dfa_info *info,
                                                                const uint8_t *b, const uint8_t *e,
                                                                uint8_t *sel, int64_t *lines,
                                                                int three, int64_t *probes) {
    return three ? count_loop(info, b, e, sel, lines, 1, probes)
                 : count_loop(info, b, e, sel, lines, 0, probes);
}

__attribute__((target("avx512f,avx512bw,bmi,popcnt"), always_inline)) static inline const uint8_t *
find_loop512(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e, int three, int verify,
             int groups2) {
    nib_tables512 nt;
    nib_init512(info, &nt);
    int64_t probes = 0;
    const uint8_t *lo = x;
    for (; e - x >= 66; x += 64) {
        CRE_PREFETCH(x);
        uint64_t bits = nib_hits512(info, &nt, x, lo, e, verify, three, groups2, &probes, NULL);
        if (bits && verify < 2) return x + __builtin_ctzll(bits); /* windows are starts */
        if (bits) return find_from_window(info, x + __builtin_ctzll(bits), lo, e);
    }
    return verify < 2 ? find_scalar(info, x, e) : find_from_window(info, x, lo, e);
}

__attribute__((target("avx512f,avx512bw,bmi,popcnt"))) static const uint8_t *
find_avx512(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    int three = info->filter_bytes == 3, verify = three ? !info->exact3 : !info->exact2;
    switch (three * 4 + verify * 2 + (info->n_buckets > 8)) {
    case 0:
        return find_loop512(info, x, e, 0, 0, 0);
    case 1:
        return find_loop512(info, x, e, 0, 0, 1);
    case 2:
        return find_loop512(info, x, e, 0, 1, 0);
    case 3:
        return find_loop512(info, x, e, 0, 1, 1);
    case 4:
        return find_loop512(info, x, e, 1, 0, 0);
    case 5:
        return find_loop512(info, x, e, 1, 0, 1);
    case 6:
        return find_loop512(info, x, e, 1, 1, 0);
    default:
        return find_loop512(info, x, e, 1, 1, 1);
    }
}

__attribute__((target("avx512f,avx512bw,bmi,popcnt"))) static const uint8_t *
find_avx512_moved(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e) {
    switch ((info->filter_bytes == 3) * 2 + (info->n_buckets > 8)) {
    case 0:
        return find_loop512(info, x, e, 0, 2, 0);
    case 1:
        return find_loop512(info, x, e, 0, 2, 1);
    case 2:
        return find_loop512(info, x, e, 1, 2, 0);
    default:
        return find_loop512(info, x, e, 1, 2, 1);
    }
}

/* The byte filter's registers: the literal's bytes broadcast, their offsets, '\n'
 * broadcast, and the bytes a step must be able to read (else the padded tail). */
typedef struct bf_regs {
    __m512i want[3], nl;
    int32_t off[3];
    ptrdiff_t full;
} bf_regs;

__attribute__((target("avx512f,avx512bw"), always_inline)) static inline void
bf_init512(const cre_dfa_info *info, bf_regs *r) {
    for (int t = 0; t < 3; t++) {
        int k = t < info->bf_bytes ? t : 0;
        r->want[t] = _mm512_set1_epi8((char)info->bf_byte[k]);
        r->off[t] = info->bf_off[k];
    }
    r->nl = _mm512_set1_epi8('\n');
    r->full = 64 + info->bf_span + 1;
}

/* The byte filter (byte_filter_choose) on the 64 positions at x, x[0 .. 63 + bf_span]
 * readable: the starts of the literal within [x, e), on w bytes (a constant in each
 * compiled loop); *nl gets the newlines. */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"), always_inline)) static inline uint64_t
bf_hits512(const cre_dfa_info *info, const bf_regs *r, const uint8_t *x, const uint8_t *e, int w,
           uint64_t *nl) {
    *nl = _mm512_cmpeq_epi8_mask(_mm512_loadu_si512((const void *)x), r->nl);
    uint64_t m =
        _mm512_cmpeq_epi8_mask(_mm512_loadu_si512((const void *)(x + r->off[0])), r->want[0]);
    if (w > 1)
        m &= _mm512_cmpeq_epi8_mask(_mm512_loadu_si512((const void *)(x + r->off[1])), r->want[1]);
    if (w > 2)
        m &= _mm512_cmpeq_epi8_mask(_mm512_loadu_si512((const void *)(x + r->off[2])), r->want[2]);
    if (!info->bf_verify) return m;
    uint64_t ok = 0;
    for (; m; m &= m - 1) {
        int i = __builtin_ctzll(m);
        ok |= (uint64_t)lit_eq(info, 0, x + i, e) << i;
    }
    return ok;
}

/* count_loop512 on the byte filter. */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"), always_inline)) static inline int64_t
bf_count_loop(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e, uint8_t *sel,
              int64_t *lines, int w) {
    bf_regs r;
    bf_init512(info, &r);
    int64_t hits = 0, line = 0;
    uint64_t pending = 0, nl, m, valid;
    const uint8_t *x = b;
    for (; e - x >= r.full; x += 64) {
        CRE_PREFETCH(x);
        m = bf_hits512(info, &r, x, e, w, &nl);
        hits += count_step(m, nl, &pending, sel, &line);
    }
    uint8_t tail[TAIL_BYTES];
    for (; x < e; x += 64) { /* the padded tail apart: no call in the loop above */
        const uint8_t *tlo, *t = pad_tail(x, b, e, tail, &tlo, &valid);
        m = bf_hits512(info, &r, t, t + (e - x), w, &nl) & valid;
        hits += count_step(m, nl & valid, &pending, sel, &line);
    }
    hits += count_end(b, e, pending, sel, &line);
    *lines = line;
    return hits;
}

/* The first start of the literal in [x, e) on the byte filter, counting the newlines
 * before it in the same pass. */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"), always_inline)) static inline const uint8_t *
bf_find_loop(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e, int64_t *nls, int w) {
    bf_regs r;
    bf_init512(info, &r);
    uint64_t m = 0, nl = 0, valid = ~0ull;
    for (; e - x >= r.full; x += 64) {
        CRE_PREFETCH(x);
        if ((m = bf_hits512(info, &r, x, e, w, &nl))) break;
        *nls += __builtin_popcountll(nl);
    }
    uint8_t tail[TAIL_BYTES];
    for (; !m && x < e; x += 64) {
        const uint8_t *tlo, *t = pad_tail(x, x, e, tail, &tlo, &valid);
        m = bf_hits512(info, &r, t, t + (e - x), w, &nl) & valid;
        nl &= valid;
        if (m) break;
        *nls += __builtin_popcountll(nl);
    }
    if (!m) return e;
    int i = __builtin_ctzll(m);
    *nls += __builtin_popcountll(nl & ((1ull << i) - 1));
    return x + i;
}

/* One compiled loop per number of compared bytes. */
__attribute__((target("avx512f,avx512bw,bmi,popcnt"))) static int64_t
bf_count(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e, uint8_t *sel,
         int64_t *lines) {
    switch (info->bf_bytes) {
    case 1:
        return bf_count_loop(info, b, e, sel, lines, 1);
    case 2:
        return bf_count_loop(info, b, e, sel, lines, 2);
    default:
        return bf_count_loop(info, b, e, sel, lines, 3);
    }
}

__attribute__((target("avx512f,avx512bw,bmi,popcnt"))) static const uint8_t *
bf_find(const cre_dfa_info *info, const uint8_t *x, const uint8_t *e, int64_t *nls) {
    switch (info->bf_bytes) {
    case 1:
        return bf_find_loop(info, x, e, nls, 1);
    case 2:
        return bf_find_loop(info, x, e, nls, 2);
    default:
        return bf_find_loop(info, x, e, nls, 3);
    }
}

static int use_byte_filter(const cre_dfa_info *info) {
    return info->bf_bytes > 0 && canopy_cpu_isa() >= CANOPY_ISA_AVX512;
}

static int32_t chunk_override;
void canopy_cre_literal_chunk_override(int32_t bytes) {
    chunk_override = bytes > 0 ? bytes : 0;
}

typedef int64_t (*count_loop_fn)(const cre_dfa_info *, const uint8_t *, const uint8_t *, uint8_t *,
                                 int64_t *, int, int64_t *);

static int64_t count_chunks(const cre_dfa_info *info, count_loop_fn loop, const uint8_t *b,
                            const uint8_t *e, uint8_t *sel, int64_t *lines, const uint8_t **stop,
                            int64_t *filtered3) {
    /* Chunks of whole lines. The third byte pays only where two-byte hits need many
     * confirmations ("ss" of "sshd" in "session"): a chunk takes it while the last
     * two-byte chunk confirmed more than one hit per 128 bytes (re-measured every 8th
     * chunk). Shared buckets confirming more than one hit per 16 bytes with all their
     * filter bytes (100 common words: ~12 ns a hit) cost more than the DFA's table
     * lookup per byte: the caller takes over. */
    int64_t hits = 0, line = 0, n, probes;
    int three = 0;
    const ptrdiff_t size = chunk_override ? chunk_override : (ptrdiff_t)64 << 10;
    for (int64_t chunk = 0; b < e; chunk++) {
        const uint8_t *c = e - b > size ? memchr(b + size, '\n', (size_t)(e - b - size)) : NULL;
        c = c ? c + 1 : e;
        if (three && chunk % 8 == 0) three = 0;
        probes = 0;
        hits += loop(info, b, c, sel ? sel + line : NULL, &n, three, &probes);
        line += n;
        ptrdiff_t got = c - b;
        *filtered3 += three ? got : 0;
        b = c;
        if (info->n_lit > CRE_BUCKETS && (three || info->filter_bytes == 2) && probes * 16 > got)
            break;
        if (!three) three = info->filter_bytes == 3 && probes * 128 > got;
    }
    *stop = b;
    *lines = line;
    return hits;
}
#endif

static const uint8_t *find_any(const cre_dfa_info *info, const uint8_t *from, const uint8_t *e) {
#if defined(__x86_64__) || defined(__i386__)
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX512)
        return info->n_shifted ? find_avx512_moved(info, from, e) : find_avx512(info, from, e);
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX2) return find_avx2(info, from, e);
#endif
    return find_scalar(info, from, e);
}

const uint8_t *canopy_cre_literal_find(const cre_dfa_info *info, const uint8_t *from,
                                       const uint8_t *e, int64_t *nls) {
    *nls = 0;
#if defined(__x86_64__) || defined(__i386__)
    /* the byte filter counts the newlines in the same pass: no second one over the input */
    if (use_byte_filter(info)) return bf_find(info, from, e, nls);
#endif
    const uint8_t *q = find_any(info, from, e);
    const uint8_t *nl = q > from ? memrchr(from, '\n', (size_t)(q - from)) : NULL;
    if (nl) *nls = canopy_regex_count_lines((const char *)from, (size_t)(nl + 1 - from));
    return q;
}

int64_t canopy_cre_literal_count(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e,
                                 uint8_t *sel, int64_t *lines, const uint8_t **stop,
                                 int64_t *filtered3) {
    *stop = e;
#if defined(__x86_64__) || defined(__i386__)
    if (use_byte_filter(info)) return bf_count(info, b, e, sel, lines);
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX512)
        return count_chunks(info, info->n_shifted ? loop_avx512_moved : loop_avx512, b, e, sel,
                            lines, stop, filtered3);
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX2)
        return count_chunks(info, loop_avx2, b, e, sel, lines, stop, filtered3);
#else
    (void)filtered3;
#endif
    return count_scalar(info, b, e, sel, lines);
}

canopy_isa canopy_cre_literal_isa(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX512) return CANOPY_ISA_AVX512;
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX2) return CANOPY_ISA_AVX2;
#endif
    return CANOPY_ISA_SCALAR;
}
