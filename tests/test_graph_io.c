/* SPDX-License-Identifier: MIT */
/* Graph files: Matrix Market (general/symmetric, real/integer/pattern), DIMACS .gr
 * and edge lists parse to the expected CSR, .mtx round-trips, and every malformed
 * case fails with a format error naming the file and line. */
#include "check.h"
#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

static const char *write_file(const char *name, const char *text) {
    const char *path = check_tmp_path(name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return path;
}

/* Row i lists "col:val" (or "col") entries; rows separated by '|'. */
static void describe(const canopy_csr *g, char *out, size_t cap) {
    size_t at = 0;
    out[0] = '\0';
    for (int64_t i = 0; i < g->n_rows; i++) {
        if (i) at += (size_t)snprintf(out + at, cap - at, "|");
        for (int64_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; k++) {
            if (k > g->row_ptr[i]) at += (size_t)snprintf(out + at, cap - at, " ");
            if (g->val)
                at += (size_t)snprintf(out + at, cap - at, "%d:%g", g->col[k], g->val[k]);
            else
                at += (size_t)snprintf(out + at, cap - at, "%d", g->col[k]);
        }
    }
}

static void expect_graph(canopy_status s, canopy_csr *g, int64_t n, const char *want,
                         const char *what) {
    CHECK_MSG(s == CANOPY_OK, "%s: %s", what, canopy_last_error());
    if (s != CANOPY_OK) return;
    char got[1024];
    describe(g, got, sizeof got);
    CHECK_MSG(g->n_rows == n && !strcmp(got, want), "%s: got n %lld \"%s\", want n %lld \"%s\"",
              what, (long long)g->n_rows, got, (long long)n, want);
    canopy_csr_release(g);
}

/* The file's name and line must be in the message. */
static void expect_error(canopy_status (*reader)(const char *, canopy_csr *), const char *name,
                         const char *text, int line, const char *needle) {
    const char *path = write_file(name, text);
    char where[600];
    snprintf(where, sizeof where, "%s:%d: ", path, line);
    canopy_csr g;
    canopy_status s = reader(path, &g);
    CHECK_MSG(s == CANOPY_ERR_FORMAT && check_contains(canopy_last_error(), where) &&
                  check_contains(canopy_last_error(), needle),
              "%s: got %s \"%s\", want a format error with \"%s\" and \"%s\"", name,
              canopy_status_name(s), canopy_last_error(), where, needle);
    if (s == CANOPY_OK) canopy_csr_release(&g);
}

static void test_mtx(void) {
    canopy_csr g;
    const char *p = write_file("general.mtx", "%%MatrixMarket matrix coordinate real general\n"
                                              "% a comment\n"
                                              "\n"
                                              "3 4 4\n"
                                              "3 1 2.5\n"
                                              "1 4 -1\n"
                                              "1 2 1e-3\n"
                                              "3 1 7\n");
    expect_graph(canopy_mtx_read(p, &g), &g, 3, "1:0.001 3:-1||0:2.5 0:7", "general real");
    p = write_file("pattern.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 2\n"
                                  "2 1\n1 1\n");
    expect_graph(canopy_mtx_read(p, &g), &g, 2, "0|0", "pattern");
    p = write_file("int.mtx", "%%MatrixMarket MATRIX Coordinate Integer General\r\n2 2 1\r\n"
                              "1 2 5\r\n");
    expect_graph(canopy_mtx_read(p, &g), &g, 2, "1:5|", "integer, CRLF, upper case");
    /* Symmetric: off-diagonal entries both ways, the diagonal once. */
    p = write_file("sym.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n"
                              "2 1 1.5\n3 3 4\n3 1 2\n");
    expect_graph(canopy_mtx_read(p, &g), &g, 3, "1:1.5 2:2|0:1.5|0:2 2:4", "symmetric");
    p = write_file("sym_pattern.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                      "3 3 2\n2 1\n3 2\n");
    expect_graph(canopy_mtx_read(p, &g), &g, 3, "1|0 2|1", "symmetric pattern");
    p = write_file("empty.mtx", "%%MatrixMarket matrix coordinate real general\n0 0 0\n");
    expect_graph(canopy_mtx_read(p, &g), &g, 0, "", "empty matrix");

    /* Round trip through the writer, weighted and pattern, and loading by name. */
    p = write_file("rt_in.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 3\n"
                                "1 2 0.1\n3 3 -2.25\n2 1 1e300\n");
    canopy_csr a, b;
    CHECK_OK(canopy_mtx_read(p, &a));
    const char *out = check_tmp_path("rt_out.mtx");
    CHECK_OK(canopy_mtx_write(out, &a));
    CHECK_OK(canopy_graph_load(out, &b));
    CHECK(a.nnz == b.nnz && b.val && !memcmp(a.val, b.val, (size_t)a.nnz * sizeof(double)) &&
          !memcmp(a.col, b.col, (size_t)a.nnz * sizeof(int32_t)));
    canopy_csr_release(&b);
    canopy_free(a.val);
    a.val = NULL;
    CHECK_OK(canopy_mtx_write(out, &a));
    CHECK_OK(canopy_mtx_read(out, &b));
    CHECK(b.nnz == 3 && !b.val && !memcmp(a.col, b.col, 3 * sizeof(int32_t)));
    canopy_csr_release(&a);
    canopy_csr_release(&b);
    CHECK_FAILS(canopy_mtx_write(check_tmp_path("no/such/dir.mtx"), &g), CANOPY_ERR_IO, "dir.mtx");

    const char *hdr = "%%MatrixMarket matrix coordinate real general\n";
    char text[512];
    expect_error(canopy_mtx_read, "e_banner.mtx", "%%MatrixMarkt matrix coordinate real general\n",
                 1, "not a Matrix Market file");
    expect_error(canopy_mtx_read, "e_empty.mtx", "", 1, "empty file");
    expect_error(canopy_mtx_read, "e_words.mtx", "%%MatrixMarket matrix coordinate real\n1 1 0\n",
                 1, "malformed banner");
    expect_error(canopy_mtx_read, "e_array.mtx", "%%MatrixMarket matrix array real general\n1 1\n",
                 1, "'array' is not supported");
    expect_error(canopy_mtx_read, "e_complex.mtx",
                 "%%MatrixMarket matrix coordinate complex general\n1 1 0\n", 1, "'complex'");
    expect_error(canopy_mtx_read, "e_skew.mtx",
                 "%%MatrixMarket matrix coordinate real skew-symmetric\n1 1 0\n", 1, "symmetry");
    snprintf(text, sizeof text, "%s%% only comments\n", hdr);
    expect_error(canopy_mtx_read, "e_nosize.mtx", text, 2, "no size line");
    snprintf(text, sizeof text, "%s3 3\n", hdr);
    expect_error(canopy_mtx_read, "e_size.mtx", text, 2, "malformed size line");
    snprintf(text, sizeof text, "%s3 x3 1\n", hdr);
    expect_error(canopy_mtx_read, "e_size2.mtx", text, 2, "malformed size line");
    snprintf(text, sizeof text, "%s3 3 2\n1 1 1\n4 1 2\n", hdr);
    expect_error(canopy_mtx_read, "e_range.mtx", text, 4, "out of range");
    snprintf(text, sizeof text, "%s3 3 2\n0 1 1\n", hdr);
    expect_error(canopy_mtx_read, "e_zero.mtx", text, 3, "out of range");
    snprintf(text, sizeof text, "%s3 3 1\n1 1 1\n2 2 2\n", hdr);
    expect_error(canopy_mtx_read, "e_many.mtx", text, 4, "more entries");
    snprintf(text, sizeof text, "%s3 3 3\n1 1 1\n2 2 2\n", hdr);
    expect_error(canopy_mtx_read, "e_few.mtx", text, 4, "truncated");
    snprintf(text, sizeof text, "%s3 3 1\n1 1\n", hdr);
    expect_error(canopy_mtx_read, "e_noval.mtx", text, 3, "value");
    snprintf(text, sizeof text, "%s3 3 1\n1 1 2.0 9\n", hdr);
    expect_error(canopy_mtx_read, "e_extra.mtx", text, 3, "unexpected text");
    snprintf(text, sizeof text, "%s3 3 1\n1 1 abc\n", hdr);
    expect_error(canopy_mtx_read, "e_badval.mtx", text, 3, "value");
    expect_error(canopy_mtx_read, "e_symsq.mtx",
                 "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n", 2, "square");
    CHECK_FAILS(canopy_mtx_read(check_tmp_path("missing.mtx"), &g), CANOPY_ERR_IO, "missing.mtx");
}

static void test_gr(void) {
    canopy_csr g;
    const char *p = write_file("ok.gr", "c a comment\np sp 3 3\nc another\na 1 2 7\n"
                                        "a 3 1 2.5\na 1 3 1\n");
    expect_graph(canopy_gr_read(p, &g), &g, 3, "1:7 2:1||0:2.5", ".gr");
    p = write_file("ok2.gr", "p sp 2 0\n");
    expect_graph(canopy_graph_load(p, &g), &g, 2, "|", ".gr without arcs, by extension");
    expect_error(canopy_gr_read, "e_first.gr", "c x\na 1 2 3\n", 2, "before the problem line");
    expect_error(canopy_gr_read, "e_p.gr", "p max 3 3\n", 1, "malformed problem line");
    expect_error(canopy_gr_read, "e_p2.gr", "p sp 3\n", 1, "malformed problem line");
    expect_error(canopy_gr_read, "e_twice.gr", "p sp 3 0\np sp 3 0\n", 2, "second problem line");
    expect_error(canopy_gr_read, "e_range.gr", "p sp 3 1\na 1 4 1\n", 2, "out of range");
    expect_error(canopy_gr_read, "e_arc.gr", "p sp 3 1\na 1 2\n", 2, "malformed arc");
    expect_error(canopy_gr_read, "e_many.gr", "p sp 3 1\na 1 2 1\na 2 3 1\n", 3, "more arcs");
    expect_error(canopy_gr_read, "e_few.gr", "p sp 3 2\na 1 2 1\n", 2, "truncated");
    expect_error(canopy_gr_read, "e_type.gr", "p sp 3 0\nx 1 2\n", 2, "unknown line type");
    expect_error(canopy_gr_read, "e_none.gr", "c nothing\n", 1, "no problem line");
}

static void test_edgelist(void) {
    canopy_csr g;
    const char *p = write_file("ok.txt", "# comment\n0 2\n  3 0\n\n2 2\n");
    expect_graph(canopy_edgelist_read(p, &g), &g, 4, "2||2|0", "edge list");
    p = write_file("okw.el", "1 0 0.5\n0 1 2\n");
    expect_graph(canopy_graph_load(p, &g), &g, 2, "1:2|0:0.5", "weighted edge list");
    p = write_file("empty.txt", "# nothing\n");
    expect_graph(canopy_graph_load(p, &g), &g, 0, "", "empty edge list");
    expect_error(canopy_edgelist_read, "e_mix.txt", "0 1 2\n1 2\n", 2, "lacks a weight");
    expect_error(canopy_edgelist_read, "e_neg.txt", "0 1\n-1 2\n", 2, "out of range");
    expect_error(canopy_edgelist_read, "e_one.txt", "0 1\n5\n", 2, "malformed edge");
    expect_error(canopy_edgelist_read, "e_junk.txt", "0 1 2 3\n", 1, "malformed edge");
    expect_error(canopy_edgelist_read, "e_text.txt", "a b\n", 1, "malformed edge");
}

/* The checked-in sample files (also used by the CLI test) agree with each other. */
static void test_samples(void) {
    const char *dir = getenv("CANOPY_TEST_DATA");
    if (!dir) return;
    const char *names[] = {"small.mtx", "small.gr"};
    canopy_csr g[2];
    for (int i = 0; i < 2; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/graph/%s", dir, names[i]);
        CHECK_OK(canopy_graph_load(path, &g[i]));
    }
    CHECK(g[0].nnz == 7 && g[1].nnz == 7 && !memcmp(g[0].col, g[1].col, 7 * sizeof(int32_t)) &&
          !memcmp(g[0].val, g[1].val, 7 * sizeof(double)));
    canopy_csr_release(&g[0]);
    canopy_csr_release(&g[1]);
}

/* Declared sizes against the input's size (issue 21): the vertex bound 2^20 + 4 per
 * byte holds at its edge for each reader, and entry counts beyond what the bytes can
 * hold fail before any allocation. */
static void test_size_bounds(void) {
    canopy_csr g;
    char buf[128];
    /* "0 V\n" is 10 bytes for a 7-digit V: the bound is 2^20 + 40 = 1048616 vertices. */
    snprintf(buf, sizeof buf, "0 %d\n", 1048615);
    CHECK_OK(canopy_graph_edgelist_read_mem(buf, strlen(buf), "e", &g));
    CHECK(g.n_rows == 1048616);
    canopy_csr_release(&g);
    snprintf(buf, sizeof buf, "0 %d\n", 1048616);
    CHECK_FAILS(canopy_graph_edgelist_read_mem(buf, strlen(buf), "e", &g), CANOPY_ERR_FORMAT,
                "e: its vertex ids make 1048617 vertices but the file has only 10 bytes");
    CHECK(g.row_ptr == NULL);
    const char *gr = "p sp 2000000 0\n"; /* 15 bytes: bound 1048636 */
    CHECK_FAILS(canopy_graph_gr_read_mem(gr, strlen(gr), "g.gr", &g), CANOPY_ERR_FORMAT,
                "g.gr: the problem line declares 2000000 vertices");
    gr = "p sp 1048636 0\n";
    CHECK_OK(canopy_graph_gr_read_mem(gr, strlen(gr), "g.gr", &g));
    CHECK(g.n_rows == 1048636 && g.nnz == 0);
    canopy_csr_release(&g);
    gr = "p sp 3 9\na 1 2 1\n";
    CHECK_FAILS(canopy_graph_gr_read_mem(gr, strlen(gr), "g.gr", &g), CANOPY_ERR_FORMAT,
                "declares 9 arcs but the file has only 17 bytes");
    const char *mtx = "%%MatrixMarket matrix coordinate pattern general\n4 5000000 1\n1 1\n";
    CHECK_FAILS(canopy_graph_mtx_read_mem(mtx, strlen(mtx), "m.mtx", &g), CANOPY_ERR_FORMAT,
                "m.mtx: the size line declares 5000000 vertices");
    mtx = "%%MatrixMarket matrix coordinate pattern general\n100 100 40\n1 1\n";
    CHECK_FAILS(canopy_graph_mtx_read_mem(mtx, strlen(mtx), "m.mtx", &g), CANOPY_ERR_FORMAT,
                "declares 40 entries but the file has only");
    mtx = "%%MatrixMarket matrix coordinate pattern general\n4 4 1\n2 3\n";
    CHECK_OK(canopy_graph_mtx_read_mem(mtx, strlen(mtx), "m.mtx", &g));
    CHECK(g.n_rows == 4 && g.nnz == 1 && g.col[0] == 2);
    canopy_csr_release(&g);
}

int main(void) {
    test_size_bounds();
    test_mtx();
    test_gr();
    test_edgelist();
    test_samples();
    return check_finish();
}
