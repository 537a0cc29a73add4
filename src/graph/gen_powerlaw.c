/* SPDX-License-Identifier: MIT */
/* Skewed directed graphs with a prescribed out-degree law: vertex v draws its
 * out-degree from P(k) ~ k^-alpha on [min_deg, max_deg] (inverse CDF), then that
 * many distinct targets uniformly among the other vertices. Vertex v uses stream v
 * of the seed only, so rows are generated in parallel and identically for any
 * thread count. */
#include "graph/graph.h"

#include <math.h>
#include <stdlib.h>

typedef struct degree_law {
    int32_t min_deg, span;
    double *cdf; /* span entries, cdf[span-1] = 1 */
} degree_law;

static int32_t draw_degree(const degree_law *law, canopy_rng *r) {
    double u = canopy_rng_uniform(r);
    int32_t lo = 0, hi = law->span - 1;
    while (lo < hi) { /* first k with cdf[k] > u */
        int32_t mid = lo + (hi - lo) / 2;
        if (law->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return law->min_deg + lo;
}

static int cmp_i32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Uniform in [0, n) other than v. */
static int32_t draw_target(canopy_rng *r, int64_t n, int64_t v) {
    int64_t t = (int64_t)canopy_rng_below(r, (uint64_t)(n - 1));
    return (int32_t)(t >= v ? t + 1 : t);
}

/* Fills a row with distinct targets: draw, sort, redraw the repeats, until none. */
static void fill_row(int32_t *row, int32_t deg, canopy_rng *r, int64_t n, int64_t v) {
    for (int32_t k = 0; k < deg; k++) row[k] = draw_target(r, n, v);
    for (;;) {
        qsort(row, (size_t)deg, sizeof *row, cmp_i32);
        bool repeat = false;
        for (int32_t k = 1; k < deg; k++)
            if (row[k] == row[k - 1]) {
                row[k] = draw_target(r, n, v);
                repeat = true;
            }
        if (!repeat) return;
    }
}

canopy_status canopy_gen_powerlaw(int64_t n, int32_t min_deg, int32_t max_deg, double alpha,
                                  uint64_t seed, canopy_csr *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_gen_powerlaw: out is NULL");
    memset(out, 0, sizeof *out);
    if (n < 0 || n > INT32_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "powerlaw: n %lld is outside 0..2^31-1",
                           (long long)n);
    if (min_deg < 0 || max_deg < min_deg || (n > 0 && max_deg > n - 1))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "powerlaw: degrees %d..%d must satisfy 0 <= min <= max <= n-1 (%lld)",
                           (int)min_deg, (int)max_deg, (long long)n - 1);
    if (!isfinite(alpha)) return canopy_fail(CANOPY_ERR_INVALID, "powerlaw: alpha must be finite");
    degree_law law = {min_deg, max_deg - min_deg + 1, NULL};
    canopy_status s = canopy_alloc((void **)&law.cdf, (size_t)law.span, sizeof(double));
    if (s != CANOPY_OK) return s;
    double total = 0.0;
    for (int32_t k = 0; k < law.span; k++) {
        /* Degree 0 (allowed when min_deg is 0) gets the weight of degree 1. */
        double deg = (double)(min_deg + k > 0 ? min_deg + k : 1);
        total += pow(deg, -alpha);
        law.cdf[k] = total;
    }
    for (int32_t k = 0; k < law.span; k++) law.cdf[k] /= total;
    law.cdf[law.span - 1] = 1.0;

    int64_t *deg = NULL;
    s = canopy_alloc((void **)&deg, (size_t)n + 1, sizeof *deg);
    if (s != CANOPY_OK) {
        canopy_free(law.cdf);
        return s;
    }
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t v = 0; v < n; v++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)v);
        deg[v] = n > 1 ? draw_degree(&law, &r) : 0;
    }
    int64_t nnz = 0;
    for (int64_t v = 0; v < n; v++) nnz += deg[v];
    s = canopy_alloc((void **)&out->row_ptr, (size_t)n + 1, sizeof(int64_t));
    if (s == CANOPY_OK)
        s = canopy_alloc((void **)&out->col, (size_t)(nnz ? nnz : 1), sizeof(int32_t));
    if (s != CANOPY_OK) {
        canopy_free(deg);
        canopy_free(law.cdf);
        canopy_csr_release(out);
        return s;
    }
    out->n_rows = out->n_cols = n;
    out->nnz = nnz;
    out->row_ptr[0] = 0;
    for (int64_t v = 0; v < n; v++) out->row_ptr[v + 1] = out->row_ptr[v] + deg[v];
#pragma omp parallel for schedule(dynamic, 1024) num_threads(canopy_threads())
    for (int64_t v = 0; v < n; v++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)v);
        if (n > 1) draw_degree(&law, &r); /* the degree drawn above: replay it */
        fill_row(out->col + out->row_ptr[v], (int32_t)deg[v], &r, n, v);
    }
    canopy_free(deg);
    canopy_free(law.cdf);
    return CANOPY_OK;
}
