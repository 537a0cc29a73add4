/* SPDX-License-Identifier: MIT */
/* Every CPU variant x every schedule gives the brute-force answer (kNN through the
 * public API; a radius count descriptor defined here through the engines directly),
 * every engine tests each node at most once per query and exactly as often as dr
 * for unguided descriptors, lockstep counters match the union/longest they claim,
 * simd_l agrees with itself under every ISA this CPU has, and the curve schedules
 * are permutations along true space-filling curves. */
#include "apps/knn/knn.h"
#include "check.h"
#include "core/cpu_internal.h"
#include "canopy/traverse_cpu.h"
#include "traverse/run.h"
#include "tree/tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const canopy_variant cpu_variants[] = {CANOPY_VARIANT_REC, CANOPY_VARIANT_DR,
                                              CANOPY_VARIANT_GDR, CANOPY_VARIANT_SIMD_L};
static const canopy_schedule schedules[] = {CANOPY_SCHEDULE_NONE, CANOPY_SCHEDULE_TREE,
                                            CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_HILBERT};
enum { N_VARIANTS = 4, N_SCHEDULES = 4 };

/* ------------------------------------------------------------------- inputs -- */

typedef enum { MODE_UNIFORM, MODE_DUPLICATES, MODE_EQUAL } point_mode;

/* n x d points in [0, 1): uniform, snapped to a 3-value grid (many duplicates and
 * distance ties), or all equal. */
static float *make_points(int64_t n, int32_t d, point_mode mode, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    CHECK_OK(canopy_gen_uniform(p, n, d, 0.0, 1.0, seed));
    for (int64_t i = 0; i < n * d; i++) {
        if (mode == MODE_DUPLICATES) p[i] = (float)(int)(p[i] * 3.0f) * 0.5f;
        if (mode == MODE_EQUAL) p[i] = p[i % d];
    }
    return p;
}

/* Queries like the reference, every third one a copy of a reference point (exact
 * zero distances and ties). */
static float *make_queries(const float *ref, int64_t n, int64_t nq, int32_t d, point_mode mode,
                           uint64_t seed) {
    float *q = make_points(nq, d, mode, seed);
    for (int64_t i = 0; i < nq; i += 3) memcpy(q + i * d, ref + (i % n) * d, sizeof(float) * d);
    return q;
}

/* ---------------------------------------------------------------------- knn -- */

typedef struct knn_case {
    int64_t n, nq;
    int32_t d, k, leaf_size;
    point_mode mode;
    int self;
} knn_case;

static int run_knn(const knn_case *c, canopy_points ref, canopy_points qp, canopy_variant v,
                   canopy_schedule s, const int64_t *want_i, const float *want_d, int64_t *idx,
                   float *dist) {
    canopy_run_options o = canopy_run_options_default();
    o.variant = v;
    o.schedule = s;
    o.leaf_size = c->leaf_size;
    size_t cells = (size_t)(c->nq * c->k);
    memset(idx, 0x5a, sizeof *idx * cells + 1);
    memset(dist, 0x5a, sizeof *dist * cells + 1);
    canopy_stats st;
    canopy_status r = canopy_knn(ref, qp, c->k, &o, idx, dist, &st);
    int ok = r == CANOPY_OK && memcmp(idx, want_i, sizeof *idx * cells) == 0 &&
             memcmp(dist, want_d, sizeof *dist * cells) == 0;
    if (ok && c->nq > 0) ok = st.nodes_per_query >= 1.0 && st.variant == v && st.schedule == s;
    if (ok && v == CANOPY_VARIANT_SIMD_L && c->nq > 0) ok = st.work_expansion >= 1.0;
    CHECK_MSG(ok, "knn %s/%s/%s n=%lld nq=%lld d=%d k=%d leaf=%d mode=%d self=%d: %s %s",
              canopy_variant_name(v), canopy_schedule_name(s), canopy_isa_name(canopy_cpu_isa()),
              (long long)c->n, (long long)c->nq, c->d, c->k, c->leaf_size, (int)c->mode, c->self,
              canopy_status_name(r), r ? canopy_last_error() : "result or stats differ");
    return ok;
}

static void test_knn_case(const knn_case *c, uint64_t seed, canopy_isa best) {
    float *ref = make_points(c->n, c->d, c->mode, seed);
    int64_t nq = c->self ? c->n : c->nq;
    float *q = c->self ? NULL : make_queries(ref, c->n, nq, c->d, c->mode, seed + 1);
    canopy_points rp = canopy_points_make(ref, c->n, c->d);
    /* nq == 0 with a non-NULL pointer is an empty query set, not the self form. */
    canopy_points qp =
        c->self ? canopy_points_make(NULL, 0, c->d) : canopy_points_make(q, nq, c->d);
    knn_case cc = *c;
    cc.nq = nq;
    size_t cells = (size_t)(nq * c->k) + 1;
    int64_t *want_i = malloc(sizeof *want_i * cells), *idx = malloc(sizeof *idx * cells);
    float *want_d = malloc(sizeof *want_d * cells), *dist = malloc(sizeof *dist * cells);
    CHECK_OK(canopy_knn_brute(rp, qp, c->k, want_i, want_d));

    for (int vi = 0; vi < N_VARIANTS; vi++)
        for (int si = 0; si < N_SCHEDULES; si++)
            run_knn(&cc, rp, qp, cpu_variants[vi], schedules[si], want_i, want_d, idx, dist);
    /* Static ropes cannot follow kNN's per-query child order. */
    canopy_run_options o = canopy_run_options_default();
    o.variant = CANOPY_VARIANT_SR;
    CHECK_FAILS(canopy_knn(rp, qp, c->k, &o, idx, dist, NULL), CANOPY_ERR_INVALID,
                "needs an unguided traversal");
    /* simd_l under every lower ISA too (the loop above ran the best one). */
    for (int isa = CANOPY_ISA_SCALAR; isa < (int)best; isa++) {
        canopy_cpu_isa_override(isa);
        run_knn(&cc, rp, qp, CANOPY_VARIANT_SIMD_L, schedules[isa % N_SCHEDULES], want_i, want_d,
                idx, dist);
    }
    canopy_cpu_isa_override(-1);
    free(ref);
    free(q);
    free(want_i);
    free(want_d);
    free(idx);
    free(dist);
}

/* `large` = 0 leaves out the costliest shapes (n = 3000, nq = 1000, d >= 7). Quick: 1,200
 * and 400, still past LANES_MIN_QUERIES (128) and the n x nq > 100,000 clamp below. */
static void test_knn(uint64_t seed, canopy_isa best, int large) {
    const int quick = check_quick();
    const int64_t ns[] = {1, 5, 100, quick ? 1200 : 3000};
    const int64_t nqs[] = {0, 1, 17, quick ? 400 : 1000};
    static const int32_t ds[] = {1, 2, 3, 7, 16};
    static const int32_t leaves[] = {0, 1, 4};
    canopy_rng rng = canopy_rng_make(seed, 1);
    int combo = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int e = 0; e < 5; e++, combo++) {
                if (!large && a == 3 && b == 3 && e >= 3) continue;
                knn_case c;
                c.n = ns[a];
                c.nq = nqs[b];
                c.d = ds[e];
                /* k cycles through 1, 4, 64 and more than n over the combinations. */
                int32_t ks[] = {1, 4, 64, (int32_t)c.n + 3};
                c.k = ks[(combo + (int)(seed & 3)) % 4];
                /* k > 64 and one point per leaf make the search visit (nearly)
                 * everything: keep them to the cheaper shapes. */
                c.leaf_size = leaves[canopy_rng_below(&rng, 3)];
                if (c.n * c.nq > 100000) {
                    c.k = c.k > 64 ? 64 : c.k;
                    c.leaf_size = c.leaf_size == 1 ? 0 : c.leaf_size;
                }
                uint64_t m = canopy_rng_below(&rng, 6);
                c.mode = m < 4 ? MODE_UNIFORM : (m == 4 ? MODE_DUPLICATES : MODE_EQUAL);
                c.self = 0;
                test_knn_case(&c, seed + (uint64_t)combo * 7919u, best);
            }
    /* The self-query form over a few shapes and the degenerate modes. */
    for (int i = 0; i < 6; i++) {
        knn_case c = {ns[1 + i % 3],       0, ds[i % 5], (int32_t[]){1, 4, 64}[i % 3], 0,
                      (point_mode)(i % 3), 1};
        test_knn_case(&c, seed + 1000u + (uint64_t)i, best);
    }
}

/* simd_l with AVX-512's 16-lane packets, compiled for the default target, so the
 * 16-lane logic is exercised on every CPU. */
#define SIMD16_RUNNER(NAME, APP)                                                                   \
    static canopy_status NAME(const canopy_trav_job *job, canopy_trav_counters *cnt) {             \
        CANOPY_CPU_RUNNER_BODY(APP, canopy_cpu_simd_l_plan,                                        \
                               canopy_cpu_simd_l(APP, job, &team, &mine, 16))                      \
    }
/* kNN's own descriptor under 16-lane lockstep (what AVX-512 machines run). */
static const canopy_app knn16_app = {
    "knn",          sizeof(knn_state), 1,          1, knn_init, knn_truncate,
    knn_visit_leaf, knn_order_perm,    knn_finish, 0};
SIMD16_RUNNER(knn_simd16, &knn16_app)

static void test_knn_wide(uint64_t seed) {
    static const int64_t nqs[] = {1, 17, 1000};
    for (int b = 0; b < 3; b++)
        for (int32_t d = 1; d <= 7; d += 3) {
            int64_t n = 2000, nq = nqs[b];
            int32_t k = b == 1 ? 64 : 5;
            float *ref = make_points(n, d, b == 1 ? MODE_DUPLICATES : MODE_UNIFORM, seed);
            float *qs = make_queries(ref, n, nq, d, MODE_UNIFORM, seed + 1);
            canopy_points rp = canopy_points_make(ref, n, d), qp = canopy_points_make(qs, nq, d);
            size_t cells = (size_t)(nq * k);
            int64_t *want_i = malloc(sizeof *want_i * cells), *idx = malloc(sizeof *idx * cells);
            float *want_d = malloc(sizeof *want_d * cells), *dist = malloc(sizeof *dist * cells);
            int64_t *order = malloc(sizeof *order * nq);
            CHECK_OK(canopy_knn_brute(rp, qp, k, want_i, want_d));
            canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
            canopy_tree *tree = NULL;
            CHECK_OK(canopy_tree_build(rp, &to, &tree));
            knn_ctx ctx = {qp, k, 0, idx, dist};
            for (int si = 0; si < N_SCHEDULES; si++) {
                CHECK_OK(canopy_schedule_queries(schedules[si], qp, &tree->view, order));
                canopy_trav_job job = {&ctx, &tree->view, order, nq, 0.0};
                canopy_trav_counters cnt = {0};
                CHECK_OK(knn_simd16(&job, &cnt));
                CHECK_MSG(memcmp(idx, want_i, sizeof *idx * cells) == 0 &&
                              memcmp(dist, want_d, sizeof *dist * cells) == 0,
                          "knn simd_l16/%s n=%lld nq=%lld d=%d k=%d differs from brute",
                          canopy_schedule_name(schedules[si]), (long long)n, (long long)nq, d, k);
            }
            canopy_tree_free(tree);
            free(ref);
            free(qs);
            free(want_i);
            free(want_d);
            free(idx);
            free(dist);
            free(order);
        }
}

/* ------------------------------------------------- radius-count descriptor -- */
/* Unguided by default: prunes with the kd box bounds and counts whole subtrees
 * inside the radius from truncate (a state update in truncate), and records every
 * truncate call per query and per (query, node). */

typedef struct rc_ctx {
    canopy_points query;
    float r2;
    int64_t *counts;
    int64_t *tests;
    unsigned char *seen; /* nq x n_nodes truncate calls per (query, node), or NULL */
    int32_t n_nodes;
} rc_ctx;

typedef struct rc_state {
    const float *q;
    int64_t qi, count, tests;
} rc_state;

CANOPY_HD void rc_init(const void *vctx, void *vst, int64_t q) {
    const rc_ctx *c = vctx;
    rc_state *s = vst;
    s->q = canopy_point(c->query, q);
    s->qi = q;
    s->count = 0;
    s->tests = 0;
}

CANOPY_HD int rc_truncate(const void *vctx, void *vst, const canopy_tree_view *t, int32_t node) {
    const rc_ctx *c = vctx;
    rc_state *s = vst;
    s->tests++;
    if (c->seen) c->seen[s->qi * c->n_nodes + node]++;
    const float *g = canopy_tv_geom(t, node);
    if (canopy_box_min_dist2(g, t->d, s->q) > c->r2) return 1;
    if (canopy_box_max_dist2(g, t->d, s->q) <= c->r2) {
        const canopy_node *h = canopy_tv_node(t, node);
        s->count += h->end - h->begin;
        return 1;
    }
    return 0;
}

CANOPY_HD void rc_visit_leaf(const void *vctx, void *vst, const canopy_tree_view *t, int32_t node) {
    const rc_ctx *c = vctx;
    rc_state *s = vst;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++)
        s->count += canopy_dist2(s->q, canopy_tv_point(t, i), t->d) <= c->r2;
}

/* Children by their distance bound, nearest first (ties by index): guided, with any
 * permutation of an octree's 8 children, and any order gives the same count. */
CANOPY_HD void rc_order(const void *vctx, const void *vst, const canopy_tree_view *t, int32_t node,
                        int32_t *perm) {
    (void)vctx;
    const rc_state *s = vst;
    canopy_order_by_bound(t, node, s->q, perm);
}

CANOPY_HD void rc_finish(const void *vctx, void *vst, int64_t q) {
    const rc_ctx *c = vctx;
    rc_state *s = vst;
    c->counts[q] = s->count;
    c->tests[q] = s->tests;
}

static const canopy_app rc_app = {"rc",        sizeof(rc_state), 0,    1,         rc_init,
                                  rc_truncate, rc_visit_leaf,    NULL, rc_finish, 0};
static const canopy_app rcg_app = {"rcg",       sizeof(rc_state), 1,        1,         rc_init,
                                   rc_truncate, rc_visit_leaf,    rc_order, rc_finish, 0};
/* As if the order changed the result: lockstep must refuse it. */
static const canopy_app rcx_app = {"rcx",       sizeof(rc_state), 1,        0,         rc_init,
                                   rc_truncate, rc_visit_leaf,    rc_order, rc_finish, 0};
CANOPY_CPU_INSTANTIATE(rc, &rc_app)
CANOPY_CPU_INSTANTIATE(rcg, &rcg_app)
CANOPY_CPU_INSTANTIATE(rcx, &rcx_app)

SIMD16_RUNNER(rc_simd16, &rc_app)
SIMD16_RUNNER(rcg_simd16, &rcg_app)

static const canopy_variant all_variants[] = {CANOPY_VARIANT_REC, CANOPY_VARIANT_DR,
                                              CANOPY_VARIANT_SR, CANOPY_VARIANT_GDR,
                                              CANOPY_VARIANT_SIMD_L};
enum { N_ALL = 5 };

typedef struct rc_case {
    int64_t n, nq;
    int32_t d, leaf_size;
    point_mode mode;
    float r;
} rc_case;

/* Lockstep's union and longest member, recomputed from dr's per-(query, node) tests
 * for the packets of `width` consecutive queries of `order`. */
static void expected_lockstep(const unsigned char *seen, const int64_t *tests, const int64_t *order,
                              int64_t nq, int32_t n_nodes, int width, int64_t *group_nodes,
                              int64_t *group_longest) {
    *group_nodes = *group_longest = 0;
    for (int64_t base = 0; base < nq; base += width) {
        int64_t end = base + width < nq ? base + width : nq, longest = 0;
        for (int64_t i = base; i < end; i++) {
            int64_t q = order ? order[i] : i;
            longest = tests[q] > longest ? tests[q] : longest;
        }
        for (int32_t node = 0; node < n_nodes; node++) {
            int any = 0;
            for (int64_t i = base; i < end && !any; i++)
                any = seen[(order ? order[i] : i) * n_nodes + node] != 0;
            *group_nodes += any;
        }
        *group_longest += longest;
    }
}

static void test_rc_case(const rc_case *c, uint64_t seed) {
    float *ref = make_points(c->n, c->d, c->mode, seed);
    float *qs = make_queries(ref, c->n, c->nq, c->d, c->mode, seed + 1);
    canopy_points rp = canopy_points_make(ref, c->n, c->d);
    canopy_points qp = canopy_points_make(qs, c->nq, c->d);
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = c->leaf_size;
    canopy_tree *tree = NULL;
    CHECK_OK(canopy_tree_build(rp, &to, &tree));
    if (!tree) return;
    const canopy_tree_view *tv = &tree->view;
    int32_t nn = tv->n_nodes;
    size_t nqa = (size_t)c->nq + 1, cells = (size_t)c->nq * (size_t)nn + 1;
    int64_t *want = malloc(sizeof *want * nqa), *counts = malloc(sizeof *counts * nqa);
    int64_t *tests = malloc(sizeof *tests * nqa), *dr_tests = malloc(sizeof *dr_tests * nqa);
    int64_t *order = malloc(sizeof *order * nqa);
    unsigned char *seen = malloc(cells), *dr_seen = malloc(cells);
    float r2 = c->r * c->r;
    for (int64_t q = 0; q < c->nq; q++) {
        want[q] = 0;
        for (int64_t i = 0; i < c->n; i++)
            want[q] += canopy_dist2(canopy_point(qp, q), canopy_point(rp, i), c->d) <= r2;
    }
    rc_ctx ctx = {qp, r2, counts, tests, seen, nn};
    int width = canopy_cpu_isa() == CANOPY_ISA_AVX512 ? 16 : 8;

    /* dr in the caller's order is the reference for the per-query test counts. */
    canopy_trav_job job = {&ctx, tv, NULL, c->nq, 0.0};
    canopy_trav_counters cnt = {0};
    memset(seen, 0, cells);
    CHECK_OK(rc_cpu_runners[CANOPY_VARIANT_DR](&job, &cnt));
    memcpy(dr_tests, tests, sizeof *tests * (size_t)c->nq);
    memcpy(dr_seen, seen, cells);

    for (int g = 0; g < 2; g++) {
        const canopy_cpu_runner *runners = g ? rcg_cpu_runners : rc_cpu_runners;
        for (int vi = 0; vi <= N_ALL; vi++)
            for (int si = 0; si < N_SCHEDULES; si++) {
                int wide = vi == N_ALL; /* simd_l with 16 lanes */
                canopy_variant v = wide ? CANOPY_VARIANT_SIMD_L : all_variants[vi];
                canopy_cpu_runner run = wide ? (g ? rcg_simd16 : rc_simd16) : runners[v];
                int w = wide ? 16 : width;
                CHECK_OK(canopy_schedule_queries(schedules[si], qp, tv, order));
                job.order = si ? order : NULL;
                memset(&cnt, 0, sizeof cnt);
                memset(seen, 0, cells);
                memset(counts, 0xff, sizeof *counts * nqa);
                canopy_status s = run(&job, &cnt);
                if (g && v == CANOPY_VARIANT_SR) {
                    CHECK_MSG(s == CANOPY_ERR_INVALID, "sr ran a guided descriptor");
                    continue;
                }
                int64_t sum = 0;
                int once = 1, same_as_dr = 1, right = s == CANOPY_OK;
                for (int64_t q = 0; q < c->nq; q++) {
                    right &= counts[q] == want[q];
                    same_as_dr &= tests[q] == dr_tests[q];
                    sum += tests[q];
                }
                for (size_t i = 0; i + 1 < cells; i++) once &= seen[i] <= 1;
                /* Guided lockstep may take a lane through the packet's order, not
                 * its own; everything else repeats dr's walk exactly. */
                int lockstep_guided = g && v == CANOPY_VARIANT_SIMD_L;
                CHECK_MSG(right && once && (same_as_dr || lockstep_guided) && cnt.nodes == sum,
                          "rc%s %s%s/%s n=%lld nq=%lld d=%d leaf=%d mode=%d r=%g: %s ok=%d "
                          "once=%d same-tests=%d nodes=%lld/%lld",
                          g ? "g" : "", canopy_variant_name(v), wide ? "16" : "",
                          canopy_schedule_name(schedules[si]), (long long)c->n, (long long)c->nq,
                          c->d, c->leaf_size, (int)c->mode, (double)c->r, canopy_status_name(s),
                          right, once, same_as_dr, (long long)cnt.nodes, (long long)sum);
                if (v == CANOPY_VARIANT_SIMD_L && !g) {
                    int64_t gn, gl;
                    expected_lockstep(dr_seen, dr_tests, job.order, c->nq, nn, w, &gn, &gl);
                    CHECK_MSG(cnt.group_nodes == gn && cnt.group_longest == gl,
                              "simd_l counters: union %lld (want %lld), longest %lld (want %lld)",
                              (long long)cnt.group_nodes, (long long)gn,
                              (long long)cnt.group_longest, (long long)gl);
                }
                if (v == CANOPY_VARIANT_SIMD_L)
                    CHECK(cnt.group_nodes >= cnt.group_longest && cnt.nodes >= cnt.group_longest &&
                          (c->nq == 0 || cnt.group_longest > 0));
            }
    }
    /* Lockstep and static ropes refuse a guided descriptor whose orders matter. */
    job.order = NULL;
    CHECK_FAILS(rcx_cpu_runners[CANOPY_VARIANT_SIMD_L](&job, &cnt), CANOPY_ERR_INVALID,
                "lockstep needs semantically equivalent orders");
    CHECK_FAILS(rcx_cpu_runners[CANOPY_VARIANT_SR](&job, &cnt), CANOPY_ERR_INVALID,
                "needs an unguided traversal");
    CHECK_OK(rcx_cpu_runners[CANOPY_VARIANT_GDR](&job, &cnt));

    canopy_tree_free(tree);
    free(ref);
    free(qs);
    free(want);
    free(counts);
    free(tests);
    free(dr_tests);
    free(order);
    free(seen);
    free(dr_seen);
}

static void test_rc(uint64_t seed) {
    static const int64_t ns[] = {1, 5, 100, 3000};
    static const int64_t nqs[] = {0, 1, 17, 1000};
    static const int32_t ds[] = {1, 2, 3, 7};
    static const float rs[] = {0.0f, 0.05f, 0.3f, 2.0f};
    canopy_rng rng = canopy_rng_make(seed, 2);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            rc_case c;
            c.n = ns[a];
            c.nq = nqs[b];
            c.d = ds[canopy_rng_below(&rng, 4)];
            c.leaf_size = (int32_t)canopy_rng_below(&rng, 6);
            uint64_t m = canopy_rng_below(&rng, 6);
            c.mode = m < 4 ? MODE_UNIFORM : (m == 4 ? MODE_DUPLICATES : MODE_EQUAL);
            c.r = rs[canopy_rng_below(&rng, 4)];
            test_rc_case(&c, seed + (uint64_t)(a * 4 + b) * 104729u);
        }
}

/* The radius count under every ISA: identical counts and counters. */
static void test_rc_isas(uint64_t seed, canopy_isa best) {
    int64_t n = 2000, nq = 700;
    int32_t d = 3;
    float *ref = make_points(n, d, MODE_UNIFORM, seed);
    float *qs = make_queries(ref, n, nq, d, MODE_UNIFORM, seed + 1);
    canopy_points rp = canopy_points_make(ref, n, d), qp = canopy_points_make(qs, nq, d);
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    canopy_tree *tree = NULL;
    CHECK_OK(canopy_tree_build(rp, &to, &tree));
    int64_t *counts = malloc(sizeof *counts * nq), *tests = malloc(sizeof *tests * nq);
    int64_t *first = malloc(sizeof *first * nq);
    rc_ctx ctx = {qp, 0.1f * 0.1f, counts, tests, NULL, 0};
    canopy_trav_job job = {&ctx, &tree->view, NULL, nq, 0.0};
    for (int g = 0; g < 2; g++) {
        canopy_trav_counters base = {0};
        for (int isa = CANOPY_ISA_SCALAR; isa <= (int)best; isa++) {
            canopy_cpu_isa_override(isa);
            canopy_trav_counters cnt = {0};
            CHECK_OK((g ? rcg_cpu_runners : rc_cpu_runners)[CANOPY_VARIANT_SIMD_L](&job, &cnt));
            int width = isa == CANOPY_ISA_AVX512 ? 16 : 8;
            if (isa == CANOPY_ISA_SCALAR) {
                memcpy(first, counts, sizeof *counts * nq);
                base = cnt;
            }
            CHECK_MSG(memcmp(first, counts, sizeof *counts * nq) == 0, "simd_l %s counts differ",
                      canopy_isa_name((canopy_isa)isa));
            /* Same width, same packets: the same counters. */
            if (width == 8)
                CHECK(cnt.nodes == base.nodes && cnt.group_nodes == base.group_nodes &&
                      cnt.group_longest == base.group_longest);
        }
    }
    canopy_cpu_isa_override(-1);
    canopy_tree_free(tree);
    free(ref);
    free(qs);
    free(counts);
    free(tests);
    free(first);
}

/* ---------------------------------------------------------------- schedules -- */

static int is_permutation(const int64_t *order, int64_t n) {
    unsigned char *hit = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        ok = order[i] >= 0 && order[i] < n && !hit[order[i]];
        if (ok) hit[order[i]] = 1;
    }
    free(hit);
    return ok;
}

/* Over the whole 2^bits grid in d dimensions, Hilbert keys are a bijection onto
 * [0, 2^(bits*d)) and consecutive keys are neighbouring cells (one coordinate
 * differs by one), which is what makes the curve a Hilbert curve. */
static void test_hilbert_curve(int32_t d, int32_t bits) {
    uint64_t cells = (uint64_t)1 << (bits * d);
    uint64_t *cell_of = malloc(sizeof *cell_of * cells);
    unsigned char *hit = calloc(cells, 1);
    int bijective = 1, adjacent = 1;
    uint64_t mask = ((uint64_t)1 << bits) - 1;
    for (uint64_t c = 0; c < cells; c++) {
        uint64_t x[8];
        for (int32_t j = 0; j < d; j++) x[j] = (c >> (j * bits)) & mask;
        uint64_t key = canopy_hilbert_key(x, d, bits);
        if (key >= cells || hit[key]) {
            bijective = 0;
            break;
        }
        hit[key] = 1;
        cell_of[key] = c;
    }
    for (uint64_t key = 1; bijective && key < cells; key++) {
        int64_t l1 = 0;
        for (int32_t j = 0; j < d; j++) {
            int64_t a = (int64_t)((cell_of[key - 1] >> (j * bits)) & mask);
            int64_t b = (int64_t)((cell_of[key] >> (j * bits)) & mask);
            l1 += a > b ? a - b : b - a;
        }
        adjacent &= l1 == 1;
    }
    CHECK_MSG(bijective && adjacent, "hilbert d=%d bits=%d: bijective=%d adjacent=%d", d, bits,
              bijective, adjacent);
    free(cell_of);
    free(hit);
}

/* Skilling's transform with a branch per bit and the interleave bit by bit, as first
 * written: the reference the branch-free keys and the spread interleave must equal. */
static uint64_t hilbert_reference(uint64_t *x, int32_t d, int32_t bits) {
    uint64_t top = (uint64_t)1 << (bits - 1);
    for (uint64_t q = top; q > 1; q >>= 1) {
        uint64_t p = q - 1;
        for (int32_t j = 0; j < d; j++) {
            if (x[j] & q) {
                x[0] ^= p;
            } else {
                uint64_t t = (x[0] ^ x[j]) & p;
                x[0] ^= t;
                x[j] ^= t;
            }
        }
    }
    for (int32_t j = 1; j < d; j++) x[j] ^= x[j - 1];
    uint64_t t = 0;
    for (uint64_t q = top; q > 1; q >>= 1)
        if (x[d - 1] & q) t ^= q - 1;
    for (int32_t j = 0; j < d; j++) x[j] ^= t;
    uint64_t key = 0;
    for (int32_t b = bits - 1; b >= 0; b--)
        for (int32_t j = 0; j < d; j++) key = key << 1 | ((x[j] >> b) & 1u);
    return key;
}

/* canopy_hilbert_key and canopy_morton_key equal the reference on random cells of
 * every width up to the curve's (corners included), d = 1 to 7. */
static void test_curve_keys_reference(uint64_t seed) {
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 7;
    int64_t bad_h = 0, bad_m = 0, tried = 0;
    for (int32_t d = 1; d <= 7; d++)
        for (int32_t bits = 1; bits <= canopy_curve_bits(d); bits++)
            for (int i = 0; i < 300; i++) {
                uint64_t x[7], a[7], b[7], mask = ((uint64_t)1 << bits) - 1;
                for (int32_t j = 0; j < d; j++) {
                    r = r * 6364136223846793005ull + 1442695040888963407ull;
                    x[j] = i == 0 ? 0 : i == 1 ? mask : (r >> 11) & mask;
                    a[j] = b[j] = x[j];
                }
                uint64_t m = 0;
                for (int32_t k = bits - 1; k >= 0; k--)
                    for (int32_t j = 0; j < d; j++) m = m << 1 | ((x[j] >> k) & 1u);
                bad_m += canopy_morton_key(x, d, bits) != m;
                bad_h += canopy_hilbert_key(a, d, bits) != hilbert_reference(b, d, bits);
                tried++;
            }
    CHECK_MSG(bad_h == 0 && bad_m == 0,
              "curve keys: %lld Hilbert and %lld Morton keys of %lld "
              "cells differ from the reference",
              (long long)bad_h, (long long)bad_m, (long long)tried);
}

static int cmp_by_x(const void *a, const void *b, const float *xs) {
    int64_t i = *(const int64_t *)a, j = *(const int64_t *)b;
    if (xs[i] != xs[j]) return xs[i] < xs[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}
static const float *sort_xs;
static int cmp_sort(const void *a, const void *b) {
    return cmp_by_x(a, b, sort_xs);
}

/* canopy_curve_keys_bits' keys (Morton: a bit-spreading path in 2-D and 3-D; Hilbert: a
 * state table in 3-D) equal canopy_morton_key and canopy_hilbert_key of the cells it
 * quantizes to, with points on and outside the box, at every width. */
static void test_curve_keys_of_points(uint64_t seed, canopy_schedule curve, int32_t d,
                                      int32_t bits) {
    int64_t n = 2000;
    float *p = make_points(n, d, MODE_UNIFORM, seed + (uint64_t)d);
    float lo[4] = {0.1f, 0.2f, 0.0f, 0.3f}, hi[4] = {0.9f, 0.7f, 1.0f, 0.8f};
    for (int32_t j = 0; j < d; j++) p[j] = hi[j]; /* the box's top corner */
    canopy_keyed *k = malloc(sizeof *k * (size_t)n);
    canopy_curve_keys_bits(curve, canopy_points_make(p, n, d), lo, hi, bits, k);
    uint64_t cells = (uint64_t)1 << bits;
    int64_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t x[4];
        for (int32_t j = 0; j < d; j++) {
            double c = ((double)p[i * d + j] - (double)lo[j]) *
                       (ldexp(1.0, bits) / ((double)hi[j] - (double)lo[j]));
            x[j] = c >= (double)cells ? cells - 1 : c > 0.0 ? (uint64_t)c : 0;
        }
        uint64_t want = curve == CANOPY_SCHEDULE_HILBERT ? canopy_hilbert_key(x, d, bits)
                                                         : canopy_morton_key(x, d, bits);
        bad += k[i].idx != i || k[i].key != want;
    }
    CHECK_MSG(bad == 0, "%s keys d=%d bits=%d: %lld differ from the key of their cell",
              curve == CANOPY_SCHEDULE_HILBERT ? "hilbert" : "morton", (int)d, (int)bits,
              (long long)bad);
    free(k);
    free(p);
}

static void test_curve_keys(uint64_t seed) {
    for (int32_t d = 1; d <= 4; d++)
        test_curve_keys_of_points(seed, CANOPY_SCHEDULE_MORTON, d, canopy_curve_bits(d));
    for (int32_t d = 2; d <= 4; d++)
        for (int32_t bits = 1; bits <= canopy_curve_bits(d); bits++)
            test_curve_keys_of_points(seed, CANOPY_SCHEDULE_HILBERT, d, bits);
}

static int cmp_keyed(const void *a, const void *b) {
    const canopy_keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* canopy_sort_keyed is a stable sort by key, on one thread and in a team, for keys of
 * every width, many ties and one value. */
static void test_sort_keyed(uint64_t seed) {
    static const int64_t ns[] = {0, 1, 2, 3, 1000, 70000};
    static const int widths[] = {1, 5, 12, 33, 62, 64};
    uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int threads = 1; threads <= 4; threads += 3) {
        canopy_set_threads(threads);
        for (int e = 0; e < 6; e++)
            for (int w = 0; w < 6; w++) {
                int64_t n = ns[e];
                canopy_keyed *a = malloc(sizeof *a * (size_t)(n + 1)),
                             *want = malloc(sizeof *a * (size_t)(n + 1));
                for (int64_t i = 0; i < n; i++) {
                    r ^= r << 13, r ^= r >> 7, r ^= r << 17; /* xorshift64 */
                    uint64_t key = widths[w] == 64 ? r : r & (((uint64_t)1 << widths[w]) - 1);
                    a[i].key = w == 0 ? 7u << 20 : key; /* width 1: one value, high bits */
                    a[i].idx = i;
                }
                memcpy(want, a, sizeof *a * (size_t)n);
                qsort(want, (size_t)n, sizeof *want, cmp_keyed);
                CHECK_OK(canopy_sort_keyed(a, n));
                CHECK_MSG(n == 0 || memcmp(a, want, sizeof *a * (size_t)n) == 0,
                          "sort_keyed n=%lld width=%d threads=%d is not the stable order",
                          (long long)n, widths[w], threads);
                free(a);
                free(want);
            }
    }
    canopy_set_threads(0);
}

static void test_schedules(uint64_t seed) {
    test_hilbert_curve(1, 6);
    test_hilbert_curve(2, 5);
    test_hilbert_curve(3, 4);
    test_hilbert_curve(4, 3);
    test_hilbert_curve(7, 2);
    /* Morton interleaves coordinate 0 first, most significant bit first. */
    uint64_t mx[2] = {2, 1}; /* x = 10b, y = 01b -> 1 0 0 1 */
    CHECK(canopy_morton_key(mx, 2, 2) == 9);
    test_curve_keys(seed);
    test_curve_keys_reference(seed);
    test_sort_keyed(seed);

    /* d = 1: both curves are the coordinate order (ties by index). */
    int64_t n = 500;
    float *xs = make_points(n, 1, MODE_DUPLICATES, seed);
    for (int64_t i = 0; i < n; i += 2) xs[i] = (float)i * 0.37f - 40.0f;
    int64_t *want = malloc(sizeof *want * n), *order = malloc(sizeof *order * n);
    for (int64_t i = 0; i < n; i++) want[i] = i;
    sort_xs = xs;
    qsort(want, (size_t)n, sizeof *want, cmp_sort);
    canopy_points p1 = canopy_points_make(xs, n, 1);
    for (int s = CANOPY_SCHEDULE_MORTON; s <= CANOPY_SCHEDULE_HILBERT; s++) {
        CHECK_OK(canopy_schedule_queries((canopy_schedule)s, p1, NULL, order));
        CHECK_MSG(memcmp(order, want, sizeof *want * n) == 0, "%s d=1 is not coordinate order",
                  canopy_schedule_name((canopy_schedule)s));
    }
    free(xs);

    /* Every schedule is a permutation, for d beyond 63 and for equal points too. */
    static const int32_t ds[] = {1, 2, 3, 16, 63, 70};
    for (int e = 0; e < 6; e++)
        for (int mode = MODE_UNIFORM; mode <= MODE_EQUAL; mode++) {
            float *p = make_points(n, ds[e], (point_mode)mode, seed + (uint64_t)e);
            canopy_points pp = canopy_points_make(p, n, ds[e]);
            for (int s = CANOPY_SCHEDULE_NONE; s <= CANOPY_SCHEDULE_HILBERT; s++) {
                if (s == CANOPY_SCHEDULE_TREE) continue; /* needs a tree; covered above */
                CHECK_OK(canopy_schedule_queries((canopy_schedule)s, pp, NULL, order));
                CHECK_MSG(is_permutation(order, n), "%s d=%d mode=%d is not a permutation",
                          canopy_schedule_name((canopy_schedule)s), ds[e], mode);
            }
            /* All points equal: every key ties, so the order is the index order. */
            if (mode == MODE_EQUAL)
                for (int64_t i = 0; i < n; i++) CHECK(order[i] == i);
            free(p);
        }
    CHECK_FAILS(canopy_schedule_queries(CANOPY_SCHEDULE_HYBRID, p1, NULL, order),
                CANOPY_ERR_INVALID, "not a spatial order");
    free(want);
    free(order);
}

int main(void) {
    uint64_t seed = check_seed();
    canopy_isa best = canopy_cpu_isa();
    printf("simd_l ISAs: scalar .. %s\n", canopy_isa_name(best));
    test_schedules(seed);
    for (uint64_t s = 0; s < 2; s++) {
        test_rc(seed + s * 1000003u);
        test_knn(seed + s * 1000003u, best, s == 0);
    }
    test_rc_isas(seed, best);
    test_knn_wide(seed);
    return check_finish();
}
