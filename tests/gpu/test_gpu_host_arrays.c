/* SPDX-License-Identifier: MIT */
/* Host arrays in and out on the GPU (issue 14): a resident index's canopy_index_knn
 * through pinned staging, and canopy_knn's device path (kd tree built on the GPU from
 * host points), against brute force on fresh random inputs: d = 1, 2, 7, duplicates,
 * n < k, strided queries, indices without distances, k = 1, 8, 17 (register lists and
 * the heap), inputs and results cut into several pieces, calls of growing and
 * shrinking size on one index, backend auto on both sides of its GPU threshold,
 * self-queries (which keep the generic path), and the stats that say which path ran.
 * Exits 77 without a GPU. CANOPY_GPU_SMALL=1 skips the large cases (compute-sanitizer). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* n rows of `stride` floats (points of d <= stride coordinates) uniform in [0, 1);
 * dup: 4 values a coordinate (many equal distances, the index tie rule decides). */
static float *make_points(int64_t n, int64_t stride, int dup, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * stride + 1));
    if (n > 0) CHECK_OK(canopy_gen_uniform(p, n * stride, 1, 0.0, 1.0, seed));
    for (int64_t i = 0; dup && i < n * stride; i++) p[i] = (float)(int)(p[i] * 4.0f);
    return p;
}

static canopy_points view(const float *p, int64_t n, int32_t d, int64_t stride) {
    canopy_points v = canopy_points_make(p, n, d);
    v.stride = stride;
    return v;
}

/* Brute-force rows for queries q (any stride) among ref. */
static void brute(canopy_points ref, canopy_points q, int32_t k, int64_t *bi, float *bd) {
    CHECK_OK(canopy_knn_brute(ref, q, k, bi, bd));
}

/* The staged device path ran: through pinned staging (an index's calls, strided
 * queries, canopy_knn's calls after its first) or, pageable, straight from and to the
 * caller's arrays (canopy_knn's first call in a process); how "" accepts either. */
static int staged(const canopy_stats *st, const char *how) {
    return st->upload_seconds > 0.0 && st->download_seconds > 0.0 &&
           check_contains(st->note, "host arrays through") && check_contains(st->note, how);
}

/* One index, several query sets of different sizes (the staging grows and is reused),
 * strided or dense, with and without distances. */
static void index_case(int64_t n, int32_t d, int32_t k, int dup, const int64_t *nqs, int n_nq,
                       uint64_t seed) {
    float *rp = make_points(n, d, dup, seed);
    canopy_points ref = canopy_points_make(rp, n, d);
    canopy_index_options io = canopy_index_options_default(CANOPY_TREE_KD);
    io.residency = CANOPY_RESIDENCY_DEVICE;
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(ref, &io, &ix));
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    for (int t = 0; t < n_nq; t++) {
        int64_t nq = nqs[t], stride = t % 2 ? d + 3 : d, cells = nq * k;
        float *qp = make_points(nq, stride, dup, seed + 11 + (uint64_t)t);
        canopy_points q = view(qp, nq, d, stride);
        int64_t *bi = malloc(sizeof(int64_t) * (size_t)(cells + 1)),
                *gi = malloc(sizeof(int64_t) * (size_t)(cells + 1));
        float *bd = malloc(sizeof(float) * (size_t)(cells + 1)),
              *gd = malloc(sizeof(float) * (size_t)(cells + 1));
        brute(ref, q, k, bi, bd);
        canopy_stats st;
        memset(gi, 0xff, sizeof(int64_t) * (size_t)cells);
        memset(gd, 0xff, sizeof(float) * (size_t)cells);
        CHECK_OK(canopy_index_knn(ix, q, k, &o, gi, gd, &st));
        CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)cells) == 0 &&
                      memcmp(bd, gd, sizeof(float) * (size_t)cells) == 0,
                  "index n=%lld d=%d k=%d dup=%d nq=%lld stride %lld: kNN differs from brute "
                  "force",
                  (long long)n, d, k, dup, (long long)nq, (long long)stride);
        CHECK_MSG(staged(&st, "pinned staging") && st.backend == CANOPY_BACKEND_GPU &&
                      st.tree_upload_bytes == 0 && st.queries == nq &&
                      st.transfer_seconds == st.upload_seconds + st.download_seconds,
                  "index nq=%lld: stats do not show the staged path (note: %s)", (long long)nq,
                  st.note);
        /* indices only: the distances stay on the device */
        memset(gi, 0xff, sizeof(int64_t) * (size_t)cells);
        CHECK_OK(canopy_index_knn(ix, q, k, &o, gi, NULL, NULL));
        CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)cells) == 0,
                  "index nq=%lld k=%d: indices without distances differ", (long long)nq, k);
        free(qp), free(bi), free(gi), free(bd), free(gd);
    }
    canopy_index_free(ix);
    free(rp);
}

/* canopy_knn on the GPU builds its kd tree there: equal to brute force under the
 * variants and schedules the device path offers; self-queries keep the generic path. */
static void one_call_case(int64_t n, int64_t nq, int32_t d, int32_t k, int dup, uint64_t seed) {
    float *rp = make_points(n, d, dup, seed), *qp = make_points(nq, d, dup, seed + 3);
    canopy_points ref = canopy_points_make(rp, n, d), q = canopy_points_make(qp, nq, d);
    int64_t cells = nq * k, scells = n * k;
    int64_t *bi = malloc(sizeof(int64_t) * (size_t)(cells + scells + 1)),
            *gi = malloc(sizeof(int64_t) * (size_t)(cells + scells + 1));
    float *bd = malloc(sizeof(float) * (size_t)(cells + scells + 1)),
          *gd = malloc(sizeof(float) * (size_t)(cells + scells + 1));
    brute(ref, q, k, bi, bd);
    static const canopy_variant vs[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_DR, CANOPY_VARIANT_GDR,
                                        CANOPY_VARIANT_DR_L};
    static const canopy_schedule ss[] = {CANOPY_SCHEDULE_AUTO, CANOPY_SCHEDULE_NONE,
                                         CANOPY_SCHEDULE_MORTON};
    for (int vi = 0; vi < 4; vi++)
        for (int si = 0; si < 3; si++) {
            canopy_run_options o = canopy_run_options_default();
            o.backend = CANOPY_BACKEND_GPU;
            o.variant = vs[vi];
            o.schedule = ss[si];
            canopy_stats st;
            memset(gi, 0xff, sizeof(int64_t) * (size_t)cells);
            CHECK_OK(canopy_knn(ref, q, k, &o, gi, gd, &st));
            CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)cells) == 0 &&
                          memcmp(bd, gd, sizeof(float) * (size_t)cells) == 0,
                      "canopy_knn n=%lld nq=%lld d=%d k=%d dup=%d %s/%s: differs from brute "
                      "force",
                      (long long)n, (long long)nq, d, k, dup, canopy_variant_name(vs[vi]),
                      canopy_schedule_name(ss[si]));
            CHECK_MSG(staged(&st, "") && st.build_seconds > 0.0 && !st.index_reused &&
                          st.tree_upload_bytes == 0 && check_contains(st.note, "built on the GPU"),
                      "canopy_knn: stats do not show the device build (note: %s)", st.note);
        }
    /* strided queries go through pinned staging (packed first) */
    float *wide = make_points(nq, d + 2, dup, seed + 3);
    for (int64_t i = 0; i < nq; i++)
        memcpy(wide + i * (d + 2), qp + i * d, sizeof(float) * (size_t)d);
    canopy_run_options wo = canopy_run_options_default();
    wo.backend = CANOPY_BACKEND_GPU;
    canopy_stats wst;
    memset(gi, 0xff, sizeof(int64_t) * (size_t)cells);
    CHECK_OK(canopy_knn(ref, view(wide, nq, d, d + 2), k, &wo, gi, NULL, &wst));
    CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)cells) == 0 &&
                  staged(&wst, "pinned staging"),
              "canopy_knn strided n=%lld nq=%lld d=%d k=%d: differs or not staged (%s)",
              (long long)n, (long long)nq, d, k, wst.note);
    free(wide);
    /* self-queries: the generic path (it uploads the host tree) */
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    canopy_points self = canopy_points_make(NULL, 0, d);
    canopy_stats st;
    brute(ref, self, k, bi + cells, bd + cells);
    CHECK_OK(canopy_knn(ref, self, k, &o, gi + cells, gd + cells, &st));
    CHECK_MSG(memcmp(bi + cells, gi + cells, sizeof(int64_t) * (size_t)scells) == 0,
              "canopy_knn self n=%lld d=%d k=%d: differs from brute force", (long long)n, d, k);
    CHECK_MSG(!staged(&st, "") && st.tree_upload_bytes > 0,
              "canopy_knn self: took the staged path");
    free(rp), free(qp), free(bi), free(gi), free(bd), free(gd);
}

/* Backend auto moves work to the GPU from 20000 queries, on both paths alike. */
static void auto_case(uint64_t seed) {
    int64_t n = 3000;
    float *rp = make_points(n, 3, 0, seed), *qp = make_points(20000, 3, 0, seed + 1);
    canopy_points ref = canopy_points_make(rp, n, 3);
    int64_t *gi = malloc(sizeof(int64_t) * 20000 * 4), *bi = malloc(sizeof(int64_t) * 20000 * 4);
    float *gd = malloc(sizeof(float) * 20000 * 4), *bd = malloc(sizeof(float) * 20000 * 4);
    canopy_stats st;
    for (int big = 0; big < 2; big++) {
        canopy_points q = canopy_points_make(qp, big ? 20000 : 19999, 3);
        brute(ref, q, 4, bi, bd);
        CHECK_OK(canopy_knn(ref, q, 4, NULL, gi, gd, &st));
        CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)(q.n * 4)) == 0,
                  "auto nq=%lld: differs from brute force", (long long)q.n);
        CHECK_MSG(staged(&st, "") == big &&
                      st.backend == (big ? CANOPY_BACKEND_GPU : CANOPY_BACKEND_CPU),
                  "auto nq=%lld: backend %s, staged %d", (long long)q.n,
                  canopy_backend_name(st.backend), staged(&st, ""));
    }
    free(rp), free(qp), free(gi), free(bi), free(gd), free(bd);
}

/* canopy_knn's first device call in the process copies pageable, the next ones share
 * pinned staging (grown when a call needs more); all equal brute force. Must run
 * before any other canopy_knn call of this program. */
static void first_calls_case(uint64_t seed) {
    static const int64_t nqs[] = {300, 200, 900};
    static const char *const how[] = {"pageable", "pinned staging", "pinned staging"};
    float *rp = make_points(400, 3, 0, seed);
    canopy_points ref = canopy_points_make(rp, 400, 3);
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    for (int c = 0; c < 3; c++) {
        float *qp = make_points(nqs[c], 3, 0, seed + 1 + (uint64_t)c);
        canopy_points q = canopy_points_make(qp, nqs[c], 3);
        int64_t *bi = malloc(sizeof(int64_t) * (size_t)nqs[c] * 5),
                *gi = malloc(sizeof(int64_t) * (size_t)nqs[c] * 5);
        float *bd = malloc(sizeof(float) * (size_t)nqs[c] * 5),
              *gd = malloc(sizeof(float) * (size_t)nqs[c] * 5);
        canopy_stats st;
        brute(ref, q, 5, bi, bd);
        CHECK_OK(canopy_knn(ref, q, 5, &o, gi, gd, &st));
        CHECK_MSG(memcmp(bi, gi, sizeof(int64_t) * (size_t)nqs[c] * 5) == 0 &&
                      memcmp(bd, gd, sizeof(float) * (size_t)nqs[c] * 5) == 0 &&
                      staged(&st, how[c]),
                  "canopy_knn call %d (nq %lld): differs from brute force or not %s (note: %s)", c,
                  (long long)nqs[c], how[c], st.note);
        free(qp), free(bi), free(gi), free(bd), free(gd);
    }
    free(rp);
}

int main(void) {
    int skip = check_gpu();
    if (skip) return skip;
    uint64_t seed = check_seed();
    const char *small_env = getenv("CANOPY_GPU_SMALL");
    const int small = small_env && small_env[0] == '1';
    first_calls_case(seed + 31);
    static const int64_t few[] = {1, 300, 37, 1000};
    for (int dup = 0; dup < 2; dup++) {
        index_case(500, 1, 8, dup, few, 4, seed + 1 + (uint64_t)dup);
        index_case(500, 2, 1, dup, few, 4, seed + 3 + (uint64_t)dup);
        index_case(500, 7, 17, dup, few, 4, seed + 5 + (uint64_t)dup);
        index_case(5, 3, 8, dup, few, 4, seed + 7 + (uint64_t)dup); /* n < k */
        one_call_case(700, 500, 7, 8, dup, seed + 9 + (uint64_t)dup);
        one_call_case(300, 200, 1, 3, dup, seed + 11 + (uint64_t)dup);
        one_call_case(6, 50, 2, 8, dup, seed + 13 + (uint64_t)dup); /* n < k */
    }
    if (!small) {
        /* several pieces each way: 170k x 7 floats in (> 4 MB), 60k x 8 rows out; then
         * smaller and larger calls on the same staging */
        static const int64_t many[] = {170000, 60000, 2000, 90001};
        index_case(3000, 7, 8, 0, many, 4, seed + 21);
        index_case(3000, 2, 17, 1, many + 1, 2, seed + 23);
        one_call_case(20000, 60000, 3, 8, 0, seed + 25);
        auto_case(seed + 27);
    }
    return check_finish();
}
