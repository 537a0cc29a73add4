/* SPDX-License-Identifier: MIT */
/* SIMT on SIMD (Wu, dissertation ch. 6): the five microbenchmarks and the Pathfinder, BFS,
 * Hotspot, NN, Levenshtein and Gaussian elimination applications as SIMT kernels
 * (src/simt/kernels.h) on 8 and 16 CPU lanes beside plain OpenMP scalar versions, or the
 * same kernel sources on the GPU. Prints markdown tables of medians (min-max) over REPS
 * runs; bench/results/simt.md records runs. Usage:
 *   canopy-bench-simt [reps] [--apps] [--threads 1,2] [--cpu-time] [--gpu] [--counts]
 * --apps: the applications only; --threads: the thread counts of the CPU rows;
 * --cpu-time: the process's CPU time (user + system) instead of wall time in the
 * application rows (for a loaded machine); --gpu: the GPU tables instead (kernel time
 * from CUDA events, the whole call with its allocations and copies, and the launches);
 * --counts (a build with -DCANOPY_SIMT_COUNT): what each application's SIMT kernels did
 * (launches, barriers, warps, vector accesses and gathers/scatters, active lanes).
 * Application runs are interleaved: each repetition runs every variant once. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime's process CPU clock */
#include "bench_util.h"
#include "simt/consts.h"
#include "simt/runtime.h"

#include "simt/gpu.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void cpu_micro(const simt_impl *const *impls, int ni) {
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
            TIME(s, canopy_simt_ref_memory(in, ref, n, rdegs[r], 10, t));
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
        TIME(s, canopy_simt_ref_diverge(ref, nd, d, 200, 1));
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
        TIME(s, canopy_simt_ref_shmem(rsm, rd, 32768));
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
    free(in);
    free(out);
    free(ref);
}

/* ----------------------------------------------------------- applications -- */
/* Pyramid shapes: on the CPU a block's warps run in turn on one thread, so large blocks
 * cost no barrier; the best of those tried on the development VM (rows of 512-8192
 * threads; tiles 64-256 wide, 16-128 tall, 2-8 steps): the more steps per launch, the
 * less the tile's loading and storing weigh. On the GPU Rodinia's (256-thread rows,
 * 16 x 16 tiles of 2 steps) and a taller pyramid. */
enum { PF_STEPS = 20, PF_CPU_BDIM = 4096, PF_GPU_BDIM = 256 };
enum { HS_CPU_TW_LOG = 7, HS_CPU_TH = 128, HS_CPU_STEPS = 8 };

enum {
    A_PF,
    A_PF_TILE,
    A_BFS,
    A_HS,
    A_HS_TILE,
    A_HS_TILE_WIDE, /* GPU only: 32 x 32 tiles of 4 steps */
    A_HS_RODINIA,   /* CPU only: Rodinia's 16 x 16 tiles of 2 steps, warps in turn */
    A_HS_TEAM,      /* CPU only: the same, each warp an OpenMP thread with barriers */
    A_NN,
    A_LEV,
    A_GAUSS_S,
    A_GAUSS_L,
    A_COUNT
};

typedef struct apps {
    int rows, cols, gn, hr, hc, hiters, nrec, ls, ll, gs[2];
    int32_t *wall, *rowptr, *col, *text, pat[SIMT_LEV_M];
    float *temp, *power, *rec, *ga[2], *gb[2];
    int32_t *iout, *iref;
    float *fout, *fref;
} apps;

static void *xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "canopy-bench-simt: out of memory\n");
        exit(1);
    }
    return p;
}

static uint64_t lcg(uint64_t *x) {
    *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
    return *x;
}

static void apps_make(apps *d) {
    uint64_t x = 12345;
    d->rows = 100, d->cols = 1 << 20;
    d->wall = xmalloc(sizeof *d->wall * (size_t)d->rows * d->cols);
    for (size_t k = 0; k < (size_t)d->rows * d->cols; k++) d->wall[k] = (int32_t)(lcg(&x) >> 60);
    d->gn = 1 << 20;
    d->rowptr = xmalloc(sizeof *d->rowptr * ((size_t)d->gn + 1));
    d->col = xmalloc(sizeof *d->col * (size_t)d->gn * 16);
    d->rowptr[0] = 0;
    for (int v = 0; v < d->gn; v++) {
        int deg = (int)(lcg(&x) >> 59) & 15;
        for (int e = 0; e < deg; e++)
            d->col[d->rowptr[v] + e] = (int32_t)((lcg(&x) >> 33) % (uint64_t)d->gn);
        d->rowptr[v + 1] = d->rowptr[v] + deg;
    }
    d->hr = 1024, d->hc = 1024, d->hiters = 20, d->nrec = 1 << 22;
    size_t cells = (size_t)d->hr * d->hc;
    d->temp = xmalloc(sizeof *d->temp * cells);
    d->power = xmalloc(sizeof *d->power * cells);
    for (size_t k = 0; k < cells; k++) {
        lcg(&x);
        d->temp[k] = 320.0f + (float)(x >> 54) / 100.0f;
        d->power[k] = (float)(x >> 40 & 1023) / 1e6f;
    }
    d->rec = xmalloc(sizeof *d->rec * 2 * (size_t)d->nrec);
    for (size_t k = 0; k < 2 * (size_t)d->nrec; k++)
        d->rec[k] = (float)(int)(lcg(&x) >> 50) / 100.0f - 80.0f;
    d->ls = 1 << 16, d->ll = 256;
    d->text = xmalloc(sizeof *d->text * (size_t)d->ls * d->ll);
    for (size_t k = 0; k < (size_t)d->ls * d->ll; k++) d->text[k] = (int32_t)(lcg(&x) >> 62);
    for (int j = 0; j < SIMT_LEV_M; j++) d->pat[j] = j % 4;
    /* The chapter's 128 unknowns, and a system large enough to be more than launches;
     * diagonally dominant, so elimination without pivoting is stable. */
    d->gs[0] = 128, d->gs[1] = 1024;
    for (int g = 0; g < 2; g++) {
        int n = d->gs[g];
        d->ga[g] = xmalloc(sizeof(float) * (size_t)n * n);
        d->gb[g] = xmalloc(sizeof(float) * (size_t)n);
        for (int i = 0; i < n; i++) {
            float sum = 1.0f;
            for (int j = 0; j < n; j++) {
                float v = (float)((int)(lcg(&x) >> 53) - 1024) / 1024.0f;
                d->ga[g][(size_t)i * n + j] = v;
                sum += v < 0 ? -v : v;
            }
            d->ga[g][(size_t)i * n + i] = sum;
            d->gb[g][i] = (float)((int)(lcg(&x) >> 53) - 1024) / 64.0f;
        }
    }
    size_t ni = (size_t)(d->cols > d->gn ? d->cols : d->gn),
           nf = cells > (size_t)d->nrec ? cells : (size_t)d->nrec;
    d->iout = xmalloc(sizeof *d->iout * ni);
    d->iref = xmalloc(sizeof *d->iref * ni);
    d->fout = xmalloc(sizeof *d->fout * nf);
    d->fref = xmalloc(sizeof *d->fref * nf);
}

static void apps_free(apps *d) {
    void *p[] = {d->wall,  d->rowptr, d->col,   d->text, d->temp, d->power, d->rec, d->ga[0],
                 d->ga[1], d->gb[0],  d->gb[1], d->iout, d->iref, d->fout,  d->fref};
    for (size_t k = 0; k < sizeof p / sizeof *p; k++) free(p[k]);
}

static const char *app_name(const apps *d, int a, int gpu) {
    static char buf[160];
    switch (a) {
    case A_PF:
        snprintf(buf, sizeof buf, "Pathfinder %d×%d, one launch per row", d->rows, d->cols);
        break;
    case A_PF_TILE:
        snprintf(buf, sizeof buf, "Pathfinder %d×%d, pyramids of %d rows, blocks of %d", d->rows,
                 d->cols, PF_STEPS, gpu ? PF_GPU_BDIM : PF_CPU_BDIM);
        break;
    case A_BFS:
        snprintf(buf, sizeof buf, "BFS %d vertices, %d edges", d->gn, d->rowptr[d->gn]);
        break;
    case A_HS:
        snprintf(buf, sizeof buf, "Hotspot %d×%d, %d steps, one launch per step", d->hr, d->hc,
                 d->hiters);
        break;
    case A_HS_TILE:
        if (gpu)
            snprintf(buf, sizeof buf, "Hotspot %d×%d, %d steps, 16×16 tiles of 2 steps", d->hr,
                     d->hc, d->hiters);
        else
            snprintf(buf, sizeof buf, "Hotspot %d×%d, %d steps, %d×%d tiles of %d steps", d->hr,
                     d->hc, d->hiters, 1 << HS_CPU_TW_LOG, HS_CPU_TH, HS_CPU_STEPS);
        break;
    case A_HS_TILE_WIDE:
        snprintf(buf, sizeof buf, "Hotspot %d×%d, %d steps, 32×32 tiles of 4 steps", d->hr, d->hc,
                 d->hiters);
        break;
    case A_HS_RODINIA:
    case A_HS_TEAM:
        snprintf(buf, sizeof buf, "Hotspot %d×%d, %d steps, 16×16 tiles of 2 steps, %s", d->hr,
                 d->hc, d->hiters,
                 a == A_HS_TEAM ? "warps as a team of threads (the chapter's)" : "warps in turn");
        break;
    case A_NN:
        snprintf(buf, sizeof buf, "NN distances, %d records", d->nrec);
        break;
    case A_LEV:
        snprintf(buf, sizeof buf, "Levenshtein ≤ 1 of 8 chars, %d streams × %d", d->ls, d->ll);
        break;
    default:
        snprintf(buf, sizeof buf, "Gaussian elimination, %d unknowns", d->gs[a - A_GAUSS_S]);
    }
    return buf;
}

/* The scalar version (im NULL) writes the reference arrays, a SIMT table the outputs. */
static int run_cpu(const apps *d, int a, const simt_impl *im, int t) {
    int32_t *io = im ? d->iout : d->iref;
    float *fo = im ? d->fout : d->fref;
    int g = a - A_GAUSS_S;
    switch (a) {
    case A_PF:
        if (!im) return canopy_simt_ref_pathfinder(d->wall, d->rows, d->cols, io, t), 0;
        return im->pathfinder(d->wall, d->rows, d->cols, io, t);
    case A_PF_TILE:
        if (!im) return canopy_simt_ref_pathfinder(d->wall, d->rows, d->cols, io, t), 0;
        return im->pathfinder_tiled(d->wall, d->rows, d->cols, PF_CPU_BDIM, PF_STEPS, 0, io, t);
    case A_BFS:
        if (!im) return canopy_simt_ref_bfs(d->rowptr, d->col, d->gn, 0, io, t), 0;
        return im->bfs(d->rowptr, d->col, d->gn, 0, io, t);
    case A_HS:
        if (!im)
            return canopy_simt_ref_hotspot(d->temp, d->power, d->hr, d->hc, d->hiters, fo, t), 0;
        return im->hotspot(d->temp, d->power, d->hr, d->hc, d->hiters, fo, t);
    case A_HS_TILE:
    case A_HS_TILE_WIDE: /* a GPU shape: on the CPU the same as A_HS_TILE */
        if (!im)
            return canopy_simt_ref_hotspot(d->temp, d->power, d->hr, d->hc, d->hiters, fo, t), 0;
        return im->hotspot_tiled(d->temp, d->power, d->hr, d->hc, d->hiters, HS_CPU_TW_LOG,
                                 HS_CPU_TH, HS_CPU_STEPS, 0, fo, t);
    case A_HS_RODINIA:
    case A_HS_TEAM:
        if (!im)
            return canopy_simt_ref_hotspot(d->temp, d->power, d->hr, d->hc, d->hiters, fo, t), 0;
        return im->hotspot_tiled(d->temp, d->power, d->hr, d->hc, d->hiters, 4, 16, 2,
                                 a == A_HS_TEAM, fo, t);
    case A_NN:
        if (!im) return canopy_simt_ref_nn(d->rec, d->nrec, 30.0f, -90.0f, fo, t), 0;
        return im->nn(d->rec, d->nrec, 30.0f, -90.0f, fo, t);
    case A_LEV:
        if (!im) return canopy_simt_ref_lev(d->text, d->ls, d->ll, d->pat, io, t), 0;
        return im->lev(d->text, d->ls, d->ll, d->pat, io, t);
    case A_GAUSS_S:
    case A_GAUSS_L:
        if (!im) return canopy_simt_ref_gaussian(d->ga[g], d->gb[g], d->gs[g], fo, t), 0;
        return im->gaussian(d->ga[g], d->gb[g], d->gs[g], fo, t);
    }
    return -1;
}

/* The same kernel sources on the GPU, into the outputs. */
static canopy_status run_gpu(const apps *d, int a, simt_gpu_timing *tm) {
    int g = a - A_GAUSS_S;
    switch (a) {
    case A_PF:
        return canopy_simt_gpu_pathfinder(d->wall, d->rows, d->cols, d->iout, tm);
    case A_PF_TILE:
        return canopy_simt_gpu_pathfinder_tiled(d->wall, d->rows, d->cols, PF_GPU_BDIM, PF_STEPS,
                                                d->iout, tm);
    case A_BFS:
        return canopy_simt_gpu_bfs(d->rowptr, d->col, d->gn, 0, d->iout, tm);
    case A_HS:
        return canopy_simt_gpu_hotspot(d->temp, d->power, d->hr, d->hc, d->hiters, d->fout, tm);
    case A_HS_TILE:
        return canopy_simt_gpu_hotspot_tiled(d->temp, d->power, d->hr, d->hc, d->hiters, 4, 16, 2,
                                             d->fout, tm);
    case A_HS_TILE_WIDE:
        return canopy_simt_gpu_hotspot_tiled(d->temp, d->power, d->hr, d->hc, d->hiters, 5, 32, 4,
                                             d->fout, tm);
    case A_NN:
        return canopy_simt_gpu_nn(d->rec, d->nrec, 30.0f, -90.0f, d->fout, tm);
    case A_LEV:
        return canopy_simt_gpu_lev(d->text, d->ls, d->ll, d->pat, d->iout, tm);
    default:
        return canopy_simt_gpu_gaussian(d->ga[g], d->gb[g], d->gs[g], d->fout, tm);
    }
}

/* Whether the outputs equal the reference arrays (the last scalar run of the same app). */
static int same(const apps *d, int a) {
    switch (a) {
    case A_PF:
    case A_PF_TILE:
        return !memcmp(d->iout, d->iref, sizeof *d->iout * (size_t)d->cols);
    case A_BFS:
        return !memcmp(d->iout, d->iref, sizeof *d->iout * (size_t)d->gn);
    case A_HS:
    case A_HS_TILE:
    case A_HS_TILE_WIDE:
    case A_HS_RODINIA:
    case A_HS_TEAM:
        return !memcmp(d->fout, d->fref, sizeof *d->fout * (size_t)d->hr * d->hc);
    case A_NN:
        return !memcmp(d->fout, d->fref, sizeof *d->fout * (size_t)d->nrec);
    case A_LEV:
        return !memcmp(d->iout, d->iref, sizeof *d->iout * (size_t)d->ls);
    default:
        return !memcmp(d->fout, d->fref, sizeof *d->fout * (size_t)d->gs[a - A_GAUSS_S]);
    }
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void cpu_apps(const apps *d, const simt_impl *const *impls, int ni, const int *threads,
                     int nt, int use_cpu_time) {
    double (*now)(void) = use_cpu_time ? cpu_seconds : omp_get_wtime;
    printf("\n## Applications (ms, %s; runs interleaved)\n\n",
           use_cpu_time ? "process CPU time" : "wall time");
    printf("| application | threads | OpenMP scalar |");
    for (int i = 0; i < ni; i++) printf(" SIMT %s |", impls[i]->isa);
    printf(" scalar / SIMT %s |\n|---|---|---|%s---|\n", impls[ni - 1]->isa,
           ni == 2 ? "---|---|" : "---|");
    for (int k = 0; k < nt; k++)
        for (int a = 0; a < A_COUNT; a++) {
            if (a == A_HS_TILE_WIDE) continue;
            double tv[3][64];
            int bad[3] = {0, 0, 0}, skip[3] = {0, 0, 0};
            /* A team of 16 or 32 warps on fewer threads would only measure the yields. */
            for (int v = 1; v <= ni; v++)
                skip[v] = a == A_HS_TEAM && threads[k] < 256 / impls[v - 1]->width;
            for (int r = 0; r < reps; r++)
                for (int v = 0; v <= ni; v++) {
                    if (skip[v]) continue;
                    double t0 = now();
                    int rc = run_cpu(d, a, v ? impls[v - 1] : NULL, threads[k]);
                    tv[v][r] = now() - t0;
                    if (v && (rc || !same(d, a))) bad[v] = 1;
                }
            printf("| %s | %d |", app_name(d, a, 0), threads[k]);
            bench_summary s[3];
            for (int v = 0; v <= ni; v++) {
                if (skip[v]) {
                    printf(" fewer threads than warps |");
                    continue;
                }
                s[v] = bench_summarise(tv[v], reps);
                cell(s[v], 1e3);
                if (bad[v]) printf(" MISMATCH |");
            }
            if (skip[ni])
                printf(" |\n");
            else
                printf(" %.2f× |\n", s[0].med / s[ni].med);
            fflush(stdout);
        }
}

/* What each application's SIMT kernels did (a build with -DCANOPY_SIMT_COUNT; one thread,
 * so the calling thread's counters see every warp). */
static int cpu_counts(const apps *d, const simt_impl *const *impls, int ni) {
#if defined(CANOPY_SIMT_COUNT)
    printf("\n## What the SIMT kernels did (one run, one thread; per application)\n\n");
    printf("| application | lanes | launches | barriers | warp runs | vector loads | gathers "
           "| vector stores | scatters | active lanes per access |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (int a = 0; a < A_COUNT; a++) {
        if (a == A_HS_TILE_WIDE || a == A_HS_TEAM) continue; /* team threads count apart */
        for (int i = 0; i < ni; i++) {
            run_cpu(d, a, NULL, 1);
            canopy_simt_counts_ = (canopy_simt_counts){0};
            int rc = run_cpu(d, a, impls[i], 1);
            canopy_simt_counts c = canopy_simt_counts_;
            unsigned long long acc = c.loads + c.gathers + c.stores + c.scatters;
            printf("| %s | %d | %llu | %llu | %llu | %llu | %llu | %llu | %llu | %.2f%s |\n",
                   app_name(d, a, 0), impls[i]->width, c.launches, c.barriers, c.warps, c.loads,
                   c.gathers, c.stores, c.scatters, acc ? (double)c.lanes / (double)acc : 0.0,
                   rc || !same(d, a) ? " MISMATCH" : "");
            fflush(stdout);
        }
    }
    return 0;
#else
    (void)d, (void)impls, (void)ni;
    fprintf(stderr, "canopy-bench-simt: --counts needs a build with -DCANOPY_SIMT_COUNT\n");
    return 1;
#endif
}

static void gpu_apps(apps *d) {
    printf("\n## Applications on the GPU (ms; the same kernel sources)\n\n");
    printf("| application | launches | kernels (CUDA events) | whole call (allocations, copies) "
           "| equal to the CPU's |\n|---|---|---|---|---|\n");
    for (int a = 0; a < A_COUNT; a++) {
        if (a == A_HS_RODINIA || a == A_HS_TEAM) continue;
        run_cpu(d, a, NULL, omp_get_max_threads());
        simt_gpu_timing tm;
        canopy_status st = run_gpu(d, a, &tm); /* warm-up, and the check */
        if (st) {
            printf("| %s | failed: %s | | | |\n", app_name(d, a, 1), canopy_last_error());
            continue;
        }
        int ok = same(d, a), launches = tm.launches;
        double tk[64], tw[64];
        for (int r = 0; r < reps && !st; r++) {
            double t0 = omp_get_wtime();
            st = run_gpu(d, a, &tm);
            tw[r] = omp_get_wtime() - t0;
            tk[r] = tm.kernel_ms * 1e-3;
            ok &= same(d, a);
        }
        printf("| %s | %d |", app_name(d, a, 1), launches);
        cell(bench_summarise(tk, reps), 1e3);
        cell(bench_summarise(tw, reps), 1e3);
        printf(" %s |\n", st ? "failed" : ok ? "yes" : "**no**");
        fflush(stdout);
    }
}

/* The microbenchmarks on the GPU, sized as the CPU tables' rows. */
static void gpu_micro(void) {
    int n = 1 << 21;
    int32_t *in = xmalloc(sizeof *in * (size_t)n), *out = xmalloc(sizeof *out * (size_t)n);
    for (int k = 0; k < n; k++) in[k] = k & 1023;
    printf("\n## Microbenchmarks on the GPU (the same kernel sources)\n\n");
    printf("| microbenchmark | parameter | unit | kernels (CUDA events) | whole call |\n");
    printf("|---|---|---|---|---|\n");
    static const int rdegs[] = {0, 63, 4095, (1 << 21) - 1}, bdims[] = {32, 64, 128, 256, 1024};
    simt_micro_cfg cfgs[32];
    const char *names[32], *units[32];
    double scale[32];
    char params[32][48];
    int nc = 0;
    cfgs[nc] = (simt_micro_cfg){SIMT_MICRO_EMPTY, 0, 0, 0, 0, 0, 1, 256, 1000};
    names[nc] = "kernel launch", units[nc] = "µs per launch", scale[nc] = 1e6 / 1000;
    snprintf(params[nc++], 48, "1000 launches of 1×256");
    for (int r = 0; r < 4; r++) {
        cfgs[nc] = (simt_micro_cfg){SIMT_MICRO_MEMORY, n, rdegs[r], 10, 0, 0, 0, 0, 0};
        names[nc] = "irregular reads, 2 M ints × 10", units[nc] = "ms", scale[nc] = 1e3;
        snprintf(params[nc++], 48, "rdeg %d", rdegs[r]);
    }
    for (int dd = 1; dd <= 16; dd *= 2) {
        cfgs[nc] = (simt_micro_cfg){SIMT_MICRO_DIVERGE, 1 << 18, 0, 0, dd, 200, 0, 0, 0};
        names[nc] = "control divergence, 256 k threads", units[nc] = "ms", scale[nc] = 1e3;
        snprintf(params[nc++], 48, "d = %d", dd);
    }
    for (int b = 0; b < 5; b++) {
        cfgs[nc] = (simt_micro_cfg){SIMT_MICRO_BARRIER, 0, 0, 2000, 0, 0, 1, bdims[b], 0};
        names[nc] = "block barrier, one block", units[nc] = "µs per barrier",
        scale[nc] = 1e6 / 2000;
        snprintf(params[nc++], 48, "%d threads", bdims[b]);
    }
    for (int rd = 0; rd <= 2048; rd = rd ? 4 * rd : 512) {
        cfgs[nc] = (simt_micro_cfg){SIMT_MICRO_SHMEM, 0, rd, 32768, 0, 0, 0, 0, 0};
        names[nc] = "shared memory, 64 threads, 32 k write+read", units[nc] = "ms", scale[nc] = 1e3;
        snprintf(params[nc++], 48, "rdeg %d", rd);
    }
    for (int c = 0; c < nc; c++) {
        simt_gpu_timing tm;
        int32_t *o =
            cfgs[c].kind == SIMT_MICRO_EMPTY || cfgs[c].kind == SIMT_MICRO_BARRIER ? NULL : out;
        canopy_status st = canopy_simt_gpu_micro(&cfgs[c], in, o, &tm);
        double tk[64], tw[64];
        for (int r = 0; r < reps && !st; r++) {
            double t0 = omp_get_wtime();
            st = canopy_simt_gpu_micro(&cfgs[c], in, o, &tm);
            tw[r] = omp_get_wtime() - t0;
            tk[r] = tm.kernel_ms * 1e-3;
        }
        printf("| %s | %s | %s |", names[c], params[c], units[c]);
        if (st) {
            printf(" failed: %s | |\n", canopy_last_error());
            continue;
        }
        cell(bench_summarise(tk, reps), scale[c]);
        cell(bench_summarise(tw, reps), scale[c]);
        printf("\n");
        fflush(stdout);
    }
    free(in);
    free(out);
}

int main(int argc, char **argv) {
    int gpu = 0, only_apps = 0, use_cpu_time = 0, counts = 0, threads[8] = {1, 2}, nt = 2;
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--gpu"))
            gpu = 1;
        else if (!strcmp(argv[k], "--apps"))
            only_apps = 1;
        else if (!strcmp(argv[k], "--cpu-time"))
            use_cpu_time = 1;
        else if (!strcmp(argv[k], "--counts"))
            counts = 1;
        else if (!strcmp(argv[k], "--threads") && k + 1 < argc) {
            nt = 0;
            for (char *p = argv[++k]; *p && nt < 8;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p || v < 1 || v > 4096) {
                    fprintf(stderr, "canopy-bench-simt: --threads wants a list like 1,2\n");
                    return 1;
                }
                threads[nt++] = (int)v;
                p = *end == ',' ? end + 1 : end;
            }
        } else {
            char *end;
            long v = strtol(argv[k], &end, 10);
            if (*end || v < 1 || v > 64) {
                fprintf(stderr,
                        "canopy-bench-simt: unknown argument %s (usage: canopy-bench-simt "
                        "[reps 1..64] [--apps] [--threads 1,2] [--cpu-time] [--gpu] [--counts])\n",
                        argv[k]);
                return 1;
            }
            reps = (int)v;
        }
    }
    apps d;
    if (gpu) {
        char name[256];
        size_t mem = 0;
        if (canopy_gpu_info(name, sizeof name, &mem)) {
            fprintf(stderr, "canopy-bench-simt: no GPU: %s\n", canopy_last_error());
            return 1;
        }
        printf("GPU: %s; %d repetitions after a warm-up; medians (min–max)\n", name, reps);
        gpu_micro();
        apps_make(&d);
        gpu_apps(&d);
        apps_free(&d);
        return 0;
    }
    const simt_impl *impls[2] = {canopy_simt_impl_for(8), canopy_simt_impl_for(16)};
    int ni = impls[1] ? 2 : 1;
    if (counts) {
        apps_make(&d);
        int rc = cpu_counts(&d, impls, ni);
        apps_free(&d);
        return rc;
    }
    if (!only_apps) cpu_micro(impls, ni);
    apps_make(&d);
    cpu_apps(&d, impls, ni, threads, nt, use_cpu_time);
    apps_free(&d);
    return 0;
}
