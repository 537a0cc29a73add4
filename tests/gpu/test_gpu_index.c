/* SPDX-License-Identifier: MIT */
/* Device-resident indexes (residency device and both, and kd builds from device
 * pointers, whose trees equal the host-point builds') against brute force and the
 * host index on fresh random inputs: kNN (queries and self-queries), radius counts,
 * gravity and search; the second query uploads no tree (stats); the device-pointer
 * kNN equals the host API in the caller's order and sorted on the device (schedules
 * none, morton, auto; tree, grouped by kd bucket, on kd indexes), with register lists (k <= 16) and
 * the heap (k > 16), also on identical points, where the tie rule must prune, and on
 * a tree of over 37,000 kd buckets, and grouped by bucket where the bucket grid's
 * cells miss (queries outside the box, flat points), in each form of the bucket order
 * (CANOPY_GPU_ORDER fused, shared and two: sizes from 1, n < k, duplicates, repeated calls,
 * and query counts past one and past FUSED_QUERIES a thread of the fused kernel);
 * self-queries on the device (the index's own
 * points, with and without each in its own row: tree order, every schedule and variant, no points);
 * bad
 * pointers, host-only indexes and freed handles are rejected. Exits 77
 * without a GPU. CANOPY_GPU_SMALL=1 runs sizes up to 1000 only (for compute-sanitizer);
 * CANOPY_GPU_SMALL=order runs only the bucket order's cases (racecheck of its scatter). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static int small; /* CANOPY_GPU_SMALL=1: the sanitizer's run */
static double rnd(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* kind 0 uniform, 1 clustered, 2 heavy duplicates (4 values per coordinate) */
static float *make_points(int64_t n, int32_t d, int kind, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    if (kind == 1 && n > 0) {
        CHECK_OK(canopy_gen_clusters(p, NULL, n, d, 8, 0.01, seed));
    } else {
        rng_state = seed;
        for (int64_t i = 0; i < n * d; i++)
            p[i] = kind == 2 ? (float)(int)(rnd() * 4) : (float)rnd();
    }
    return p;
}

static canopy_run_options gpu_opts(void) {
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    return o;
}

static canopy_index *build(canopy_points p, canopy_tree_kind kind, canopy_residency r) {
    canopy_index_options o = canopy_index_options_default(kind);
    o.residency = r;
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(p, &o, &ix));
    return ix;
}

/* The rows of the self-query with each point in its own row, from the brute-force rows
 * without it (ex, n rows of k): (0, i) inserted in (distance, index) order and the last
 * entry dropped. A duplicate of i with a smaller index stays before it. */
static void self_included(const int64_t *ex_i, const float *ex_d, int64_t n, int32_t k,
                          int64_t *in_i, float *in_d) {
    for (int64_t i = 0; i < n; i++) {
        const int64_t *ri = ex_i + i * k;
        const float *rd = ex_d + i * k;
        int32_t at = 0;
        while (at < k && ri[at] >= 0 && (rd[at] < 0.0f || (rd[at] == 0.0f && ri[at] < i))) at++;
        for (int32_t j = 0, from = 0; j < k; j++) {
            if (j == at) {
                in_i[i * k + j] = i, in_d[i * k + j] = 0.0f;
                continue;
            }
            in_i[i * k + j] = ri[from], in_d[i * k + j] = rd[from];
            from++;
        }
    }
}

/* canopy_index_knn_self_device on ix (the points of ref): with and without each point in
 * its own row, in the tree's order (auto, tree), in their rows (none), sorted (morton),
 * through the kd walk (dr, dr_l) and the generic engine (gdr), with and without stats
 * (without: the bare kd walk). ex_i, ex_d: brute force's self-query rows. */
static void self_device_case(canopy_index *ix, canopy_points ref, int32_t k, const int64_t *ex_i,
                             const float *ex_d, const char *tag) {
    const int64_t n = ref.n, cells = n * k;
    int64_t *in_i = malloc(sizeof(int64_t) * (size_t)(cells + 1)),
            *gi = malloc(sizeof(int64_t) * (size_t)(cells + 1));
    float *in_d = malloc(sizeof(float) * (size_t)(cells + 1)),
          *gd = malloc(sizeof(float) * (size_t)(cells + 1));
    self_included(ex_i, ex_d, n, k, in_i, in_d);
    int64_t *di = NULL;
    float *dd = NULL;
    CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)(cells + 1)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dd, sizeof(float) * (size_t)(cells + 1)) == cudaSuccess);
    static const canopy_variant vs[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_AUTO,
                                        CANOPY_VARIANT_AUTO, CANOPY_VARIANT_DR,
                                        CANOPY_VARIANT_DR_L, CANOPY_VARIANT_GDR};
    static const canopy_schedule ss[] = {CANOPY_SCHEDULE_AUTO,   CANOPY_SCHEDULE_NONE,
                                         CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_TREE,
                                         CANOPY_SCHEDULE_TREE,   CANOPY_SCHEDULE_TREE};
    for (int c = 0; c < 24; c++) {
        /* under the sanitizer: the bare kd walk, with stats, the generic engine */
        if (small && c != 0 && c != 3 && c != 13 && c != 22) continue;
        const int exclude = c & 1, with_stats = (c >> 1) & 1, w = c >> 2;
        canopy_run_options o = canopy_run_options_default();
        o.variant = vs[w];
        o.schedule = ss[w];
        canopy_stats st;
        memset(&st, 0xff, sizeof st);
        CHECK(cudaMemset(di, 0xff, sizeof(int64_t) * (size_t)(cells + 1)) == cudaSuccess);
        CHECK(cudaMemset(dd, 0xff, sizeof(float) * (size_t)(cells + 1)) == cudaSuccess);
        CHECK_OK(canopy_index_knn_self_device(ix, k, exclude, &o, di, dd, NULL,
                                              with_stats ? &st : NULL));
        CHECK(cudaMemcpy(gi, di, sizeof(int64_t) * (size_t)cells, cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK(cudaMemcpy(gd, dd, sizeof(float) * (size_t)cells, cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK_MSG(memcmp(gi, exclude ? ex_i : in_i, sizeof(int64_t) * (size_t)cells) == 0 &&
                      memcmp(gd, exclude ? ex_d : in_d, sizeof(float) * (size_t)cells) == 0,
                  "%s k=%d: self-query on the device (exclude %d, %s, schedule %s) differs from "
                  "brute force",
                  tag, (int)k, exclude, canopy_variant_name(vs[w]), canopy_schedule_name(ss[w]));
        if (with_stats)
            CHECK_MSG(st.queries == n && st.device_tree_reused == 1 &&
                          st.schedule ==
                              (ss[w] == CANOPY_SCHEDULE_AUTO ? CANOPY_SCHEDULE_TREE : ss[w]),
                      "%s: self-query stats (schedule %s)", tag, canopy_schedule_name(st.schedule));
    }
    /* no distances wanted (the heap beyond 16 then keeps its own) */
    CHECK_OK(canopy_index_knn_self_device(ix, k, 1, NULL, di, NULL, NULL, NULL));
    CHECK(cudaMemcpy(gi, di, sizeof(int64_t) * (size_t)cells, cudaMemcpyDeviceToHost) ==
          cudaSuccess);
    CHECK_MSG(memcmp(gi, ex_i, sizeof(int64_t) * (size_t)cells) == 0,
              "%s k=%d: self-query without distances differs", tag, (int)k);
    canopy_run_options h = canopy_run_options_default();
    h.schedule = CANOPY_SCHEDULE_HILBERT;
    CHECK_FAILS(canopy_index_knn_self_device(ix, k, 0, &h, di, dd, NULL, NULL),
                CANOPY_ERR_UNSUPPORTED, "not offered for device queries");
    CHECK_FAILS(canopy_index_knn_self_device(ix, 0, 0, NULL, di, dd, NULL, NULL),
                CANOPY_ERR_INVALID, "k must be >= 1");
    CHECK_FAILS(canopy_index_knn_self_device(ix, k, 0, NULL, gi, dd, NULL, NULL),
                CANOPY_ERR_INVALID, "device memory");
    CHECK(cudaFree(di) == cudaSuccess && cudaFree(dd) == cudaSuccess);
    free(in_i), free(gi), free(in_d), free(gd);
}

/* Resident kNN (queries, then self) against brute force and the host index; the
 * device-pointer form against the host API; upload statistics. */
static void knn_case(canopy_points ref, canopy_points qry, canopy_residency res, int32_t k,
                     canopy_tree_kind kind, const char *tag) {
    int64_t nq = qry.n, cells = nq * k, scells = ref.n * k;
    int64_t *bi = malloc(sizeof(int64_t) * (size_t)(cells + scells + 1));
    int64_t *gi = malloc(sizeof(int64_t) * (size_t)(cells + scells + 1));
    int64_t *hi = malloc(sizeof(int64_t) * (size_t)(cells + 1));
    float *bd = malloc(sizeof(float) * (size_t)(cells + scells + 1));
    float *gd = malloc(sizeof(float) * (size_t)(cells + scells + 1));
    float *hd = malloc(sizeof(float) * (size_t)(cells + 1));
    canopy_index *ix = build(ref, kind, res), *hx = build(ref, kind, CANOPY_RESIDENCY_HOST);
    canopy_index_info info;
    CHECK_OK(canopy_index_get_info(ix, &info));
    CHECK_MSG(info.residency == res && info.device_bytes == info.bytes && info.device_bytes > 0,
              "%s: info residency %d, device bytes %zu of %zu", tag, (int)info.residency,
              info.device_bytes, info.bytes);
    CHECK_MSG(info.gpu_built == (res == CANOPY_RESIDENCY_DEVICE && kind == CANOPY_TREE_KD),
              "%s: gpu_built %d", tag, info.gpu_built);
    /* a GPU-only kd index defaults to leaves of 8, the others to the kind's 16 */
    CHECK_MSG(info.leaf_size == (info.gpu_built ? 8 : 16), "%s: leaf size %d", tag,
              (int)info.leaf_size);
    canopy_run_options o = gpu_opts();
    canopy_stats st;
    CHECK_OK(canopy_knn_brute(ref, qry, k, bi, bd));
    CHECK_OK(canopy_knn_brute(ref, canopy_points_make(NULL, 0, ref.d), k, bi + cells, bd + cells));
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(canopy_index_knn(ix, qry, k, &o, gi, gd, &st));
        CHECK_MSG(st.tree_upload_bytes == 0 && st.device_tree_reused == 1 &&
                      st.backend == CANOPY_BACKEND_GPU,
                  "%s: query %d uploaded %lld tree bytes", tag, rep,
                  (long long)st.tree_upload_bytes);
    }
    CHECK_OK(canopy_index_knn(ix, canopy_points_make(NULL, 0, ref.d), k, &o, gi + cells, gd + cells,
                              &st));
    CHECK_MSG(st.tree_upload_bytes == 0, "%s: self-query uploaded the tree", tag);
    CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)(cells + scells)) == 0 &&
                  memcmp(bd, gd, sizeof(float) * (size_t)(cells + scells)) == 0,
              "%s: resident kNN differs from brute force", tag);
    /* the host index on the GPU uploads per call; on the CPU it agrees too */
    /* (its own tree: a GPU-only kd index has smaller leaves, so more bytes, than hx) */
    canopy_index_info hinfo;
    CHECK_OK(canopy_index_get_info(hx, &hinfo));
    CHECK_OK(canopy_index_knn(hx, qry, k, &o, hi, hd, &st));
    CHECK_MSG(st.tree_upload_bytes == (int64_t)hinfo.bytes && !st.device_tree_reused,
              "%s: host index uploaded %lld bytes (tree %zu)", tag, (long long)st.tree_upload_bytes,
              hinfo.bytes);
    CHECK_MSG(memcmp(hi, gi, sizeof(int64_t) * (size_t)cells) == 0, "%s: host index kNN differs",
              tag);
    canopy_run_options c = canopy_run_options_default();
    c.backend = CANOPY_BACKEND_CPU;
    CHECK_OK(canopy_index_knn(ix, qry, k, &c, hi, hd, &st));
    CHECK_MSG(memcmp(hi, bi, sizeof(int64_t) * (size_t)cells) == 0,
              "%s: CPU query of a resident index differs", tag);
    /* device pointers in and out, on a stream of the caller's */
    float *dq = NULL, *dd = NULL;
    int64_t *di = NULL;
    cudaStream_t stream;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(nq * ref.d + 1)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)(cells + 1)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dd, sizeof(float) * (size_t)(cells + 1)) == cudaSuccess);
    CHECK(cudaMemcpyAsync(dq, qry.data, sizeof(float) * (size_t)(nq * ref.d),
                          cudaMemcpyHostToDevice, stream) == cudaSuccess);
    /* caller's order, sorted on the device, auto (sorts from 8192 queries) */
    static const canopy_schedule scheds[] = {CANOPY_SCHEDULE_AUTO, CANOPY_SCHEDULE_NONE,
                                             CANOPY_SCHEDULE_MORTON};
    for (int si = 0; si < 3; si++) {
        canopy_run_options so = canopy_run_options_default();
        so.schedule = scheds[si];
        /* on the legacy stream, not `stream`: the call orders its kernels after both */
        CHECK(cudaMemset(di, 0xff, sizeof(int64_t) * (size_t)(cells + 1)) == cudaSuccess);
        CHECK(cudaMemset(dd, 0xff, sizeof(float) * (size_t)(cells + 1)) == cudaSuccess);
        memset(&st, 0xff, sizeof st);
        CHECK_OK(canopy_index_knn_device(ix, dq, nq, k, &so, di, dd, stream, &st));
        /* auto sorts from 8192 queries where that paid: for the kd kernel by kd bucket
         * up to 3-D, else for its lockstep walk (d >= 5, k > 1) and k > 8;
         * for gdr where d <= 2 or leaves hold <= 8 points */
        int kd_kernel = kind == CANOPY_TREE_KD && ref.d <= 8 && k <= 16;
        int buckets = kd_kernel && ref.d <= 3;
        int sorts = nq >= 8192 && (kd_kernel ? buckets || (ref.d >= 5 && k > 1) || k > 8
                                             : ref.d <= 2 || info.leaf_size <= 8);
        canopy_schedule want = scheds[si] != CANOPY_SCHEDULE_AUTO ? scheds[si]
                               : !sorts                           ? CANOPY_SCHEDULE_NONE
                               : buckets                          ? CANOPY_SCHEDULE_TREE
                                                                  : CANOPY_SCHEDULE_MORTON;
        CHECK_MSG(st.device_tree_reused == 1 && st.tree_upload_bytes == 0 && st.queries == nq &&
                      st.schedule == want,
                  "%s: device stats (schedule %s, want %s)", tag, canopy_schedule_name(st.schedule),
                  canopy_schedule_name(want));
        CHECK(cudaMemcpy(hi, di, sizeof(int64_t) * (size_t)cells, cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK(cudaMemcpy(hd, dd, sizeof(float) * (size_t)cells, cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK_MSG(memcmp(hi, bi, sizeof(int64_t) * (size_t)cells) == 0 &&
                      memcmp(hd, bd, sizeof(float) * (size_t)cells) == 0,
                  "%s k=%d: device-pointer kNN (schedule %s) differs", tag, (int)k,
                  canopy_schedule_name(scheds[si]));
    }
    /* the other variants (on kd trees dr and dr_l run the specialised kd kernel, gdr
     * the generic engine), without distances, in the caller's order, sorted and (kd)
     * grouped by bucket: the kd walk then starts in the query's bucket */
    static const canopy_variant others[] = {CANOPY_VARIANT_DR_L, CANOPY_VARIANT_DR,
                                            CANOPY_VARIANT_GDR};
    static const canopy_schedule orders[] = {CANOPY_SCHEDULE_NONE, CANOPY_SCHEDULE_MORTON,
                                             CANOPY_SCHEDULE_TREE};
    for (int vi = 0; vi < 3; vi++)
        for (int oi = 0; oi < (kind == CANOPY_TREE_KD ? 3 : 2); oi++) {
            canopy_run_options l = canopy_run_options_default();
            l.variant = others[vi];
            l.schedule = orders[oi];
            CHECK(cudaMemset(di, 0xff, sizeof(int64_t) * (size_t)cells) == cudaSuccess);
            CHECK_OK(canopy_index_knn_device(ix, dq, nq, k, &l, di, NULL, NULL, &st));
            CHECK(cudaMemcpy(hi, di, sizeof(int64_t) * (size_t)cells, cudaMemcpyDeviceToHost) ==
                  cudaSuccess);
            CHECK_MSG(memcmp(hi, bi, sizeof(int64_t) * (size_t)cells) == 0,
                      "%s k=%d: device-pointer kNN (%s, schedule %s) differs", tag, (int)k,
                      canopy_variant_name(others[vi]), canopy_schedule_name(orders[oi]));
            CHECK_MSG(st.variant == others[vi] && st.queries == nq, "%s: stats variant %s", tag,
                      canopy_variant_name(st.variant));
        }
    self_device_case(ix, ref, k, bi + cells, bd + cells, tag);
    CHECK_FAILS(canopy_index_knn_self_device(hx, k, 0, NULL, di, dd, NULL, NULL),
                CANOPY_ERR_INVALID, "no device copy");
    /* no queries: nothing written, sorted or not */
    canopy_run_options m = canopy_run_options_default();
    m.schedule = CANOPY_SCHEDULE_MORTON;
    CHECK_OK(canopy_index_knn_device(ix, dq, 0, k, &m, di, dd, NULL, &st));
    CHECK(st.queries == 0);
    m.schedule = CANOPY_SCHEDULE_TREE;
    if (kind == CANOPY_TREE_KD)
        CHECK_OK(canopy_index_knn_device(ix, dq, 0, k, &m, di, dd, NULL, &st));
    else
        CHECK_FAILS(canopy_index_knn_device(ix, dq, nq, k, &m, di, dd, NULL, NULL),
                    CANOPY_ERR_UNSUPPORTED, "not offered for device queries");
    m.schedule = CANOPY_SCHEDULE_HILBERT;
    CHECK_FAILS(canopy_index_knn_device(ix, dq, nq, k, &m, di, dd, NULL, NULL),
                CANOPY_ERR_UNSUPPORTED, "not offered for device queries");
    if (nq > 0) {
        CHECK_FAILS(canopy_index_knn_device(ix, qry.data, nq, k, NULL, di, dd, NULL, NULL),
                    CANOPY_ERR_INVALID, "device memory");
        CHECK_FAILS(canopy_index_knn_device(hx, dq, nq, k, NULL, di, dd, NULL, NULL),
                    CANOPY_ERR_INVALID, "no device copy");
    }
    CHECK(cudaFree(dq) == cudaSuccess && cudaFree(di) == cudaSuccess &&
          cudaFree(dd) == cudaSuccess && cudaStreamDestroy(stream) == cudaSuccess);
    canopy_index_free(ix);
    canopy_index_free(hx);
    free(bi), free(gi), free(hi), free(bd), free(gd), free(hd);
}

/* Also orders rows by their first coordinate. */
static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Enough queries for auto to sort them on the device, in random order and already
 * sorted (by x: the caller's order is then the fast one), small and large k. */
static void many_queries_case(uint64_t seed) {
    int64_t n = 30000, nq = 12000;
    float *rp = make_points(n, 7, 1, seed), *qp = make_points(nq, 7, 1, seed + 1);
    canopy_points ref = canopy_points_make(rp, n, 2), qry = canopy_points_make(qp, nq, 2);
    knn_case(ref, qry, CANOPY_RESIDENCY_DEVICE, 8, CANOPY_TREE_KD, "many queries, random order");
    knn_case(ref, qry, CANOPY_RESIDENCY_DEVICE, 17, CANOPY_TREE_KD, "many queries, k 17");
    qsort(qp, (size_t)nq, 2 * sizeof(float), cmp_float);
    knn_case(ref, qry, CANOPY_RESIDENCY_BOTH, 5, CANOPY_TREE_KD, "many queries, sorted by x");
    /* 7-D: auto sorts for the GPU-only index (leaves of 8), not for leaves of 16 */
    ref = canopy_points_make(rp, n, 7), qry = canopy_points_make(qp, nq, 7);
    knn_case(ref, qry, CANOPY_RESIDENCY_DEVICE, 4, CANOPY_TREE_KD, "many queries, 7-D device");
    knn_case(ref, qry, CANOPY_RESIDENCY_BOTH, 4, CANOPY_TREE_KD, "many queries, 7-D both");
    free(rp), free(qp);
}

static void radius_case(canopy_points ref, canopy_points qry, canopy_residency res,
                        canopy_tree_kind kind, float r, const char *tag) {
    int64_t *b = malloc(sizeof(int64_t) * (size_t)(qry.n + 1));
    int64_t *g = malloc(sizeof(int64_t) * (size_t)(qry.n + 1));
    canopy_index *ix = build(ref, kind, res);
    canopy_run_options o = gpu_opts();
    canopy_stats st;
    CHECK_OK(canopy_radius_count_brute(ref, qry, r, b));
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(canopy_index_radius_count(ix, qry, r, &o, g, &st));
        CHECK_MSG(st.tree_upload_bytes == 0 && st.device_tree_reused, "%s: radius uploaded", tag);
        CHECK_MSG(memcmp(b, g, sizeof(int64_t) * (size_t)qry.n) == 0, "%s: resident radius differs",
                  tag);
    }
    canopy_index_free(ix);
    free(b), free(g);
}

static void gravity_case(int64_t n, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(3 * n));
    float *w = malloc(sizeof(float) * (size_t)n);
    float *a = malloc(sizeof(float) * (size_t)(3 * n)),
          *h = malloc(sizeof(float) * (size_t)(3 * n));
    CHECK_OK(canopy_gen_plummer(p, NULL, n, seed));
    for (int64_t i = 0; i < n; i++) w[i] = (float)(1 + i % 3) / (float)(2 * n);
    canopy_points pts = canopy_points_make(p, n, 3);
    canopy_index_options o = canopy_index_options_default(CANOPY_TREE_OCT);
    o.weights = w;
    canopy_index *ix = NULL, *hx = NULL;
    o.residency = CANOPY_RESIDENCY_DEVICE;
    CHECK_OK(canopy_index_build(pts, &o, &ix));
    o.residency = CANOPY_RESIDENCY_HOST;
    CHECK_OK(canopy_index_build(pts, &o, &hx));
    canopy_run_options r = gpu_opts();
    canopy_stats st;
    CHECK_OK(canopy_index_gravity(hx, 0.5f, 0.01f, &r, h, &st));
    CHECK(st.tree_upload_bytes > 0);
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(canopy_index_gravity(ix, 0.5f, 0.01f, &r, a, &st));
        CHECK_MSG(st.tree_upload_bytes == 0 && st.device_tree_reused, "gravity uploaded");
        CHECK_MSG(memcmp(a, h, sizeof(float) * (size_t)(3 * n)) == 0,
                  "gravity n=%lld: resident differs from the host index on the GPU", (long long)n);
    }
    canopy_index_free(ix), canopy_index_free(hx);
    free(p), free(w), free(a), free(h);
}

static void search_case(int64_t n, uint64_t seed) {
    float *keys = make_points(n, 1, 2, seed);
    for (int64_t i = 0; i < n; i++) keys[i] += (float)(i % 7);
    qsort(keys, (size_t)n, sizeof(float), cmp_float);
    int64_t nq = 3000;
    float *q = make_points(nq, 1, 0, seed + 1);
    for (int64_t i = 0; i < nq; i++) q[i] = q[i] * 12.0f - 1.0f;
    int64_t *g = malloc(sizeof(int64_t) * (size_t)nq);
    canopy_index *ix =
        build(canopy_points_make(keys, n, 1), CANOPY_TREE_BST, CANOPY_RESIDENCY_BOTH);
    canopy_run_options o = gpu_opts();
    canopy_stats st;
    for (int rep = 0; rep < 2; rep++) {
        CHECK_OK(canopy_index_search(ix, q, nq, &o, g, &st));
        CHECK_MSG(st.tree_upload_bytes == 0 && st.device_tree_reused, "search uploaded");
    }
    int bad = 0;
    for (int64_t i = 0; i < nq; i++) {
        int64_t lb = 0;
        while (lb < n && keys[lb] < q[i]) lb++;
        bad += g[i] != lb;
    }
    CHECK_MSG(bad == 0, "search n=%lld: %d results differ from the lower bound", (long long)n, bad);
    canopy_index_free(ix);
    free(keys), free(q), free(g);
}

/* The whole file at path (its size in *len), or NULL. */
static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* 1 when the two indexes save to the same bytes: the same nodes (topology, boxes, split
 * dimensions), points in tree order, permutation and ropes. */
static int same_tree(canopy_index *a, canopy_index *b) {
    char pa[256], pb[256];
    snprintf(pa, sizeof pa, "%s", check_tmp_path("device-build-a.idx"));
    snprintf(pb, sizeof pb, "%s", check_tmp_path("device-build-b.idx"));
    CHECK_OK(canopy_index_save(a, pa));
    CHECK_OK(canopy_index_save(b, pb));
    size_t la = 0, lb = 0;
    unsigned char *ba = slurp(pa, &la), *bb = slurp(pb, &lb);
    int same = ba && bb && la == lb && memcmp(ba, bb, la) == 0;
    free(ba), free(bb);
    return same;
}

/* canopy_index_build_device: points copied to the device on a non-blocking stream of
 * the caller's just before (the build must wait for the copy), rows `stride` floats
 * apart; the tree equals the host-point build's with residency device, and kNN on it
 * (device pointers, staged host arrays, the CPU, self-queries) equals brute force. */
static void device_build_case(int64_t n, int32_t d, int kind, int32_t leaf, int32_t stride,
                              uint64_t seed) {
    char tag[128];
    snprintf(tag, sizeof tag, "device build n=%lld d=%d kind=%d leaf=%d stride=%d", (long long)n, d,
             kind, (int)leaf, (int)stride);
    float *dense = make_points(n, d, kind, seed);
    float *rows = calloc((size_t)(n * stride + 1), sizeof(float));
    for (int64_t i = 0; i < n; i++) memcpy(rows + i * stride, dense + i * d, sizeof(float) * d);
    canopy_points host = {rows, n, d, stride};
    cudaStream_t stream;
    float *dp = NULL;
    CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dp, sizeof(float) * (size_t)(n * stride + 1)) == cudaSuccess);
    CHECK(cudaMemcpyAsync(dp, rows, sizeof(float) * (size_t)(n * stride), cudaMemcpyHostToDevice,
                          stream) == cudaSuccess);
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.leaf_size = leaf;
    canopy_index *dx = NULL, *hx = NULL;
    CHECK_OK(canopy_index_build_device((canopy_points){dp, n, d, stride}, &io, stream, &dx));
    io.residency = CANOPY_RESIDENCY_DEVICE;
    CHECK_OK(canopy_index_build(host, &io, &hx));
    if (!dx || !hx) goto out;
    canopy_index_info info;
    CHECK_OK(canopy_index_get_info(dx, &info));
    CHECK_MSG(info.residency == CANOPY_RESIDENCY_DEVICE && info.gpu_built == 1 &&
                  info.builds == 1 && info.n == n && info.d == d &&
                  info.leaf_size == (leaf > 0 ? leaf : 8) && info.device_bytes == info.bytes,
              "%s: info", tag);
    int64_t k = 8, nq = n > 0 ? 300 : 0, cells = nq * k;
    if (n > 0) {
        float *qp = make_points(nq, d, kind, seed + 99);
        canopy_points qry = canopy_points_make(qp, nq, d);
        int64_t *bi = malloc(sizeof(int64_t) * (size_t)(n * k + cells));
        int64_t *gi = malloc(sizeof(int64_t) * (size_t)(n * k + cells));
        float *bd = malloc(sizeof(float) * (size_t)(n * k + cells));
        float *gd = malloc(sizeof(float) * (size_t)(n * k + cells));
        float *dq = NULL;
        int64_t *di = NULL;
        CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(nq * d)) == cudaSuccess);
        CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)cells) == cudaSuccess);
        CHECK(cudaMemcpy(dq, qp, sizeof(float) * (size_t)(nq * d), cudaMemcpyHostToDevice) ==
              cudaSuccess);
        CHECK_OK(canopy_knn_brute(canopy_points_make(dense, n, d), qry, (int32_t)k, bi, bd));
        /* first the device-only paths (no host twin yet), then those that make it */
        CHECK_OK(canopy_index_knn_device(dx, dq, nq, (int32_t)k, NULL, di, NULL, stream, NULL));
        CHECK(cudaMemcpy(gi, di, sizeof(int64_t) * (size_t)cells, cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK_MSG(memcmp(gi, bi, sizeof(int64_t) * (size_t)cells) == 0,
                  "%s: device-pointer kNN differs from brute force", tag);
        canopy_run_options o = gpu_opts();
        memset(gi, 0xff, sizeof(int64_t) * (size_t)cells);
        CHECK_OK(canopy_index_knn(dx, qry, (int32_t)k, &o, gi, gd, NULL));
        CHECK_MSG(memcmp(gi, bi, sizeof(int64_t) * (size_t)cells) == 0 &&
                      memcmp(gd, bd, sizeof(float) * (size_t)cells) == 0,
                  "%s: host-array kNN differs from brute force", tag);
        o.backend = CANOPY_BACKEND_CPU;
        memset(gi, 0xff, sizeof(int64_t) * (size_t)cells);
        CHECK_OK(canopy_index_knn(dx, qry, (int32_t)k, &o, gi, gd, NULL));
        CHECK_MSG(memcmp(gi, bi, sizeof(int64_t) * (size_t)cells) == 0,
                  "%s: CPU kNN differs from brute force", tag);
        CHECK_OK(canopy_knn_brute(canopy_points_make(dense, n, d), canopy_points_make(NULL, 0, d),
                                  (int32_t)k, bi + cells, bd + cells));
        o.backend = CANOPY_BACKEND_GPU;
        CHECK_OK(canopy_index_knn(dx, canopy_points_make(NULL, 0, d), (int32_t)k, &o, gi + cells,
                                  gd + cells, NULL));
        CHECK_MSG(memcmp(gi + cells, bi + cells, sizeof(int64_t) * (size_t)(n * k)) == 0,
                  "%s: self-query differs from brute force", tag);
        self_device_case(dx, canopy_points_make(dense, n, d), (int32_t)k, bi + cells, bd + cells,
                         tag);
        cudaFree(dq), cudaFree(di);
        free(qp), free(bi), free(gi), free(bd), free(gd);
    }
    /* no points: nothing to answer, nothing written */
    if (n == 0) CHECK_OK(canopy_index_knn_self_device(dx, 8, 0, NULL, NULL, NULL, stream, NULL));
    CHECK_MSG(same_tree(dx, hx), "%s: the tree differs from the host-point build's", tag);
out:
    canopy_index_free(dx), canopy_index_free(hx);
    cudaFree(dp);
    cudaStreamDestroy(stream);
    free(dense), free(rows);
}

/* n points at one place (every 97th elsewhere), kNN on the device (the kd walk for
 * k <= 16, the generic heap beyond): brute force's rows (ties by the smaller index), and
 * the tie rule keeps the walk from visiting every node (issue 35). Queries at the
 * common place and elsewhere. */
static void identical_case(int64_t n, int32_t d, uint64_t seed) {
    char tag[96];
    snprintf(tag, sizeof tag, "identical points n=%lld d=%d", (long long)n, (int)d);
    const int64_t nq = 300;
    float *p = malloc(sizeof(float) * (size_t)(n * d)),
          *q = malloc(sizeof(float) * (size_t)(nq * d));
    rng_state = seed;
    for (int64_t i = 0; i < n; i++)
        for (int32_t j = 0; j < d; j++) p[i * d + j] = i % 97 == 5 ? (float)rnd() : 0.25f;
    for (int64_t i = 0; i < nq; i++)
        for (int32_t j = 0; j < d; j++) q[i * d + j] = i % 5 == 4 ? (float)rnd() : 0.25f;
    float *dp = NULL, *dq = NULL;
    int64_t *di = NULL;
    CHECK(cudaMalloc((void **)&dp, sizeof(float) * (size_t)(n * d)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(nq * d)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)(nq * 20)) == cudaSuccess);
    CHECK(cudaMemcpy(dp, p, sizeof(float) * (size_t)(n * d), cudaMemcpyHostToDevice) ==
          cudaSuccess);
    CHECK(cudaMemcpy(dq, q, sizeof(float) * (size_t)(nq * d), cudaMemcpyHostToDevice) ==
          cudaSuccess);
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build_device(canopy_points_make(dp, n, d), NULL, NULL, &ix));
    int64_t *bi = malloc(sizeof(int64_t) * (size_t)(nq * 20)),
            *gi = malloc(sizeof(int64_t) * (size_t)(nq * 20));
    float *bd = malloc(sizeof(float) * (size_t)(nq * 20));
    static const int32_t ks[] = {1, 8, 20};
    for (int i = 0; ix && i < 3; i++) {
        int32_t k = ks[i];
        canopy_stats st;
        CHECK_OK(
            canopy_knn_brute(canopy_points_make(p, n, d), canopy_points_make(q, nq, d), k, bi, bd));
        CHECK_OK(canopy_index_knn_device(ix, dq, nq, k, NULL, di, NULL, NULL, &st));
        CHECK(cudaMemcpy(gi, di, sizeof(int64_t) * (size_t)(nq * k), cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK_MSG(memcmp(gi, bi, sizeof(int64_t) * (size_t)(nq * k)) == 0,
                  "%s k=%d: device kNN differs from brute force", tag, (int)k);
        printf("%s k=%d: %.1f nodes per query\n", tag, (int)k, st.nodes_per_query);
        /* a whole walk tests about n / 4 nodes; the prune leaves a few dozen to a few
         * hundred (small trees are too shallow to tell) */
        CHECK_MSG(n < 10000 || st.nodes_per_query < (double)n / 40,
                  "%s k=%d: %.1f nodes per query (the tie rule prunes none?)", tag, (int)k,
                  st.nodes_per_query);
    }
    canopy_index_free(ix);
    cudaFree(dp), cudaFree(dq), cudaFree(di);
    free(p), free(q), free(bi), free(gi), free(bd);
}

/* What canopy_index_build_device refuses: host points, a non-finite coordinate, other
 * kinds, a bad shape. */
static void device_build_errors(void) {
    float pts[6] = {0, 1, 2, 3, 4, 5}, *dp = NULL;
    canopy_index *ix = NULL;
    CHECK_FAILS(canopy_index_build_device(canopy_points_make(pts, 3, 2), NULL, NULL, &ix),
                CANOPY_ERR_INVALID, "device memory");
    CHECK(ix == NULL);
    pts[3] = NAN;
    CHECK(cudaMalloc((void **)&dp, sizeof pts) == cudaSuccess);
    CHECK(cudaMemcpy(dp, pts, sizeof pts, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK_FAILS(canopy_index_build_device(canopy_points_make(dp, 3, 2), NULL, NULL, &ix),
                CANOPY_ERR_INVALID, "row 1 is not finite");
    canopy_index_options ball = canopy_index_options_default(CANOPY_TREE_BALL);
    CHECK_FAILS(canopy_index_build_device(canopy_points_make(dp, 3, 2), &ball, NULL, &ix),
                CANOPY_ERR_UNSUPPORTED, "built on the host");
    CHECK_FAILS(canopy_index_build_device((canopy_points){dp, 3, 2, 1}, NULL, NULL, &ix),
                CANOPY_ERR_INVALID, "bad shape");
    CHECK(ix == NULL);
    cudaFree(dp);
}

/* A large tree (1.2M points, over 37,000 kd buckets of 16-32 points): grouped by
 * bucket equals the caller's order and brute force on a sample, and a second order on
 * the same index (its scratch reused) again. */
static void many_buckets_case(uint64_t seed) {
    const int64_t n = 1200000, nq = 40000, ns = 50;
    const int32_t k = 4;
    float *rp = make_points(n, 2, 0, seed), *qp = make_points(nq, 2, 0, seed + 1);
    canopy_points ref = canopy_points_make(rp, n, 2);
    canopy_index *ix = build(ref, CANOPY_TREE_KD, CANOPY_RESIDENCY_DEVICE);
    float *dq = NULL;
    int64_t *di = NULL, *hi[3];
    CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(nq * 2)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)(nq * k)) == cudaSuccess);
    CHECK(cudaMemcpy(dq, qp, sizeof(float) * (size_t)(nq * 2), cudaMemcpyHostToDevice) ==
          cudaSuccess);
    static const canopy_schedule order[3] = {CANOPY_SCHEDULE_NONE, CANOPY_SCHEDULE_TREE,
                                             CANOPY_SCHEDULE_TREE};
    for (int r = 0; r < 3; r++) {
        canopy_run_options o = canopy_run_options_default();
        o.schedule = order[r];
        canopy_stats st;
        hi[r] = malloc(sizeof(int64_t) * (size_t)(nq * k));
        CHECK(cudaMemset(di, 0xff, sizeof(int64_t) * (size_t)(nq * k)) == cudaSuccess);
        CHECK_OK(canopy_index_knn_device(ix, dq, nq, k, &o, di, NULL, NULL, &st));
        CHECK(st.schedule == order[r]);
        CHECK(cudaMemcpy(hi[r], di, sizeof(int64_t) * (size_t)(nq * k), cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK_MSG(memcmp(hi[r], hi[0], sizeof(int64_t) * (size_t)(nq * k)) == 0,
                  "many buckets: order %d (%s) differs from the caller's order", r,
                  canopy_schedule_name(order[r]));
    }
    int64_t bi[4];
    float bd[4];
    for (int64_t j = 0; j < ns; j++) {
        int64_t q = j * (nq / ns);
        CHECK_OK(canopy_knn_brute(ref, canopy_points_make(qp + 2 * q, 1, 2), k, bi, bd));
        CHECK_MSG(memcmp(bi, hi[1] + q * k, sizeof bi) == 0, "many buckets: query %lld differs",
                  (long long)q);
    }
    CHECK(cudaFree(dq) == cudaSuccess && cudaFree(di) == cudaSuccess);
    canopy_index_free(ix);
    free(rp), free(qp), free(hi[0]), free(hi[1]), free(hi[2]);
}

/* The kd bucket order's grid (d <= 3) against brute force where its cells do not fit
 * the queries: queries far outside the points' box (clamped onto its edge cells, many
 * to one bucket), points flat in one axis (a box of zero width there), and the same
 * index queried again (the counters the scatter cleared). */
static void bucket_grid_case(int32_t d, int flat, uint64_t seed) {
    char tag[96];
    snprintf(tag, sizeof tag, "bucket grid d=%d%s", (int)d, flat ? " flat" : "");
    const int64_t n = small ? 900 : 30000, nq = small ? 600 : 20000;
    const int32_t k = 4;
    float *p = make_points(n, d, 0, seed), *q = make_points(nq, d, 0, seed + 1);
    for (int64_t i = 0; i < n && flat; i++) p[i * d + d - 1] = 0.5f;
    /* a third beyond the box on every side, a third at one far point */
    for (int64_t i = 0; i < nq; i++)
        for (int32_t j = 0; j < d; j++)
            q[i * d + j] = i % 3 == 0   ? q[i * d + j] * 5.0f - 2.0f
                           : i % 3 == 1 ? 7.0f
                                        : q[i * d + j];
    canopy_points ref = canopy_points_make(p, n, d), qry = canopy_points_make(q, nq, d);
    canopy_index *ix = build(ref, CANOPY_TREE_KD, CANOPY_RESIDENCY_DEVICE);
    float *dq = NULL;
    int64_t *di = NULL;
    CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(nq * d)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)(nq * k)) == cudaSuccess);
    CHECK(cudaMemcpy(dq, q, sizeof(float) * (size_t)(nq * d), cudaMemcpyHostToDevice) ==
          cudaSuccess);
    int64_t *bi = malloc(sizeof(int64_t) * (size_t)(nq * k)),
            *gi = malloc(sizeof(int64_t) * (size_t)(nq * k));
    float *bd = malloc(sizeof(float) * (size_t)(nq * k));
    CHECK_OK(canopy_knn_brute(ref, qry, k, bi, bd));
    canopy_run_options o = canopy_run_options_default();
    o.schedule = CANOPY_SCHEDULE_TREE;
    for (int r = 0; r < 2; r++) {
        canopy_stats st;
        CHECK(cudaMemset(di, 0xff, sizeof(int64_t) * (size_t)(nq * k)) == cudaSuccess);
        CHECK_OK(canopy_index_knn_device(ix, dq, nq, k, &o, di, NULL, NULL, r ? &st : NULL));
        CHECK(!r || st.schedule == CANOPY_SCHEDULE_TREE);
        CHECK(cudaMemcpy(gi, di, sizeof(int64_t) * (size_t)(nq * k), cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        CHECK_MSG(memcmp(gi, bi, sizeof(int64_t) * (size_t)(nq * k)) == 0,
                  "%s: call %d differs from brute force", tag, r);
    }
    canopy_index_free(ix);
    cudaFree(dq), cudaFree(di);
    free(p), free(q), free(bi), free(gi), free(bd);
}

/* The kd bucket order's forms (CANOPY_GPU_ORDER fused, shared and two, read when an index
 * makes its order tables) against brute force: uniform, clustered and duplicate points
 * in 1-3 dimensions (the grid) and 5 (none), n = 1 (the root the only bucket), n < k,
 * up to 30,000 points, a quarter of the queries outside the points' box, each index
 * queried three times with other query counts and k (the shared form's two count
 * buffers alternate, each cleared by the other call's scatter). A bad form is refused. */
static const char *order_forms[] = {"fused", "shared", "two"};
/* A device index of ref made under CANOPY_GPU_ORDER=form (its order state is made with
 * the first grouped call, in that form), and *o set to group the queries by kd bucket. */
static canopy_index *index_in_form(canopy_points ref, const char *form, canopy_run_options *o) {
    setenv("CANOPY_GPU_ORDER", form, 1);
    *o = canopy_run_options_default();
    o->schedule = CANOPY_SCHEDULE_TREE;
    return build(ref, CANOPY_TREE_KD, CANOPY_RESIDENCY_DEVICE);
}
static void order_forms_case(uint64_t seed) {
    const char **forms = order_forms;
    static const int32_t dims[] = {1, 2, 3, 5};
    static const int64_t sizes[] = {1, 3, 40, 2500, 30000};
    static const int32_t ks[] = {8, 1, 4};
    const int64_t nq_max = small ? 400 : 3000;
    for (int di = 0; di < 4; di++)
        for (int si = 0; si < 5; si++)
            for (int kind = 0; kind < 3; kind++) {
                const int32_t d = dims[di];
                const int64_t n = sizes[si];
                if (small && n > 2500) continue;
                const uint64_t sd = seed + (uint64_t)(di * 101 + si * 11 + kind);
                float *p = make_points(n, d, kind, sd), *q = make_points(nq_max, d, kind, sd + 1);
                for (int64_t i = 0; i < nq_max * d; i += 4 * d)
                    for (int32_t j = 0; j < d; j++) q[i + j] = q[i + j] * 3.0f - 1.0f;
                canopy_points ref = canopy_points_make(p, n, d);
                float *dq = NULL, *dd = NULL;
                int64_t *di_ = NULL;
                const size_t cells = (size_t)(nq_max * 8);
                CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(nq_max * d)) ==
                      cudaSuccess);
                CHECK(cudaMalloc((void **)&di_, sizeof(int64_t) * cells) == cudaSuccess);
                CHECK(cudaMalloc((void **)&dd, sizeof(float) * cells) == cudaSuccess);
                CHECK(cudaMemcpy(dq, q, sizeof(float) * (size_t)(nq_max * d),
                                 cudaMemcpyHostToDevice) == cudaSuccess);
                int64_t *bi[3], *gi = malloc(sizeof(int64_t) * cells);
                float *bd[3], *gd = malloc(sizeof(float) * cells);
                int64_t nqs[3];
                for (int r = 0; r < 3; r++) {
                    nqs[r] = r == 1 ? 1 + nq_max / 7 : r == 2 ? 1 : nq_max;
                    bi[r] = malloc(sizeof(int64_t) * cells), bd[r] = malloc(sizeof(float) * cells);
                    CHECK_OK(canopy_knn_brute(ref, canopy_points_make(q, nqs[r], d), ks[r], bi[r],
                                              bd[r]));
                }
                for (int f = 0; f < 3; f++) {
                    canopy_run_options o;
                    canopy_index *ix = index_in_form(ref, forms[f], &o);
                    for (int r = 0; r < 4; r++) {
                        const int c = r % 3; /* the fourth call repeats the first */
                        const size_t m = (size_t)(nqs[c] * ks[c]);
                        canopy_stats st;
                        CHECK(cudaMemset(di_, 0xff, sizeof(int64_t) * cells) == cudaSuccess);
                        CHECK_OK(canopy_index_knn_device(ix, dq, nqs[c], ks[c], &o, di_, dd, NULL,
                                                         r == 1 ? &st : NULL));
                        CHECK(r != 1 || st.schedule == CANOPY_SCHEDULE_TREE);
                        CHECK(cudaMemcpy(gi, di_, sizeof(int64_t) * m, cudaMemcpyDeviceToHost) ==
                              cudaSuccess);
                        CHECK(cudaMemcpy(gd, dd, sizeof(float) * m, cudaMemcpyDeviceToHost) ==
                              cudaSuccess);
                        CHECK_MSG(memcmp(gi, bi[c], sizeof(int64_t) * m) == 0 &&
                                      memcmp(gd, bd[c], sizeof(float) * m) == 0,
                                  "order form %s: n=%lld d=%d kind=%d, call %d (%lld queries, "
                                  "k=%d) differs from brute force",
                                  forms[f], (long long)n, (int)d, kind, r, (long long)nqs[c],
                                  (int)ks[c]);
                    }
                    canopy_index_free(ix);
                }
                unsetenv("CANOPY_GPU_ORDER");
                for (int r = 0; r < 3; r++) free(bi[r]), free(bd[r]);
                free(gi), free(gd), free(p), free(q);
                cudaFree(dq), cudaFree(di_), cudaFree(dd);
            }
    /* a form the library does not know fails the grouped call, and the index recovers */
    float pts[8] = {0, 1, 2, 3, 4, 5, 6, 7}, *dq = NULL;
    int64_t *di_ = NULL, hi[4];
    CHECK(cudaMalloc((void **)&dq, sizeof pts) == cudaSuccess);
    CHECK(cudaMalloc((void **)&di_, sizeof hi) == cudaSuccess);
    CHECK(cudaMemcpy(dq, pts, sizeof pts, cudaMemcpyHostToDevice) == cudaSuccess);
    canopy_index *ix =
        build(canopy_points_make(pts, 4, 2), CANOPY_TREE_KD, CANOPY_RESIDENCY_DEVICE);
    canopy_run_options o = canopy_run_options_default();
    o.schedule = CANOPY_SCHEDULE_TREE;
    setenv("CANOPY_GPU_ORDER", "three", 1);
    CHECK_FAILS(canopy_index_knn_device(ix, dq, 4, 1, &o, di_, NULL, NULL, NULL),
                CANOPY_ERR_INVALID, "CANOPY_GPU_ORDER=three");
    unsetenv("CANOPY_GPU_ORDER");
    CHECK_OK(canopy_index_knn_device(ix, dq, 4, 1, &o, di_, NULL, NULL, NULL));
    CHECK(cudaMemcpy(hi, di_, sizeof hi, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(hi[0] == 0 && hi[1] == 1 && hi[2] == 2 && hi[3] == 3);
    canopy_index_free(ix);
    cudaFree(dq), cudaFree(di_);
}

/* Many queries on few points, k = 1, each form: the fused kernel's threads take 2-3
 * queries at 300k on the H200 (132 blocks of 1024 fit at once), and 700k exceed its
 * four a thread, so that call runs the shared form. */
static void order_many_queries_case(uint64_t seed) {
    const int64_t n = 40, nqs[2] = {300000, 700000}, nq_max = 700000;
    float *p = make_points(n, 2, 0, seed), *q = make_points(nq_max, 2, 1, seed + 1);
    float *dq = NULL;
    int64_t *di = NULL, *bi = malloc(sizeof(int64_t) * (size_t)nq_max),
            *gi = malloc(sizeof(int64_t) * (size_t)nq_max);
    float *bd = malloc(sizeof(float) * (size_t)nq_max);
    CHECK(cudaMalloc((void **)&dq, sizeof(float) * (size_t)(2 * nq_max)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&di, sizeof(int64_t) * (size_t)nq_max) == cudaSuccess);
    CHECK(cudaMemcpy(dq, q, sizeof(float) * (size_t)(2 * nq_max), cudaMemcpyHostToDevice) ==
          cudaSuccess);
    canopy_points ref = canopy_points_make(p, n, 2);
    CHECK_OK(canopy_knn_brute(ref, canopy_points_make(q, nq_max, 2), 1, bi, bd));
    for (int f = 0; f < 3; f++) {
        canopy_run_options o;
        canopy_index *ix = index_in_form(ref, order_forms[f], &o);
        for (int r = 0; r < 2; r++) {
            CHECK(cudaMemset(di, 0xff, sizeof(int64_t) * (size_t)nqs[r]) == cudaSuccess);
            CHECK_OK(canopy_index_knn_device(ix, dq, nqs[r], 1, &o, di, NULL, NULL, NULL));
            CHECK(cudaMemcpy(gi, di, sizeof(int64_t) * (size_t)nqs[r], cudaMemcpyDeviceToHost) ==
                  cudaSuccess);
            CHECK_MSG(memcmp(gi, bi, sizeof(int64_t) * (size_t)nqs[r]) == 0,
                      "order form %s: %lld queries on %lld points differ from brute force",
                      order_forms[f], (long long)nqs[r], (long long)n);
        }
        canopy_index_free(ix);
    }
    unsetenv("CANOPY_GPU_ORDER");
    free(p), free(q), free(bi), free(gi), free(bd);
    cudaFree(dq), cudaFree(di);
}

int main(void) {
    int skip = check_gpu();
    if (skip) return skip;
    uint64_t seed = check_seed();
    /* 8: the kd walk's largest dimension (auto walks it in lockstep); 9: above it, the
     * generic engines */
    static const int32_t dims[] = {1, 2, 3, 8, 9};
    static const int64_t sizes[] = {1, 5, 1000, 20000};
    static const canopy_residency res[] = {CANOPY_RESIDENCY_DEVICE, CANOPY_RESIDENCY_BOTH};
    char tag[128];
    const char *small_env = getenv("CANOPY_GPU_SMALL");
    small = small_env && (small_env[0] == '1' || strcmp(small_env, "order") == 0);
    if (small_env && strcmp(small_env, "order") == 0) {
        order_forms_case(seed + 4000);
        bucket_grid_case(2, 0, seed + 3002);
        bucket_grid_case(3, 1, seed + 3013);
        return check_finish();
    }
    const int n_sizes = small ? 3 : 4;
    for (int si = 0; si < n_sizes; si++)
        for (int di = 0; di < 5; di++)
            for (int kind = 0; kind < 3; kind++)
                for (int ri = 0; ri < 2; ri++) {
                    int64_t n = sizes[si];
                    int32_t d = dims[di];
                    uint64_t sd = seed + (uint64_t)(si * 131 + di * 17 + kind * 3 + ri);
                    float *rp = make_points(n, d, kind, sd);
                    int64_t nq = n < 50 ? 7 : 2000;
                    float *qp = make_points(nq, d, kind, sd + 7);
                    canopy_points ref = canopy_points_make(rp, n, d);
                    canopy_points qry = canopy_points_make(qp, nq, d);
                    canopy_tree_kind tk = kind == 1 ? CANOPY_TREE_BALL : CANOPY_TREE_KD;
                    snprintf(tag, sizeof tag, "n=%lld d=%d kind=%d %s tree %s", (long long)n, d,
                             kind, res[ri] == CANOPY_RESIDENCY_DEVICE ? "device" : "both",
                             canopy_tree_kind_name(tk));
                    knn_case(ref, qry, res[ri], 8, tk, tag);
                    if (si >= 2) knn_case(ref, qry, res[ri], 1, tk, tag);
                    /* register lists of 4 and 16 slots, the heap beyond 16; n = 5: n < k */
                    if (si == 1 || (si == 2 && ri == 0)) {
                        knn_case(ref, qry, res[ri], 3, tk, tag);
                        knn_case(ref, qry, res[ri], 16, tk, tag);
                        knn_case(ref, qry, res[ri], 20, tk, tag);
                    }
                    radius_case(ref, qry, res[ri], tk, d >= 7 ? 0.35f : 0.05f, tag);
                    free(rp), free(qp);
                }
    /* builds from device pointers: n = 0, 1, n < leaf, duplicates, d = 1, 2, 3, 7,
     * leaves of 1, 8 (default), 32, strided rows */
    static const int32_t bdims[] = {1, 2, 3, 7};
    for (int di = 0; di < 4; di++)
        for (int kind = 0; kind < 3; kind++) {
            uint64_t sd = seed + 1000 + (uint64_t)(di * 7 + kind);
            int32_t d = bdims[di];
            device_build_case(0, d, kind, 0, d, sd);
            device_build_case(1, d, kind, 0, d, sd);
            device_build_case(5, d, kind, 8, d + 1, sd);
            device_build_case(small ? 700 : 5000, d, kind, 0, d, sd);
            device_build_case(small ? 300 : 3000, d, kind, 1, d + 3, sd);
            device_build_case(small ? 900 : 20000, d, kind, 32, d, sd);
        }
    device_build_errors();
    identical_case(small ? 1000 : 20000, 3, seed + 2000);
    identical_case(small ? 1000 : 20000, 2, seed + 2001);
    order_forms_case(seed + 4000);
    order_many_queries_case(seed + 5000);
    for (int32_t d = 1; d <= 3; d++) {
        bucket_grid_case(d, 0, seed + 3000 + (uint64_t)d);
        if (d > 1) bucket_grid_case(d, 1, seed + 3010 + (uint64_t)d);
    }
    if (!small) {
        many_queries_case(seed + 5);
        many_buckets_case(seed + 6);
        gravity_case(3000, seed + 1);
        gravity_case(40000, seed + 2);
        search_case(1, seed + 3);
        search_case(50000, seed + 4);
    }
    /* a freed resident handle is rejected by every entry, the device one included */
    float pts[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    canopy_index *ix =
        build(canopy_points_make(pts, 4, 2), CANOPY_TREE_KD, CANOPY_RESIDENCY_DEVICE);
    canopy_index *dead = ix;
    canopy_index_free(ix);
    int64_t out[4];
    CHECK_FAILS(canopy_index_knn_device(dead, pts, 1, 1, NULL, out, NULL, NULL, NULL),
                CANOPY_ERR_INVALID, "not a live index");
    CHECK_FAILS(canopy_index_knn(dead, canopy_points_make(pts, 1, 2), 1, NULL, out, NULL, NULL),
                CANOPY_ERR_INVALID, "not a live index");
    return check_finish();
}
