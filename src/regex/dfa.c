/* SPDX-License-Identifier: MIT */
/* The lazy DFA: states are canonical (sorted) sets of Pike VM threads after
 * closure, built on first use, so matching a line is one table lookup per byte
 * (the memoised Thompson simulation). Transition entries are premultiplied row
 * offsets; values with the top bit set are the rare cases, handled off the hot
 * loop: an entry not built yet, a line end ('\n' has its own byte class), and a
 * line decided early (some pattern matched when any will do, or every pattern
 * matched). The ^/$ anchors stay exact: the start state of a line is the only one
 * at the line's beginning, and a state keeps the `assert eol` threads waiting so
 * its verdict at the line's end is known when it is built. */
#define _GNU_SOURCE /* memrchr */
#include "regex/closure.h"
#include "regex/dfa.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

enum {
    T_UNKNOWN = -1, /* 0xffffffff: not built yet */
    T_NEWLINE = -2, /* the '\n' column of every row */
    T_DECIDED = -3, /* the line's result is known: skip to its end */
    T_SPECIAL = 1u << 31
};
/* Default cache: 4096 states of at most 8 MiB of transitions and thread sets. */
#define DFA_MAX_STATES 4096
#define DFA_MAX_BYTES ((size_t)8 << 20)
/* A block whose cache is flushed this often is finished by the Pike VM. */
#define DFA_MAX_FLUSHES 4

struct cre_dfa {
    const cre_prog *p;
    const cre_dfa_info *info;
    int32_t ncls, words;
    int32_t mode; /* the mode the cache was built for (-1 none) */
    uint32_t *trans;
    int32_t n_states, cap_states, max_states;
    int32_t *pcs_off, *npcs;
    uint8_t *at_bol;
    uint64_t *masks;  /* per state: patterns matched so far (CRE_ALL) */
    uint64_t *finals; /* per state: patterns matched if the line ends here */
    int32_t *pool;
    int64_t pool_n, pool_cap;
    int32_t *table; /* open addressing: state index or -1 */
    int32_t table_cap;
    uint32_t *mark;
    uint32_t gen;
    int32_t *stack, *set, *raw, *junk, *saved, *tset;
    uint64_t *tmask, *saved_mask, *tset_mask;
    uint32_t start; /* premultiplied row of the start state */
    int start_decided;
    /* The idle state: the closure of pc 0 away from the line start, nothing else
     * running. Every byte outside `stop` (the bytes a thread there can take, and
     * '\n') leads back to it, so the scan jumps over such runs, 32 bytes per AVX2
     * step. idle is UINT32_MAX when there is no such state or stop is too wide. */
    uint32_t idle;
    /* cross: the start state has the idle state's threads and neither matches at a
     * line end, so the skip runs on over newlines (lines it crosses do not match;
     * '\n' is then not a stop byte) */
    int cross;
    int avx2;
    uint8_t stop[256];
    uint8_t nib[2][16]; /* stop as nibble tables: nib[hi >> 3][lo] has bit hi & 7 */
    int64_t built, fallbacks;
    cre_line_fn pike;           /* the fallback: Ren's SIMD interpreter on this CPU's lanes */
    int64_t scanned, filtered3; /* bytes through scan(); bytes of the 3-byte filter */
};

/* Byte classes: bytes that every set of the program treats alike share a column of
 * the transition table; '\n' gets a class of its own (the line end). */
canopy_status canopy_cre_dfa_info_init(const cre_prog *p, const cre_tree *trees,
                                       cre_dfa_info *info) {
    memset(info, 0, sizeof *info);
    uint8_t cls[256] = {0};
    int32_t n = 2, size[256] = {255, 1};
    cls['\n'] = 1;
    for (int32_t k = 0; k < p->n_sets; k++) {
        /* a single byte (most sets) leaves its class for one of its own: no pass over
         * all bytes per set, which was half of compiling three words */
        int one = -1, count = 0;
        for (int w = 0; w < 8; w++) count += __builtin_popcount(p->sets[k][w]);
        for (int w = 0; w < 8 && count == 1; w++)
            if (p->sets[k][w]) one = w * 32 + __builtin_ctz(p->sets[k][w]);
        if (one >= 0) {
            if (one != '\n' && size[cls[one]] > 1) {
                size[cls[one]]--;
                size[n] = 1;
                cls[one] = (uint8_t)n++;
            }
            continue;
        }
        int16_t map[512];
        for (int i = 0; i < 2 * n; i++) map[i] = -1;
        int32_t m = 0;
        for (int c = 0; c < 256; c++) {
            int key = cls[c] * 2 + (c != '\n' && cre_set_has(p->sets[k], (unsigned)c));
            if (map[key] < 0) map[key] = (int16_t)m++;
            cls[c] = (uint8_t)map[key];
        }
        n = m;
        memset(size, 0, sizeof size);
        for (int c = 0; c < 256; c++) size[cls[c]]++;
    }
    memcpy(info->cls, cls, sizeof cls);
    for (int c = 255; c >= 0; c--) info->rep[cls[c]] = (uint8_t)c;
    info->n_cls = n;
    canopy_cre_literal_analyze(p, trees, info);
    return CANOPY_OK;
}

void canopy_cre_dfa_info_free(cre_dfa_info *info) {
    memset(info, 0, sizeof *info);
}

int64_t canopy_cre_dfa_states(const cre_dfa *d) {
    return d->built;
}
int64_t canopy_cre_dfa_fallbacks(const cre_dfa *d) {
    return d->fallbacks;
}
int64_t canopy_cre_dfa_scanned(const cre_dfa *d) {
    return d->scanned;
}
int64_t canopy_cre_dfa_filtered3(const cre_dfa *d) {
    return d->filtered3;
}
static int32_t limit_override;
void canopy_cre_dfa_limit_override(int32_t max_states) {
    limit_override = max_states > 0 ? max_states : 0;
}

void canopy_cre_dfa_free(cre_dfa *d) {
    if (!d) return;
    free(d->trans);
    free(d->pcs_off);
    free(d->npcs);
    free(d->at_bol);
    free(d->masks);
    free(d->finals);
    free(d->pool);
    free(d->table);
    free(d->mark);
    free(d->stack);
    free(d->set);
    free(d->raw);
    free(d->junk);
    free(d->saved);
    free(d->tset);
    free(d->tmask);
    free(d->saved_mask);
    free(d->tset_mask);
    free(d);
}

canopy_status canopy_cre_dfa_new(const cre_prog *p, const cre_dfa_info *info, cre_dfa **out) {
    cre_dfa *d = calloc(1, sizeof *d);
    *out = NULL;
    if (!d) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory (regex DFA)");
    size_t m = (size_t)p->vm.n + 1;
    d->p = p;
    d->info = info;
    d->ncls = info->n_cls;
    d->words = p->mask_words;
    d->mode = -1;
    d->idle = UINT32_MAX;
    d->avx2 = canopy_cpu_isa() >= CANOPY_ISA_AVX2;
    canopy_isa isa;
    d->pike = canopy_cre_simd_line_fn(&isa);
    d->max_states = DFA_MAX_STATES;
    size_t by_bytes = DFA_MAX_BYTES / ((size_t)d->ncls * 4 + 64);
    if ((size_t)d->max_states > by_bytes) d->max_states = by_bytes < 2 ? 2 : (int32_t)by_bytes;
    if (limit_override) d->max_states = limit_override < 3 ? 3 : limit_override;
    d->mark = calloc(m, sizeof *d->mark);
    d->stack = malloc(m * sizeof *d->stack);
    d->set = malloc(m * sizeof *d->set);
    d->raw = malloc(m * sizeof *d->raw);
    d->junk = malloc(m * sizeof *d->junk);
    d->saved = malloc(m * sizeof *d->saved);
    d->tset = malloc(m * sizeof *d->tset);
    d->tmask = calloc((size_t)d->words, sizeof *d->tmask);
    d->saved_mask = calloc((size_t)d->words, sizeof *d->saved_mask);
    d->tset_mask = calloc((size_t)d->words, sizeof *d->tset_mask);
    if (!d->mark || !d->stack || !d->set || !d->raw || !d->junk || !d->saved || !d->tset ||
        !d->tmask || !d->saved_mask || !d->tset_mask) {
        canopy_cre_dfa_free(d);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory (regex DFA)");
    }
    *out = d;
    return CANOPY_OK;
}

static void new_gen(cre_dfa *d) {
    if (++d->gen == 0) {
        memset(d->mark, 0, ((size_t)d->p->vm.n + 1) * sizeof *d->mark);
        d->gen = 1;
    }
}

static inline int bit(const uint64_t *m, int32_t q) {
    return (int)((m[q >> 6] >> (q & 63)) & 1);
}

/* Closure of pc0 at a position where ^ holds iff bol and $ iff eol. Consuming pcs
 * and (when !eol) waiting `assert eol` pcs go to out; matches set bits of m (CRE_ALL)
 * or *any. */
static void closure(cre_dfa *d, int32_t pc0, int bol, int eol, int all, int32_t *out, int32_t *n,
                    uint64_t *m, int *any) {
    cre_closure c = {
        d->p->vm.code, d->p->pattern_of, d->mark, d->gen, d->stack, bol, eol, 1, all, m, 0};
    cre_closure_add(&c, pc0, out, n);
    if (c.matched) *any = 1;
}

static int all_matched(const cre_dfa *d, const uint64_t *m) {
    for (int32_t q = 0; q < d->p->n_patterns; q++)
        if (!bit(m, q)) return 0;
    return 1;
}

/* Drops threads of matched patterns and sorts the rest: the canonical key. */
static int32_t canonical(cre_dfa *d, int32_t *s, int32_t n, int all, const uint64_t *m) {
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t q = d->p->pattern_of[s[i]];
        if (!(all && q >= 0 && bit(m, q))) s[k++] = s[i];
    }
    for (int32_t i = 1; i < k; i++) { /* insertion sort: sets are short and mostly sorted */
        int32_t v = s[i], j = i;
        while (j > 0 && s[j - 1] > v) {
            s[j] = s[j - 1];
            j--;
        }
        s[j] = v;
    }
    return k;
}

/* State i's thread pcs; states of no threads may come before the pool exists, and
 * NULL + 0 is undefined. */
static const int32_t *state_pcs(const cre_dfa *d, int32_t i) {
    return d->npcs[i] ? d->pool + d->pcs_off[i] : NULL;
}

static uint32_t key_hash(const int32_t *s, int32_t n, int bol, const uint64_t *m, int32_t words) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)bol;
    for (int32_t i = 0; i < n; i++) h = (h ^ (uint64_t)s[i]) * 1099511628211ull;
    for (int32_t i = 0; i < words; i++) h = (h ^ m[i]) * 1099511628211ull;
    return (uint32_t)(h ^ (h >> 32));
}

static void flush(cre_dfa *d) {
    d->n_states = 0;
    d->pool_n = 0;
    if (d->table)
        for (int32_t i = 0; i < d->table_cap; i++) d->table[i] = -1;
}

/* Grows the per-state arrays to hold one more state; -1 when the cache is full. */
static int reserve(cre_dfa *d, int32_t npcs) {
    if (d->n_states >= d->max_states) return -1;
    if (d->pool_n + npcs > (int64_t)(DFA_MAX_BYTES / 4) && d->n_states > 0) return -1;
    if (d->n_states == d->cap_states) {
        int32_t cap = d->cap_states ? d->cap_states * 2 : 16;
        if (cap > d->max_states) cap = d->max_states;
        void *t = realloc(d->trans, (size_t)cap * (size_t)d->ncls * sizeof *d->trans);
        if (!t) return -2;
        d->trans = t;
        void *a = realloc(d->pcs_off, (size_t)cap * sizeof *d->pcs_off);
        if (a) d->pcs_off = a;
        void *b = realloc(d->npcs, (size_t)cap * sizeof *d->npcs);
        if (b) d->npcs = b;
        void *c = realloc(d->at_bol, (size_t)cap);
        if (c) d->at_bol = c;
        void *e = realloc(d->masks, (size_t)cap * (size_t)d->words * sizeof *d->masks);
        if (e) d->masks = e;
        void *f = realloc(d->finals, (size_t)cap * (size_t)d->words * sizeof *d->finals);
        if (f) d->finals = f;
        if (!a || !b || !c || !e || !f) return -2;
        d->cap_states = cap;
        /* the hash table stays at most half full */
        if (2 * cap > d->table_cap) {
            int32_t tc = 64;
            while (tc < 2 * cap) tc *= 2;
            int32_t *tb = malloc((size_t)tc * sizeof *tb);
            if (!tb) return -2;
            for (int32_t i = 0; i < tc; i++) tb[i] = -1;
            for (int32_t i = 0; i < d->n_states; i++) {
                uint32_t h = key_hash(state_pcs(d, i), d->npcs[i], d->at_bol[i],
                                      d->masks + (size_t)i * d->words, d->words);
                uint32_t k = h & (uint32_t)(tc - 1);
                while (tb[k] >= 0) k = (k + 1) & (uint32_t)(tc - 1);
                tb[k] = i;
            }
            free(d->table);
            d->table = tb;
            d->table_cap = tc;
        }
    }
    if (d->pool_n + npcs > d->pool_cap) {
        int64_t cap = d->pool_cap ? d->pool_cap : 256;
        while (cap < d->pool_n + npcs) cap *= 2;
        void *pl = realloc(d->pool, (size_t)cap * sizeof *d->pool);
        if (!pl) return -2;
        d->pool = pl;
        d->pool_cap = cap;
    }
    return 0;
}

/* The state of key (s, n, bol, m), created if new. Returns its index, -1 when the
 * cache is full, -2 when out of memory. */
static int32_t intern(cre_dfa *d, const int32_t *s, int32_t n, int bol, const uint64_t *m,
                      int all) {
    uint32_t h = key_hash(s, n, bol, m, d->words);
    if (d->table_cap) {
        uint32_t k = h & (uint32_t)(d->table_cap - 1);
        for (int32_t i; (i = d->table[k]) >= 0; k = (k + 1) & (uint32_t)(d->table_cap - 1))
            if (d->npcs[i] == n && d->at_bol[i] == bol &&
                (n == 0 || memcmp(d->pool + d->pcs_off[i], s, (size_t)n * sizeof *s) == 0) &&
                memcmp(d->masks + (size_t)i * d->words, m, (size_t)d->words * sizeof *m) == 0)
                return i;
    }
    int r = reserve(d, n);
    if (r) return r;
    int32_t i = d->n_states++;
    d->built++;
    d->pcs_off[i] = (int32_t)d->pool_n;
    d->npcs[i] = n;
    d->at_bol[i] = (uint8_t)bol;
    if (n) memcpy(d->pool + d->pool_n, s, (size_t)n * sizeof *s); /* pool may be NULL */
    d->pool_n += n;
    uint64_t *mi = d->masks + (size_t)i * d->words, *fi = d->finals + (size_t)i * d->words;
    memcpy(mi, m, (size_t)d->words * sizeof *m);
    memcpy(fi, m, (size_t)d->words * sizeof *m);
    /* the verdict if the line ends here: the waiting `assert eol` threads go on */
    new_gen(d);
    int any = 0, nj = 0;
    for (int32_t j = 0; j < n; j++)
        if (d->p->vm.code[s[j]].op == CVM_ASSERT)
            closure(d, s[j], bol, 1, all, d->junk, &nj, fi, &any);
    if (!all && any) fi[0] = 1;
    uint32_t *row = d->trans + (size_t)i * d->ncls;
    for (int32_t c = 0; c < d->ncls; c++) row[c] = (uint32_t)T_UNKNOWN;
    row[d->info->cls['\n']] = (uint32_t)T_NEWLINE;
    uint32_t k = h & (uint32_t)(d->table_cap - 1);
    while (d->table[k] >= 0) k = (k + 1) & (uint32_t)(d->table_cap - 1);
    d->table[k] = i;
    return i;
}

/* (Re)builds the start state for a mode; -2 when out of memory. */
/* The idle state and its stop bytes (see struct cre_dfa); skipping pays only when
 * the stop bytes are a minority of the text, so wide sets (`.`) get no idle state. */
static void make_idle(cre_dfa *d, int all) {
    d->idle = UINT32_MAX;
    new_gen(d);
    int32_t n = 0;
    int any = 0;
    memset(d->tmask, 0, (size_t)d->words * sizeof *d->tmask);
    closure(d, 0, 0, 0, all, d->set, &n, d->tmask, &any);
    if (any) return; /* every line matches */
    uint32_t stop[8] = {0};
    stop['\n' >> 5] |= 1u << ('\n' & 31);
    for (int32_t j = 0; j < n; j++) {
        const cvm_insn *in = &d->p->vm.code[d->set[j]];
        for (int w = 0; w < 8; w++)
            stop[w] |= in->op == CVM_DOT ? ~0u : in->op == CVM_CMP ? d->p->sets[in->arg][w] : 0;
    }
    int count = 0;
    for (int w = 0; w < 8; w++) count += __builtin_popcount(stop[w]);
    if (count > 160) return;
    n = canonical(d, d->set, n, all, d->tmask);
    int32_t i = intern(d, d->set, n, 0, d->tmask, all);
    if (i < 0) return;
    int32_t si = (int32_t)(d->start / (uint32_t)d->ncls);
    int cross =
        d->npcs[si] == d->npcs[i] && (d->npcs[i] == 0 || /* the pool may be NULL then */
                                      memcmp(d->pool + d->pcs_off[si], d->pool + d->pcs_off[i],
                                             (size_t)d->npcs[i] * sizeof *d->pool) == 0);
    for (int32_t w = 0; w < d->words && cross; w++)
        cross =
            d->finals[(size_t)si * d->words + w] == 0 && d->finals[(size_t)i * d->words + w] == 0;
    d->cross = cross;
    if (cross) stop['\n' >> 5] &= ~(1u << ('\n' & 31));
    memset(d->nib, 0, sizeof d->nib);
    for (unsigned c = 0; c < 256; c++) {
        d->stop[c] = (uint8_t)cre_set_has(stop, c);
        if (d->stop[c]) d->nib[c >> 7][c & 15] |= (uint8_t)(1u << ((c >> 4) & 7));
    }
    d->idle = (uint32_t)i * (uint32_t)d->ncls;
}

static int make_start(cre_dfa *d, int all) {
    new_gen(d);
    int32_t n = 0;
    int any = 0;
    memset(d->tmask, 0, (size_t)d->words * sizeof *d->tmask);
    closure(d, 0, 1, 0, all, d->set, &n, d->tmask, &any);
    d->start_decided = all ? all_matched(d, d->tmask) : any;
    n = canonical(d, d->set, n, all, d->tmask);
    int32_t i = intern(d, d->set, n, 1, d->tmask, all);
    if (i < 0) return i;
    d->start = (uint32_t)i * (uint32_t)d->ncls;
    make_idle(d, all);
    return 0;
}

/* Builds the transition of the state at row offset *s on class k. Returns the entry
 * (T_DECIDED or a row offset), or -1/-2 for a full cache / no memory. A full cache
 * is flushed here (the current state is kept), so *s may move; *flushes counts. */
static int64_t build(cre_dfa *d, uint32_t *s, int32_t k, int all, int *flushes) {
    int32_t si = (int32_t)(*s / (uint32_t)d->ncls);
    unsigned c = d->info->rep[k];
    const cvm_insn *code = d->p->vm.code;
    const int32_t *pcs = state_pcs(d, si);
    int32_t np = d->npcs[si], nr = 0;
    for (int32_t j = 0; j < np; j++) {
        const cvm_insn *in = &code[pcs[j]];
        if (in->op == CVM_DOT || (in->op == CVM_CMP && cre_set_has(d->p->sets[in->arg], c)))
            d->raw[nr++] = pcs[j] + 1;
    }
    memcpy(d->tmask, d->masks + (size_t)si * d->words, (size_t)d->words * sizeof *d->tmask);
    new_gen(d);
    int32_t n = 0;
    int any = 0;
    for (int32_t j = 0; j < nr; j++) closure(d, d->raw[j], 0, 0, all, d->set, &n, d->tmask, &any);
    closure(d, 0, 0, 0, all, d->set, &n, d->tmask, &any);
    uint32_t entry;
    if (all ? all_matched(d, d->tmask) : any) {
        entry = (uint32_t)T_DECIDED;
    } else {
        n = canonical(d, d->set, n, all, d->tmask);
        int32_t t = intern(d, d->set, n, 0, d->tmask, all);
        if (t == -1) {
            /* full: flush, then rebuild the start, the current and the target state */
            if (np) memcpy(d->saved, pcs, (size_t)np * sizeof *pcs);
            memcpy(d->saved_mask, d->masks + (size_t)si * d->words,
                   (size_t)d->words * sizeof *d->saved_mask);
            if (n) memcpy(d->tset, d->set, (size_t)n * sizeof *d->set);
            memcpy(d->tset_mask, d->tmask, (size_t)d->words * sizeof *d->tmask);
            int bol = d->at_bol[si];
            flush(d);
            ++*flushes;
            if (make_start(d, all) < 0) return -2;
            int32_t ni = intern(d, d->saved, np, bol, d->saved_mask, all);
            if (ni < 0) return -2;
            *s = (uint32_t)ni * (uint32_t)d->ncls;
            t = intern(d, d->tset, n, 0, d->tset_mask, all);
        }
        if (t < 0) return t;
        entry = (uint32_t)t * (uint32_t)d->ncls;
    }
    d->trans[*s + (uint32_t)k] = entry;
    return entry;
}

/* One finished line: its verdict from the state's final mask. */
static inline int finish_line(cre_dfa *d, uint32_t s, int all, int64_t *counts) {
    const uint64_t *f = d->finals + (size_t)(s / (uint32_t)d->ncls) * d->words;
    if (!all) return f[0] != 0;
    int m = 0;
    for (int32_t w = 0; w < d->words; w++) {
        uint64_t x = f[w];
        m |= x != 0;
        while (x) {
            counts[w * 64 + __builtin_ctzll(x)]++;
            x &= x - 1;
        }
    }
    return m;
}

static void decided_line(cre_dfa *d, int all, int64_t *counts) {
    if (all)
        for (int32_t q = 0; q < d->p->n_patterns; q++) counts[q]++;
}

/* The SIMD Pike VM on lines [b, e): the fallback of a block that thrashes the cache
 * (a pattern set whose DFA blows up: there Ren's interpreter is what runs). */
static int64_t pike_lines(cre_dfa *d, cre_pike_scratch *pike, const uint8_t *b, const uint8_t *e,
                          cre_mode mode, uint8_t *sel, int64_t *counts, uint64_t *mask,
                          int64_t *lines) {
    int64_t hits = 0, line = 0;
    while (b < e) {
        const uint8_t *nl = memchr(b, '\n', (size_t)(e - b));
        const uint8_t *le = nl ? nl : e;
        int m = d->pike(d->p, pike, b, (size_t)(le - b), mode, mask);
        if (mode == CRE_ALL)
            for (int32_t q = 0; q < d->p->n_patterns; q++) counts[q] += bit(mask, q);
        if (sel) sel[line] = (uint8_t)m;
        hits += m;
        line++;
        b = le + 1;
    }
    *lines = line;
    return hits;
}

#if defined(__x86_64__) || defined(__i386__)
/* The first stop byte in [p, e), or e: a byte's low nibble picks a byte of bits of
 * its 8 possible high nibbles (two tables by the top bit), its high nibble the bit. */
__attribute__((target("avx2"))) static const uint8_t *skip_avx2(const cre_dfa *d, const uint8_t *p,
                                                                const uint8_t *e) {
    const __m256i t0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)d->nib[0]));
    const __m256i t1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)d->nib[1]));
    const __m256i bits =
        _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16,
                         32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m256i low = _mm256_set1_epi8(15), zero = _mm256_setzero_si256();
    for (; p + 32 <= e; p += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)p);
        __m256i lo = _mm256_and_si256(v, low);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        __m256i m = _mm256_blendv_epi8(_mm256_shuffle_epi8(t0, lo), _mm256_shuffle_epi8(t1, lo), v);
        __m256i hit = _mm256_and_si256(m, _mm256_shuffle_epi8(bits, hi));
        uint32_t z = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hit, zero));
        if (z != 0xffffffffu) return p + __builtin_ctz(~z);
    }
    while (p < e && !d->stop[*p]) p++;
    return p;
}
#endif

#if defined(__x86_64__) || defined(__i386__)
/* skip_avx2 that runs on over newlines: *nls gets the newlines crossed, *after the
 * byte after the last of them (unchanged when none). */
__attribute__((target("avx2,popcnt"))) static const uint8_t *
cross_avx2(const cre_dfa *d, const uint8_t *p, const uint8_t *e, int64_t *nls,
           const uint8_t **after) {
    const __m256i t0 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)d->nib[0]));
    const __m256i t1 = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)d->nib[1]));
    const __m256i bits =
        _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128, 1, 2, 4, 8, 16,
                         32, 64, -128, 1, 2, 4, 8, 16, 32, 64, -128);
    const __m256i low = _mm256_set1_epi8(15), zero = _mm256_setzero_si256();
    const __m256i vnl = _mm256_set1_epi8('\n');
    for (; p + 32 <= e; p += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)p);
        __m256i lo = _mm256_and_si256(v, low);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
        __m256i m = _mm256_blendv_epi8(_mm256_shuffle_epi8(t0, lo), _mm256_shuffle_epi8(t1, lo), v);
        __m256i hit = _mm256_and_si256(m, _mm256_shuffle_epi8(bits, hi));
        uint32_t stop = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(hit, zero));
        uint32_t nl = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, vnl));
        if (stop) nl &= (1u << __builtin_ctz(stop)) - 1;
        if (nl) {
            *nls += __builtin_popcount(nl);
            *after = p + 32 - __builtin_clz(nl);
        }
        if (stop) return p + __builtin_ctz(stop);
    }
    for (; p < e; p++) {
        if (*p == '\n') {
            ++*nls;
            *after = p + 1;
        } else if (d->stop[*p]) {
            return p;
        }
    }
    return p;
}
#endif

static inline const uint8_t *skip_cross(const cre_dfa *d, const uint8_t *p, const uint8_t *e,
                                        int64_t *nls, const uint8_t **after) {
#if defined(__x86_64__) || defined(__i386__)
    if (d->avx2) return cross_avx2(d, p, e, nls, after);
#endif
    for (; p < e; p++) {
        if (*p == '\n') {
            ++*nls;
            *after = p + 1;
        } else if (d->stop[*p]) {
            return p;
        }
    }
    return p;
}

static inline const uint8_t *skip_idle(const cre_dfa *d, const uint8_t *p, const uint8_t *e) {
    if (p < e && d->stop[*p]) return p; /* dense stop bytes (DNA): no vector set-up */
#if defined(__x86_64__) || defined(__i386__)
    if (d->avx2) return skip_avx2(d, p, e);
#endif
    while (p < e && !d->stop[*p]) p++;
    return p;
}

/* The DFA over whole lines [b, e). */
static int64_t scan(cre_dfa *d, cre_pike_scratch *pike, const uint8_t *b, const uint8_t *e,
                    cre_mode mode, uint8_t *sel, int64_t *counts, uint64_t *mask, int64_t *lines) {
    const int all = mode == CRE_ALL;
    const uint8_t *cls = d->info->cls;
    d->scanned += e - b;
    int64_t hits = 0, line = 0;
    int flushes = 0;
    if (d->mode != (int32_t)mode) {
        flush(d);
        if (make_start(d, all) < 0) {
            d->fallbacks++;
            return pike_lines(d, pike, b, e, mode, sel, counts, mask, lines);
        }
        d->mode = (int32_t)mode;
    }
    if (d->start_decided) { /* every line matches at its start (e.g. the empty pattern) */
        int64_t n = canopy_regex_count_lines((const char *)b, (size_t)(e - b));
        for (int64_t i = 0; i < n; i++) {
            if (sel) sel[i] = 1;
            decided_line(d, all, counts);
        }
        *lines = n;
        return n;
    }
    uint32_t s = d->start, idle = d->idle, d_idle = 0; /* d_idle: UINT32_MAX = skip off */
    int32_t skips = 0;
    const uint8_t *p = b, *ls = b, *win = b;
    while (p < e) {
        uint32_t t = d->trans[s + cls[*p]];
        if (t < T_SPECIAL) {
            s = t;
            p++;
            if (s == idle) {
                const uint8_t *q;
                if (d->cross) {
                    /* crossed lines end idle: no match (sel is zeroed by the caller) */
                    int64_t nls = 0;
                    const uint8_t *after = NULL;
                    q = skip_cross(d, p, e, &nls, &after);
                    if (nls) {
                        line += nls;
                        ls = after;
                        if (q == after) s = d->start;
                    }
                } else {
                    q = skip_idle(d, p, e);
                }
                p = q;
                /* a skip every few bytes (DNA): its branches cost more than it saves */
                if (++skips == 256) {
                    if (p - win < 256 * 8) idle = d_idle = UINT32_MAX;
                    skips = 0;
                    win = p;
                }
            }
            continue;
        }
        if (t == (uint32_t)T_NEWLINE) {
            int m = finish_line(d, s, all, counts);
            if (sel) sel[line] = (uint8_t)m;
            hits += m;
            line++;
            s = d->start;
            ls = ++p;
            continue;
        }
        if (t == (uint32_t)T_DECIDED) {
            if (sel) sel[line] = 1;
            decided_line(d, all, counts);
            hits++;
            line++;
            const uint8_t *nl = memchr(p, '\n', (size_t)(e - p));
            s = d->start;
            ls = p = nl ? nl + 1 : e;
            continue;
        }
        int64_t r = build(d, &s, cls[*p], all, &flushes);
        idle = d_idle == UINT32_MAX ? UINT32_MAX : d->idle; /* a flush rebuilt it */
        if (r == -2 || flushes > DFA_MAX_FLUSHES) {
            /* thrashing (or no memory for the cache): the Pike VM finishes the block */
            d->fallbacks++;
            flush(d);
            d->mode = -1; /* the next scan starts with a fresh cache */
            int64_t rest = 0;
            hits += pike_lines(d, pike, ls, e, mode, sel ? sel + line : NULL, counts, mask, &rest);
            *lines = line + rest;
            return hits;
        }
    }
    if (ls < e) { /* a last line without '\n' */
        int m = finish_line(d, s, all, counts);
        if (sel) sel[line] = (uint8_t)m;
        hits += m;
        line++;
    }
    *lines = line;
    return hits;
}

int64_t canopy_cre_dfa_block(cre_dfa *d, cre_pike_scratch *pike, const uint8_t *b, const uint8_t *e,
                             cre_mode mode, uint8_t *sel, int64_t *counts, uint64_t *mask,
                             int64_t *lines) {
    const cre_dfa_info *info = d->info;
    if (mode == CRE_ALL || info->n_lit == 0)
        return scan(d, pike, b, e, mode, sel, counts, mask, lines);
    if (info->exact) {
        const uint8_t *stop;
        int64_t n, rest, hits = canopy_cre_literal_count(info, b, e, sel, &n, &stop, &d->filtered3);
        if (stop == e) {
            *lines = n;
            return hits;
        }
        hits += scan(d, pike, stop, e, mode, sel ? sel + n : NULL, counts, mask, &rest);
        *lines = n + rest;
        return hits;
    }
    /* prefilter: only lines holding a required literal can match */
    int64_t hits = 0, line = 0, one, cand = 0, scanned = 0;
    const uint8_t *p = b;
    while (p < e) {
        /* When the candidate lines cover most of the bytes (a space in prose, "A" in
         * DNA) or come closer than 32 bytes apart on average (short lines), the
         * per-candidate bookkeeping costs more than the DFA (with its idle skip) on
         * every byte, so the rest of the block goes to the DFA. */
        if (++cand >= 64 && (scanned * 4 > (p - b) * 3 || p - b < cand * 32)) {
            int64_t rest = 0;
            hits += scan(d, pike, p, e, mode, sel ? sel + line : NULL, counts, mask, &rest);
            *lines = line + rest;
            return hits;
        }
        int64_t nls;
        const uint8_t *q = canopy_cre_literal_find(info, p, e, &nls);
        line += nls; /* the whole lines before q's */
        if (q >= e) {
            line += e[-1] != '\n'; /* a last line without '\n' */
            p = e;
            break;
        }
        const uint8_t *ls = memrchr(p, '\n', (size_t)(q - p));
        ls = ls ? ls + 1 : p;
        const uint8_t *nl = memchr(q, '\n', (size_t)(e - q));
        const uint8_t *le = nl ? nl + 1 : e;
        int m = (int)scan(d, pike, ls, le, mode, NULL, counts, mask, &one);
        scanned += le - ls;
        if (sel) sel[line] = (uint8_t)m;
        hits += m;
        line++;
        p = le;
    }
    *lines = line;
    return hits;
}
