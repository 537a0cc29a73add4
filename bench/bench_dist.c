// SPDX-License-Identifier: MIT
/* Distributed kNN timings (run under mpirun; bench/run_dist.sh runs R = 1, 2, 4):
 * uniform reference and query points, the reference points moved to Hilbert pieces
 * (canopy_dist_decompose + exchange), queries in rank blocks, then canopy_dist_knn
 * timed over repeats (the slowest rank's time per repeat); with "self" as the 6th
 * argument the self form instead (each rank's points query the whole set: no query
 * leaves its home). On one rank the plain canopy_knn of the same data runs as the peer. Prints one
 * markdown row per line: per-rank bytes sent for the query phase and for placing the points.
 * A 7th argument names the backend of every rank's index (cpu, gpu: one GPU per rank,
 * local rank % visible devices; auto), with one untimed warm-up call first when not cpu;
 * an 8th, a file where rank 0 writes every query's k neighbour indices (int64, query
 * order) for comparing runs (bench/run_dist_2gpu.sh).
 * usage: bench_dist [N NQ D K REPS [self|- [BACKEND [ROWS_FILE]]]] */
#include "bench_util.h"
#include "canopy/dist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t n = argc > 1 ? atoll(argv[1]) : 200000, nq = argc > 2 ? atoll(argv[2]) : 200000;
    int32_t d = argc > 3 ? atoi(argv[3]) : 3, k = argc > 4 ? atoi(argv[4]) : 8;
    int reps = argc > 5 ? atoi(argv[5]) : 5;
    int self = argc > 6 && strcmp(argv[6], "self") == 0;
    canopy_run_options ro = canopy_run_options_default();
    const canopy_run_options *opt = NULL;
    if (argc > 7) {
        if (canopy_backend_parse(argv[7], &ro.backend)) {
            if (rank == 0) fprintf(stderr, "bench_dist: %s\n", canopy_last_error());
            MPI_Finalize();
            return 2;
        }
        opt = &ro;
    }
    const char *rows_file = argc > 8 ? argv[8] : NULL;
    if (n < 1 || nq < 1 || d < 1 || k < 1 || reps < 1) {
        if (rank == 0) fprintf(stderr, "usage: bench_dist [N NQ D K REPS [self]]\n");
        MPI_Finalize();
        return 2;
    }
    /* every rank generates its block of the one data set (same seed, same streams) */
    float *all = malloc(sizeof *all * (size_t)((n + nq) * d));
    canopy_gen_uniform(all, n + nq, d, 0.0, 1.0, 7);
    int64_t lo = n * rank / size, hi = n * (rank + 1) / size;
    int64_t qlo = nq * rank / size, qhi = nq * (rank + 1) / size;
    canopy_points blk = canopy_points_make(all + lo * d, hi - lo, d);
    int32_t *dest = malloc(sizeof *dest * (size_t)(hi - lo + 1));
    canopy_dist_stats place = {0};
    float *pts = NULL;
    int64_t nl = 0;
    if (canopy_dist_decompose(MPI_COMM_WORLD, blk, NULL, CANOPY_CURVE_HILBERT, dest) ||
        canopy_dist_exchange(MPI_COMM_WORLD, blk.data, blk.n, sizeof(float) * (size_t)d, dest,
                             (void **)&pts, &nl, &place)) {
        fprintf(stderr, "bench_dist: %s\n", canopy_last_error());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* With a rows file the rows name the points by their index in the one data set
     * (moved along with them), so runs on any rank count compare. */
    int64_t *gid = NULL, *ids = NULL, n_ids = 0;
    if (rows_file) {
        gid = malloc(sizeof *gid * (size_t)(hi - lo + 1));
        for (int64_t i = lo; i < hi; i++) gid[i - lo] = i;
        if (canopy_dist_exchange(MPI_COMM_WORLD, gid, hi - lo, sizeof *gid, dest, (void **)&ids,
                                 &n_ids, NULL)) {
            fprintf(stderr, "bench_dist: %s\n", canopy_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    canopy_points ref = canopy_points_make(pts, nl, d);
    canopy_points q = canopy_points_make(all + (n + qlo) * d, qhi - qlo, d);
    canopy_points none = {NULL, 0, d, d};
    int64_t rows = self ? (nl > q.n ? nl : q.n) : q.n;
    int64_t *idx = malloc(sizeof *idx * (size_t)(rows * k + 1));
    float *d2 = malloc(sizeof *d2 * (size_t)(rows * k + 1));
    double *t = malloc(sizeof *t * (size_t)reps), *tp = malloc(sizeof *tp * (size_t)reps);
    canopy_dist_stats st = {0};
    for (int r = opt && ro.backend != CANOPY_BACKEND_CPU ? -1 : 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = canopy_now();
        /* ref ids NULL: the slices in rank order (the rows' ids are not used then) */
        if (canopy_dist_knn(MPI_COMM_WORLD, ref, ids, self ? none : q, k, opt, idx, d2, &st)) {
            fprintf(stderr, "bench_dist: %s\n", canopy_last_error());
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        double mine = canopy_now() - t0, worst = 0.0;
        MPI_Allreduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0) t[r] = worst;
    }
    if (rows_file && !self) { /* the rows of all queries, in query order, on rank 0 */
        int *cnt = malloc(sizeof *cnt * (size_t)size), *dsp = malloc(sizeof *dsp * (size_t)size);
        int my = (int)(q.n * k);
        MPI_Gather(&my, 1, MPI_INT, cnt, 1, MPI_INT, 0, MPI_COMM_WORLD);
        for (int r = 0, off = 0; rank == 0 && r < size; r++) {
            dsp[r] = off;
            off += cnt[r];
        }
        int64_t *rows_all = rank == 0 ? malloc(sizeof *rows_all * (size_t)(nq * k)) : NULL;
        MPI_Gatherv(idx, my, MPI_INT64_T, rows_all, cnt, dsp, MPI_INT64_T, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            FILE *f = fopen(rows_file, "wb");
            if (!f || fwrite(rows_all, sizeof *rows_all, (size_t)(nq * k), f) != (size_t)(nq * k)) {
                fprintf(stderr, "bench_dist: cannot write %s\n", rows_file);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            fclose(f);
        }
        free(rows_all);
        free(cnt);
        free(dsp);
    }
    bench_summary s = bench_summarise(t, reps);
    /* per-rank traffic of the last repeat */
    int64_t mineb[4] = {st.bytes_sent, st.remote_queries, place.bytes_sent, nl};
    int64_t *allb = malloc(sizeof *allb * 4 * (size_t)size);
    MPI_Gather(mineb, 4, MPI_INT64_T, allb, 4, MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t dev = st.device, *devs = malloc(sizeof *devs * (size_t)size);
    MPI_Gather(&dev, 1, MPI_INT64_T, devs, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    double minet[2] = {st.local_seconds, st.comm_seconds};
    double *allt = malloc(sizeof *allt * 2 * (size_t)size);
    MPI_Gather(minet, 2, MPI_DOUBLE, allt, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("| canopy_dist_knn%s | %d | %d | %.3f | %.3f–%.3f |", self ? " (self)" : "", size,
               canopy_threads(), s.med, s.min, s.max);
        for (int r = 0; r < size; r++) {
            char dev[32] = "cpu";
            if (devs[r] >= 0) snprintf(dev, sizeof dev, "GPU %lld", (long long)devs[r]);
            printf(" r%d (%s): %lld pts, %.2f MB, %lld remote q, place %.2f MB, local %.2f s, "
                   "comm %.2f s;",
                   r, dev, (long long)allb[4 * r + 3], (double)allb[4 * r] / 1e6,
                   (long long)allb[4 * r + 1], (double)allb[4 * r + 2] / 1e6, allt[2 * r],
                   allt[2 * r + 1]);
        }
        printf(" |\n");
    }
    if (size == 1) {
        /* the peer: one process, no MPI in the call */
        canopy_points full = canopy_points_make(all, n, d);
        for (int r = 0; r < reps; r++) {
            double t0 = canopy_now();
            canopy_knn(full, self ? none : q, k, opt, idx, d2, NULL);
            tp[r] = canopy_now() - t0;
        }
        s = bench_summarise(tp, reps);
        printf("| canopy_knn%s (peer) | 1 | %d | %.3f | %.3f–%.3f | no communication |\n",
               self ? " (self)" : "", canopy_threads(), s.med, s.min, s.max);
    }
    free(all);
    free(dest);
    free(idx);
    free(d2);
    free(t);
    free(tp);
    free(allb);
    free(allt);
    free(devs);
    free(gid);
    canopy_free(ids);
    canopy_free(pts);
    MPI_Finalize();
    return 0;
}
