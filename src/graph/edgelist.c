/* SPDX-License-Identifier: MIT */
/* Plain edge lists: "U V" or "U V W" per line, 0-based, '#' starts a comment line.
 * The first edge decides whether the list is weighted; every later edge must agree. */
#include "graph/graph.h"
#include "io/io.h"

static canopy_status parse(line_reader *r, canopy_csr *out) {
    coo c = {0};
    int weighted = -1; /* unknown until the first edge */
    int64_t n = 0;
    canopy_status st = CANOPY_OK;
    while (st == CANOPY_OK && canopy_line_reader_next(r)) {
        char *s = r->line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '\0' || *s == '#') continue;
        int64_t u, v;
        double w = 1.0;
        if (!canopy_parse_i64(&s, &u) || !canopy_parse_i64(&s, &v)) {
            st = canopy_line_error(r, "malformed edge: expected 'U V' or 'U V W'");
            break;
        }
        bool has_w = !canopy_at_line_end(s);
        if (has_w && (!canopy_parse_f64(&s, &w) || !canopy_at_line_end(s))) {
            st = canopy_line_error(r, "malformed edge: expected 'U V' or 'U V W'");
            break;
        }
        if (weighted < 0) {
            weighted = has_w;
            st = canopy_coo_init(&c, 1 << 12, has_w);
            if (st != CANOPY_OK) break;
        } else if (weighted != has_w) {
            st = canopy_line_error(r, "edge %s a weight but the first edge %s",
                                   has_w ? "has" : "lacks", weighted ? "has one" : "does not");
            break;
        }
        if (u < 0 || v < 0 || u >= INT32_MAX || v >= INT32_MAX) {
            st = canopy_line_error(r, "vertex out of range (0-based, below 2^31-1): %lld %lld",
                                   (long long)u, (long long)v);
            break;
        }
        if (u + 1 > n) n = u + 1;
        if (v + 1 > n) n = v + 1;
        st = canopy_coo_push(&c, u, v, w);
    }
    /* Vertex ids are not remapped: the largest id sizes the graph. */
    if (st == CANOPY_OK) st = canopy_graph_check_vertices(r, n, "its vertex ids make");
    if (st == CANOPY_OK) st = canopy_csr_from_coo(n, n, c.n, c.src, c.dst, c.w, out);
    canopy_coo_release(&c);
    return st;
}

canopy_status canopy_edgelist_read(const char *path, canopy_csr *out) {
    return canopy_graph_read_text(path, "canopy_edgelist_read", parse, out);
}

canopy_status canopy_graph_edgelist_read_mem(const void *buf, size_t len, const char *name,
                                             canopy_csr *out) {
    return canopy_graph_read_text_mem(buf, len, name, parse, out);
}

canopy_status canopy_graph_load(const char *path, canopy_csr *out) {
    if (!path) return canopy_fail(CANOPY_ERR_INVALID, "no graph file name given");
    if (canopy_io_has_suffix(path, ".mtx")) return canopy_mtx_read(path, out);
    if (canopy_io_has_suffix(path, ".gr")) return canopy_gr_read(path, out);
    return canopy_edgelist_read(path, out);
}
