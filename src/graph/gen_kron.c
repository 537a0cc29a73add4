/* SPDX-License-Identifier: MIT */
/* Kronecker graphs as in the Graph500 specification: each edge picks one quadrant
 * of the adjacency matrix per bit of the vertex index with probabilities A, B, C,
 * D (R-MAT), vertex labels are then permuted so locality does not reveal degree,
 * and the graph is made undirected (both directions stored). Self loops and
 * repeated edges are dropped, as in the DIMACS kron_g500-logn graphs. Edge e draws
 * from stream e of the seed; the permutation from the last stream. */
#include "graph/graph.h"

#include <omp.h>

#define KRON_A 0.57
#define KRON_B 0.19
#define KRON_C 0.19

canopy_status canopy_gen_kron(int32_t scale, int32_t edge_factor, uint64_t seed, canopy_csr *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_gen_kron: out is NULL");
    memset(out, 0, sizeof *out);
    if (scale < 0 || scale > 30)
        return canopy_fail(CANOPY_ERR_INVALID, "kron: scale %d is outside 0..30", (int)scale);
    if (edge_factor < 0 || edge_factor > 1024)
        return canopy_fail(CANOPY_ERR_INVALID, "kron: edge factor %d is outside 0..1024",
                           (int)edge_factor);
    const int64_t n = (int64_t)1 << scale, m = (int64_t)edge_factor * n;
    int64_t *perm = NULL, *src = NULL, *dst = NULL;
    canopy_status s = canopy_alloc((void **)&perm, (size_t)n, sizeof *perm);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&src, (size_t)(2 * m + 1), sizeof *src);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&dst, (size_t)(2 * m + 1), sizeof *dst);
    if (s != CANOPY_OK) goto done;

    canopy_rng pr = canopy_rng_make(seed, UINT64_MAX);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)canopy_rng_below(&pr, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }

    /* Kept edges are compacted after the parallel draw; dropped self loops leave -1. */
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t e = 0; e < m; e++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)e);
        int64_t u = 0, v = 0;
        for (int32_t b = 0; b < scale; b++) {
            double x = canopy_rng_uniform(&r);
            int iu = x >= KRON_A + KRON_B; /* C or D: lower half */
            int iv = (x >= KRON_A && x < KRON_A + KRON_B) || x >= KRON_A + KRON_B + KRON_C;
            u = u << 1 | iu;
            v = v << 1 | iv;
        }
        u = perm[u];
        v = perm[v];
        src[2 * e] = u == v ? -1 : u;
        dst[2 * e] = v;
        src[2 * e + 1] = u == v ? -1 : v;
        dst[2 * e + 1] = u;
    }
    int64_t kept = 0;
    for (int64_t k = 0; k < 2 * m; k++)
        if (src[k] >= 0) {
            src[kept] = src[k];
            dst[kept++] = dst[k];
        }
    s = canopy_csr_from_coo(n, n, kept, src, dst, NULL, out);
    if (s == CANOPY_OK) canopy_graph_csr_dedupe(out);
done:
    canopy_free(perm);
    canopy_free(src);
    canopy_free(dst);
    return s;
}
