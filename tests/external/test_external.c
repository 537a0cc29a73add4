/* SPDX-License-Identifier: MIT */
/* A traversal compiled outside src/ with include/ as its only include directory
 * (CMakeLists.txt: test_external): the docs' nearest-point example (nearest.c,
 * guided, child permutations) and a ball count (unguided, whole-subtree counting),
 * each run under every CPU variant and schedule on every tree kind and compared with
 * brute force on several seeds and sizes, empty and d = 1 included. The ball count
 * also has vector hooks (ball_lanes.h): simd_l must make no scalar hook calls for it
 * and some for nearest (which has none). */
#include "ball_lanes.h"
#include "nearest.h"

#include <canopy/traverse_cpu.h>
#include <canopy/traverse_geom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, " (%s)\n", canopy_last_error());                                       \
        }                                                                                          \
    } while (0)

CANOPY_CPU_INSTANTIATE_LANES(ball, &ball_app)

/* ---------------------------------------------------------------- checks ---- */

static uint64_t rng;
static float uniform(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng >> 40) / (float)(1u << 24);
}

/* Points on a coarse grid (duplicates and distance ties) or uniform. */
static float *make_points(int64_t n, int32_t d, int coarse) {
    float *p = malloc((size_t)(n * d + 1) * sizeof *p);
    for (int64_t i = 0; i < n * d; i++)
        p[i] = coarse ? (float)(int)(uniform() * 6.0f) : uniform() * 10.0f - 5.0f;
    return p;
}

/* check_quick() of tests/check.h, which this test, built against include/ alone, cannot
 * include: the sanitizer build sets CANOPY_TEST_QUICK to shrink the largest case */
static int quick(void) {
    const char *env = getenv("CANOPY_TEST_QUICK");
    return env && *env && strcmp(env, "0") != 0;
}

static const canopy_variant variants[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_REC,
                                          CANOPY_VARIANT_DR,   CANOPY_VARIANT_SR,
                                          CANOPY_VARIANT_GDR,  CANOPY_VARIANT_SIMD_L};
static const canopy_schedule schedules[] = {CANOPY_SCHEDULE_AUTO,   CANOPY_SCHEDULE_NONE,
                                            CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_HILBERT,
                                            CANOPY_SCHEDULE_TREE,   CANOPY_SCHEDULE_HYBRID};

static void check_case(canopy_tree_kind kind, int64_t n, int64_t nq, int32_t d, int coarse) {
    float *ref = make_points(n, d, coarse), *qry = make_points(nq, d, coarse);
    canopy_points rp = canopy_points_make(ref, n, d), qp = canopy_points_make(qry, nq, d);
    canopy_tree_options to = canopy_tree_options_default(kind);
    to.leaf_size = 1 + (int32_t)(uniform() * 8);
    canopy_tree *tree = NULL;
    if (canopy_tree_build(rp, &to, &tree)) {
        EXPECT(0, "build %s n=%lld d=%d", canopy_tree_kind_name(kind), (long long)n, (int)d);
        free(ref);
        free(qry);
        return;
    }
    const canopy_tree_view *tv = canopy_tree_get_view(tree);
    EXPECT(tv && tv->n == n && tv->d == d, "tree view");
    /* brute force */
    float r = 0.5f + 2.0f * uniform(), r2 = r * r;
    int64_t *want_idx = malloc((size_t)(nq + 1) * sizeof *want_idx);
    int64_t *want_cnt = malloc((size_t)(nq + 1) * sizeof *want_cnt);
    float *want_d2 = malloc((size_t)(nq + 1) * sizeof *want_d2);
    for (int64_t q = 0; q < nq; q++) {
        want_idx[q] = -1;
        want_cnt[q] = 0;
        want_d2[q] = INFINITY;
        for (int64_t i = 0; i < n; i++) {
            float d2 = canopy_dist2(canopy_point(qp, q), canopy_point(rp, i), d);
            if (d2 < want_d2[q]) {
                want_d2[q] = d2;
                want_idx[q] = i;
            }
            want_cnt[q] += d2 <= r2;
        }
    }
    int64_t *idx = malloc((size_t)(nq + 1) * sizeof *idx), *cnt = malloc((size_t)(nq + 1) * 8);
    float *d2 = malloc((size_t)(nq + 1) * sizeof *d2);
    for (size_t vi = 0; vi < sizeof variants / sizeof *variants; vi++)
        for (size_t si = 0; si < sizeof schedules / sizeof *schedules; si++) {
            canopy_run_options o = canopy_run_options_default();
            o.backend = CANOPY_BACKEND_CPU;
            o.variant = variants[vi];
            o.schedule = schedules[si];
            const char *vn = canopy_variant_name(o.variant), *sn = canopy_schedule_name(o.schedule);
            const char *kn = canopy_tree_kind_name(kind);
            memset(idx, 0x5a, (size_t)(nq + 1) * sizeof *idx);
            canopy_stats st;
            canopy_status s = nearest_run(tree, qp, &o, idx, d2, &st);
            if (o.variant == CANOPY_VARIANT_SR) {
                EXPECT(s == CANOPY_ERR_INVALID, "nearest: sr must refuse a guided traversal");
            } else {
                EXPECT(s == CANOPY_OK, "nearest %s %s %s n=%lld", kn, vn, sn, (long long)n);
                for (int64_t q = 0; !s && q < nq; q++)
                    if (idx[q] != want_idx[q] || (n && d2[q] != want_d2[q])) {
                        EXPECT(0, "nearest %s %s %s n=%lld d=%d q=%lld: %lld, want %lld", kn, vn,
                               sn, (long long)n, (int)d, (long long)q, (long long)idx[q],
                               (long long)want_idx[q]);
                        break;
                    }
                EXPECT(s || st.queries == nq, "stats.queries");
                EXPECT(s || st.variant != CANOPY_VARIANT_SIMD_L || nq == 0 || st.lane_calls > 0,
                       "nearest simd_l: no lane_calls without vector hooks");
            }
            ball_ctx bc = {qp, r2, cnt};
            canopy_traversal tr = {"ball", &ball_app, ball_cpu_runners, NULL, &bc, qp, nq, NULL};
            s = canopy_traverse(tree, &tr, &o, &st);
            EXPECT(s == CANOPY_OK, "ball %s %s %s n=%lld", kn, vn, sn, (long long)n);
            EXPECT(s || st.lane_calls == 0, "ball %s: %lld scalar hook calls despite vector hooks",
                   vn, (long long)st.lane_calls);
            for (int64_t q = 0; !s && q < nq; q++)
                if (cnt[q] != want_cnt[q]) {
                    EXPECT(0, "ball %s %s %s n=%lld d=%d q=%lld: %lld, want %lld", kn, vn, sn,
                           (long long)n, (int)d, (long long)q, (long long)cnt[q],
                           (long long)want_cnt[q]);
                    break;
                }
        }
    canopy_tree_free(tree);
    free(ref);
    free(qry);
    free(want_idx);
    free(want_cnt);
    free(want_d2);
    free(idx);
    free(cnt);
    free(d2);
}

/* Bad descriptors and traversals are refused with a message, never run. */
static void check_refusals(void) {
    float pts[6] = {0, 1, 2, 3, 4, 5};
    canopy_points p = canopy_points_make(pts, 6, 1);
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    canopy_tree *tree = NULL;
    EXPECT(canopy_tree_build(p, &to, &tree) == CANOPY_OK, "build");
    int64_t cnt[6];
    ball_ctx bc = {p, 1.0f, cnt};
    canopy_app bad = ball_app;
    bad.visit_leaf = NULL;
    canopy_traversal tr = {"bad", &bad, ball_cpu_runners, NULL, &bc, p, 6, NULL};
    EXPECT(canopy_traverse(tree, &tr, NULL, NULL) == CANOPY_ERR_INVALID, "missing visit_leaf");
    bad = ball_app;
    bad.state_size = CANOPY_MAX_STATE + 1;
    EXPECT(canopy_traverse(tree, &tr, NULL, NULL) == CANOPY_ERR_INVALID, "state too large");
    tr.app = &ball_app;
    tr.queries.data = NULL;
    canopy_run_options o = canopy_run_options_default();
    o.schedule = CANOPY_SCHEDULE_MORTON;
    EXPECT(canopy_traverse(tree, &tr, &o, NULL) == CANOPY_ERR_INVALID, "morton without positions");
    o.schedule = CANOPY_SCHEDULE_NONE;
    EXPECT(canopy_traverse(tree, &tr, &o, NULL) == CANOPY_OK, "none without positions");
    EXPECT(cnt[0] == 2 && cnt[3] == 3, "ball count on a line: %lld %lld", (long long)cnt[0],
           (long long)cnt[3]);
    o.backend = CANOPY_BACKEND_GPU;
    EXPECT(canopy_traverse(tree, &tr, &o, NULL) == CANOPY_ERR_UNSUPPORTED, "gpu without runner");
    canopy_tree_free(tree);
}

int main(void) {
    const canopy_tree_kind kinds[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP,
                                      CANOPY_TREE_OCT};
    /* quick: the largest keeps its queries (n / 2 + 3) past LANES_MIN_QUERIES (128) and
     * under SCHEDULE_MIN_QUERIES (4,096), as at full size; brute force costs n x nq */
    const int64_t sizes[] = {0, 1, 7, 300, quick() ? 1000 : 2500};
    for (uint64_t seed = 1; seed <= 3; seed++) {
        rng = seed * 0x9e3779b97f4a7c15ull;
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
            for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
                const int32_t dims[] = {1, 2, 5};
                for (size_t di = 0; di < 3; di++) {
                    int32_t d = kinds[k] == CANOPY_TREE_OCT ? 3 : dims[di];
                    if (kinds[k] == CANOPY_TREE_OCT && di) break;
                    int64_t nq = z == 0 ? (seed == 1 ? 0 : 40) : sizes[z] / 2 + 3;
                    check_case(kinds[k], sizes[z], nq, d, (int)(seed & 1));
                }
            }
    }
    check_refusals();
    if (failures) {
        fprintf(stderr, "test_external: %d failures\n", failures);
        return 1;
    }
    printf("test_external: ok\n");
    return 0;
}
