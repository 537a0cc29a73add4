/* SPDX-License-Identifier: MIT */
/* simd_l with vector hooks (radius, kNN, gravity: each application's X_lanes.h, gathered
 * by src/apps/lanes_body.h) equals the per-lane path of the same descriptors and the
 * brute-force reference, for every lane width this CPU runs (16 AVX-512 lanes, 8 AVX2
 * lanes, 8 portable lanes), with partial
 * packets, unsorted, tree-sorted and shuffled query orders, duplicates, d = 1 and
 * empty inputs; its counters equal the per-lane path's, and only the per-lane path
 * makes scalar hook calls (lane_calls). The 16-lane hooks are also compiled here for the
 * default target (portable lanes), so that 16-lane logic is tested on every CPU. */
#define SIMT_W 16
#define CANOPY_LANES_ISA generic16
#include "apps/lanes_body.h"

#include "apps/lanes.h"
#include "canopy/traverse_cpu.h"
#include "check.h"
#include "traverse/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The vector runners, one per lane width (src/apps/lanes_*.c). */
#define LANE_RUNNERS(NAME)                                                                         \
    canopy_status canopy_simd_l_##NAME##_avx512(const canopy_trav_job *job,                        \
                                                canopy_trav_counters *cnt);                        \
    canopy_status canopy_simd_l_##NAME##_avx2(const canopy_trav_job *job,                          \
                                              canopy_trav_counters *cnt);                          \
    canopy_status canopy_simd_l_##NAME##_generic(const canopy_trav_job *job,                       \
                                                 canopy_trav_counters *cnt);
LANE_RUNNERS(radius)
LANE_RUNNERS(knn)
LANE_RUNNERS(gravity)

/* The per-lane path of the same descriptors at 8 and 16 lanes. */
#define PER_LANE_RUNNER(NAME, APP, W)                                                              \
    static canopy_status NAME(const canopy_trav_job *job, canopy_trav_counters *cnt) {             \
        CANOPY_CPU_RUNNER_BODY(APP, canopy_cpu_simd_l_plan,                                        \
                               canopy_cpu_simd_l(APP, job, &team, &mine, W))                       \
    }
PER_LANE_RUNNER(radius_lane8, &radius_app, 8)
PER_LANE_RUNNER(radius_lane16, &radius_app, 16)
PER_LANE_RUNNER(knn_lane8, &knn_app, 8)
PER_LANE_RUNNER(knn_lane16, &knn_app, 16)
PER_LANE_RUNNER(gravity_lane8, &gravity_app, 8)
PER_LANE_RUNNER(gravity_lane16, &gravity_app, 16)
CANOPY_CPU_RUNNER(grav, &gravity_app, dr, canopy_cpu_dr)

typedef struct width_pair {
    const char *isa;
    canopy_isa needs;
    canopy_cpu_runner vec[3], lane[3]; /* radius, knn, gravity */
} width_pair;

static const width_pair widths[] = {
    {"avx512",
     CANOPY_ISA_AVX512,
     {canopy_simd_l_radius_avx512, canopy_simd_l_knn_avx512, canopy_simd_l_gravity_avx512},
     {radius_lane16, knn_lane16, gravity_lane16}},
    {"avx2",
     CANOPY_ISA_AVX2,
     {canopy_simd_l_radius_avx2, canopy_simd_l_knn_avx2, canopy_simd_l_gravity_avx2},
     {radius_lane8, knn_lane8, gravity_lane8}},
    {"generic",
     CANOPY_ISA_SCALAR,
     {canopy_simd_l_radius_generic, canopy_simd_l_knn_generic, canopy_simd_l_gravity_generic},
     {radius_lane8, knn_lane8, gravity_lane8}},
    {"generic16",
     CANOPY_ISA_SCALAR,
     {canopy_simd_l_radius_generic16, canopy_simd_l_knn_generic16, canopy_simd_l_gravity_generic16},
     {radius_lane16, knn_lane16, gravity_lane16}},
};
enum { N_WIDTHS = 4, APP_RADIUS = 0, APP_KNN = 1, APP_GRAVITY = 2 };

/* n x d points in [0, 1); dup: snapped to a 3-value grid (duplicates, distance ties). */
static float *make_points(int64_t n, int32_t d, int dup, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    CHECK_OK(canopy_gen_uniform(p, n, d, 0.0, 1.0, seed));
    for (int64_t i = 0; dup && i < n * d; i++) p[i] = (float)(int)(p[i] * 3.0f) * 0.5f;
    return p;
}

/* Query orders: caller's (NULL), tree-sorted, shuffled. */
enum { N_ORDERS = 3 };
static void make_order(int o, canopy_points qp, const canopy_tree *tree, uint64_t seed,
                       int64_t *order) {
    if (o == 1) {
        CHECK_OK(
            canopy_schedule_queries(CANOPY_SCHEDULE_TREE, qp, canopy_tree_get_view(tree), order));
        return;
    }
    canopy_rng r = canopy_rng_make(seed, 3);
    for (int64_t i = 0; i < qp.n; i++) order[i] = i;
    for (int64_t i = qp.n - 1; i > 0; i--) {
        int64_t j = (int64_t)canopy_rng_below(&r, (uint64_t)i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

/* Runs the vector and per-lane paths of width w on job, each writing the outputs
 * `out` (bytes) points to; checks counters and that both wrote the same bytes. The
 * vector path's output stays in out. */
static void run_pair(const width_pair *w, int app, const canopy_trav_job *job, void *out,
                     size_t bytes, const char *what) {
    void *lane_out = malloc(bytes + 1);
    canopy_trav_counters cv = {0}, cl = {0};
    memset(out, 0x5a, bytes);
    CHECK_OK(w->lane[app](job, &cl));
    memcpy(lane_out, out, bytes);
    memset(out, 0xa5, bytes);
    CHECK_OK(w->vec[app](job, &cv));
    CHECK_MSG(memcmp(out, lane_out, bytes) == 0, "%s %s: vector hooks differ from per-lane", what,
              w->isa);
    CHECK_MSG(cv.nodes == cl.nodes && cv.group_nodes == cl.group_nodes &&
                  cv.group_longest == cl.group_longest && cv.groups == cl.groups,
              "%s %s: counters differ (nodes %lld/%lld, union %lld/%lld)", what, w->isa,
              (long long)cv.nodes, (long long)cl.nodes, (long long)cv.group_nodes,
              (long long)cl.group_nodes);
    CHECK_MSG(cv.lane_calls == 0 && (job->nq == 0 || cl.lane_calls > 0),
              "%s %s: lane_calls vector %lld, per-lane %lld", what, w->isa,
              (long long)cv.lane_calls, (long long)cl.lane_calls);
    free(lane_out);
}

/* ------------------------------------------------------------ radius, knn -- */

typedef struct search_case {
    int64_t n, nq; /* nq 0 with self: the reference queries itself */
    int32_t d;
    int dup, self;
    canopy_tree_kind kind;
} search_case;

static void test_search(const search_case *c, uint64_t seed, canopy_isa best) {
    float *ref = make_points(c->n, c->d, c->dup, seed);
    int64_t nq = c->self ? c->n : c->nq;
    float *qs = c->self ? ref : make_points(nq, c->d, c->dup, seed + 1);
    /* every third query a copy of a reference point: exact zero distances */
    for (int64_t i = 0; !c->self && c->n > 0 && i < nq; i += 3)
        memcpy(qs + i * c->d, ref + (i % c->n) * c->d, sizeof(float) * (size_t)c->d);
    canopy_points rp = canopy_points_make(ref, c->n, c->d), qp = canopy_points_make(qs, nq, c->d);
    canopy_tree_options to = canopy_tree_options_default(c->kind);
    to.leaf_size = 8;
    canopy_tree *tree = NULL;
    CHECK_OK(canopy_tree_build(rp, &to, &tree));
    const canopy_tree_view *tv = canopy_tree_get_view(tree);
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(nq + 1));
    char what[160];

    /* radius: about 10 neighbours, and 0 and everything */
    int64_t *want = malloc(sizeof(int64_t) * (size_t)(nq + 1));
    int64_t *counts = malloc(sizeof(int64_t) * (size_t)(nq + 1));
    canopy_points brute_q = c->self ? canopy_points_make(NULL, 0, c->d) : qp;
    const float radii[] = {0.0f, powf(10.0f / (float)(c->n + 1), 1.0f / (float)c->d) * 0.6f,
                           2.0f * sqrtf((float)c->d)};
    if (c->kind != CANOPY_TREE_OCT || c->d == 3) {
        for (int ri = 0; ri < 3; ri++) {
            CHECK_OK(canopy_radius_count_brute(rp, brute_q, radii[ri], want));
            radius_ctx ctx = {qp, radii[ri] * radii[ri], c->self, counts};
            for (int o = 0; o < N_ORDERS; o++) {
                make_order(o, qp, tree, seed + (uint64_t)o, order);
                canopy_trav_job job = {&ctx, tv, o ? order : NULL, nq, 0.0};
                for (int wi = 0; wi < N_WIDTHS; wi++) {
                    if (widths[wi].needs > best) continue;
                    snprintf(what, sizeof what,
                             "radius %s n=%lld nq=%lld d=%d dup=%d self=%d r=%g order=%d",
                             canopy_tree_kind_name(c->kind), (long long)c->n, (long long)nq, c->d,
                             c->dup, c->self, (double)radii[ri], o);
                    run_pair(&widths[wi], APP_RADIUS, &job, counts, sizeof(int64_t) * (size_t)nq,
                             what);
                    CHECK_MSG(memcmp(counts, want, sizeof(int64_t) * (size_t)nq) == 0,
                              "%s %s: differs from brute force", what, widths[wi].isa);
                }
            }
        }
    }

    /* kNN (kd, ball, vp) for k = 1, 5, 8 (the vector lists' last size), 9 (the heap's
     * first) and more than n */
    if (c->kind != CANOPY_TREE_OCT) {
        const int32_t ks[] = {1, 5, 8, 9, (int32_t)c->n + 3};
        for (int ki = 0; ki < 5; ki++) {
            int32_t k = ks[ki];
            size_t cells = (size_t)(nq * k) + 1;
            int64_t *wi_ = malloc(sizeof(int64_t) * cells), *idx = malloc(sizeof(int64_t) * cells);
            float *wd = malloc(sizeof(float) * cells), *dist = malloc(sizeof(float) * cells);
            CHECK_OK(canopy_knn_brute(rp, brute_q, k, wi_, wd));
            knn_ctx ctx = {qp, k, c->self, idx, dist};
            for (int o = 0; o < N_ORDERS; o++) {
                make_order(o, qp, tree, seed + 7u + (uint64_t)o, order);
                canopy_trav_job job = {&ctx, tv, o ? order : NULL, nq, 0.0};
                for (int w = 0; w < N_WIDTHS; w++) {
                    if (widths[w].needs > best) continue;
                    snprintf(what, sizeof what,
                             "knn %s n=%lld nq=%lld d=%d dup=%d self=%d k=%d order=%d",
                             canopy_tree_kind_name(c->kind), (long long)c->n, (long long)nq, c->d,
                             c->dup, c->self, k, o);
                    /* the per-lane run writes idx and dist; compare both */
                    run_pair(&widths[w], APP_KNN, &job, idx, sizeof(int64_t) * (cells - 1), what);
                    CHECK_MSG(memcmp(idx, wi_, sizeof(int64_t) * (cells - 1)) == 0 &&
                                  memcmp(dist, wd, sizeof(float) * (cells - 1)) == 0,
                              "%s %s: differs from brute force", what, widths[w].isa);
                }
            }
            free(wi_);
            free(idx);
            free(wd);
            free(dist);
        }
    }
    canopy_tree_free(tree);
    free(order);
    free(want);
    free(counts);
    if (!c->self) free(qs);
    free(ref);
}

/* -------------------------------------------------------------- gravity -- */

static void test_gravity(int64_t n, int dup, uint64_t seed, canopy_isa best) {
    float *pos = make_points(n, 3, dup, seed);
    float *mass = malloc(sizeof(float) * (size_t)(n + 1));
    canopy_rng r = canopy_rng_make(seed, 5);
    for (int64_t i = 0; i < n; i++) mass[i] = 0.5f + (float)canopy_rng_uniform(&r);
    canopy_points bp = canopy_points_make(pos, n, 3);
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_OCT);
    to.leaf_size = 8;
    to.weights = mass;
    canopy_tree *tree = NULL;
    CHECK_OK(canopy_tree_build(bp, &to, &tree));
    const canopy_tree_view *tv = canopy_tree_get_view(tree);
    size_t bytes = sizeof(float) * 3 * (size_t)n;
    float *acc = malloc(bytes + 1), *dr_acc = malloc(bytes + 1);
    double *direct = malloc(sizeof(double) * 3 * (size_t)(n + 1));
    int64_t *order = malloc(sizeof(int64_t) * (size_t)(n + 1));
    CHECK_OK(canopy_gravity_direct(bp, mass, 0.05f, direct));
    gravity_ctx ctx = {bp, 1.0f / 0.4f, 0.05f * 0.05f, acc};
    canopy_trav_counters cnt = {0};
    /* the packet walks each lane's nodes in dr's order: the sums are dr's, bit for bit */
    canopy_trav_job dr_job = {&ctx, tv, NULL, n, 0.0};
    CHECK_OK(grav_cpu_dr(&dr_job, &cnt));
    memcpy(dr_acc, acc, bytes);
    char what[128];
    for (int o = 0; o < N_ORDERS; o++) {
        make_order(o, bp, tree, seed + (uint64_t)o, order);
        canopy_trav_job job = {&ctx, tv, o ? order : NULL, n, 0.0};
        for (int w = 0; w < N_WIDTHS; w++) {
            if (widths[w].needs > best) continue;
            snprintf(what, sizeof what, "gravity n=%lld dup=%d order=%d", (long long)n, dup, o);
            run_pair(&widths[w], APP_GRAVITY, &job, acc, bytes, what);
            CHECK_MSG(memcmp(acc, dr_acc, bytes) == 0, "%s %s: differs from dr", what,
                      widths[w].isa);
            double err = 0.0, norm = 0.0;
            for (int64_t i = 0; i < 3 * n; i++) {
                err += ((double)acc[i] - direct[i]) * ((double)acc[i] - direct[i]);
                norm += direct[i] * direct[i];
            }
            CHECK_MSG(err <= 1e-4 * norm, "%s %s: rms error %g of direct summation", what,
                      widths[w].isa, norm > 0 ? sqrt(err / norm) : sqrt(err));
        }
    }
    canopy_tree_free(tree);
    free(pos);
    free(mass);
    free(acc);
    free(dr_acc);
    free(direct);
    free(order);
}

int main(void) {
    uint64_t seed = check_seed();
    canopy_isa best = canopy_cpu_isa();
    printf("vector hooks on: %s%s generic generic16\n", best >= CANOPY_ISA_AVX512 ? "avx512 " : "",
           best >= CANOPY_ISA_AVX2 ? "avx2" : "");
    static const canopy_tree_kind kinds[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP,
                                             CANOPY_TREE_OCT};
    /* partial packets (nq mod 16, mod 8 != 0), d = 1, duplicates, self, empty */
    const search_case cases[] = {
        {300, 37, 3, 0, 0, CANOPY_TREE_KD}, {200, 45, 1, 0, 0, CANOPY_TREE_KD},
        {250, 29, 3, 1, 0, CANOPY_TREE_KD}, {120, 0, 2, 0, 1, CANOPY_TREE_KD},
        {64, 23, 7, 0, 0, CANOPY_TREE_KD},  {0, 9, 3, 0, 0, CANOPY_TREE_KD},
        {150, 0, 4, 0, 0, CANOPY_TREE_KD},  {1, 5, 2, 0, 0, CANOPY_TREE_KD},
    };
    for (int ki = 0; ki < 4; ki++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            search_case c = cases[i];
            c.kind = kinds[ki];
            if (c.kind == CANOPY_TREE_OCT) c.d = 3;
            test_search(&c, seed + 101u * (uint64_t)i + 7919u * (uint64_t)ki, best);
        }
    test_gravity(333, 0, seed + 1, best);
    test_gravity(200, 1, seed + 2, best);
    test_gravity(1, 0, seed + 3, best);
    test_gravity(0, 0, seed + 4, best);
    return check_finish();
}
