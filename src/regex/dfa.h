/* SPDX-License-Identifier: MIT */
/* The lazy DFA engine (dfa.c) and its required-literal prefilter (literal.c).
 * A DFA state is a set of Pike VM threads after their epsilon closure (plus, when
 * every matching pattern is wanted, the patterns matched so far in the line); its
 * transitions are computed the first time they are taken, so a line costs one
 * table lookup per byte once the states it visits exist. Each thread owns its
 * cache; when the cache is full it is flushed, and a block that keeps flushing is
 * finished by the Pike VM, so memory stays bounded for any pattern. */
#ifndef CANOPY_REGEX_DFA_H
#define CANOPY_REGEX_DFA_H

#include "regex/regex.h"

/* Literals of the prefilter: up to CRE_BUCKETS have a filter bucket each (exact on
 * their first three bytes); up to CRE_LIT_MAX share the buckets. An alternation of
 * plain strings gives at most CRE_LIT_ALT of them. */
#define CRE_LIT_MAX 256
#define CRE_LIT_ALT 256
#define CRE_BUCKETS 16
#define CRE_LIT_LEN 32

/* Shared, read-only facts about a program. */
typedef struct cre_dfa_info {
    uint8_t cls[256]; /* byte -> class; '\n' is a class of its own */
    uint8_t rep[256]; /* class -> a byte of it */
    int32_t n_cls;
    /* prefilter: every pattern has a required literal; a line without any of them
     * cannot match. exact: a literal occurrence is itself a match (patterns of the
     * form [.*]literal), so hits need no DFA check. */
    int32_t n_lit;
    int32_t exact;
    int32_t n_sets; /* patterns whose literals are a product of classes, alternations, repeats */
    uint8_t lit[CRE_LIT_MAX][CRE_LIT_LEN];
    int32_t lit_len[CRE_LIT_MAX];
    uint64_t lit_word[CRE_LIT_MAX], lit_wmask[CRE_LIT_MAX]; /* first 8 bytes, their mask */
    /* the SIMD filter (literal.c): literals by bucket, its nibble tables (two or three
     * bytes), and whether a bucket hit on two / three bytes is a literal without
     * confirmation */
    int32_t n_buckets, filter_bytes, exact2, exact3;
    /* where the filter looks in literal j: its bytes lit_off[j] .. + 2 (or 3), the
     * rarest window of a literal with a bucket of its own, else 0; n_shifted: the
     * literals whose window is not their first bytes */
    int32_t lit_off[CRE_LIT_MAX], n_shifted;
    int32_t bucket_start[CRE_BUCKETS + 1], bucket_lit[CRE_LIT_MAX];
    uint8_t nib[2][6][16];
    /* The byte filter (AVX-512, a single literal, instead of the nibble filter): the
     * literal may start at x iff x[bf_off[t]] == bf_byte[t] for t < bf_bytes: all its
     * bytes when it has up to 3 (exact), else its two rarest by byte_freq, confirmed
     * at each hit (bf_verify). bf_bytes = 0: not used. */
    int32_t bf_bytes, bf_verify, bf_span; /* bf_span: the largest offset */
    int32_t bf_off[3];
    uint8_t bf_byte[3];
} cre_dfa_info;

canopy_status canopy_cre_dfa_info_init(const cre_prog *p, const cre_tree *trees,
                                       cre_dfa_info *info);
void canopy_cre_dfa_info_free(cre_dfa_info *info);

typedef struct cre_dfa cre_dfa; /* one thread's cache */
canopy_status canopy_cre_dfa_new(const cre_prog *p, const cre_dfa_info *info, cre_dfa **out);
void canopy_cre_dfa_free(cre_dfa *d);
int64_t canopy_cre_dfa_states(const cre_dfa *d);
int64_t canopy_cre_dfa_fallbacks(const cre_dfa *d);
int64_t canopy_cre_dfa_scanned(const cre_dfa *d);   /* bytes the DFA ran on */
int64_t canopy_cre_dfa_filtered3(const cre_dfa *d); /* bytes the three-byte literal filter ran on */
/* Caps the cache of every DFA created from now on (states; 0 = the default), so
 * tests can force flushes and the Pike VM fallback. Not thread-safe. */
void canopy_cre_dfa_limit_override(int32_t max_states);

/* Runs whole lines [b, e) (sel, when given, must be zeroed: lines decided without a
 * look are not written): returns the lines matching some pattern and sets *lines
 * to the lines of [b, e); sel (may be NULL) gets a verdict per line; CRE_ALL adds
 * each line's patterns to counts. The Pike scratch and mask (mask_words) serve the
 * fallback. */
int64_t canopy_cre_dfa_block(cre_dfa *d, cre_pike_scratch *pike, const uint8_t *b, const uint8_t *e,
                             cre_mode mode, uint8_t *sel, int64_t *counts, uint64_t *mask,
                             int64_t *lines);

/* Literal prefilter (literal.c): fills info->lit*, exact; n_lit = 0 when some
 * pattern has no usable literal. */
void canopy_cre_literal_analyze(const cre_prog *p, const cre_tree *trees, cre_dfa_info *info);
/* The first position >= from where some literal of info occurs (its start), or e;
 * *nls gets the newlines in [from, that position). */
const uint8_t *canopy_cre_literal_find(const cre_dfa_info *info, const uint8_t *from,
                                       const uint8_t *e, int64_t *nls);
/* For info->exact: the lines of [b, *stop) holding a literal (a verdict per line in
 * sel when not NULL); *lines gets the lines of [b, *stop). *stop is e unless hits
 * needing confirmation are so dense that the DFA is cheaper for the rest (a line
 * start). *filtered3 adds the bytes filtered on three bytes. */
int64_t canopy_cre_literal_count(const cre_dfa_info *info, const uint8_t *b, const uint8_t *e,
                                 uint8_t *sel, int64_t *lines, const uint8_t **stop,
                                 int64_t *filtered3);
/* The lanes the literal filter runs on (AVX-512, AVX2, else scalar). */
canopy_isa canopy_cre_literal_isa(void);
/* The exact counter measures and switches per chunk of lines (64 KiB);
 * tests make chunks small (bytes; 0 = the default). Not thread-safe. */
void canopy_cre_literal_chunk_override(int32_t bytes);

#endif
