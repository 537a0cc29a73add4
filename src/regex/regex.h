/* SPDX-License-Identifier: MIT */
/* Multi-pattern POSIX extended regular expressions on Ren's bytecode VM
 * (Ren, Mytkowicz, Agrawal 2014, §2.3 and Table III).
 *
 * parse.c turns each pattern into a small syntax tree, compile.c emits the
 * bytecode of src/vm/vm.h for the alternation of all patterns (each ending in a
 * `match p`), and the engines decide, line by line, which patterns match:
 *   pike  the scalar Thompson/Pike simulation (src/regex/pike_vm.c), the reference;
 *   simd  the same simulation with SIMD lanes over NFA threads and stream
 *         compaction (src/regex/pike_vm_lanes.h on SIMT lanes, compiled for
 *         AVX2 / AVX-512 by pike_vm_avx2.c / pike_vm_avx512.c);
 *   dfa   a lazily built DFA over the Pike VM's thread sets (dfa.c), with a
 *         required-literal prefilter (literal.c) when every pattern has one. */
#ifndef CANOPY_REGEX_H
#define CANOPY_REGEX_H

#include "canopy.h"
#include "vm/vm.h"

#include <stddef.h>
#include <stdint.h>

/* The streaming filters prefetch a page ahead: the hardware prefetcher stops at 4 KiB
 * boundaries, and a file's first pass comes from memory (dict, 3 words: the first pass
 * 0.92 -> 0.76 ms). A prefetch past the buffer's end does not fault. */
#define CRE_PREFETCH_AHEAD 4096
#define CRE_PREFETCH(p) __builtin_prefetch((const void *)((uintptr_t)(p) + CRE_PREFETCH_AHEAD))

/* A program of the alternation of all patterns. */
typedef struct cre_prog {
    cvm_program vm;
    uint32_t (*sets)[8]; /* byte sets of the cmp instructions, 256 bits each */
    int32_t n_sets;
    int32_t n_patterns;
    int32_t mask_words;  /* 64-bit words of a pattern bit set */
    int32_t *pattern_of; /* per pc: the pattern it belongs to, -1 for the dispatch forks */
    /* Epsilon closures away from the line's ends (^ and $ fail there): for pc 0 and
     * each pc after a cmp or dot (the pcs a thread resumes at),
     * clo[clo_off[pc] .. clo_off[pc + 1]) are the cmp, dot and match pcs reachable by
     * jmp and fork; empty for the other pcs. NULL when they would be too big (the SIMD
     * VM then walks epsilon moves level by level everywhere). */
    int32_t *clo_off, *clo;
} cre_prog;

/* ---- syntax tree (parse.c) ---- */
typedef enum cre_kind {
    CRE_EMPTY, /* matches the empty string */
    CRE_SET,   /* one byte of a set */
    CRE_DOT,   /* any byte */
    CRE_BOL,   /* ^ */
    CRE_EOL,   /* $ */
    CRE_CAT,   /* a then b */
    CRE_ALT,   /* a or b */
    CRE_REP    /* a{min,max}, max -1 = unbounded */
} cre_kind;

typedef struct cre_node {
    int32_t kind;
    int32_t a, b;     /* children (CAT, ALT: both; REP: a) */
    int32_t min, max; /* REP */
    int32_t nest;     /* recursion depth a spine-iterative walk needs below this node */
    uint32_t set[8];  /* SET */
} cre_node;

typedef struct cre_tree {
    cre_node *nodes;
    int32_t n, cap;
    int32_t root;
} cre_tree;

/* Bound on cre_node.nest (groups and stacked repetitions): deeper patterns are
 * "regular expression too complex", so no recursive pass can overflow the stack
 * (OpenMP workers included). Walkers must iterate along CAT/ALT spines. */
#define CRE_MAX_NEST 1000
#define CRE_TOO_COMPLEX "regular expression too complex"

/* Parses one pattern of `len` bytes. Errors are grep's messages (CANOPY_ERR_INVALID);
 * icase folds every letter into both cases. */
canopy_status canopy_cre_parse(const char *pat, size_t len, int icase, cre_tree *out);
void canopy_cre_tree_free(cre_tree *t);
/* grep -x and -w as syntax: LINE makes the pattern ^(P)$; WORD makes it
 * (^|[^_[:alnum:]])(P)([^_[:alnum:]]|$), so "a line holds a match of P with no word
 * byte on either side" stays a plain regular search (the DFA and prefilter apply). */
typedef enum cre_wrap_kind { CRE_WRAP_LINE, CRE_WRAP_WORD } cre_wrap_kind;
canopy_status canopy_cre_wrap(cre_tree *t, int icase, cre_wrap_kind kind);

/* ---- compiler (compile.c) ---- */
/* Instructions past which a program is "too big" (grep's message). A program costs
 * 20 bytes per instruction, and each matching thread ~70 more of Pike VM scratch;
 * compiling the biggest is mostly page faults (issue 21: any pattern up to the limit
 * compiles in milliseconds; 4 Mi took 0.1-0.3 s). */
#define CRE_MAX_INSNS (1 << 20)
canopy_status canopy_cre_compile(const cre_tree *trees, int32_t n, cre_prog *out);
/* Fills p->clo_off / p->clo (left NULL past a size cap, or without memory). */
void canopy_cre_closures(cre_prog *p);
void canopy_cre_prog_free(cre_prog *p);

static inline int cre_set_has(const uint32_t *set, unsigned c) {
    return (set[c >> 5] >> (c & 31)) & 1u;
}

/* ---- engines: one line (no '\n') -> the patterns that match somewhere in it ---- */
typedef enum cre_mode {
    CRE_ANY = 0, /* stop at the first match: only "some pattern matched" is needed */
    CRE_ALL = 1  /* every pattern that matches the line */
} cre_mode;

/* Scratch memory of one thread for the Pike VMs. */
typedef struct cre_pike_scratch {
    int32_t *list_a, *list_b, *list_c, *stack;
    size_t *start_a, *start_b; /* canopy_cvm_regex_find: the start of each thread */
    uint32_t *mark;
    uint32_t gen;
} cre_pike_scratch;
canopy_status canopy_cre_pike_scratch_init(const cre_prog *p, cre_pike_scratch *s);
void canopy_cre_pike_scratch_free(cre_pike_scratch *s);

/* Each returns nonzero iff some pattern matches; CRE_ALL also sets the bits of the
 * matching patterns in `mask` (mask_words words, cleared first). */
int canopy_cvm_regex_line_scalar(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line,
                                 size_t len, cre_mode mode, uint64_t *mask);
int canopy_cvm_regex_line_avx2(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line,
                               size_t len, cre_mode mode, uint64_t *mask);
int canopy_cvm_regex_line_avx512(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line,
                                 size_t len, cre_mode mode, uint64_t *mask);
typedef int (*cre_line_fn)(const cre_prog *, cre_pike_scratch *, const uint8_t *, size_t, cre_mode,
                           uint64_t *);
/* The SIMD interpreter for the widest lanes this CPU has (*isa; scalar without AVX2). */
cre_line_fn canopy_cre_simd_line_fn(canopy_isa *isa);

/* The leftmost-longest match in line[from, len) (anchors taken against the whole
 * line), in one pass over the line: returns 1 and sets [*start, *end), or 0. With
 * word, only matches with no word byte ([_[:alnum:]]) just before the start or at
 * the end count (the leftmost start having such an end, then its longest one). */
int canopy_cvm_regex_find(const cre_prog *p, cre_pike_scratch *s, const uint8_t *line, size_t len,
                          size_t from, int word, size_t *start, size_t *end);

/* Blocks of this many bytes (0: the default) in canopy_regex_match, so tests can
 * put many block boundaries into a small buffer. Not thread-safe. */
void canopy_cre_block_override(size_t bytes);

#endif
