/* SPDX-License-Identifier: MIT */
/* DIMACS shortest-path files (9th DIMACS challenge): "c" comment lines, one
 * "p sp N M" problem line, then M arc lines "a U V W" with 1-based vertices. */
#include "graph/graph.h"

static canopy_status parse(line_reader *r, canopy_csr *out) {
    int64_t n = -1, m = -1, seen = 0;
    coo c = {0};
    canopy_status st = CANOPY_OK;
    while (st == CANOPY_OK && canopy_line_reader_next(r)) {
        char *s = r->line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '\0' || *s == 'c') continue;
        if (*s == 'p') {
            if (n >= 0) {
                st = canopy_line_error(r, "a second problem line");
                break;
            }
            s++;
            while (*s == ' ' || *s == '\t') s++;
            if (strncmp(s, "sp", 2) != 0 || !(s[2] == ' ' || s[2] == '\t')) {
                st = canopy_line_error(r, "malformed problem line: expected 'p sp N M'");
                break;
            }
            s += 2;
            if (!canopy_parse_i64(&s, &n) || !canopy_parse_i64(&s, &m) || !canopy_at_line_end(s) ||
                n < 0 || m < 0) {
                st = canopy_line_error(r, "malformed problem line: expected 'p sp N M'");
                break;
            }
            if (n > INT32_MAX) {
                st = canopy_line_error(r, "graphs over 2^31-1 vertices are not supported");
                break;
            }
            if ((st = canopy_graph_check_vertices(r, n, "the problem line declares")) != CANOPY_OK)
                break;
            /* Each arc takes at least 8 bytes ("a 1 1 0\n"). */
            if ((uint64_t)m > r->bytes / 8 + 1) {
                st = canopy_line_error(
                    r, "the problem line declares %lld arcs but the file has only %zu bytes",
                    (long long)m, r->bytes);
                break;
            }
            st = canopy_coo_init(&c, m < (1 << 20) ? m : 1 << 20, true);
            continue;
        }
        if (*s != 'a' || !(s[1] == ' ' || s[1] == '\t')) {
            st = canopy_line_error(r, "unknown line type (expected 'c', 'p' or 'a')");
            break;
        }
        if (n < 0) {
            st = canopy_line_error(r, "arc before the problem line 'p sp N M'");
            break;
        }
        s++;
        int64_t u, v;
        double w;
        if (!canopy_parse_i64(&s, &u) || !canopy_parse_i64(&s, &v) || !canopy_parse_f64(&s, &w) ||
            !canopy_at_line_end(s)) {
            st = canopy_line_error(r, "malformed arc: expected 'a U V W'");
            break;
        }
        if (u < 1 || u > n || v < 1 || v > n) {
            st = canopy_line_error(r, "arc (%lld, %lld) out of range: vertices are 1..%lld",
                                   (long long)u, (long long)v, (long long)n);
            break;
        }
        if (seen == m) {
            st = canopy_line_error(r, "more arcs than the %lld the problem line declares",
                                   (long long)m);
            break;
        }
        seen++;
        st = canopy_coo_push(&c, u - 1, v - 1, w);
    }
    if (st == CANOPY_OK && n < 0) st = canopy_line_error(r, "no problem line 'p sp N M'");
    if (st == CANOPY_OK && seen < m)
        st = canopy_line_error(r, "truncated file: %lld arcs, the problem line declares %lld",
                               (long long)seen, (long long)m);
    if (st == CANOPY_OK) st = canopy_csr_from_coo(n, n, c.n, c.src, c.dst, c.w, out);
    canopy_coo_release(&c);
    return st;
}

canopy_status canopy_gr_read(const char *path, canopy_csr *out) {
    return canopy_graph_read_text(path, "canopy_gr_read", parse, out);
}

canopy_status canopy_graph_gr_read_mem(const void *buf, size_t len, const char *name,
                                       canopy_csr *out) {
    return canopy_graph_read_text_mem(buf, len, name, parse, out);
}
