/* SPDX-License-Identifier: MIT */
/* SIMT on SIMD (Wu, dissertation ch. 6) on this CPU: the five microbenchmarks and the
 * Pathfinder, BFS, Hotspot, NN and Levenshtein applications as SIMT kernels (src/simt/kernels.h) on
 * 8 and 16 lanes, beside plain OpenMP scalar versions, on 1 and 2 threads. Prints markdown tables
 * of medians (min-max) over REPS runs; bench/results/simt.md records a run. Usage:
 * canopy-bench-simt [reps] */
#include "bench_util.h"
#include "simt/consts.h"
#include "simt/runtime.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reps = 5;

#define TIME(out, stmt)                                                                            \
    do {                                                                                           \
        double t_[64];                                                                             \
        for (int r_ = 0; r_ < reps; r_++) {                                                        \
            double t0_ = omp_get_wtime();                                                          \
            stmt;                                                                                  \
            t_[r_] = omp_get_wtime() - t0_;                                                        \
        }                                                                                          \
        out = bench_summarise(t_, reps);                                                           \
    } while (0)

static void cell(bench_summary s, double scale) {
    printf(" %.3g (%.3g–%.3g) |", s.med * scale, s.min * scale, s.max * scale);
}

static int32_t *iarray(size_t n) {
    int32_t *v = malloc(sizeof *v * (n ? n : 1));
    if (!v) {
        fprintf(stderr, "canopy-bench-simt: out of memory\n");
        exit(1);
    }
    return v;
}

static void omp_empty(int threads, int launches) {
    for (int k = 0; k < launches; k++) {
#pragma omp parallel num_threads(threads)
        {
            volatile int x = 0;
            (void)x;
        }
    }
}
static void omp_barriers(int threads, int iters) {
#pragma omp parallel num_threads(threads)
    for (int k = 0; k < iters; k++) {
#pragma omp barrier
    }
}

int main(int argc, char **argv) {
    if (argc > 1) reps = atoi(argv[1]);
    if (reps < 1 || reps > 64) {
        fprintf(stderr, "canopy-bench-simt: reps must be 1..64\n");
        return 1;
    }
    const simt_impl *impls[2] = {simt_impl_for(8), simt_impl_for(16)};
    int ni = impls[1] ? 2 : 1;
    bench_summary s;

    printf("## Kernel launch (µs per launch of an empty kernel, 1000 launches)\n\n");
    printf("| threads | OpenMP region |");
    for (int i = 0; i < ni; i++) printf(" SIMT %s |", impls[i]->isa);
    printf("\n|---|---|%s\n", ni == 2 ? "---|---|" : "---|");
    for (int t = 1; t <= 2; t++) {
        printf("| %d |", t);
        TIME(s, omp_empty(t, 1000));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, for (int k = 0; k < 1000; k++) impls[i]->empty(t, 8 * impls[i]->width, t));
            cell(s, 1e3);
        }
        printf("\n");
    }

    int n = 1 << 21;
    int32_t *in = iarray((size_t)n), *out = iarray((size_t)n), *ref = iarray((size_t)n);
    for (int k = 0; k < n; k++) in[k] = k & 1023;
    printf(
        "\n## Irregular memory reads (ms; 2 M ints, 10 reads each, index g + rand(0..rdeg))\n\n");
    printf("| rdeg | threads | OpenMP scalar |");
    for (int i = 0; i < ni; i++) printf(" SIMT %s |", impls[i]->isa);
    printf("\n|---|---|---|%s\n", ni == 2 ? "---|---|" : "---|");
    static const int rdegs[] = {0, 63, 4095, (1 << 21) - 1};
    for (int r = 0; r < 4; r++)
        for (int t = 1; t <= 2; t++) {
            printf("| %d | %d |", rdegs[r], t);
            TIME(s, simt_ref_memory(in, ref, n, rdegs[r], 10, t));
            cell(s, 1e3);
            for (int i = 0; i < ni; i++) {
                TIME(s, impls[i]->memory(in, out, n, rdegs[r], 10, t));
                cell(s, 1e3);
                if (memcmp(out, ref, sizeof *out * (size_t)n)) printf(" MISMATCH |");
            }
            printf("\n");
        }

    int nd = 1 << 18;
    printf("\n## Control divergence (ms; 256 k threads, d branches of 200 steps, 1 thread)\n\n");
    printf("| d | OpenMP scalar |");
    for (int i = 0; i < ni; i++) printf(" SIMT %s |", impls[i]->isa);
    printf("\n|---|---|%s\n", ni == 2 ? "---|---|" : "---|");
    for (int d = 1; d <= 16; d *= 2) {
        printf("| %d |", d);
        TIME(s, simt_ref_diverge(ref, nd, d, 200, 1));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->diverge(out, nd, d, 200, 1));
            cell(s, 1e3);
            if (memcmp(out, ref, sizeof *out * (size_t)nd)) printf(" MISMATCH |");
        }
        printf("\n");
    }

    printf("\n## Block barrier (µs per barrier, 2000 in a row, one block)\n\n");
    printf("| block threads | lanes | warps = OpenMP threads | OpenMP barrier | SIMT_SYNC |\n");
    printf("|---|---|---|---|---|\n");
    for (int i = 0; i < ni; i++)
        for (int warps = 1; warps <= 8; warps *= 2) {
            int w = impls[i]->width;
            printf("| %d | %d | %d |", warps * w, w, warps);
            TIME(s, omp_barriers(warps, 2000));
            cell(s, 1e6 / 2000);
            TIME(s, impls[i]->barrier(warps * w, 2000));
            cell(s, 1e6 / 2000);
            printf("\n");
        }

    printf("\n## Shared memory (ms; one block of 64 threads, 32 k write+read of a 2048-int "
           "array)\n\n");
    printf("| rdeg | scalar | SIMT, loop over warps (1 thread) |");
    for (int i = 0; i < ni; i++) printf(" SIMT %s, team |", impls[i]->isa);
    printf("\n|---|---|%s\n", ni == 2 ? "---|---|---|" : "---|---|");
    for (int rd = 0; rd <= 2048; rd = rd ? 4 * rd : 512) {
        int32_t sm[64], rsm[64];
        printf("| %d |", rd);
        TIME(s, simt_ref_shmem(rsm, rd, 32768));
        cell(s, 1e3);
        TIME(s, impls[ni - 1]->shmem(sm, rd, 32768, 0));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->shmem(sm, rd, 32768, 1));
            cell(s, 1e3);
            if (memcmp(sm, rsm, sizeof sm)) printf(" MISMATCH |");
        }
        printf("\n");
    }

    int rows = 100, cols = 1 << 20;
    int32_t *wall = iarray((size_t)rows * cols);
    uint64_t x = 12345;
    for (size_t k = 0; k < (size_t)rows * cols; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        wall[k] = (int32_t)(x >> 60);
    }
    int gn = 1 << 20, deg = 8;
    int32_t *rowptr = iarray((size_t)gn + 1), *col = iarray((size_t)gn * deg * 2);
    rowptr[0] = 0;
    for (int v = 0; v < gn; v++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        int d = (int)(x >> 59) & 15;
        for (int e = 0; e < d; e++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            col[rowptr[v] + e] = (int32_t)((x >> 33) % (uint64_t)gn);
        }
        rowptr[v + 1] = rowptr[v] + d;
    }
    int hr = 1024, hc = 1024, nrec = 1 << 22;
    float *temp = malloc(sizeof *temp * (size_t)hr * hc),
          *power = malloc(sizeof *power * (size_t)hr * hc);
    float *fout = malloc(sizeof *fout * (size_t)nrec), *fref = malloc(sizeof *fref * (size_t)nrec);
    float *rec = malloc(sizeof *rec * 2 * (size_t)nrec);
    if (!temp || !power || !fout || !fref || !rec) {
        fprintf(stderr, "canopy-bench-simt: out of memory\n");
        return 1;
    }
    for (size_t k = 0; k < (size_t)hr * hc; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        temp[k] = 320.0f + (float)(x >> 54) / 100.0f;
        power[k] = (float)(x >> 40 & 1023) / 1e6f;
    }
    for (size_t k = 0; k < 2 * (size_t)nrec; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        rec[k] = (float)(int)(x >> 50) / 100.0f - 80.0f;
    }
    int ls = 1 << 16, ll = 256;
    int32_t *text = iarray((size_t)ls * ll), pat[SIMT_LEV_M];
    for (size_t k = 0; k < (size_t)ls * ll; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        text[k] = (int32_t)(x >> 62);
    }
    for (int j = 0; j < SIMT_LEV_M; j++) pat[j] = j % 4;
    printf("\n## Applications (ms)\n\n");
    printf("| application | threads | OpenMP scalar |");
    for (int i = 0; i < ni; i++) printf(" SIMT %s |", impls[i]->isa);
    printf("\n|---|---|---|%s\n", ni == 2 ? "---|---|" : "---|");
    for (int t = 1; t <= 2; t++) {
        printf("| Pathfinder %d×%d | %d |", rows, cols, t);
        TIME(s, simt_ref_pathfinder(wall, rows, cols, ref, t));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->pathfinder(wall, rows, cols, out, t));
            cell(s, 1e3);
            if (memcmp(out, ref, sizeof *out * (size_t)cols)) printf(" MISMATCH |");
        }
        printf("\n| BFS 1 M vertices, 7.5 M edges | %d |", t);
        TIME(s, simt_ref_bfs(rowptr, col, gn, 0, ref, t));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->bfs(rowptr, col, gn, 0, out, t));
            cell(s, 1e3);
            if (memcmp(out, ref, sizeof *out * (size_t)gn)) printf(" MISMATCH |");
        }
        printf("\n| Hotspot %d×%d, 20 steps | %d |", hr, hc, t);
        TIME(s, simt_ref_hotspot(temp, power, hr, hc, 20, fref, t));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->hotspot(temp, power, hr, hc, 20, fout, t));
            cell(s, 1e3);
            if (memcmp(fout, fref, sizeof *fout * (size_t)hr * hc)) printf(" MISMATCH |");
        }
        printf("\n| NN distances, 4 M records | %d |", t);
        TIME(s, simt_ref_nn(rec, nrec, 30.0f, -90.0f, fref, t));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->nn(rec, nrec, 30.0f, -90.0f, fout, t));
            cell(s, 1e3);
            if (memcmp(fout, fref, sizeof *fout * (size_t)nrec)) printf(" MISMATCH |");
        }
        printf("\n| Levenshtein ≤ 1 of 8 chars, 64 k streams × 256 | %d |", t);
        TIME(s, simt_ref_lev(text, ls, ll, pat, ref, t));
        cell(s, 1e3);
        for (int i = 0; i < ni; i++) {
            TIME(s, impls[i]->lev(text, ls, ll, pat, out, t));
            cell(s, 1e3);
            if (memcmp(out, ref, sizeof *out * (size_t)ls)) printf(" MISMATCH |");
        }
        printf("\n");
    }
    free(text);
    free(temp);
    free(power);
    free(fout);
    free(fref);
    free(rec);
    free(in);
    free(out);
    free(ref);
    free(wall);
    free(rowptr);
    free(col);
    return 0;
}
