/* SPDX-License-Identifier: MIT */
/* Scalar references for the SIMT kernels: what each CUDA thread computes, as plain C
 * loops (OpenMP over threads where the kernel is a flat grid): the tests' oracles and the
 * benchmark's OpenMP peers. */
#include "simt/runtime.h"

#include "simt/consts.h"

#include <stdlib.h>
#include <string.h>

#define HASH(g, it) ((((g)&0x7fff) * 40503 + (it)*9973 + 17) >> 5)

void canopy_simt_ref_divergent(const int32_t *in, int32_t *out, int n) {
    for (int i = 0; i < n; i++) {
        int32_t x = in[i];
        if (x % 7 == 0) {
            out[i] = -1;
            continue;
        }
        int32_t acc = x & 1 ? x * 3 : x / 2, y = (x & 1023) + 1, steps = 0;
        while (y != 1 && steps < 40) {
            y = y & 1 ? 3 * y + 1 : y >> 1;
            steps++;
        }
        out[i] = steps > 20 && acc > 100 ? steps + acc : steps - acc;
    }
}

void canopy_simt_ref_exchange(const int32_t *in, int32_t *out, int n, int bdim, int rounds) {
    int32_t *v = malloc(sizeof *v * (size_t)bdim * 2);
    if (!v) abort();
    for (int b0 = 0; b0 < n; b0 += bdim) {
        int32_t *cur = v, *next = v + bdim;
        for (int t = 0; t < bdim; t++) cur[t] = b0 + t < n ? in[b0 + t] : 0;
        for (int r = 0; r < rounds; r++) {
            for (int t = 0; t < bdim; t++) next[t] = cur[(t + r + 1) % bdim] + r;
            int32_t *s = cur;
            cur = next;
            next = s;
        }
        for (int t = 0; t < bdim && b0 + t < n; t++) out[b0 + t] = cur[t];
    }
    free(v);
}

/* Two rows in turn (pointers swapped, as Rodinia's OpenMP version), so no serial copy
 * per row; the last row computed lands in out. */
void canopy_simt_ref_pathfinder(const int32_t *wall, int rows, int cols, int32_t *out,
                                int threads) {
    if (rows <= 0 || cols <= 0) return;
    int32_t *tmp = malloc(sizeof *tmp * (size_t)cols);
    if (!tmp) abort();
    int32_t *bufs[2] = {out, tmp};
    memcpy(bufs[(rows - 1) % 2], wall, sizeof *out * (size_t)cols);
    for (int r = 1; r < rows; r++) {
        const int32_t *src = bufs[(rows - r) % 2];
        int32_t *dst = bufs[(rows - 1 - r) % 2];
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int x = 0; x < cols; x++) {
            int32_t m = src[x];
            if (x > 0 && src[x - 1] < m) m = src[x - 1];
            if (x < cols - 1 && src[x + 1] < m) m = src[x + 1];
            dst[x] = m + wall[(size_t)r * cols + x];
        }
    }
    free(tmp);
}

/* Rodinia's OpenMP BFS: the same two sweeps per level, one vertex per iteration. */
void canopy_simt_ref_bfs(const int32_t *rowptr, const int32_t *col, int n, int src, int32_t *cost,
                         int threads) {
    unsigned char *mask = calloc((size_t)n * 3, 1);
    if (!mask) abort();
    unsigned char *upd = mask + n, *vis = mask + 2 * n;
    for (int v = 0; v < n; v++) cost[v] = -1;
    cost[src] = 0;
    mask[src] = vis[src] = 1;
    int over;
    do {
        over = 0;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int v = 0; v < n; v++) {
            if (!mask[v]) continue;
            mask[v] = 0;
            for (int32_t e = rowptr[v]; e < rowptr[v + 1]; e++)
                if (!vis[col[e]]) {
                    __atomic_store_n(&cost[col[e]], cost[v] + 1, __ATOMIC_RELAXED);
                    upd[col[e]] = 1;
                }
        }
#pragma omp parallel for num_threads(threads) schedule(static) reduction(| : over)
        for (int v = 0; v < n; v++)
            if (upd[v]) {
                mask[v] = vis[v] = 1;
                upd[v] = 0;
                over = 1;
            }
    } while (over);
    free(mask);
}

void canopy_simt_ref_memory(const int32_t *in, int32_t *out, int n, int rdeg, int iters,
                            int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < n; g++) {
        int32_t acc = 0;
        for (int it = 0; it < iters; it++) acc += in[rdeg > 0 ? (g + (HASH(g, it) & rdeg)) % n : g];
        out[g] = acc;
    }
}

void canopy_simt_ref_diverge(int32_t *out, int n, int d, int cost, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < n; g++) {
        int32_t x = g, b = g % d;
        for (int k = 0; k < cost; k++) x = ((x * 3) + b) & 0xffffff;
        out[g] = x;
    }
}

void canopy_simt_ref_shmem(int32_t *out, int rdeg, int iters) {
    int32_t sm[2048];
    for (int t = 0; t < 64; t++) {
        int32_t acc = 0;
        for (int it = 0; it < iters; it++) {
            int j = rdeg > 0 ? (t + 64 * (HASH(t, it) & (rdeg / 64 - 1))) & 2047 : t;
            sm[j] = t + it;
            acc += sm[j];
        }
        out[t] = acc;
    }
}

/* The same float expression, in the same order, as k_hotspot (HOTSPOT_NEXT; no
 * contraction: -std=c11); two grids in turn, the last step's in out. */
void canopy_simt_ref_hotspot(const float *temp, const float *power, int rows, int cols, int iters,
                             float *out, int threads) {
    if (rows <= 0 || cols <= 0) return;
    size_t cells = (size_t)rows * (size_t)cols;
    float *tmp = malloc(sizeof *tmp * cells);
    if (!tmp) abort();
    float *bufs[2] = {out, tmp};
    hotspot_consts k = hotspot_consts_for(rows, cols);
    memcpy(bufs[iters % 2], temp, sizeof *temp * cells);
    for (int it = 0; it < iters; it++) {
        const float *src = bufs[(iters - it) % 2];
        float *dst = bufs[(iters - it - 1) % 2];
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++) {
                size_t i = (size_t)r * cols + c;
                size_t w = c > 0 ? i - 1 : i, e = c < cols - 1 ? i + 1 : i;
                size_t n = r > 0 ? i - cols : i, s = r < rows - 1 ? i + cols : i;
                float t = src[i];
                dst[i] = HOTSPOT_NEXT(k, t, power[i], src[s], src[n], src[e], src[w]);
            }
    }
    free(tmp);
}

void canopy_simt_ref_nn(const float *rec, int n, float lat, float lng, float *dist, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < n; g++) {
        float a = rec[2 * g] - lat, b = rec[2 * g + 1] - lng;
        dist[g] = a * a + b * b;
    }
}

void canopy_simt_ref_lev(const int32_t *text, int n, int len, const int32_t *pat, int32_t *hits,
                         int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int g = 0; g < n; g++) {
        int32_t d[SIMT_LEV_M + 1], h = 0;
        for (int j = 0; j <= SIMT_LEV_M; j++) d[j] = j;
        for (int i = 0; i < len; i++) {
            int32_t c = text[(size_t)i * n + g], diag = d[0];
            for (int j = 1; j <= SIMT_LEV_M; j++) {
                int32_t up = d[j], v = up + 1 < d[j - 1] + 1 ? up + 1 : d[j - 1] + 1;
                int32_t sub = diag + (c == pat[j - 1] ? 0 : 1);
                d[j] = v < sub ? v : sub;
                diag = up;
            }
            h += d[SIMT_LEV_M] <= 1;
        }
        hits[g] = h;
    }
}

/* Rodinia's gaussian as plain loops: per step the multipliers (Fan1), then the rows
 * below the pivot less their multiple of it (Fan2), in the kernels' float expressions. */
void canopy_simt_ref_gaussian(const float *a, const float *b, int n, float *x, int threads) {
    if (n <= 0) return;
    size_t nn = (size_t)n * (size_t)n;
    float *w = malloc(sizeof *w * (nn + 2 * (size_t)n));
    if (!w) abort();
    float *wb = w + nn, *m = wb + n;
    memcpy(w, a, sizeof *w * nn);
    memcpy(wb, b, sizeof *wb * (size_t)n);
    for (int t = 0; t < n - 1; t++) {
        float piv = w[(size_t)t * n + t];
#pragma omp parallel num_threads(threads)
        {
#pragma omp for schedule(static)
            for (int i = t + 1; i < n; i++) m[i] = w[(size_t)i * n + t] / piv;
#pragma omp for schedule(static)
            for (int i = t + 1; i < n; i++) {
                float *row = w + (size_t)i * n, *prow = w + (size_t)t * n;
                for (int j = t; j < n; j++) row[j] = row[j] - m[i] * prow[j];
                wb[i] = wb[i] - m[i] * wb[t];
            }
        }
    }
    simt_gauss_back(w, wb, n, x);
    free(w);
}
