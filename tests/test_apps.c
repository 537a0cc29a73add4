/* SPDX-License-Identifier: MIT */
/* Every traversal application (knn through kd/ball/vp, radius, gravity, search)
 * against its brute-force reference, over every CPU variant, schedule and tree kind
 * that applies, on fresh random inputs and degenerate ones. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const canopy_variant cpu_variants[] = {CANOPY_VARIANT_REC,    CANOPY_VARIANT_DR,
                                              CANOPY_VARIANT_SR,     CANOPY_VARIANT_GDR,
                                              CANOPY_VARIANT_SIMD_L, CANOPY_VARIANT_AUTO};
enum { N_VARIANTS = sizeof cpu_variants / sizeof cpu_variants[0] };
static const canopy_schedule schedules[] = {CANOPY_SCHEDULE_NONE,   CANOPY_SCHEDULE_TREE,
                                            CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_HILBERT,
                                            CANOPY_SCHEDULE_HYBRID, CANOPY_SCHEDULE_AUTO};
enum { N_SCHEDULES = sizeof schedules / sizeof schedules[0] };

typedef enum { INPUT_UNIFORM, INPUT_DUPLICATES, INPUT_ALL_EQUAL, INPUT_GRID } input_kind;

static float *make_points(int64_t n, int32_t d, input_kind kind, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    canopy_rng r = canopy_rng_make(seed, 0);
    for (int64_t i = 0; i < n; i++)
        for (int32_t j = 0; j < d; j++) {
            float v = (float)canopy_rng_uniform(&r);
            if (kind == INPUT_DUPLICATES && i % 3 != 0) v = p[(i - i % 3) * d + j];
            if (kind == INPUT_ALL_EQUAL) v = 0.25f;
            if (kind == INPUT_GRID) v = (float)((i + j) % 4) * 0.25f; /* many equal distances */
            p[i * d + j] = v;
        }
    return p;
}

/* Runs fn under one (variant, schedule); returns 0 if that combination is not
 * available in this build (reported once), 1 if it ran. */
static int available(canopy_status s, canopy_variant v, int guided) {
    if (s == CANOPY_ERR_UNSUPPORTED) return 0;
    if (v == CANOPY_VARIANT_SR && guided) {
        CHECK_MSG(s == CANOPY_ERR_INVALID, "sr on a guided app must be refused, got %s",
                  canopy_status_name(s));
        return 0;
    }
    CHECK_MSG(s == CANOPY_OK, "variant %s failed: %s", canopy_variant_name(v), canopy_last_error());
    return s == CANOPY_OK;
}

static int ran_combinations;

static void check_knn_case(int64_t n, int64_t nq, int32_t d, int32_t k, input_kind kind,
                           canopy_tree_kind tree, int self, uint64_t seed) {
    float *ref = make_points(n, d, kind, seed);
    float *qry = make_points(nq, d, kind == INPUT_ALL_EQUAL ? kind : INPUT_UNIFORM, seed + 1);
    canopy_points rp = canopy_points_make(ref, n, d);
    canopy_points qp = self ? (canopy_points){NULL, 0, 0, 0} : canopy_points_make(qry, nq, d);
    int64_t m = self ? n : nq;
    int64_t *bi = malloc(sizeof(int64_t) * (size_t)(m * k + 1));
    int64_t *ti = malloc(sizeof(int64_t) * (size_t)(m * k + 1));
    float *bd = malloc(sizeof(float) * (size_t)(m * k + 1));
    float *td = malloc(sizeof(float) * (size_t)(m * k + 1));
    CHECK_OK(canopy_knn_brute(rp, qp, k, bi, bd));
    for (int vi = 0; vi < N_VARIANTS; vi++)
        for (int si = 0; si < N_SCHEDULES; si++) {
            canopy_run_options o = canopy_run_options_default();
            o.variant = cpu_variants[vi];
            o.schedule = schedules[si];
            o.tree = tree;
            o.leaf_size = 1 + (int32_t)(seed % 9);
            canopy_status s = canopy_knn(rp, qp, k, &o, ti, td, NULL);
            if (!available(s, o.variant, 1)) continue;
            ran_combinations++;
            int same = memcmp(bi, ti, sizeof(int64_t) * (size_t)(m * k)) == 0 &&
                       memcmp(bd, td, sizeof(float) * (size_t)(m * k)) == 0;
            CHECK_MSG(same,
                      "knn %s/%s/%s n=%lld nq=%lld d=%d k=%d kind=%d self=%d seed=%llu differs "
                      "from brute force",
                      canopy_tree_kind_name(tree), canopy_variant_name(o.variant),
                      canopy_schedule_name(o.schedule), (long long)n, (long long)nq, (int)d, (int)k,
                      (int)kind, self, (unsigned long long)seed);
        }
    free(ref);
    free(qry);
    free(bi);
    free(ti);
    free(bd);
    free(td);
}

static void check_radius_case(int64_t n, int64_t nq, int32_t d, float r, input_kind kind,
                              canopy_tree_kind tree, int self, uint64_t seed) {
    float *ref = make_points(n, d, kind, seed);
    float *qry = make_points(nq, d, INPUT_UNIFORM, seed + 7);
    canopy_points rp = canopy_points_make(ref, n, d);
    canopy_points qp = self ? (canopy_points){NULL, 0, 0, 0} : canopy_points_make(qry, nq, d);
    int64_t m = self ? n : nq;
    int64_t *bc = malloc(sizeof(int64_t) * (size_t)(m + 1));
    int64_t *tc = malloc(sizeof(int64_t) * (size_t)(m + 1));
    CHECK_OK(canopy_radius_count_brute(rp, qp, r, bc));
    for (int vi = 0; vi < N_VARIANTS; vi++)
        for (int si = 0; si < N_SCHEDULES; si++) {
            canopy_run_options o = canopy_run_options_default();
            o.variant = cpu_variants[vi];
            o.schedule = schedules[si];
            o.tree = tree;
            canopy_status s = canopy_radius_count(rp, qp, r, &o, tc, NULL);
            if (!available(s, o.variant, 0)) continue;
            ran_combinations++;
            CHECK_MSG(memcmp(bc, tc, sizeof(int64_t) * (size_t)m) == 0,
                      "radius %s/%s/%s n=%lld d=%d r=%g self=%d seed=%llu differs",
                      canopy_tree_kind_name(tree), canopy_variant_name(o.variant),
                      canopy_schedule_name(o.schedule), (long long)n, (int)d, (double)r, self,
                      (unsigned long long)seed);
        }
    free(ref);
    free(qry);
    free(bc);
    free(tc);
}

/* rms relative error of canopy_gravity against ref, the float64 direct sums */
static double gravity_error(const float *pos, int64_t n, const double *ref, float theta, float eps,
                            canopy_variant v, canopy_status *st) {
    canopy_points b = canopy_points_make(pos, n, 3);
    float *acc = malloc(sizeof(float) * (size_t)(3 * n));
    canopy_run_options o = canopy_run_options_default();
    o.variant = v;
    *st = canopy_gravity(b, NULL, theta, eps, &o, acc, NULL);
    double num = 0, den = 0;
    if (*st == CANOPY_OK) {
        for (int64_t i = 0; i < 3 * n; i++) {
            num += (acc[i] - ref[i]) * (acc[i] - ref[i]);
            den += ref[i] * ref[i];
        }
    }
    free(acc);
    return den > 0 ? sqrt(num / den) : 0.0;
}

static void check_gravity(uint64_t seed) {
    /* quick: still past LANES_MIN_QUERIES (128) and under SCHEDULE_MIN_QUERIES, as 4,000 */
    int64_t n = check_quick() ? 2000 : 4000;
    const float eps = 0.01f;
    float *pos = malloc(sizeof(float) * (size_t)(3 * n));
    double *ref = malloc(sizeof(double) * (size_t)(3 * n));
    CHECK_OK(canopy_gen_plummer(pos, NULL, n, seed));
    CHECK_OK(canopy_gravity_direct(canopy_points_make(pos, n, 3), NULL, eps, ref));
    for (int vi = 0; vi < N_VARIANTS; vi++) {
        canopy_status s;
        double e_half = gravity_error(pos, n, ref, 0.5f, eps, cpu_variants[vi], &s);
        if (!available(s, cpu_variants[vi], 0)) continue;
        ran_combinations++;
        double e_quarter = gravity_error(pos, n, ref, 0.25f, eps, cpu_variants[vi], &s);
        double e_tight = gravity_error(pos, n, ref, 0.05f, eps, cpu_variants[vi], &s);
        CHECK_MSG(e_half < 0.01, "gravity %s: rms error %.3g at theta 0.5 (>= 1%%)",
                  canopy_variant_name(cpu_variants[vi]), e_half);
        CHECK_MSG(e_quarter < e_half && e_tight < e_quarter,
                  "gravity %s: error must fall with theta: %.3g, %.3g, %.3g",
                  canopy_variant_name(cpu_variants[vi]), e_half, e_quarter, e_tight);
    }
    free(pos);
    free(ref);
}

static int64_t lower_bound(const float *keys, int64_t n, float x) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void check_search(int64_t n, int64_t nq, int dups, uint64_t seed) {
    float *keys = malloc(sizeof(float) * (size_t)(n + 1));
    float *qs = malloc(sizeof(float) * (size_t)(nq + 1));
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(nq + 1));
    canopy_rng r = canopy_rng_make(seed, 3);
    for (int64_t i = 0; i < n; i++)
        keys[i] = dups ? (float)canopy_rng_below(&r, 10) : (float)canopy_rng_uniform(&r);
    qsort(keys, (size_t)n, sizeof(float), cmp_float);
    for (int64_t i = 0; i < nq; i++)
        qs[i] = dups ? (float)canopy_rng_below(&r, 12) - 1.0f
                     : (i % 5 == 0 && n ? keys[canopy_rng_below(&r, (uint64_t)n)]
                                        : (float)(1.2 * canopy_rng_uniform(&r) - 0.1));
    for (int vi = 0; vi < N_VARIANTS; vi++) {
        canopy_run_options o = canopy_run_options_default();
        o.variant = cpu_variants[vi];
        canopy_status s = canopy_search(keys, n, qs, nq, &o, idx, NULL);
        if (!available(s, o.variant, 0)) continue;
        ran_combinations++;
        int ok = 1;
        for (int64_t i = 0; i < nq; i++) ok &= idx[i] == lower_bound(keys, n, qs[i]);
        CHECK_MSG(ok, "search %s n=%lld nq=%lld dups=%d seed=%llu differs from lower_bound",
                  canopy_variant_name(o.variant), (long long)n, (long long)nq, dups,
                  (unsigned long long)seed);
    }
    free(keys);
    free(qs);
    free(idx);
}

static void check_errors(void) {
    float pts[6] = {0, 0, 1, 1, 2, NAN};
    canopy_points good = canopy_points_make(pts, 2, 2), bad = canopy_points_make(pts, 3, 2);
    canopy_points self = {NULL, 0, 0, 0};
    int64_t idx[8];
    float dd[8];
    CHECK_FAILS(canopy_knn(good, self, 0, NULL, idx, dd, NULL), CANOPY_ERR_INVALID, "k must be");
    CHECK_FAILS(canopy_knn(bad, self, 1, NULL, idx, dd, NULL), CANOPY_ERR_INVALID, "NaN");
    CHECK_FAILS(canopy_radius_count(good, self, -1.0f, NULL, idx, NULL), CANOPY_ERR_INVALID,
                "r must be");
    float keys[3] = {2, 1, 3}, q[1] = {1};
    CHECK_FAILS(canopy_search(keys, 3, q, 1, NULL, idx, NULL), CANOPY_ERR_INVALID, "sorted");
    float one[3] = {0, 0, 0};
    CHECK_FAILS(canopy_gravity(canopy_points_make(one, 1, 3), NULL, 0.0f, 0.0f, NULL, dd, NULL),
                CANOPY_ERR_INVALID, "theta");
    canopy_run_options o = canopy_run_options_default();
    o.variant = CANOPY_VARIANT_SR;
    CHECK_FAILS(canopy_knn(good, self, 1, &o, idx, dd, NULL), CANOPY_ERR_INVALID, "unguided");
    float q3[3] = {0, 0, 0};
    CHECK_FAILS(canopy_knn(good, canopy_points_make(q3, 1, 3), 1, NULL, idx, dd, NULL),
                CANOPY_ERR_INVALID, "dimensions");
}

/* Self-kNN of n identical points: the answer is the k smallest other indices at
 * distance 0, and each query must visit O(log n) nodes, not the whole tree (issue 35:
 * ties used to defeat pruning, 300k points took over a minute). */
static void check_knn_identical(canopy_tree_kind tree, int32_t k, uint64_t seed) {
    /* quick: leaves of <= 16 still make > 1,000 nodes, so a walk of all fails the bound */
    const int64_t n = check_quick() ? 10000 : 20000;
    float *p = make_points(n, 3, INPUT_ALL_EQUAL, seed);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)(n * k));
    float *d2 = malloc(sizeof(float) * (size_t)(n * k));
    for (int vi = 0; vi < N_VARIANTS; vi++) {
        canopy_run_options o = canopy_run_options_default();
        o.variant = cpu_variants[vi];
        o.tree = tree;
        o.leaf_size = 1 + (int32_t)(seed % 16);
        canopy_stats st;
        canopy_status s = canopy_knn(canopy_points_make(p, n, 3), (canopy_points){NULL, 0, 0, 0}, k,
                                     &o, idx, d2, &st);
        if (!available(s, o.variant, 1)) continue;
        ran_combinations++;
        int64_t wrong = -1;
        for (int64_t q = 0; q < n && wrong < 0; q++)
            for (int32_t j = 0; j < k; j++)
                if (idx[q * k + j] != j + (j >= q) || d2[q * k + j] != 0.0f) wrong = q;
        CHECK_MSG(wrong < 0, "knn identical %s/%s k=%d: query %lld is not its k smallest others",
                  canopy_tree_kind_name(tree), canopy_variant_name(o.variant), (int)k,
                  (long long)wrong);
        CHECK_MSG(st.nodes_per_query < 400,
                  "knn identical %s/%s k=%d: %.0f nodes per query (n %lld): ties are not pruned",
                  canopy_tree_kind_name(tree), canopy_variant_name(o.variant), (int)k,
                  st.nodes_per_query, (long long)n);
    }
    free(p);
    free(idx);
    free(d2);
}

int main(void) {
    uint64_t seed = check_seed();
    static const canopy_tree_kind knn_trees[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP};
    static const int32_t dims[] = {1, 2, 3, 7, 16};
    /* quick: the two largest cases keep their queries between LANES_MIN_QUERIES (128)
     * and SCHEDULE_MIN_QUERIES (4,096), as at full size; their references cost n x nq */
    const int quick = check_quick();
    const int64_t k64_n = quick ? 1000 : 2000, k64_nq = quick ? 150 : 300;
    const int64_t big_n = quick ? 6000 : 20000, big_nq = quick ? 600 : 2000;
    for (int rep = 0; rep < 2; rep++) {
        uint64_t s = seed + 1000 * (uint64_t)rep;
        for (int ti = 0; ti < 3; ti++) {
            canopy_tree_kind tk = knn_trees[ti];
            for (int di = 0; di < 5; di++) {
                check_knn_case(300, 120, dims[di], 5, INPUT_UNIFORM, tk, 0, s + di);
                check_radius_case(300, 120, dims[di], 0.3f, INPUT_UNIFORM, tk, 0, s + di);
            }
            check_knn_case(1, 3, 2, 1, INPUT_UNIFORM, tk, 0, s);       /* n = 1 */
            check_knn_case(4, 10, 3, 9, INPUT_UNIFORM, tk, 0, s);      /* k > n: padded */
            check_knn_case(200, 0, 3, 4, INPUT_UNIFORM, tk, 0, s);     /* empty query set */
            check_knn_case(0, 5, 2, 2, INPUT_UNIFORM, tk, 0, s);       /* empty reference */
            check_knn_case(500, 0, 3, 8, INPUT_DUPLICATES, tk, 1, s);  /* self, duplicates */
            check_knn_case(64, 20, 2, 10, INPUT_ALL_EQUAL, tk, 0, s);  /* all equal: ties */
            check_knn_case(400, 50, 3, 7, INPUT_GRID, tk, 1, s);       /* many tied distances */
            check_knn_case(k64_n, k64_nq, 7, 64, INPUT_UNIFORM, tk, 0, s); /* k = 64 */
            check_radius_case(500, 0, 2, 0.1f, INPUT_DUPLICATES, tk, 1, s);
            check_radius_case(64, 10, 3, 0.0f, INPUT_ALL_EQUAL, tk, 0, s); /* r = 0, ties */
            check_radius_case(400, 80, 3, 0.25f, INPUT_GRID, tk, 1, s);    /* on the boundary */
            check_knn_identical(tk, rep ? 20 : 1 + (int32_t)(s % 8), s);
        }
        check_knn_case(big_n, big_nq, 3, 8, INPUT_UNIFORM, CANOPY_TREE_KD, 0, s);
        check_gravity(s);
        check_search(1000, 500, 0, s);
        check_search(1000, 500, 1, s);
        check_search(1, 5, 0, s);
        check_search(0, 5, 0, s);
    }
    check_errors();
    printf("%d (application, variant, schedule, tree) runs compared with references\n",
           ran_combinations);
    CHECK(ran_combinations > 0);
    return check_finish();
}
