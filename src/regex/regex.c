/* SPDX-License-Identifier: MIT */
/* The public regex API: compile a pattern set, then match a buffer line by line in
 * parallel blocks. Blocks are cut at '\n' so each holds whole lines; every thread
 * runs its blocks with its own engine scratch (Pike VM lists, DFA cache), results
 * land at each line's global index, so the output order is the file order whatever
 * the schedule. */
#include "regex/regex.h"

#include "regex/dfa.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

struct canopy_regex {
    cre_prog prog;
    cre_dfa_info dfa; /* byte classes and the literal prefilter, shared read-only */
    cre_prog plain;   /* CANOPY_REGEX_WORD: the patterns unwrapped, for canopy_regex_find */
    int word;
};

const char *canopy_regex_engine_name(canopy_regex_engine e) {
    static const char *const names[CANOPY_REGEX_ENGINE_COUNT] = {"auto", "pike", "simd", "dfa"};
    return (unsigned)e < CANOPY_REGEX_ENGINE_COUNT ? names[e] : "?";
}

canopy_status canopy_regex_engine_parse(const char *s, canopy_regex_engine *out) {
    for (int e = 0; e < CANOPY_REGEX_ENGINE_COUNT; e++)
        if (strcmp(s, canopy_regex_engine_name((canopy_regex_engine)e)) == 0) {
            *out = (canopy_regex_engine)e;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID, "unknown regex engine '%s' (auto, pike, simd, dfa)", s);
}

canopy_status canopy_regex_compile(const char *const *patterns, const size_t *lens, int32_t n,
                                   uint32_t flags, canopy_regex **out) {
    *out = NULL;
    if (n < 0 || (n > 0 && !patterns))
        return canopy_fail(CANOPY_ERR_INVALID, "canopy_regex_compile: bad pattern list");
    if (flags & ~(uint32_t)(CANOPY_REGEX_ICASE | CANOPY_REGEX_LINE | CANOPY_REGEX_WORD))
        return canopy_fail(CANOPY_ERR_INVALID, "canopy_regex_compile: unknown flags 0x%x", flags);
    int icase = (flags & CANOPY_REGEX_ICASE) != 0;
    /* as grep: -x wins over -w */
    int line = (flags & CANOPY_REGEX_LINE) != 0, word = !line && (flags & CANOPY_REGEX_WORD);
    cre_tree *trees = calloc(n > 0 ? (size_t)n : 1, sizeof *trees);
    canopy_regex *re = calloc(1, sizeof *re);
    canopy_status st = trees && re ? CANOPY_OK : canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    int32_t parsed = 0;
    for (; !st && parsed < n; parsed++) {
        size_t len = lens ? lens[parsed] : strlen(patterns[parsed]);
        st = canopy_cre_parse(patterns[parsed], len, icase, &trees[parsed]);
        if (st) break;
    }
    if (!st && word) {
        re->word = 1;
        st = canopy_cre_compile(trees, n, &re->plain);
    }
    for (int32_t i = 0; !st && (line || word) && i < n; i++)
        st = canopy_cre_wrap(&trees[i], icase, line ? CRE_WRAP_LINE : CRE_WRAP_WORD);
    if (!st) st = canopy_cre_compile(trees, n, &re->prog);
    if (!st) canopy_cre_closures(&re->prog);
    if (!st) st = canopy_cre_dfa_info_init(&re->prog, trees, &re->dfa);
    for (int32_t i = 0; i < parsed && trees; i++) canopy_cre_tree_free(&trees[i]);
    free(trees);
    if (st) {
        canopy_regex_free(re);
        return st;
    }
    *out = re;
    return CANOPY_OK;
}

void canopy_regex_free(canopy_regex *re) {
    if (!re) return;
    canopy_cre_dfa_info_free(&re->dfa);
    canopy_cre_prog_free(&re->prog);
    canopy_cre_prog_free(&re->plain);
    free(re);
}

canopy_status canopy_regex_find(const canopy_regex *re, const char *line, size_t len, size_t from,
                                size_t *start, size_t *end, int *found) {
    *found = 0;
    const cre_prog *p = re->word ? &re->plain : &re->prog;
    cre_pike_scratch s;
    canopy_status st = canopy_cre_pike_scratch_init(p, &s);
    if (st) return st;
    if (from <= len)
        *found =
            canopy_cvm_regex_find(p, &s, (const uint8_t *)line, len, from, re->word, start, end);
    canopy_cre_pike_scratch_free(&s);
    return CANOPY_OK;
}

int32_t canopy_regex_pattern_count(const canopy_regex *re) {
    return re->prog.n_patterns;
}

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
/* Newlines in [p, p + n), 32 bytes per compare: a memchr per line costs more on
 * short lines. */
__attribute__((target("avx2,popcnt"))) static int64_t newlines_avx2(const char *p, size_t n) {
    int64_t k = 0;
    size_t i = 0;
    const __m256i nl = _mm256_set1_epi8('\n');
    for (; i + 32 <= n; i += 32) {
        CRE_PREFETCH(p + i);
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        k += __builtin_popcount((unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, nl)));
    }
    for (; i < n; i++) k += p[i] == '\n';
    return k;
}
#endif

int64_t canopy_regex_count_lines(const char *buf, size_t len) {
    if (len == 0) return 0;
    int64_t n = 0;
#if defined(__x86_64__) || defined(__i386__)
    if (canopy_cpu_isa() >= CANOPY_ISA_AVX2) {
        n = newlines_avx2(buf, len);
    } else
#endif
    {
        for (size_t i = 0; i < len; i++) n += buf[i] == '\n';
    }
    return n + (buf[len - 1] != '\n');
}

static size_t block_override;
void canopy_cre_block_override(size_t bytes) {
    block_override = bytes;
}

/* Per-thread engine state. */
typedef struct worker {
    cre_pike_scratch pike;
    cre_dfa *dfa;
    uint64_t *mask;
    int64_t *counts; /* ALL mode: lines per pattern in this thread's blocks */
} worker;

cre_line_fn canopy_cre_simd_line_fn(canopy_isa *isa) {
    canopy_isa best = canopy_cpu_isa();
    if (best >= CANOPY_ISA_AVX512) {
        *isa = CANOPY_ISA_AVX512;
        return canopy_cvm_regex_line_avx512;
    }
    if (best >= CANOPY_ISA_AVX2) {
        *isa = CANOPY_ISA_AVX2;
        return canopy_cvm_regex_line_avx2;
    }
    *isa = CANOPY_ISA_SCALAR;
    return canopy_cvm_regex_line_scalar;
}

/* One block of whole lines with a per-line engine; returns the matching lines and
 * sets *lines to the block's lines. */
static int64_t block_lines(const cre_prog *p, worker *w, cre_line_fn fn, const uint8_t *b,
                           const uint8_t *e, cre_mode mode, uint8_t *sel, int64_t *lines) {
    int64_t hits = 0, line = 0;
    while (b < e) {
        const uint8_t *nl = memchr(b, '\n', (size_t)(e - b));
        const uint8_t *le = nl ? nl : e;
        int m = fn(p, &w->pike, b, (size_t)(le - b), mode, w->mask);
        if (mode == CRE_ALL)
            for (int32_t q = 0; q < p->n_patterns; q++)
                w->counts[q] += (int64_t)((w->mask[q >> 6] >> (q & 63)) & 1);
        if (sel) sel[line] = (uint8_t)m;
        hits += m;
        line++;
        b = le + 1;
    }
    *lines = line;
    return hits;
}

static canopy_status worker_init(const canopy_regex *re, canopy_regex_engine eng, worker *w) {
    memset(w, 0, sizeof *w);
    const cre_prog *p = &re->prog;
    canopy_status st = canopy_cre_pike_scratch_init(p, &w->pike);
    if (!st) st = canopy_calloc((void **)&w->mask, (size_t)p->mask_words, sizeof *w->mask);
    if (!st)
        st = canopy_calloc((void **)&w->counts, (size_t)(p->n_patterns + 1), sizeof *w->counts);
    if (!st && eng == CANOPY_REGEX_ENGINE_DFA) st = canopy_cre_dfa_new(p, &re->dfa, &w->dfa);
    return st;
}

static void worker_free(worker *w) {
    canopy_cre_pike_scratch_free(&w->pike);
    canopy_cre_dfa_free(w->dfa);
    canopy_free(w->mask);
    canopy_free(w->counts);
}

canopy_status canopy_regex_match(const canopy_regex *re, const char *buf, size_t len,
                                 const canopy_regex_match_options *opt, uint8_t *selected,
                                 int64_t *pattern_counts, canopy_regex_result *res) {
    canopy_regex_match_options o = {CANOPY_REGEX_ENGINE_AUTO, 0};
    if (opt) o = *opt;
    if ((unsigned)o.engine >= CANOPY_REGEX_ENGINE_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "canopy_regex_match: unknown engine %d",
                           (int)o.engine);
    if (!buf && len) return canopy_fail(CANOPY_ERR_INVALID, "canopy_regex_match: NULL buffer");
    const cre_prog *p = &re->prog;
    canopy_regex_result r;
    memset(&r, 0, sizeof r);
    r.engine = o.engine == CANOPY_REGEX_ENGINE_AUTO ? CANOPY_REGEX_ENGINE_DFA : o.engine;
    r.isa = r.literal_isa = CANOPY_ISA_SCALAR;
    cre_line_fn fn = canopy_cvm_regex_line_scalar;
    if (r.engine == CANOPY_REGEX_ENGINE_SIMD) fn = canopy_cre_simd_line_fn(&r.isa);
    cre_mode mode = pattern_counts ? CRE_ALL : CRE_ANY;

    /* Blocks of at least 1 MiB, about 8 per thread, cut after a '\n'. The literal
     * counter takes ~0.1 ms for 1 MiB, about what starting one more thread costs, so
     * smaller blocks would only add threads that cost more than they save. */
    int threads = canopy_threads();
    size_t want = len / ((size_t)threads * 8) + 1;
    if (want < ((size_t)1 << 20)) want = (size_t)1 << 20;
    if (block_override) want = block_override;
    int64_t nb = 0;
    size_t *cut = malloc((len / want + 2) * sizeof *cut);
    if (!cut) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    cut[nb++] = 0;
    while (cut[nb - 1] < len) {
        size_t at = cut[nb - 1] + want;
        if (at >= len) {
            at = len;
        } else {
            const char *nl = memchr(buf + at, '\n', len - at);
            at = nl ? (size_t)(nl - buf) + 1 : len;
        }
        cut[nb++] = at;
    }
    nb--; /* blocks: [cut[i], cut[i+1]) */
    if (threads > nb) threads = nb > 0 ? (int)nb : 1;

    /* Line numbers of the block starts place per-line results; without them the
     * engines count lines as they go (one pass over the buffer, not two). */
    int64_t *first = NULL;
    if (selected) {
        first = calloc((size_t)nb + 1, sizeof *first);
        if (!first) {
            free(cut);
            return canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
        }
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int64_t i = 0; i < nb; i++)
            first[i + 1] = canopy_regex_count_lines(buf + cut[i], cut[i + 1] - cut[i]);
        for (int64_t i = 0; i < nb; i++) first[i + 1] += first[i];
        /* engines with a prefilter write only the lines they examine */
        memset(selected, 0, (size_t)first[nb]);
    }

    canopy_status st = CANOPY_OK;
    int64_t matched = 0, lines = 0;
    if (pattern_counts) memset(pattern_counts, 0, (size_t)p->n_patterns * sizeof *pattern_counts);
#pragma omp parallel num_threads(threads) reduction(+ : matched, lines)
    {
        worker w;
        canopy_status ws = worker_init(re, r.engine, &w);
        if (ws) {
#pragma omp critical(canopy_regex_err)
            if (!st) st = ws;
        }
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = 0; i < nb; i++) {
            if (ws) continue;
            const uint8_t *b = (const uint8_t *)buf + cut[i],
                          *e = (const uint8_t *)buf + cut[i + 1];
            uint8_t *sel = selected ? selected + first[i] : NULL;
            int64_t n = 0;
            if (r.engine == CANOPY_REGEX_ENGINE_DFA)
                matched +=
                    canopy_cre_dfa_block(w.dfa, &w.pike, b, e, mode, sel, w.counts, w.mask, &n);
            else
                matched += block_lines(p, &w, fn, b, e, mode, sel, &n);
            lines += n;
        }
        if (!ws) {
#pragma omp critical(canopy_regex_merge)
            {
                if (pattern_counts)
                    for (int32_t q = 0; q < p->n_patterns; q++) pattern_counts[q] += w.counts[q];
                if (w.dfa) {
                    r.dfa_states += canopy_cre_dfa_states(w.dfa);
                    r.dfa_fallbacks += canopy_cre_dfa_fallbacks(w.dfa);
                    r.dfa_bytes += canopy_cre_dfa_scanned(w.dfa);
                    r.literal_bytes3 += canopy_cre_dfa_filtered3(w.dfa);
                }
            }
        }
        worker_free(&w);
    }
    free(cut);
    free(first);
    if (st) return st;
    r.lines = lines;
    if (r.dfa_fallbacks) canopy_cre_simd_line_fn(&r.isa); /* the fallback's lanes */
    if (r.engine == CANOPY_REGEX_ENGINE_DFA && mode == CRE_ANY) {
        r.literals = re->dfa.n_lit;
        r.literals_exact = re->dfa.n_lit > 0 && re->dfa.exact;
        if (r.literals) r.literal_isa = canopy_cre_literal_isa();
        r.literals_shifted = r.literals ? re->dfa.n_shifted : 0;
        r.literal_products = r.literals ? re->dfa.n_sets : 0;
    }
    if (o.invert && pattern_counts)
        for (int32_t q = 0; q < p->n_patterns; q++) pattern_counts[q] = r.lines - pattern_counts[q];
    if (o.invert && selected)
        for (int64_t i = 0; i < r.lines; i++) selected[i] = (uint8_t)!selected[i];
    r.selected = o.invert ? r.lines - matched : matched;
    if (res) *res = r;
    return CANOPY_OK;
}
