/* SPDX-License-Identifier: MIT */
/* CSR construction: a counting sort of COO entries by row, then a stable sort of
 * each row by column, so a graph has one canonical form whatever order its file
 * lists the entries in. */
#include "graph/graph.h"

#include <omp.h>
#include <stdlib.h>

void canopy_csr_release(canopy_csr *g) {
    if (!g) return;
    canopy_free(g->row_ptr);
    canopy_free(g->col);
    canopy_free(g->val);
    memset(g, 0, sizeof *g);
}

static canopy_status csr_alloc(canopy_csr *g, int64_t n_rows, int64_t n_cols, int64_t nnz,
                               bool weighted) {
    memset(g, 0, sizeof *g);
    if (n_rows < 0 || n_cols < 0 || nnz < 0)
        return canopy_fail(CANOPY_ERR_INVALID, "negative matrix shape or entry count");
    if (n_cols > INT32_MAX || n_rows > INT32_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "graphs of more than 2^31-1 vertices are not supported (%lld)",
                           (long long)(n_rows > n_cols ? n_rows : n_cols));
    g->n_rows = n_rows;
    g->n_cols = n_cols;
    g->nnz = nnz;
    canopy_status s = canopy_calloc((void **)&g->row_ptr, (size_t)n_rows + 1, sizeof(int64_t));
    if (s == CANOPY_OK)
        s = canopy_alloc((void **)&g->col, (size_t)(nnz ? nnz : 1), sizeof(int32_t));
    if (s == CANOPY_OK && weighted)
        s = canopy_alloc((void **)&g->val, (size_t)(nnz ? nnz : 1), sizeof(double));
    if (s != CANOPY_OK) canopy_csr_release(g);
    return s;
}

/* Insertion sort for short rows, else a merge sort through scratch; both stable. */
static void sort_row(int32_t *c, double *v, int64_t n, int32_t *tc, double *tv) {
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            int32_t x = c[i];
            double y = v ? v[i] : 0.0;
            int64_t j = i;
            for (; j > 0 && c[j - 1] > x; j--) {
                c[j] = c[j - 1];
                if (v) v[j] = v[j - 1];
            }
            c[j] = x;
            if (v) v[j] = y;
        }
        return;
    }
    int64_t h = n / 2;
    sort_row(c, v, h, tc, tv);
    sort_row(c + h, v ? v + h : NULL, n - h, tc, tv);
    if (c[h - 1] <= c[h]) return;
    memcpy(tc, c, (size_t)n * sizeof *c);
    if (v) memcpy(tv, v, (size_t)n * sizeof *v);
    int64_t i = 0, j = h, k = 0;
    while (i < h && j < n) {
        int64_t from = tc[j] < tc[i] ? j++ : i++;
        c[k] = tc[from];
        if (v) v[k] = tv[from];
        k++;
    }
    for (; i < h; i++, k++) {
        c[k] = tc[i];
        if (v) v[k] = tv[i];
    }
    for (; j < n; j++, k++) {
        c[k] = tc[j];
        if (v) v[k] = tv[j];
    }
}

/* Sorts every row by column; rows are independent, so threads take them freely. */
static canopy_status sort_rows(canopy_csr *g) {
    int64_t max_len = 0;
    for (int64_t i = 0; i < g->n_rows; i++) {
        int64_t len = g->row_ptr[i + 1] - g->row_ptr[i];
        if (len > max_len) max_len = len;
    }
    if (max_len <= 1) return CANOPY_OK;
    int nt = canopy_threads();
    int32_t *tc = NULL;
    double *tv = NULL;
    canopy_status s = canopy_alloc((void **)&tc, (size_t)nt * (size_t)max_len, sizeof *tc);
    if (s == CANOPY_OK && g->val)
        s = canopy_alloc((void **)&tv, (size_t)nt * (size_t)max_len, sizeof *tv);
    if (s != CANOPY_OK) {
        canopy_free(tc);
        return s;
    }
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num();
#pragma omp for schedule(dynamic, 256)
        for (int64_t i = 0; i < g->n_rows; i++) {
            int64_t lo = g->row_ptr[i];
            sort_row(g->col + lo, g->val ? g->val + lo : NULL, g->row_ptr[i + 1] - lo,
                     tc + (size_t)t * (size_t)max_len,
                     tv ? tv + (size_t)t * (size_t)max_len : NULL);
        }
    }
    canopy_free(tc);
    canopy_free(tv);
    return CANOPY_OK;
}

canopy_status canopy_csr_from_coo(int64_t n_rows, int64_t n_cols, int64_t nnz, const int64_t *src,
                                  const int64_t *dst, const double *w, canopy_csr *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_csr_from_coo: out is NULL");
    memset(out, 0, sizeof *out);
    if (nnz > 0 && (!src || !dst))
        return canopy_fail(CANOPY_ERR_INVALID, "canopy_csr_from_coo: entries are NULL");
    for (int64_t k = 0; k < nnz; k++)
        if (src[k] < 0 || src[k] >= n_rows || dst[k] < 0 || dst[k] >= n_cols)
            return canopy_fail(CANOPY_ERR_INVALID,
                               "entry %lld (%lld, %lld) is outside the %lld x %lld matrix",
                               (long long)k, (long long)src[k], (long long)dst[k],
                               (long long)n_rows, (long long)n_cols);
    canopy_status s = csr_alloc(out, n_rows, n_cols, nnz, w != NULL);
    if (s != CANOPY_OK) return s;
    int64_t *next = NULL;
    s = canopy_alloc((void **)&next, (size_t)n_rows + 1, sizeof *next);
    if (s != CANOPY_OK) {
        canopy_csr_release(out);
        return s;
    }
    for (int64_t k = 0; k < nnz; k++) out->row_ptr[src[k] + 1]++;
    for (int64_t i = 0; i < n_rows; i++) out->row_ptr[i + 1] += out->row_ptr[i];
    memcpy(next, out->row_ptr, (size_t)(n_rows + 1) * sizeof *next);
    for (int64_t k = 0; k < nnz; k++) {
        int64_t at = next[src[k]]++;
        out->col[at] = (int32_t)dst[k];
        if (w) out->val[at] = w[k];
    }
    canopy_free(next);
    return sort_rows(out);
}

canopy_status canopy_csr_transpose(const canopy_csr *g, canopy_csr *out) {
    if (!g || !out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_csr_transpose: NULL argument");
    canopy_status s = csr_alloc(out, g->n_cols, g->n_rows, g->nnz, g->val != NULL);
    if (s != CANOPY_OK) return s;
    int64_t *next = NULL;
    s = canopy_alloc((void **)&next, (size_t)g->n_cols + 1, sizeof *next);
    if (s != CANOPY_OK) {
        canopy_csr_release(out);
        return s;
    }
    for (int64_t k = 0; k < g->nnz; k++) out->row_ptr[g->col[k] + 1]++;
    for (int64_t i = 0; i < g->n_cols; i++) out->row_ptr[i + 1] += out->row_ptr[i];
    memcpy(next, out->row_ptr, (size_t)(g->n_cols + 1) * sizeof *next);
    /* Rows are visited in order, so each transposed row comes out sorted. */
    for (int64_t i = 0; i < g->n_rows; i++)
        for (int64_t k = g->row_ptr[i]; k < g->row_ptr[i + 1]; k++) {
            int64_t at = next[g->col[k]]++;
            out->col[at] = (int32_t)i;
            if (g->val) out->val[at] = g->val[k];
        }
    canopy_free(next);
    return CANOPY_OK;
}

void canopy_graph_csr_dedupe(canopy_csr *g) {
    int64_t out = 0;
    for (int64_t i = 0; i < g->n_rows; i++) {
        int64_t lo = g->row_ptr[i], hi = g->row_ptr[i + 1];
        g->row_ptr[i] = out;
        for (int64_t k = lo; k < hi; k++) {
            if (k > lo && g->col[k] == g->col[k - 1]) continue;
            g->col[out] = g->col[k];
            if (g->val) g->val[out] = g->val[k];
            out++;
        }
    }
    g->row_ptr[g->n_rows] = out;
    g->nnz = out;
}
