/* SPDX-License-Identifier: MIT */
/* Private pieces of the graph module: the nested-loop engine that every strategy
 * implements, atomics shared by the applications, and the text-line reader the
 * file parsers use. */
#ifndef CANOPY_GRAPH_GRAPH_H
#define CANOPY_GRAPH_GRAPH_H

#include "canopy.h"
#include "graph/gpu.h"

#include <stdbool.h>
#include <string.h>

/* One outer loop: for each item, an inner loop over the entries [lo, hi) of its row
 * (the paper's parent thread and its would-be child kernel). inner returns a partial
 * result; post, when set, receives the sum of an item's partials once all of them
 * are done. When `splittable`, inner must tolerate running concurrently on disjoint
 * parts of one row (omp-split cuts long rows into chunks); otherwise it always sees
 * the whole row. */
typedef struct graph_loop {
    const int64_t *row_ptr;
    const int64_t *items; /* the rows to run, or NULL for rows 0 .. n_items-1 */
    int64_t n_items;
    double (*inner)(void *ctx, int64_t row, int64_t lo, int64_t hi);
    void (*post)(void *ctx, int64_t row, double acc);
    void *ctx;
    bool splittable;
} graph_loop;

static inline int64_t graph_loop_row(const graph_loop *l, int64_t i) {
    return l->items ? l->items[i] : i;
}

/* Runs item i whole: the inner loop over its row, then post. Returns the row's
 * entries. */
static inline int64_t graph_loop_run_item(const graph_loop *l, int64_t i) {
    int64_t row = graph_loop_row(l, i), lo = l->row_ptr[row], hi = l->row_ptr[row + 1];
    double acc = l->inner(l->ctx, row, lo, hi);
    if (l->post) l->post(l->ctx, row, acc);
    return hi - lo;
}

/* Whether a loop has enough work to pay for waking a thread team: small rounds
 * (a BFS frontier of a few vertices) run on the calling thread. */
static inline bool graph_loop_worth_parallel(const graph_loop *l) {
    if (l->n_items >= 256) return true;
    int64_t work = 0;
    for (int64_t i = 0; i < l->n_items; i++) {
        int64_t row = graph_loop_row(l, i);
        work += l->row_ptr[row + 1] - l->row_ptr[row] + 16;
    }
    return work >= 4096;
}

/* One file per strategy. Each adds what it did to stats (never NULL here). */
canopy_status canopy_graph_run_serial(const graph_loop *l, canopy_graph_stats *stats);
canopy_status canopy_graph_run_omp_flat(const graph_loop *l, canopy_graph_stats *stats);
canopy_status canopy_graph_run_omp_split(const graph_loop *l, int64_t threshold,
                                         canopy_graph_stats *stats);
/* Dispatches on opt->strategy (CPU strategies only). */
canopy_status canopy_graph_run(const graph_loop *l, const canopy_graph_options *opt,
                               canopy_graph_stats *stats);
/* Shared argument checks: graph present, square, options valid, and for a GPU
 * strategy a usable GPU. */
canopy_status canopy_graph_check(const canopy_csr *g, const canopy_graph_options *opt, bool square,
                                 const char *what);
/* canopy_graph_check for a square graph, and source one of its vertices. */
canopy_status canopy_graph_check_source(const canopy_csr *g, const canopy_graph_options *opt,
                                        int64_t source, const char *what);

/* A growable worklist that threads append to (each vertex once per round, guarded
 * by a flag array). */
typedef struct worklist {
    int64_t *items;
    int64_t n; /* appended with atomic fetch-add */
} worklist;

static inline void worklist_push(worklist *w, int64_t v) {
    int64_t at = __atomic_fetch_add(&w->n, 1, __ATOMIC_RELAXED);
    w->items[at] = v;
}

/* What an application run by canopy_graph_frontier_rounds shares with the round loop: its
 * context holds one, and its inner loop pushes the next round's vertices through it. */
typedef struct graph_frontier {
    worklist *next;        /* the next round's vertices */
    unsigned char *queued; /* when asked for: a flag per vertex, claimed (flag_claim)
                              before a push, so a vertex joins a round once */
    int64_t round;         /* the running round, from 0 */
} graph_frontier;

/* Runs a data-driven application in rounds from one source vertex: the first
 * frontier is {source}; each round runs inner(ctx) over the frontier's rows as a
 * splittable loop, and the vertices it pushes onto f->next are the next frontier,
 * until one is empty. With `queued`, f->queued starts zeroed and the flags of each
 * new frontier are cleared before it runs. Adds rounds and loop work to stats. */
canopy_status
canopy_graph_frontier_rounds(const canopy_csr *g, int64_t source, bool queued,
                             double (*inner)(void *ctx, int64_t row, int64_t lo, int64_t hi),
                             void *ctx, graph_frontier *f, const canopy_graph_options *opt,
                             canopy_graph_stats *stats);

/* The CPU strategies of BFS-Rec (bfs_rec.c), for canopy_bfs_rec (bfs.c). */
canopy_status canopy_graph_bfs_rec_cpu(const canopy_csr *g, int64_t source,
                                       const canopy_graph_options *opt, int64_t *level,
                                       canopy_graph_stats *stats);

/* Sets flag[v] from 0 to 1; true for the one caller that did it. */
static inline bool flag_claim(unsigned char *flag, int64_t v) {
    unsigned char expect = 0;
    return __atomic_compare_exchange_n(&flag[v], &expect, 1, false, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED);
}

/* Atomic min on a non-negative double (+inf included): such doubles order like
 * their bit patterns read as unsigned integers, so a CAS loop on the bits works.
 * Returns true when the value was lowered. */
static inline bool atomic_min_nonneg(double *p, double v) {
    uint64_t nv, cur;
    memcpy(&nv, &v, sizeof nv);
    cur = __atomic_load_n((uint64_t *)p, __ATOMIC_RELAXED);
    while (nv < cur)
        if (__atomic_compare_exchange_n((uint64_t *)p, &cur, nv, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return true;
    return false;
}

static inline double atomic_load_f64(const double *p) {
    uint64_t bits = __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static inline bool atomic_min_i64(int64_t *p, int64_t v) {
    int64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < cur)
        if (__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            return true;
    return false;
}

/* Drops repeated columns within each (sorted) row, keeping the first; rebuilds
 * row_ptr and shrinks nnz. */
void canopy_graph_csr_dedupe(canopy_csr *g);

/* ----------------------------------------------------------- text parsing -- */

/* Walks a NUL-terminated file buffer line by line, counting lines for messages. */
typedef struct line_reader {
    const char *path;
    char *p;    /* start of the next line */
    char *line; /* the current line, NUL-terminated (newline removed) */
    int64_t lineno;
    size_t bytes; /* the whole file's size, for checking declared sizes against it */
} line_reader;

void canopy_line_reader_init(line_reader *r, const char *path, char *buf);
/* Next line, or false at end of file. */
bool canopy_line_reader_next(line_reader *r);
/* Fails with CANOPY_ERR_FORMAT: "PATH:LINE: message". */
canopy_status canopy_line_error(const line_reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Reads the whole text file at path and runs parse over its lines; `fn` names the
 * public function for the NULL-argument message. Every text reader is one call. */
typedef canopy_status (*graph_text_parser)(line_reader *r, canopy_csr *out);
canopy_status canopy_graph_read_text(const char *path, const char *fn, graph_text_parser parse,
                                     canopy_csr *out);
/* The same over a buffer in memory (copied, since parsing splits it in place); `name`
 * stands for the path in messages. */
canopy_status canopy_graph_read_text_mem(const void *buf, size_t len, const char *name,
                                         graph_text_parser parse, canopy_csr *out);
/* The readers over memory, for the fuzz targets. */
canopy_status canopy_graph_mtx_read_mem(const void *buf, size_t len, const char *name,
                                        canopy_csr *out);
canopy_status canopy_graph_gr_read_mem(const void *buf, size_t len, const char *name,
                                       canopy_csr *out);
canopy_status canopy_graph_edgelist_read_mem(const void *buf, size_t len, const char *name,
                                             canopy_csr *out);
/* A file of `bytes` bytes declaring n vertices (rows or columns): a CSR costs 8 bytes
 * per vertex even when the vertex has no edge, so a short file must not declare
 * billions. At most GRAPH_FREE_VERTICES + 4 per byte of file are accepted (a real
 * graph's lines name each vertex in a few bytes, so this bound is far above any real
 * file's count); beyond it, "declares N vertices but the file has only B bytes". */
enum { GRAPH_FREE_VERTICES = 1 << 20, GRAPH_VERTICES_PER_BYTE = 4 };
canopy_status canopy_graph_check_vertices(const line_reader *r, int64_t n, const char *what);
/* Parses one integer or real field at *s (after blanks), advancing *s; false when
 * there is none or it does not end at a blank or the line's end. */
bool canopy_parse_i64(char **s, int64_t *out);
bool canopy_parse_f64(char **s, double *out);
/* True when only blanks remain. */
bool canopy_at_line_end(const char *s);

/* COO entries being collected by a reader (grown by doubling). */
typedef struct coo {
    int64_t n, cap;
    int64_t *src, *dst;
    double *w; /* NULL for pattern */
} coo;
canopy_status canopy_coo_init(coo *c, int64_t cap, bool weighted);
canopy_status canopy_coo_push(coo *c, int64_t u, int64_t v, double w);
void canopy_coo_release(coo *c);

#endif
