/* SPDX-License-Identifier: MIT */
/* Issue 30's GPU rows: whole calls through the public C API, as a CUDA or library user
 * makes them, from host arrays and from device pointers.
 *   index builds   canopy_index_build (residency device) from host points against the
 *                  pinned copy of the points + the build's own time (info.build_seconds),
 *                  and canopy_index_build_device from device pointers
 *   kNN k = 8, NN  canopy_index_knn_device (queries and results on the device, index
 *                  built from device pointers; timed without stats, and auto once more
 *                  with them), canopy_index_knn_self_device (2-D: the index's points as
 *                  queries, in tree order, in their rows and in tree order in lockstep,
 *                  dr_l; results checked against the points passed as queries) and canopy_knn from
 * host arrays (one call: build + query + copies) gravity        canopy_gravity_multipole, backend
 * gpu, from host arrays (wall against its stats: build + moments, walk, transfers; median error on
 * a sample) and canopy_gravity_multipole_device from device pointers Data: clust2 (200k + 200k 2-D,
 * 64 clusters), cities (135k 2-D, self-query: the points as queries), rand7 (200k + 200k uniform
 * 7-D), plummer1m. Medians with min-max over REPS runs after WARM warm-ups; the 2-D device-pointer
 * kNN rows also in each query order (schedules none and tree) beside auto's pick. Usage:
 * canopy-bench-edges-gpu [reps] [knn | knn2d | order | builds] (markdown; knn: the device-pointer
 * kNN rows alone, those bench/run_peer_cudakdtree.sh sets beside cudaKDTree; knn2d: the 2-D ones
 * alone; order: the kd bucket order's forms side by side on clust2 and on the cities points as
 * queries, in the generator's rows and shuffled; builds: the index build rows alone). */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "canopy.h"
#include "core/device.h"
#include "gravity/gpu_multipole.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARM = 3 };

static void die(const char *what) {
    fprintf(stderr, "canopy-bench-edges-gpu: %s: %s\n", what, canopy_last_error());
    exit(1);
}

static void cuda_ok(int e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "canopy-bench-edges-gpu: %s failed\n", what);
        exit(1);
    }
}

static bench_summary row(const char *data, const char *what, double *v, int reps,
                         const char *note) {
    bench_summary s = bench_summarise(v, reps);
    printf("| %s | %s | %.3f | %.3f–%.3f | %s |\n", data, what, s.med * 1e3, s.min * 1e3,
           s.max * 1e3, note);
    return s;
}

typedef struct dataset {
    const char *name;
    float *ref, *qry; /* qry NULL: the reference points are the queries */
    int64_t n, nq;
    int32_t d;
} dataset;

static void builds(const dataset *D, int reps) {
    size_t bytes = sizeof(float) * (size_t)(D->n * D->d);
    double *v = malloc(sizeof(double) * (size_t)reps), *bs = malloc(sizeof(double) * (size_t)reps);
    float *pinned = NULL, *dp = NULL;
    cuda_ok(cudaMallocHost((void **)&pinned, bytes), "cudaMallocHost");
    cuda_ok(cudaMalloc((void **)&dp, bytes), "cudaMalloc");
    memcpy(pinned, D->ref, bytes);
    for (int r = 0; r < WARM + reps; r++) {
        double t0 = canopy_now();
        cuda_ok(cudaMemcpy(dp, pinned, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
        if (r >= WARM) v[r - WARM] = canopy_now() - t0;
    }
    bench_summary pin = row(D->name, "pinned copy of the points", v, reps, "");
    canopy_points P = canopy_points_make(D->ref, D->n, D->d);
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.residency = CANOPY_RESIDENCY_DEVICE;
    for (int r = 0; r < WARM + reps; r++) {
        canopy_index *ix = NULL;
        double t0 = canopy_now();
        if (canopy_index_build(P, &io, &ix)) die("index build");
        double t = canopy_now() - t0;
        canopy_index_info info;
        if (canopy_index_get_info(ix, &info)) die("index info");
        canopy_index_free(ix);
        if (r >= WARM) v[r - WARM] = t, bs[r - WARM] = info.build_seconds;
    }
    bench_summary b = bench_summarise(bs, reps);
    char note[160];
    bench_summary w = bench_summarise(v, reps);
    snprintf(note, sizeof note,
             "build stat %.3f ms; wall / (pinned copy + build) %.2f (goal <= 1.3)", b.med * 1e3,
             w.med / (pin.med + b.med));
    printf("| %s | canopy_index_build, host points | %.3f | %.3f–%.3f | %s |\n", D->name,
           w.med * 1e3, w.min * 1e3, w.max * 1e3, note);
    canopy_points DP = canopy_points_make(dp, D->n, D->d);
    for (int r = 0; r < WARM + reps; r++) {
        canopy_index *ix = NULL;
        double t0 = canopy_now();
        if (canopy_index_build_device(DP, &io, NULL, &ix)) die("index build (device)");
        double t = canopy_now() - t0;
        canopy_index_free(ix);
        if (r >= WARM) v[r - WARM] = t;
    }
    row(D->name, "canopy_index_build_device, device points", v, reps, "");
    cudaFreeHost(pinned);
    cudaFree(dp);
    free(v), free(bs);
}

/* Times reps calls of one device-pointer kNN form (stats NULL: what a caller that wants
 * no statistics pays), then makes one more call with stats for the note. self: the
 * index's points through canopy_index_knn_self_device, else the queries dq. */
static void knn_device_row(const dataset *D, canopy_index *ix, const float *dq, int64_t nq,
                           int32_t k, int self, canopy_schedule sched, canopy_variant var,
                           int with_stats, int reps, double *v, int64_t *di, float *dd,
                           const char *what) {
    canopy_run_options so = canopy_run_options_default();
    so.schedule = sched;
    so.variant = var;
    canopy_stats st;
    canopy_stats *sp = with_stats ? &st : NULL;
    for (int r = 0; r < WARM + reps + 1; r++) {
        if (r == WARM + reps) sp = &st; /* the note's call, untimed */
        double t0 = canopy_now();
        canopy_status s = self ? canopy_index_knn_self_device(ix, k, 0, &so, di, dd, NULL, sp)
                               : canopy_index_knn_device(ix, dq, nq, k, &so, di, dd, NULL, sp);
        if (s) die("knn device");
        if (r >= WARM && r < WARM + reps) v[r - WARM] = canopy_now() - t0;
    }
    char note[200];
    snprintf(note, sizeof note, "%s/%s; sort %.3f ms, walk %.3f ms (a call with stats)%s",
             canopy_variant_name(st.variant), canopy_schedule_name(st.schedule),
             st.schedule_seconds * 1e3, st.traverse_seconds * 1e3,
             with_stats ? "; timed with stats" : "; timed without stats");
    row(D->name, what, v, reps, note);
}

/* 1 when the device results of n rows of k equal the host copies (hi, hd). */
static int same_rows(const int64_t *di, const float *dd, const int64_t *hi, const float *hd,
                     int64_t cells) {
    int64_t *ci = malloc(sizeof(int64_t) * (size_t)cells);
    float *cd = malloc(sizeof(float) * (size_t)cells);
    cuda_ok(cudaMemcpy(ci, di, sizeof(int64_t) * (size_t)cells, cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    cuda_ok(cudaMemcpy(cd, dd, sizeof(float) * (size_t)cells, cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    int same = memcmp(ci, hi, sizeof(int64_t) * (size_t)cells) == 0 &&
               memcmp(cd, hd, sizeof(float) * (size_t)cells) == 0;
    free(ci), free(cd);
    return same;
}

static void knn(const dataset *D, int32_t k, int reps, int only_device) {
    int64_t nq = D->qry ? D->nq : D->n;
    const float *q = D->qry ? D->qry : D->ref;
    double *v = malloc(sizeof(double) * (size_t)reps);
    float *dp = NULL, *dq = NULL, *dd = NULL;
    int64_t *di = NULL;
    int64_t cells = (D->n > nq ? D->n : nq) * k;
    size_t rb = sizeof(float) * (size_t)(D->n * D->d), qb = sizeof(float) * (size_t)(nq * D->d);
    cuda_ok(cudaMalloc((void **)&dp, rb), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&dq, qb), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)cells), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&dd, sizeof(float) * (size_t)cells), "cudaMalloc");
    cuda_ok(cudaMemcpy(dp, D->ref, rb, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_ok(cudaMemcpy(dq, q, qb, cudaMemcpyHostToDevice), "cudaMemcpy");
    canopy_index *ix = NULL;
    if (canopy_index_build_device(canopy_points_make(dp, D->n, D->d), NULL, NULL, &ix))
        die("index build (device)");
    char what[128];
    /* auto, then (2-D) each order auto may pick, so a row shows what auto left aside */
    static const canopy_schedule scheds[] = {CANOPY_SCHEDULE_AUTO, CANOPY_SCHEDULE_NONE,
                                             CANOPY_SCHEDULE_TREE};
    for (int si = 0; si < (D->d <= 3 ? 3 : 1); si++) {
        snprintf(what, sizeof what, "k=%d, device pointers, resident index%s%s", (int)k,
                 si ? ", schedule " : "", si ? canopy_schedule_name(scheds[si]) : "");
        knn_device_row(D, ix, dq, nq, k, 0, scheds[si], CANOPY_VARIANT_AUTO, 0, reps, v, di, dd,
                       what);
    }
    snprintf(what, sizeof what, "k=%d, device pointers, resident index, stats wanted", (int)k);
    knn_device_row(D, ix, dq, nq, k, 0, CANOPY_SCHEDULE_AUTO, CANOPY_VARIANT_AUTO, 1, reps, v, di,
                   dd, what);
    /* Self-queries (2-D): the index's own points, in tree order (auto) or in their rows
     * (none); their results checked against the queries-as-given call on the same points */
    if (D->d <= 3) {
        const int64_t sc = D->n * k;
        int64_t *hi = malloc(sizeof(int64_t) * (size_t)sc);
        float *hd = malloc(sizeof(float) * (size_t)sc);
        if (canopy_index_knn_device(ix, dp, D->n, k, NULL, di, dd, NULL, NULL))
            die("knn device (the points as queries)");
        cuda_ok(cudaMemcpy(hi, di, sizeof(int64_t) * (size_t)sc, cudaMemcpyDeviceToHost),
                "cudaMemcpy");
        cuda_ok(cudaMemcpy(hd, dd, sizeof(float) * (size_t)sc, cudaMemcpyDeviceToHost),
                "cudaMemcpy");
        /* tree order, in the rows, and tree order in lockstep (dr_l: a warp's lanes
         * share a bucket there) */
        static const canopy_schedule self_scheds[] = {CANOPY_SCHEDULE_AUTO, CANOPY_SCHEDULE_NONE,
                                                      CANOPY_SCHEDULE_AUTO};
        static const canopy_variant self_vars[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_AUTO,
                                                   CANOPY_VARIANT_DR_L};
        for (int si = 0; si < 3; si++) {
            snprintf(what, sizeof what, "k=%d, canopy_index_knn_self_device (%lld points)%s%s%s",
                     (int)k, (long long)D->n, si == 1 ? ", schedule " : ", tree order",
                     si == 1 ? canopy_schedule_name(self_scheds[si]) : "",
                     si == 2 ? ", variant dr_l" : "");
            knn_device_row(D, ix, NULL, 0, k, 1, self_scheds[si], self_vars[si], 0, reps, v, di, dd,
                           what);
            if (!same_rows(di, dd, hi, hd, sc))
                die("self-query results differ from the points as queries");
        }
        snprintf(what, sizeof what, "k=%d, canopy_index_knn_self_device, tree order, stats wanted",
                 (int)k);
        knn_device_row(D, ix, NULL, 0, k, 1, CANOPY_SCHEDULE_AUTO, CANOPY_VARIANT_AUTO, 1, reps, v,
                       di, dd, what);
        free(hi), free(hd);
    }
    canopy_index_free(ix);
    if (only_device) {
        free(v);
        cudaFree(dp), cudaFree(dq), cudaFree(di), cudaFree(dd);
        return;
    }
    canopy_stats st;
    char note[200];
    int64_t *hi = malloc(sizeof(int64_t) * (size_t)(nq * k));
    float *hd = malloc(sizeof(float) * (size_t)(nq * k));
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    canopy_points R = canopy_points_make(D->ref, D->n, D->d), Q = canopy_points_make(q, nq, D->d);
    for (int r = 0; r < WARM + reps; r++) {
        double t0 = canopy_now();
        if (canopy_knn(R, Q, k, &o, hi, hd, &st)) die("canopy_knn");
        if (r >= WARM) v[r - WARM] = canopy_now() - t0;
    }
    snprintf(what, sizeof what, "k=%d, canopy_knn from host arrays (build + query)", (int)k);
    snprintf(note, sizeof note, "build %.3f, transfers %.3f, walk %.3f ms (last run)",
             st.build_seconds * 1e3, st.transfer_seconds * 1e3, st.traverse_seconds * 1e3);
    row(D->name, what, v, reps, note);
    free(hi), free(hd), free(v);
    cudaFree(dp), cudaFree(dq), cudaFree(di), cudaFree(dd);
}

/* The kd bucket order in each of its forms (CANOPY_GPU_ORDER fused, shared and two, read when
 * an index makes its order tables at its first grouped query): the order's device time
 * (CUDA events around it, calls with stats) and the wall of kNN k = 8 and NN calls
 * grouped by it (stats NULL), the forms alternated call by call on an index each of
 * the same points; their kNN k = 8 rows must be equal. */
static void order_rows(const dataset *D, int reps) {
    enum { FORMS = 3 };
    static const char *forms[FORMS] = {"fused", "shared", "two"};
    const int64_t nq = D->qry ? D->nq : D->n;
    const float *q = D->qry ? D->qry : D->ref;
    size_t rb = sizeof(float) * (size_t)(D->n * D->d), qb = sizeof(float) * (size_t)(nq * D->d);
    float *dp = NULL, *dq = NULL, *dd = NULL;
    int64_t *di = NULL;
    cuda_ok(cudaMalloc((void **)&dp, rb), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&dq, qb), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)(nq * 8)), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&dd, sizeof(float) * (size_t)(nq * 8)), "cudaMalloc");
    cuda_ok(cudaMemcpy(dp, D->ref, rb, cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_ok(cudaMemcpy(dq, q, qb, cudaMemcpyHostToDevice), "cudaMemcpy");
    canopy_run_options so = canopy_run_options_default();
    so.schedule = CANOPY_SCHEDULE_TREE;
    canopy_index *ix[FORMS];
    for (int f = 0; f < FORMS; f++) {
        setenv("CANOPY_GPU_ORDER", forms[f], 1);
        if (canopy_index_build_device(canopy_points_make(dp, D->n, D->d), NULL, NULL, &ix[f]) ||
            canopy_index_knn_device(ix[f], dq, nq, 1, &so, di, dd, NULL, NULL))
            die("order index");
    }
    unsetenv("CANOPY_GPU_ORDER");
    double *v[FORMS][3];
    for (int f = 0; f < FORMS; f++)
        for (int m = 0; m < 3; m++) v[f][m] = malloc(sizeof(double) * (size_t)reps);
    canopy_stats st;
    for (int r = 0; r < WARM + reps; r++)
        for (int f = 0; f < FORMS; f++) {
            if (canopy_index_knn_device(ix[f], dq, nq, 1, &so, di, dd, NULL, &st)) die("order");
            for (int m = 1; m < 3; m++) {
                double t0 = canopy_now();
                if (canopy_index_knn_device(ix[f], dq, nq, m == 1 ? 8 : 1, &so, di, dd, NULL, NULL))
                    die("order knn");
                if (r >= WARM) v[f][m][r - WARM] = canopy_now() - t0;
            }
            if (r >= WARM) v[f][0][r - WARM] = st.schedule_seconds;
        }
    /* both forms' kNN rows must be the same (the walk is exact in any query order) */
    const size_t cells = (size_t)(nq * 8);
    int64_t *hi[FORMS];
    for (int f = 0; f < FORMS; f++) {
        hi[f] = malloc(sizeof(int64_t) * cells);
        if (canopy_index_knn_device(ix[f], dq, nq, 8, &so, di, dd, NULL, NULL)) die("order knn");
        cuda_ok(cudaMemcpy(hi[f], di, sizeof(int64_t) * cells, cudaMemcpyDeviceToHost),
                "cudaMemcpy");
    }
    for (int f = 1; f < FORMS; f++)
        if (memcmp(hi[0], hi[f], sizeof(int64_t) * cells) != 0)
            die("the order forms' kNN rows differ");
    for (int f = 0; f < FORMS; f++) free(hi[f]);
    char what[128];
    for (int f = 0; f < FORMS; f++) {
        snprintf(what, sizeof what, "kd bucket order of %lld queries, form %s", (long long)nq,
                 forms[f]);
        row(D->name, what, v[f][0], reps, "CUDA events around the order (calls with stats)");
        for (int m = 1; m < 3; m++) {
            snprintf(what, sizeof what, "k=%d, device pointers, schedule tree, order %s",
                     m == 1 ? 8 : 1, forms[f]);
            row(D->name, what, v[f][m], reps, "wall of the call, stats NULL");
        }
    }
    for (int f = 0; f < FORMS; f++) {
        canopy_index_free(ix[f]);
        for (int m = 0; m < 3; m++) free(v[f][m]);
    }
    cudaFree(dp), cudaFree(dq), cudaFree(di), cudaFree(dd);
}

static void gravity(int reps) {
    const int64_t n = 1000000, ns = 2000;
    float *pos = malloc(sizeof(float) * 3 * (size_t)n),
          *acc = malloc(sizeof(float) * 3 * (size_t)n);
    int64_t *sample = malloc(sizeof(int64_t) * (size_t)ns);
    double *ref = malloc(sizeof(double) * 3 * (size_t)ns),
           *v = malloc(sizeof(double) * (size_t)reps);
    if (canopy_gen_plummer(pos, NULL, n, 1)) die("plummer");
    uint64_t r = 12345;
    for (int64_t i = 0; i < ns; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        sample[i] = (int64_t)((r >> 33) % (uint64_t)n);
    }
    canopy_points b = canopy_points_make(pos, n, 3);
    canopy_gravity_options g = canopy_gravity_options_default();
    g.softening = 0.05f;
    if (canopy_gpu_mp_direct_sample(b, NULL, g.softening, sample, ns, ref, NULL)) die("direct sum");
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    canopy_stats st;
    double sb = 0, sw = 0, stt = 0, su = 0;
    for (int i = 0; i < WARM + reps; i++) {
        double t0 = canopy_now();
        if (canopy_gravity_multipole(b, NULL, &g, &o, acc, NULL, &st)) die("gravity");
        if (i >= WARM) {
            v[i - WARM] = canopy_now() - t0;
            sb += st.build_seconds / reps, sw += st.traverse_seconds / reps;
            stt += st.transfer_seconds / reps, su += st.upload_seconds / reps;
        }
    }
    bench_errors e = bench_force_errors(acc, ref, sample, ns);
    char note[300];
    bench_summary w = bench_summarise(v, reps);
    snprintf(note, sizeof note,
             "theta %.2f order %d; median error %.2e; mean build+moments %.3f, walk %.3f, "
             "transfers %.3f (up %.3f, down %.3f) ms; wall / (transfers + build + walk) %.2f "
             "(goal <= 1.3)",
             (double)g.theta, (int)g.order, e.median, sb * 1e3, sw * 1e3, stt * 1e3, su * 1e3,
             (stt - su) * 1e3, w.med / (stt + sb + sw));
    printf("| plummer1m | canopy_gravity_multipole, host arrays | %.3f | %.3f–%.3f | %s |\n",
           w.med * 1e3, w.min * 1e3, w.max * 1e3, note);
    float *d_pos = NULL, *d_acc = NULL;
    cuda_ok(cudaMalloc((void **)&d_pos, sizeof(float) * 3 * (size_t)n), "cudaMalloc");
    cuda_ok(cudaMalloc((void **)&d_acc, sizeof(float) * 3 * (size_t)n), "cudaMalloc");
    cuda_ok(cudaMemcpy(d_pos, pos, sizeof(float) * 3 * (size_t)n, cudaMemcpyHostToDevice),
            "cudaMemcpy");
    sb = sw = 0;
    for (int i = 0; i < WARM + reps; i++) {
        double t0 = canopy_now();
        if (canopy_gravity_multipole_device(canopy_points_make(d_pos, n, 3), NULL, &g, NULL, d_acc,
                                            NULL, NULL, &st))
            die("gravity (device)");
        if (i >= WARM) {
            v[i - WARM] = canopy_now() - t0;
            sb += st.build_seconds / reps, sw += st.traverse_seconds / reps;
        }
    }
    w = bench_summarise(v, reps);
    snprintf(note, sizeof note,
             "mean build+moments %.3f, walk %.3f ms; wall / (build + walk) %.2f (goal <= 1.3)",
             sb * 1e3, sw * 1e3, w.med / (sb + sw));
    printf("| plummer1m | canopy_gravity_multipole_device, device pointers | %.3f | %.3f–%.3f | %s "
           "|\n",
           w.med * 1e3, w.min * 1e3, w.max * 1e3, note);
    cudaFree(d_pos), cudaFree(d_acc);
    free(pos), free(acc), free(sample), free(ref), free(v);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    if (reps < 1) reps = 1;
    const int knn_only = argc > 2 && strcmp(argv[2], "knn") == 0,
              knn2d = argc > 2 && strcmp(argv[2], "knn2d") == 0,
              order = argc > 2 && strcmp(argv[2], "order") == 0,
              builds_only = argc > 2 && strcmp(argv[2], "builds") == 0;
    if (canopy_gpu_warm_up()) die("GPU start");
    const int64_t n = 200000, nc = 135000;
    float *c2r = malloc(sizeof(float) * 2 * (size_t)n),
          *c2q = malloc(sizeof(float) * 2 * (size_t)n);
    float *cit = malloc(sizeof(float) * 2 * (size_t)nc);
    float *r7r = malloc(sizeof(float) * 7 * (size_t)n),
          *r7q = malloc(sizeof(float) * 7 * (size_t)n);
    if (canopy_gen_clusters(c2r, NULL, n, 2, 64, 0.01, 1) ||
        canopy_gen_clusters(c2q, NULL, n, 2, 64, 0.01, 2) ||
        canopy_gen_cities(cit, NULL, nc, 2, 64, 0.02, 3) ||
        canopy_gen_uniform(r7r, n, 7, 0.0, 1.0, 4) || canopy_gen_uniform(r7q, n, 7, 0.0, 1.0, 5))
        die("data");
    const dataset sets[] = {{"clust2", c2r, c2q, n, n, 2},
                            {"cities 135k (self)", cit, NULL, nc, 0, 2},
                            {"rand7", r7r, r7q, n, n, 7}};
    printf("# canopy-bench-edges-gpu (%s; %d reps after %d warm-ups; ms)\n\n", bench_meta_json(),
           reps, WARM);
    printf("| data | call | median | min–max | note |\n|---|---|---|---|---|\n");
    if (order) {
        /* the generator's rows are already coherent; shuffled they are not */
        float *shuf = malloc(sizeof(float) * 2 * (size_t)nc);
        memcpy(shuf, cit, sizeof(float) * 2 * (size_t)nc);
        uint64_t r = 12345;
        for (int64_t i = nc - 1; i > 0; i--) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            const int64_t j = (int64_t)((r >> 33) % (uint64_t)(i + 1));
            const float x = shuf[2 * i], y = shuf[2 * i + 1];
            shuf[2 * i] = shuf[2 * j], shuf[2 * i + 1] = shuf[2 * j + 1];
            shuf[2 * j] = x, shuf[2 * j + 1] = y;
        }
        const dataset cities_q = {"cities 135k (the points as queries)", cit, cit, nc, nc, 2},
                      cities_s = {
                          "cities 135k (the points shuffled as queries)", cit, shuf, nc, nc, 2};
        order_rows(&sets[0], reps);
        order_rows(&cities_q, reps);
        order_rows(&cities_s, reps);
        free(shuf);
    } else if (builds_only) {
        for (int i = 0; i < 3; i++) builds(&sets[i], reps);
    } else if (knn_only || knn2d) {
        for (int i = 0; i < (knn2d ? 2 : 3); i++) {
            knn(&sets[i], 8, reps, 1);
            knn(&sets[i], 1, reps, 1);
        }
    } else {
        for (int i = 0; i < 3; i++) builds(&sets[i], reps);
        for (int i = 0; i < 3; i++) {
            knn(&sets[i], 8, reps, 0);
            knn(&sets[i], 1, reps, 0);
        }
        gravity(reps);
    }
    free(c2r), free(c2q), free(cit), free(r7r), free(r7q);
    return 0;
}
