/* SPDX-License-Identifier: MIT */
/* Bottom-up tree aggregations: every strategy equals rec (exactly for heights,
 * descendants and rec-ordered sums; to rounding for flat's atomic float sums) on
 * scaled-down random1/random2 trees and on hand-made trees; results also checked
 * against direct definitions; parent-array validation and generator properties. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static void check_tree(const canopy_ptree *t, const char *what, uint64_t seed) {
    const int64_t n = t->n;
    int64_t *ref_h = xcalloc((size_t)n, 8), *h = xcalloc((size_t)n, 8);
    int64_t *ref_d = xcalloc((size_t)n, 8), *d = xcalloc((size_t)n, 8);
    double *mass = xcalloc((size_t)n, 8), *pos = xcalloc((size_t)n * 3, 8);
    double *ref_m = xcalloc((size_t)n * 4, 8), *m = xcalloc((size_t)n * 4, 8);
    for (int64_t i = 0; i < n; i++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)i);
        mass[i] = 0.5 + canopy_rng_uniform(&r);
        for (int j = 0; j < 3; j++) pos[3 * i + j] = canopy_rng_uniform(&r);
    }
    CHECK_OK(canopy_ptsd_heights(t, CANOPY_PTSD_REC, ref_h, NULL));
    CHECK_OK(canopy_ptsd_descendants(t, CANOPY_PTSD_REC, ref_d, NULL));
    CHECK_OK(canopy_ptsd_mass(t, mass, pos, CANOPY_PTSD_REC, ref_m, NULL));

    /* Direct definitions: parents are checked against their children, and the root
     * against the whole tree. */
    int64_t bad = 0;
    double total = 0.0, cx = 0.0;
    for (int64_t v = 0; v < n; v++) {
        int64_t want_h = 0, want_d = 0;
        for (int64_t k = t->child_ptr[v]; k < t->child_ptr[v + 1]; k++) {
            int64_t c = t->child[k];
            want_h = ref_h[c] + 1 > want_h ? ref_h[c] + 1 : want_h;
            want_d += ref_d[c] + 1;
        }
        bad += ref_h[v] != want_h || ref_d[v] != want_d;
        if (t->child_ptr[v] == t->child_ptr[v + 1]) {
            total += mass[v];
            cx += mass[v] * pos[3 * v];
        }
    }
    CHECK_MSG(bad == 0, "%s: rec disagrees with the definitions at %lld nodes", what,
              (long long)bad);
    CHECK_MSG(ref_d[t->root] == n - 1 && ref_h[t->root] == t->depth - 1,
              "%s: root has %lld descendants, height %lld; want %lld, %d", what,
              (long long)ref_d[t->root], (long long)ref_h[t->root], (long long)n - 1,
              (int)t->depth - 1);
    CHECK_MSG(fabs(ref_m[4 * t->root] - total) <= 1e-9 * total &&
                  fabs(ref_m[4 * t->root + 1] - cx / total) <= 1e-9,
              "%s: root mass %g centre x %g, want %g %g", what, ref_m[4 * t->root],
              ref_m[4 * t->root + 1], total, cx / total);

    /* CPU strategies here; tests/gpu/test_gpu_graph.c checks the GPU ones. */
    for (int s = CANOPY_PTSD_FLAT; s <= CANOPY_PTSD_HIER; s++) {
        const char *name = canopy_ptsd_strategy_name((canopy_ptsd_strategy)s);
        CHECK_OK(canopy_ptsd_heights(t, (canopy_ptsd_strategy)s, h, NULL));
        CHECK_MSG(!memcmp(h, ref_h, (size_t)n * 8), "%s: heights %s != rec", what, name);
        CHECK_OK(canopy_ptsd_descendants(t, (canopy_ptsd_strategy)s, d, NULL));
        CHECK_MSG(!memcmp(d, ref_d, (size_t)n * 8), "%s: descendants %s != rec", what, name);
        CHECK_OK(canopy_ptsd_mass(t, mass, pos, (canopy_ptsd_strategy)s, m, NULL));
        double worst = 0.0;
        for (int64_t i = 0; i < 4 * n; i++)
            worst = fmax(worst, fabs(m[i] - ref_m[i]) / fmax(1.0, fabs(ref_m[i])));
        if (s == CANOPY_PTSD_FLAT)
            CHECK_MSG(worst < 1e-12, "%s: mass flat differs from rec by %g", what, worst);
        else
            CHECK_MSG(worst == 0.0, "%s: mass %s differs from rec by %g", what, name, worst);
    }
    free(ref_h), free(h), free(ref_d), free(d), free(mass), free(pos), free(ref_m), free(m);
}

static void check_parents(const int64_t *parent, int64_t n, const char *what, uint64_t seed) {
    canopy_ptree t;
    canopy_status s = canopy_ptree_from_parents(parent, n, &t);
    CHECK_MSG(s == CANOPY_OK, "%s: %s", what, canopy_last_error());
    if (s != CANOPY_OK) return;
    check_tree(&t, what, seed);
    canopy_ptree_release(&t);
}

static void test_hand_made(uint64_t seed) {
    int64_t one[] = {-1};
    check_parents(one, 1, "single node", seed);

    enum { CHAIN = 200, STAR = 3000 };
    int64_t *p = xcalloc(STAR + 1, sizeof *p);
    for (int64_t i = 0; i < CHAIN; i++) p[i] = i - 1;
    check_parents(p, CHAIN, "chain", seed);
    /* The same chain numbered backwards: the root is the last node. */
    for (int64_t i = 0; i < CHAIN; i++) p[i] = i + 1 < CHAIN ? i + 1 : -1;
    check_parents(p, CHAIN, "reversed chain", seed);
    p[0] = -1;
    for (int64_t i = 1; i <= STAR; i++) p[i] = 0;
    check_parents(p, STAR + 1, "star", seed);
    /* A star whose root sits in the middle and one arm with a grandchild. */
    for (int64_t i = 0; i <= STAR; i++) p[i] = 7;
    p[7] = -1;
    p[9] = 8;
    check_parents(p, STAR + 1, "star with an arm", seed);
    free(p);
}

/* Recursive strategies refuse trees deeper than they can recurse; the level-wise
 * ones handle them. */
static void test_deep_chain(void) {
    const int64_t n = 12000;
    int64_t *p = xcalloc((size_t)n, sizeof *p), *h = xcalloc((size_t)n, sizeof *h);
    for (int64_t i = 0; i < n; i++) p[i] = i - 1;
    canopy_ptree t;
    CHECK_OK(canopy_ptree_from_parents(p, n, &t));
    CHECK_FAILS(canopy_ptsd_heights(&t, CANOPY_PTSD_REC, h, NULL), CANOPY_ERR_UNSUPPORTED, "crec");
    CHECK_FAILS(canopy_ptsd_heights(&t, CANOPY_PTSD_HIER, h, NULL), CANOPY_ERR_UNSUPPORTED, "crec");
    CHECK_OK(canopy_ptsd_heights(&t, CANOPY_PTSD_CREC, h, NULL));
    CHECK(h[0] == n - 1 && h[n - 1] == 0);
    CHECK_OK(canopy_ptsd_descendants(&t, CANOPY_PTSD_CREC, h, NULL));
    CHECK(h[0] == n - 1 && h[n / 2] == n - 1 - n / 2);
    canopy_ptree_release(&t);
    free(p);
    free(h);
}

static void test_bad_parents(void) {
    canopy_ptree t;
    int64_t two_roots[] = {-1, 0, -1};
    CHECK_FAILS(canopy_ptree_from_parents(two_roots, 3, &t), CANOPY_ERR_INVALID, "both roots");
    int64_t no_root[] = {1, 0};
    CHECK_FAILS(canopy_ptree_from_parents(no_root, 2, &t), CANOPY_ERR_INVALID, "no root");
    int64_t cycle[] = {-1, 0, 3, 2};
    CHECK_FAILS(canopy_ptree_from_parents(cycle, 4, &t), CANOPY_ERR_INVALID, "cycle");
    int64_t range[] = {-1, 5};
    CHECK_FAILS(canopy_ptree_from_parents(range, 2, &t), CANOPY_ERR_INVALID, "node 1");
    int64_t self[] = {-1, 1};
    CHECK_FAILS(canopy_ptree_from_parents(self, 2, &t), CANOPY_ERR_INVALID, "node 1");
    CHECK_FAILS(canopy_ptree_from_parents(self, 0, &t), CANOPY_ERR_INVALID, "at least one");
    CHECK_FAILS(canopy_ptree_gen("random3", 1, &t), CANOPY_ERR_INVALID, "random1");
    canopy_ptsd_strategy s;
    CHECK_FAILS(canopy_ptsd_strategy_parse("dp", &s), CANOPY_ERR_INVALID, "crec");
    CHECK_OK(canopy_ptsd_strategy_parse("gpu-crec", &s));
    CHECK(s == CANOPY_PTSD_GPU_CREC);
    /* The general entry: statistics, and its own argument checks. */
    int64_t parents[] = {-1, 0, 0, 1}, out[4];
    CHECK_OK(canopy_ptree_from_parents(parents, 4, &t));
    canopy_ptsd_stats st;
    CHECK_OK(canopy_ptsd_run(&t, CANOPY_PTSD_DESCENDANTS, NULL, NULL, CANOPY_PTSD_CREC, out, &st));
    CHECK(out[0] == 3 && out[1] == 1 && out[2] == 0 && out[3] == 0 && st.seconds >= 0.0);
    CHECK_FAILS(canopy_ptsd_run(&t, CANOPY_PTSD_MASS, NULL, NULL, CANOPY_PTSD_REC, out, NULL),
                CANOPY_ERR_INVALID, "NULL masses");
    CHECK_FAILS(canopy_ptsd_run(&t, (canopy_ptsd_app)7, NULL, NULL, CANOPY_PTSD_REC, out, NULL),
                CANOPY_ERR_INVALID, "unknown aggregation");
    if (canopy_gpu_info(NULL, 0, NULL) != CANOPY_OK)
        CHECK_FAILS(canopy_ptsd_heights(&t, CANOPY_PTSD_GPU_FLAT, out, NULL),
                    CANOPY_ERR_UNSUPPORTED, "needs a GPU");
    canopy_ptree_release(&t);
}

/* Scaled-down random1/random2: the same fan-outs and probabilities, fewer levels. */
static void test_generated(uint64_t seed) {
    static const struct {
        const char *name;
        int32_t depth, fan_min, fan_max;
        double p;
        int64_t cap;
    } kinds[] = {{"random1/8", 8, 4, 8, 0.5, 1000000},
                 {"random2/4", 4, 32, 64, 0.125, 1000000},
                 {"random2 capped", 6, 32, 64, 0.125, 30000}};
    for (int k = 0; k < 3; k++) {
        canopy_ptree a, b;
        canopy_set_threads(1);
        CHECK_OK(canopy_gen_ptree(kinds[k].depth, kinds[k].fan_min, kinds[k].fan_max, kinds[k].p,
                                  kinds[k].cap, seed, &a));
        canopy_set_threads(3);
        CHECK_OK(canopy_gen_ptree(kinds[k].depth, kinds[k].fan_min, kinds[k].fan_max, kinds[k].p,
                                  kinds[k].cap, seed, &b));
        canopy_set_threads(0);
        CHECK_MSG(a.n == b.n && !memcmp(a.parent, b.parent, (size_t)a.n * 8),
                  "%s: 1 and 3 threads differ", kinds[k].name);
        int64_t bad = 0;
        for (int64_t v = 0; v < a.n; v++) {
            int64_t f = a.child_ptr[v + 1] - a.child_ptr[v];
            bad += (v > 0 && a.parent[v] >= v) ||
                   (f && (f < kinds[k].fan_min || f > kinds[k].fan_max));
        }
        CHECK_MSG(bad == 0 && a.n <= kinds[k].cap && a.child_ptr[1] > 0,
                  "%s: %lld nodes break breadth-first order or the fan-out", kinds[k].name,
                  (long long)bad);
        CHECK_MSG(a.depth <= kinds[k].depth, "%s: depth %d", kinds[k].name, (int)a.depth);
        check_tree(&a, kinds[k].name, seed);
        canopy_ptree_release(&a);
        canopy_ptree_release(&b);
    }
}

int main(void) {
    uint64_t seed = check_seed();
    test_hand_made(seed);
    test_deep_chain();
    test_bad_parents();
    for (int i = 0; i < 3; i++) test_generated(seed + (uint64_t)i);
    return check_finish();
}
