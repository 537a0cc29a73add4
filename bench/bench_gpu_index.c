/* SPDX-License-Identifier: MIT */
/* Queries on a device-resident kd index (issue 14, "build once, query many"):
 * 200k reference points and 200k separate queries from the same distribution (no
 * self-exclusion), on 2-D clusters of very different sizes and spreads (clustv2) and
 * uniform 7-D (unif7); kNN k = 8 and NN (k = 1). Rows:
 *   first call                  canopy_index_build (residency device: GPU build) +
 *                               the first device-pointer query
 *   device pointers, SCHEDULE   canopy_index_knn_device, queries and results on the
 *                               device, tree resident: caller's order (none), sorted
 *                               on the device (morton), grouped by kd bucket on the
 *                               device (tree) and what auto picks (wall time of the
 *                               synchronous call)
 *   host arrays                 canopy_index_knn: queries in and results out through
 *                               the index's pinned staging, device query between
 *   canopy_knn per call         one call from host arrays: kd tree built on the GPU,
 *                               then as host arrays (GPU backend)
 * Columns: median and min-max wall ms over REPS runs after WARM warm-ups (canopy_knn:
 * REPS/3 runs), then the medians of stats.traverse_seconds (kernel, device events)
 * and stats.schedule_seconds (the device sort). Then the goals against the
 * auto device-pointer rows.
 * Rows k = 16 and 17 (clustv2) compare the register list with the heap.
 * A second table splits the host-array rows into phases (stats.upload_seconds, the
 * device query, stats.download_seconds) and sets them against copies of the same bytes
 * at pinned bandwidth (cudaMemcpy from cudaMallocHost memory, same run) and, for the
 * record, the copy the generic path made of the queries before (a pageable
 * cudaMemcpy2D of d-float rows), for issue 14's goal "host arrays in, host arrays
 * out, one call <= 1.2 x (copy at pinned bandwidth + build + query)": the index call
 * against pinned copies + its device-pointer query (auto row); canopy_knn per call
 * against pinned copies of reference points, queries and results + the GPU build
 * alone + the same device query.
 * CANOPY_BENCH_LEAF="8,32" adds device-pointer rows (auto) for indexes of those leaf
 * sizes (default: the kind's). Usage: canopy-bench-gpu-index [reps] [variant] */
#define _POSIX_C_SOURCE 200809L
#include "bench_util.h"
#include "canopy.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 200000, WARM = 3, MAX_LEAVES = 8 };

static void die(const char *what) {
    fprintf(stderr, "canopy-bench-gpu-index: %s: %s\n", what, canopy_last_error());
    exit(1);
}

/* One timed row: wall, kernel and sort seconds of each run. */
typedef struct timings {
    double *wall, *kern, *sort;
} timings;

static double row(const char *data, const char *what, int k, timings t, int reps, int device) {
    bench_summary s = bench_summarise(t.wall, reps);
    printf("| %s | %d | %s | %.3f | %.3f–%.3f |", data, k, what, s.med * 1e3, s.min * 1e3,
           s.max * 1e3);
    if (t.kern)
        printf(" %.3f |", bench_summarise(t.kern, reps).med * 1e3);
    else
        printf(" |");
    if (device)
        printf(" %.3f |\n", bench_summarise(t.sort, reps).med * 1e3);
    else
        printf(" |\n");
    return s.med;
}

/* 2-D points whose density varies over orders of magnitude, as city locations do:
 * a few tight big clusters, many small spread ones, a thin uniform background. */
static void clustv2(float *p, int64_t n, uint64_t seed) {
    int64_t a = n / 2, b = n * 3 / 10, c = n * 3 / 20, u = n - a - b - c;
    if (canopy_gen_clusters(p, NULL, a, 2, 4, 0.002, seed) ||
        canopy_gen_clusters(p + 2 * a, NULL, b, 2, 30, 0.02, seed + 1) ||
        canopy_gen_clusters(p + 2 * (a + b), NULL, c, 2, 300, 0.0005, seed + 2) ||
        canopy_gen_uniform(p + 2 * (a + b + c), u, 2, 0.0, 1.0, seed + 3))
        die("generating clustv2");
}

/* The device-pointer query on ix under schedule sch, timed; the median kernel ms of
 * the auto row goes to *kern_med. Returns the median wall seconds. */
static double device_rows(const char *name, canopy_index *ix, const float *dq, int32_t k,
                          canopy_run_options o, canopy_schedule sch, int64_t *di, float *dd,
                          int reps, timings t, const char *extra, double *kern_med,
                          cudaStream_t stream) {
    canopy_stats st;
    char what[160];
    o.schedule = sch;
    for (int r = 0; r < WARM + reps; r++) {
        double t0 = canopy_now();
        if (canopy_index_knn_device(ix, dq, N, k, &o, di, dd, stream, &st)) die("device query");
        if (r >= WARM) {
            t.wall[r - WARM] = canopy_now() - t0;
            t.kern[r - WARM] = st.traverse_seconds;
            t.sort[r - WARM] = st.schedule_seconds;
        }
    }
    if (kern_med) {
        double *c = malloc(sizeof(double) * (size_t)reps);
        memcpy(c, t.kern, sizeof(double) * (size_t)reps);
        *kern_med = bench_summarise(c, reps).med;
        free(c);
    }
    snprintf(what, sizeof what, "device pointers, %s%s (%s, %s)%s",
             sch == CANOPY_SCHEDULE_AUTO ? "auto → " : "", canopy_schedule_name(st.schedule),
             canopy_variant_name(st.variant),
             st.schedule == CANOPY_SCHEDULE_NONE   ? "caller's order"
             : st.schedule == CANOPY_SCHEDULE_TREE ? "kd buckets on the device"
                                                   : "sorted on the device",
             extra);
    return row(name, what, k, t, reps, 1);
}

/* How a host-array call's copies went, from its note. */
static const char *copies_of(const canopy_stats *st) {
    if (st->upload_seconds <= 0.0) return "";
    return strstr(st->note, "pageable") ? ", pageable copies" : ", pinned staging";
}

/* The N queries (d floats each) copied to the device, and result rows of `cells`. */
static void device_buffers(const float *qry, int32_t d, size_t cells, float **dq, int64_t **di,
                           float **dd) {
    if (cudaMalloc((void **)dq, sizeof(float) * (size_t)N * d) != cudaSuccess ||
        cudaMalloc((void **)di, sizeof(int64_t) * cells) != cudaSuccess ||
        cudaMalloc((void **)dd, sizeof(float) * cells) != cudaSuccess ||
        cudaMemcpy(*dq, qry, sizeof(float) * (size_t)N * d, cudaMemcpyHostToDevice) != cudaSuccess)
        die("device buffers");
}

/* Goal rows: 2-D kNN, 2-D NN, 7-D kNN, 7-D NN (device pointers, auto). */
static double goal_wall[4], goal_kern[4];

/* Host-array phases per goal row (medians, seconds): the index's host-array call, its
 * upload and download, the device-pointer query it wraps (auto), the same bytes at
 * pinned bandwidth in and out, the pageable 2-D copy of the queries; canopy_knn per
 * call, the GPU build alone (canopy_tree_build_gpu, leaves of 8 as canopy_knn's device
 * path) and the reference points' pinned copy; for a one-shot call's choice, pageable
 * 1-D copies of the same bytes and the making of pinned buffers of that size. */
typedef struct host_phases {
    double wall, up, down, query, pin_in, pin_out, copy2d, once, build, pin_ref, page_in, page_out,
        pin_alloc, query_nb, check;
} host_phases;
static host_phases phases[4];

static double median_of(double *v, int n) {
    return bench_summarise(v, n).med;
}

/* Median seconds of cudaMemcpy of `bytes` between host memory h (touched before) and
 * the device (dir cudaMemcpyHostToDevice or DeviceToHost), after one warm-up copy. */
static double timed_copy(void *h, size_t bytes, enum cudaMemcpyKind dir) {
    void *dv = NULL;
    double t[5];
    if (cudaMalloc(&dv, bytes) != cudaSuccess) die("device buffer");
    for (int r = 0; r < 6; r++) {
        double t0 = canopy_now();
        if ((dir == cudaMemcpyHostToDevice ? cudaMemcpy(dv, h, bytes, dir)
                                           : cudaMemcpy(h, dv, bytes, dir)) != cudaSuccess)
            die("copy");
        if (r) t[r - 1] = canopy_now() - t0;
    }
    cudaFree(dv);
    return median_of(t, 5);
}

/* The same from pinned memory (cudaMallocHost). */
static double pinned_copy(size_t bytes, enum cudaMemcpyKind dir) {
    void *h = NULL;
    if (cudaMallocHost(&h, bytes) != cudaSuccess) die("pinned buffer");
    memset(h, 1, bytes);
    double t = timed_copy(h, bytes, dir);
    cudaFreeHost(h);
    return t;
}

/* Median seconds of cudaMallocHost + cudaFreeHost of `pin` bytes. */
static double pinned_alloc(size_t pin) {
    double t[3];
    for (int r = 0; r < 3; r++) {
        void *h = NULL;
        double t0 = canopy_now();
        if (cudaMallocHost(&h, pin) != cudaSuccess) die("pinned buffer");
        cudaFreeHost(h);
        t[r] = canopy_now() - t0;
    }
    return median_of(t, 3);
}

/* The generic path's query upload before the staging: cudaMemcpy2D from pageable
 * memory, one d-float row per pitch (canopy_trav_buffers::upload_points). */
static double pageable_copy2d(const float *qry, int32_t d, float *dq) {
    double t[3];
    size_t row = sizeof(float) * (size_t)d;
    for (int r = 0; r < 4; r++) {
        double t0 = canopy_now();
        if (cudaMemcpy2D(dq, row, qry, row, row, (size_t)N, cudaMemcpyHostToDevice) != cudaSuccess)
            die("pageable 2-D copy");
        if (r) t[r - 1] = canopy_now() - t0;
    }
    return median_of(t, 3);
}

static void one(const char *name, const float *ref, const float *qry, int32_t d, int32_t k,
                int reps, canopy_variant variant, int goal, const int *leaves, int n_leaves) {
    canopy_points R = canopy_points_make(ref, N, d), Q = canopy_points_make(qry, N, d);
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    o.variant = variant;
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.residency = CANOPY_RESIDENCY_DEVICE;
    size_t cells = (size_t)N * (size_t)k;
    float *dq, *dd;
    int64_t *di;
    device_buffers(qry, d, cells, &dq, &di, &dd);
    int64_t *hi = malloc(sizeof(int64_t) * cells);
    float *hd = malloc(sizeof(float) * cells);
    timings t = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps),
                 malloc(sizeof(double) * (size_t)reps)};
    canopy_stats st;
    char what[160];

    host_phases *ph = &phases[goal];
    double *up = malloc(sizeof(double) * (size_t)reps),
           *down = malloc(sizeof(double) * (size_t)reps);
    /* first call: build on the GPU + first query (after a warm-up of the whole) */
    for (int r = 0; r < WARM + reps; r++) {
        canopy_index *ix = NULL;
        double t0 = canopy_now();
        if (canopy_index_build(R, &io, &ix)) die("index build");
        if (canopy_index_knn_device(ix, dq, N, k, &o, di, dd, NULL, &st)) die("first query");
        if (r >= WARM) t.wall[r - WARM] = canopy_now() - t0;
        canopy_index_free(ix);
    }
    row(name, "first call (GPU build + query)", k, (timings){t.wall, NULL, NULL}, reps, 0);
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = 8;
    for (int r = 0; r < WARM + reps; r++) {
        canopy_gpu_tree *g = NULL;
        double t0 = canopy_now();
        if (canopy_tree_build_gpu(R, &to, &g)) die("GPU build");
        if (r >= WARM) t.wall[r - WARM] = canopy_now() - t0;
        canopy_gpu_tree_free(g);
    }
    ph->build = median_of(t.wall, reps);

    canopy_index *ix = NULL;
    if (canopy_index_build(R, &io, &ix)) die("index build");
    device_rows(name, ix, dq, k, o, CANOPY_SCHEDULE_NONE, di, dd, reps, t, "", NULL, NULL);
    device_rows(name, ix, dq, k, o, CANOPY_SCHEDULE_MORTON, di, dd, reps, t, "", NULL, NULL);
    device_rows(name, ix, dq, k, o, CANOPY_SCHEDULE_TREE, di, dd, reps, t, "", NULL, NULL);
    goal_wall[goal] = device_rows(name, ix, dq, k, o, CANOPY_SCHEDULE_AUTO, di, dd, reps, t, "",
                                  &goal_kern[goal], NULL);
    ph->query = goal_wall[goal];
    /* the host-array path queries on a non-blocking stream of its own: the same there */
    cudaStream_t nb;
    if (cudaStreamCreateWithFlags(&nb, cudaStreamNonBlocking) != cudaSuccess) die("stream");
    ph->query_nb = device_rows(name, ix, dq, k, o, CANOPY_SCHEDULE_AUTO, di, dd, reps, t,
                               ", non-blocking stream", NULL, nb);
    cudaStreamDestroy(nb);
    /* what the host-array call checks before anything else: every query coordinate */
    for (int r = 0; r < reps; r++) {
        double t0 = canopy_now();
        if (canopy_points_check(Q, "queries")) die("queries");
        t.wall[r] = canopy_now() - t0;
    }
    ph->check = median_of(t.wall, reps);
    for (int r = 0; r < WARM + reps; r++) {
        double t0 = canopy_now();
        if (canopy_index_knn(ix, Q, k, &o, hi, hd, &st)) die("host-array query");
        if (st.tree_upload_bytes != 0) die("a resident index uploaded its tree");
        if (r >= WARM) {
            t.wall[r - WARM] = canopy_now() - t0;
            t.kern[r - WARM] = st.traverse_seconds;
            t.sort[r - WARM] = st.schedule_seconds;
            up[r - WARM] = st.upload_seconds;
            down[r - WARM] = st.download_seconds;
        }
    }
    snprintf(what, sizeof what, "host arrays (%s, %s%s)", canopy_variant_name(st.variant),
             canopy_schedule_name(st.schedule), copies_of(&st));
    ph->wall = row(name, what, k, t, reps, 1);
    ph->up = median_of(up, reps);
    ph->down = median_of(down, reps);
    ph->pin_in = pinned_copy(sizeof(float) * (size_t)N * (size_t)d, cudaMemcpyHostToDevice);
    ph->pin_out = pinned_copy((sizeof(int64_t) + sizeof(float)) * cells, cudaMemcpyDeviceToHost);
    ph->pin_ref = ph->pin_in; /* as many reference points as queries */
    ph->copy2d = pageable_copy2d(qry, d, dq);
    ph->page_in =
        timed_copy((void *)qry, sizeof(float) * (size_t)N * (size_t)d, cudaMemcpyHostToDevice);
    ph->page_out = timed_copy(hi, sizeof(int64_t) * cells, cudaMemcpyDeviceToHost) +
                   timed_copy(hd, sizeof(float) * cells, cudaMemcpyDeviceToHost);
    ph->pin_alloc = pinned_alloc(sizeof(float) * (size_t)N * (size_t)d +
                                 (sizeof(int64_t) + sizeof(float)) * cells);
    canopy_index_free(ix);
    for (int l = 0; l < n_leaves; l++) {
        char extra[32];
        io.leaf_size = leaves[l];
        if (canopy_index_build(R, &io, &ix)) die("index build");
        snprintf(extra, sizeof extra, ", leaf %d", leaves[l]);
        device_rows(name, ix, dq, k, o, CANOPY_SCHEDULE_AUTO, di, dd, reps, t, extra, NULL, NULL);
        canopy_index_free(ix);
    }

    int pr = reps / 3 > 3 ? reps / 3 : 3;
    o.tree = CANOPY_TREE_KD;
    for (int r = 0; r < 1 + pr; r++) {
        double t0 = canopy_now();
        if (canopy_knn(R, Q, k, &o, hi, hd, &st)) die("canopy_knn");
        if (r >= 1) {
            t.wall[r - 1] = canopy_now() - t0;
            t.kern[r - 1] = st.traverse_seconds;
        }
    }
    snprintf(what, sizeof what, "canopy_knn per call (%s, %s%s%s)", canopy_variant_name(st.variant),
             canopy_schedule_name(st.schedule),
             strstr(st.note, "built on the GPU") ? ", GPU build" : "", copies_of(&st));
    ph->once = row(name, what, k, t, pr, 0);
    cudaFree(dq), cudaFree(di), cudaFree(dd);
    free(hi), free(hd), free(t.wall), free(t.kern), free(t.sort), free(up), free(down);
}

/* Issue 14's host-array goal: the index call against (pinned copies + the device
 * query it wraps), and canopy_knn per call against (pinned copies of reference points,
 * queries and results + GPU build and query). */
static void phase_table(const char *const *names) {
    printf("\nHost arrays by phase (medians, ms; pinned: cudaMemcpy of the same bytes from "
           "cudaMallocHost memory, this run)\n\n"
           "| case | host-array call | queries in | device query | results out | pinned in + out "
           "| ratio to pinned + query (goal ≤ 1.2) | before: pageable 2-D query copy | "
           "canopy_knn per call | GPU build alone | pinned ref + in + out + build + query | "
           "ratio (goal ≤ 1.2) |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int g = 0; g < 4; g++) {
        const host_phases *p = &phases[g];
        double pin = p->pin_in + p->pin_out, once_ref = p->pin_ref + pin + p->build + p->query;
        printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f | %.3f | "
               "%.2f |\n",
               names[g], p->wall * 1e3, p->up * 1e3, (p->wall - p->up - p->down) * 1e3,
               p->down * 1e3, pin * 1e3, p->wall / (pin + p->query), p->copy2d * 1e3, p->once * 1e3,
               p->build * 1e3, once_ref * 1e3, p->once / once_ref);
    }
    printf("\nFor one-shot calls (ms, medians): pageable 1-D cudaMemcpy of the queries in and "
           "the results out, against making the pinned staging (cudaMallocHost + "
           "cudaFreeHost of queries + results)\n\n| case | pageable in | pageable out | "
           "pinned in + out | cudaMallocHost of that size |\n|---|---|---|---|---|\n");
    for (int g = 0; g < 4; g++)
        printf("| %s | %.3f | %.3f | %.3f | %.3f |\n", names[g], phases[g].page_in * 1e3,
               phases[g].page_out * 1e3, (phases[g].pin_in + phases[g].pin_out) * 1e3,
               phases[g].pin_alloc * 1e3);
    printf("\nWhat the host-array call's middle holds (ms, medians): the device-pointer query "
           "on the legacy and on a non-blocking stream, the check of the query coordinates, and "
           "the rest (call - in - out - non-blocking query - check)\n\n| case | query, "
           "legacy stream | query, non-blocking stream | points check | rest |\n"
           "|---|---|---|---|---|\n");
    for (int g = 0; g < 4; g++) {
        const host_phases *p = &phases[g];
        printf("| %s | %.3f | %.3f | %.3f | %.3f |\n", names[g], p->query * 1e3, p->query_nb * 1e3,
               p->check * 1e3, (p->wall - p->up - p->down - p->query_nb - p->check) * 1e3);
    }
}

/* The candidate list's cost: k = 16 keeps registers, k = 17 the heap in the output
 * row; nearly the same search otherwise (device pointers, auto). */
static void list_rows(const char *name, const float *ref, const float *qry, int32_t d, int reps,
                      canopy_variant variant) {
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    o.variant = variant;
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.residency = CANOPY_RESIDENCY_DEVICE;
    canopy_index *ix = NULL;
    if (canopy_index_build(canopy_points_make(ref, N, d), &io, &ix)) die("index build");
    size_t cells = (size_t)N * 17;
    float *dq, *dd;
    int64_t *di;
    device_buffers(qry, d, cells, &dq, &di, &dd);
    timings t = {malloc(sizeof(double) * (size_t)reps), malloc(sizeof(double) * (size_t)reps),
                 malloc(sizeof(double) * (size_t)reps)};
    device_rows(name, ix, dq, 16, o, CANOPY_SCHEDULE_AUTO, di, dd, reps, t, ", register list", NULL,
                NULL);
    device_rows(name, ix, dq, 17, o, CANOPY_SCHEDULE_AUTO, di, dd, reps, t, ", heap", NULL, NULL);
    canopy_index_free(ix);
    cudaFree(dq), cudaFree(di), cudaFree(dd);
    free(t.wall), free(t.kern), free(t.sort);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? atoi(argv[1]) : 15;
    canopy_variant variant = CANOPY_VARIANT_AUTO;
    if (reps < 3) reps = 3;
    if (argc > 2 && canopy_variant_parse(argv[2], &variant)) die("variant");
    int leaves[MAX_LEAVES], n_leaves = 0;
    const char *env = getenv("CANOPY_BENCH_LEAF");
    for (char *p = (char *)env; p && *p && n_leaves < MAX_LEAVES;) {
        long v = strtol(p, &p, 10);
        if (v < 1 || v > 4096) {
            fprintf(stderr,
                    "canopy-bench-gpu-index: CANOPY_BENCH_LEAF: leaf sizes 1..4096, "
                    "comma-separated (got \"%s\")\n",
                    env);
            return 1;
        }
        leaves[n_leaves++] = (int)v;
        if (*p == ',') p++;
    }
    char gpu[256];
    if (canopy_gpu_info(gpu, sizeof gpu, NULL)) die("no GPU");
    float *ref = malloc(sizeof(float) * (size_t)N * 7),
          *qry = malloc(sizeof(float) * (size_t)N * 7);
    printf("device %s, %d reps (median, min–max in ms), variant %s\n\n", gpu, reps,
           canopy_variant_name(variant));
    printf("| data | k | what | median ms | min–max ms | kernel ms | sort ms |\n"
           "|---|---|---|---|---|---|---|\n");
    clustv2(ref, N, 11);
    clustv2(qry, N, 97);
    one("clustv2 (2-D)", ref, qry, 2, 8, reps, variant, 0, leaves, n_leaves);
    one("clustv2 (2-D)", ref, qry, 2, 1, reps, variant, 1, leaves, n_leaves);
    list_rows("clustv2 (2-D)", ref, qry, 2, reps, variant);
    if (canopy_gen_uniform(ref, N, 7, 0.0, 1.0, 5) || canopy_gen_uniform(qry, N, 7, 0.0, 1.0, 6))
        die("generating unif7");
    one("unif7 (7-D)", ref, qry, 7, 8, reps, variant, 2, leaves, n_leaves);
    one("unif7 (7-D)", ref, qry, 7, 1, reps, variant, 3, leaves, n_leaves);
    static const char *goals[4] = {"kNN k=8, 2-D clusters", "NN, 2-D clusters",
                                   "kNN k=8, uniform 7-D", "NN, uniform 7-D"};
    static const double goal_ms[4] = {0.1, 0.05, 8.0, 3.0};
    printf("\nIssue 14's goals (device pointers, schedule auto, variant %s, default leaf "
           "size)\n\n| | goal ms | median ms | kernel ms | met |\n|---|---|---|---|---|\n",
           canopy_variant_name(variant));
    for (int g = 0; g < 4; g++)
        printf("| %s | ≤ %g | %.3f | %.3f | %s |\n", goals[g], goal_ms[g], goal_wall[g] * 1e3,
               goal_kern[g] * 1e3, goal_wall[g] * 1e3 <= goal_ms[g] ? "yes" : "no");
    phase_table(goals);
    free(ref), free(qry);
    return 0;
}
