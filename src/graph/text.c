/* SPDX-License-Identifier: MIT */
/* Line-oriented parsing shared by the .mtx, .gr and edge-list readers. Numbers are
 * parsed with strtoll/strtod and must end at a blank, so "12x" is an error rather
 * than 12. */
#include "graph/graph.h"
#include "io/io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void canopy_line_reader_init(line_reader *r, const char *path, char *buf) {
    r->path = path;
    r->p = buf;
    r->line = NULL;
    r->lineno = 0;
    r->bytes = 0;
}

bool canopy_line_reader_next(line_reader *r) {
    if (!r->p || *r->p == '\0') return false;
    r->line = r->p;
    r->lineno++;
    char *nl = strchr(r->p, '\n');
    if (nl) {
        *nl = '\0';
        r->p = nl + 1;
    } else {
        r->p = NULL;
    }
    size_t len = strlen(r->line);
    if (len > 0 && r->line[len - 1] == '\r') r->line[len - 1] = '\0';
    return true;
}

canopy_status canopy_line_error(const line_reader *r, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return canopy_fail(CANOPY_ERR_FORMAT, "%s:%lld: %s", r->path, (long long)r->lineno, msg);
}

static bool is_blank(char c) {
    return c == ' ' || c == '\t';
}

bool canopy_at_line_end(const char *s) {
    while (is_blank(*s)) s++;
    return *s == '\0';
}

bool canopy_parse_i64(char **s, int64_t *out) {
    char *p = *s, *end;
    while (is_blank(*p)) p++;
    if (*p == '\0') return false;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno == ERANGE || !(*end == '\0' || is_blank(*end))) return false;
    *out = v;
    *s = end;
    return true;
}

bool canopy_parse_f64(char **s, double *out) {
    char *p = *s, *end;
    while (is_blank(*p)) p++;
    if (*p == '\0') return false;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || (errno == ERANGE && (v > 1.0 || v < -1.0)) || !(*end == '\0' || is_blank(*end)))
        return false;
    *out = v;
    *s = end;
    return true;
}

canopy_status canopy_coo_init(coo *c, int64_t cap, bool weighted) {
    memset(c, 0, sizeof *c);
    c->cap = cap > 16 ? cap : 16;
    canopy_status s = canopy_alloc((void **)&c->src, (size_t)c->cap, sizeof(int64_t));
    if (s == CANOPY_OK) s = canopy_alloc((void **)&c->dst, (size_t)c->cap, sizeof(int64_t));
    if (s == CANOPY_OK && weighted)
        s = canopy_alloc((void **)&c->w, (size_t)c->cap, sizeof(double));
    if (s != CANOPY_OK) canopy_coo_release(c);
    return s;
}

static canopy_status grow(void **p, int64_t n, int64_t cap, size_t size) {
    void *q;
    canopy_status s = canopy_alloc(&q, (size_t)cap, size);
    if (s != CANOPY_OK) return s;
    memcpy(q, *p, (size_t)n * size);
    canopy_free(*p);
    *p = q;
    return CANOPY_OK;
}

canopy_status canopy_coo_push(coo *c, int64_t u, int64_t v, double w) {
    if (c->n == c->cap) {
        int64_t cap = c->cap * 2;
        canopy_status s = grow((void **)&c->src, c->n, cap, sizeof(int64_t));
        if (s == CANOPY_OK) s = grow((void **)&c->dst, c->n, cap, sizeof(int64_t));
        if (s == CANOPY_OK && c->w) s = grow((void **)&c->w, c->n, cap, sizeof(double));
        if (s != CANOPY_OK) return s;
        c->cap = cap;
    }
    c->src[c->n] = u;
    c->dst[c->n] = v;
    if (c->w) c->w[c->n] = w;
    c->n++;
    return CANOPY_OK;
}

void canopy_coo_release(coo *c) {
    canopy_free(c->src);
    canopy_free(c->dst);
    canopy_free(c->w);
    memset(c, 0, sizeof *c);
}

/* An allocation failure deep in a reader says how many bytes; lead with the file. */
static canopy_status name_nomem(canopy_status s, const char *name) {
    if (s != CANOPY_ERR_NOMEM) return s;
    const char *msg = canopy_last_error();
    size_t n = strlen(name);
    if (!strncmp(msg, name, n) && msg[n] == ':') return s;
    char why[512];
    snprintf(why, sizeof why, "%s", msg);
    return canopy_fail(s, "%s: %s", name, why);
}

canopy_status canopy_graph_read_text(const char *path, const char *fn, graph_text_parser parse,
                                     canopy_csr *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "%s: out is NULL", fn);
    memset(out, 0, sizeof *out);
    char *buf;
    size_t len;
    canopy_status s = canopy_io_read_all(path, &buf, &len);
    if (s != CANOPY_OK) return s;
    line_reader r;
    canopy_line_reader_init(&r, path, buf);
    r.bytes = len;
    s = parse(&r, out);
    free(buf);
    return name_nomem(s, path);
}

canopy_status canopy_graph_read_text_mem(const void *buf, size_t len, const char *name,
                                         graph_text_parser parse, canopy_csr *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_graph_read_text_mem: out is NULL");
    memset(out, 0, sizeof *out);
    name = canopy_io_name(name);
    if (!buf && len > 0) return canopy_fail(CANOPY_ERR_INVALID, "%s: no buffer given", name);
    char *copy = malloc(len + 1);
    if (!copy)
        return canopy_fail(CANOPY_ERR_NOMEM, "%s: out of memory copying %zu bytes", name, len);
    if (len) memcpy(copy, buf, len);
    copy[len] = '\0';
    line_reader r;
    canopy_line_reader_init(&r, name, copy);
    r.bytes = len;
    canopy_status s = parse(&r, out);
    free(copy);
    return name_nomem(s, name);
}

canopy_status canopy_graph_check_vertices(const line_reader *r, int64_t n, const char *what) {
    int64_t limit = GRAPH_FREE_VERTICES + GRAPH_VERTICES_PER_BYTE * (int64_t)r->bytes;
    if (n <= limit) return CANOPY_OK;
    return canopy_fail(CANOPY_ERR_FORMAT,
                       "%s: %s %lld vertices but the file has only %zu bytes (at most %lld "
                       "accepted: 2^20 + 4 per byte; renumber the vertices densely)",
                       r->path, what, (long long)n, r->bytes, (long long)limit);
}
