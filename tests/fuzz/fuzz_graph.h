/* SPDX-License-Identifier: MIT */
/* Shared check of the graph-reader fuzz targets (fuzz_mtx, fuzz_gr, fuzz_edgelist). */
#ifndef CANOPY_FUZZ_GRAPH_H
#define CANOPY_FUZZ_GRAPH_H

#include "graph/graph.h"

#include <stdlib.h>
#include <string.h>

typedef canopy_status (*fuzz_graph_reader)(const void *, size_t, const char *, canopy_csr *);

/* A number in (2^16, 2^21] declares a graph the reader accepts and must allocate for
 * (megabytes of row pointers or reserved edges per input), which slows an execution
 * 20-fold under ASan; larger numbers are refused before any allocation and stay in.
 * Accepting big declarations is tested in tests/cli_hostile.sh. */
static inline int fuzz_graph_costly(const uint8_t *data, size_t size) {
    for (size_t i = 0; i < size; i++) {
        if (data[i] < '0' || data[i] > '9') continue;
        int64_t v = 0;
        for (; i < size && data[i] >= '0' && data[i] <= '9'; i++)
            if (v <= (1 << 21)) v = v * 10 + (data[i] - '0');
        if (v > (1 << 16) && v <= (1 << 21)) return 1;
    }
    return 0;
}

/* An error leaves no graph and names the input; a success is a CSR whose row pointers
 * rise from 0 to nnz, whose columns are in range, and whose size obeys the bound. */
static inline void fuzz_graph_check(fuzz_graph_reader read, const uint8_t *data, size_t size) {
    if (fuzz_graph_costly(data, size)) return;
    canopy_csr g;
    canopy_status s = read(data, size, "fuzz", &g);
    if (s != CANOPY_OK) {
        if (g.row_ptr || g.col || strncmp(canopy_last_error(), "fuzz", 4) != 0) abort();
        return;
    }
    int64_t limit = GRAPH_FREE_VERTICES + GRAPH_VERTICES_PER_BYTE * (int64_t)size;
    if (g.n_rows < 0 || g.n_cols < 0 || g.n_rows > limit || g.n_cols > limit || g.nnz < 0 ||
        g.row_ptr[0] != 0 || g.row_ptr[g.n_rows] != g.nnz)
        abort();
    for (int64_t i = 0; i < g.n_rows; i++)
        if (g.row_ptr[i + 1] < g.row_ptr[i]) abort();
    for (int64_t k = 0; k < g.nnz; k++)
        if (g.col[k] < 0 || g.col[k] >= g.n_cols) abort();
    canopy_csr_release(&g);
}

#endif
