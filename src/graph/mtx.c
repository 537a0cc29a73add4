/* SPDX-License-Identifier: MIT */
/* Matrix Market coordinate files (NIST format): a "%%MatrixMarket matrix coordinate
 * FIELD SYMMETRY" banner, '%' comments, "M N NNZ", then NNZ 1-based entries. FIELD
 * real, integer or pattern; SYMMETRY general or symmetric (the lower triangle is
 * stored; each off-diagonal entry stands for both directions). */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include "graph/graph.h"

#include <stdio.h>
#include <strings.h>

/* Splits the banner's words; false unless there are exactly five. */
static bool banner_words(char *line, char *w[5]) {
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '\0') break;
        if (n == 5) return false;
        w[n++] = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (*p) *p++ = '\0';
    }
    return n == 5;
}

static bool next_content_line(line_reader *r) {
    while (canopy_line_reader_next(r))
        if (r->line[0] != '%' && !canopy_at_line_end(r->line)) return true;
    return false;
}

static canopy_status parse(line_reader *r, canopy_csr *out) {
    if (!canopy_line_reader_next(r)) {
        r->lineno = 1;
        return canopy_line_error(r, "empty file, not a Matrix Market file");
    }
    if (strncmp(r->line, "%%MatrixMarket", 14) != 0)
        return canopy_line_error(r, "not a Matrix Market file (the first line must start with "
                                    "%%%%MatrixMarket)");
    char *w[5];
    if (!banner_words(r->line, w))
        return canopy_line_error(r,
                                 "malformed banner: expected '%%%%MatrixMarket matrix coordinate "
                                 "FIELD SYMMETRY'");
    if (strcasecmp(w[1], "matrix") != 0)
        return canopy_line_error(r, "object '%s' is not supported (only 'matrix')", w[1]);
    if (strcasecmp(w[2], "coordinate") != 0)
        return canopy_line_error(r, "format '%s' is not supported (only 'coordinate')", w[2]);
    bool pattern = strcasecmp(w[3], "pattern") == 0;
    if (!pattern && strcasecmp(w[3], "real") != 0 && strcasecmp(w[3], "integer") != 0)
        return canopy_line_error(r, "field '%s' is not supported (real, integer or pattern)", w[3]);
    bool symmetric = strcasecmp(w[4], "symmetric") == 0;
    if (!symmetric && strcasecmp(w[4], "general") != 0)
        return canopy_line_error(r, "symmetry '%s' is not supported (general or symmetric)", w[4]);

    if (!next_content_line(r))
        return canopy_line_error(r, "truncated file: no size line 'M N NNZ'");
    char *s = r->line;
    int64_t m, n, nnz;
    if (!canopy_parse_i64(&s, &m) || !canopy_parse_i64(&s, &n) || !canopy_parse_i64(&s, &nnz) ||
        !canopy_at_line_end(s))
        return canopy_line_error(r, "malformed size line: expected 'M N NNZ'");
    if (m < 0 || n < 0 || nnz < 0) return canopy_line_error(r, "negative size in the size line");
    if (m > INT32_MAX || n > INT32_MAX)
        return canopy_line_error(r, "matrices over 2^31-1 rows or columns are not supported");
    if (symmetric && m != n) return canopy_line_error(r, "a symmetric matrix must be square");
    if (nnz > m * n && m > 0 && n > 0 && !symmetric)
        return canopy_line_error(r, "NNZ %lld exceeds M x N", (long long)nnz);
    canopy_status st = canopy_graph_check_vertices(r, m > n ? m : n, "the size line declares");
    if (st != CANOPY_OK) return st;
    /* Each entry takes at least 4 bytes ("1 1\n"). */
    if ((uint64_t)nnz > r->bytes / 4 + 1)
        return canopy_line_error(
            r, "the size line declares %lld entries but the file has only %zu bytes",
            (long long)nnz, r->bytes);

    coo c;
    /* The declared count only sizes the first allocation when it is plausible, so
     * a hostile header cannot cost a huge allocation before any entry is read. */
    st = canopy_coo_init(&c, nnz < (1 << 20) ? nnz * (symmetric ? 2 : 1) : 1 << 20, !pattern);
    if (st != CANOPY_OK) return st;
    int64_t seen = 0;
    while (st == CANOPY_OK && next_content_line(r)) {
        if (seen == nnz) {
            st = canopy_line_error(r, "more entries than the %lld the size line declares",
                                   (long long)nnz);
            break;
        }
        s = r->line;
        int64_t i, j;
        double v = 1.0;
        if (!canopy_parse_i64(&s, &i) || !canopy_parse_i64(&s, &j)) {
            st = canopy_line_error(r, "malformed entry: expected 'ROW COL%s'",
                                   pattern ? "" : " VALUE");
            break;
        }
        if (!pattern && !canopy_parse_f64(&s, &v)) {
            st = canopy_line_error(r, "malformed entry: missing or bad value");
            break;
        }
        if (!canopy_at_line_end(s)) {
            st = canopy_line_error(r, "unexpected text after the entry");
            break;
        }
        if (i < 1 || i > m || j < 1 || j > n) {
            st = canopy_line_error(r,
                                   "index (%lld, %lld) out of range: rows 1..%lld, columns 1..%lld",
                                   (long long)i, (long long)j, (long long)m, (long long)n);
            break;
        }
        seen++;
        st = canopy_coo_push(&c, i - 1, j - 1, v);
        if (st == CANOPY_OK && symmetric && i != j) st = canopy_coo_push(&c, j - 1, i - 1, v);
    }
    if (st == CANOPY_OK && seen < nnz)
        st = canopy_line_error(r, "truncated file: %lld entries, the size line declares %lld",
                               (long long)seen, (long long)nnz);
    if (st == CANOPY_OK) st = canopy_csr_from_coo(m, n, c.n, c.src, c.dst, c.w, out);
    canopy_coo_release(&c);
    return st;
}

canopy_status canopy_mtx_read(const char *path, canopy_csr *out) {
    return canopy_graph_read_text(path, "canopy_mtx_read", parse, out);
}

canopy_status canopy_graph_mtx_read_mem(const void *buf, size_t len, const char *name,
                                        canopy_csr *out) {
    return canopy_graph_read_text_mem(buf, len, name, parse, out);
}

canopy_status canopy_mtx_write(const char *path, const canopy_csr *g) {
    if (!g || (g->nnz > 0 && (!g->row_ptr || !g->col)))
        return canopy_fail(CANOPY_ERR_INVALID, "canopy_mtx_write: no matrix given");
    canopy_outfile o;
    canopy_status s = canopy_outfile_open(&o, path);
    if (s != CANOPY_OK) return s;
    FILE *f = o.fp;
    fprintf(f, "%%%%MatrixMarket matrix coordinate %s general\n", g->val ? "real" : "pattern");
    fprintf(f, "%% written by canopy %s\n", canopy_version());
    fprintf(f, "%lld %lld %lld\n", (long long)g->n_rows, (long long)g->n_cols, (long long)g->nnz);
    for (int64_t i = 0; i < g->n_rows; i++)
        for (int64_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; k++) {
            if (g->val)
                fprintf(f, "%lld %d %.17g\n", (long long)i + 1, g->col[k] + 1, g->val[k]);
            else
                fprintf(f, "%lld %d\n", (long long)i + 1, g->col[k] + 1);
        }
    return canopy_outfile_commit(&o);
}
