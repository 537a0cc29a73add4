/* SPDX-License-Identifier: MIT */
/* A user-written pair traversal (canopy/pair.h) against a brute force: per point,
 * the number of other points within radius r (strictly closer), written only
 * against the public headers. It accepts a node pair whole when every distance is
 * below r, so it exercises both verbs of the contract, the symmetric walk's
 * mirrored pairs (a pair of distinct nodes counts for both sides) and the diagonal
 * pairs; cross and symmetric, variants rec and dr, 1 and 2 threads, seeds, sizes,
 * d = 1, duplicates, empty trees; and the refusal of variants pairs do not have. */
#include "canopy.h"
#include "canopy/pair_cpu.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

typedef struct near_ctx {
    float r2;
    int64_t na; /* points of ta: the accumulator is one count per point, by original id */
    int64_t *out;
} near_ctx;

static inline void near_add_node(int64_t *acc, const canopy_tree_view *t, int32_t node, int64_t k) {
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) acc[t->ids[i]] += k;
}

static inline int near_test(const void *vctx, void *vacc, const canopy_tree_view *ta, int32_t a,
                            const canopy_tree_view *tb, int32_t b, int sym) {
    const near_ctx *c = (const near_ctx *)vctx;
    float mn, mx;
    canopy_pair_box_bounds(canopy_tv_geom(ta, a), canopy_tv_geom(tb, b), ta->d, 0.0f, &mn, &mx);
    if (mn >= c->r2) return CANOPY_PAIR_DONE;
    if (mx >= c->r2) return CANOPY_PAIR_DESCEND;
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    int64_t *acc = (int64_t *)vacc;
    if (sym && a == b) {
        near_add_node(acc, ta, a, ha->end - ha->begin - 1);
    } else {
        near_add_node(acc, ta, a, hb->end - hb->begin);
        if (sym) near_add_node(acc, tb, b, ha->end - ha->begin);
    }
    return CANOPY_PAIR_DONE;
}

static inline void near_visit(const void *vctx, void *vacc, const canopy_tree_view *ta, int32_t a,
                              const canopy_tree_view *tb, int32_t b, int sym) {
    const near_ctx *c = (const near_ctx *)vctx;
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    int64_t *acc = (int64_t *)vacc;
    for (int32_t i = ha->begin; i < ha->end; i++)
        for (int32_t j = sym && a == b ? i + 1 : hb->begin; j < hb->end; j++) {
            if (canopy_dist2(canopy_tv_point(ta, i), canopy_tv_point(tb, j), ta->d) >= c->r2)
                continue;
            acc[ta->ids[i]]++;
            if (sym) acc[tb->ids[j]]++;
        }
}

static inline void near_merge(const void *vctx, const void *vacc) {
    const near_ctx *c = (const near_ctx *)vctx;
    for (int64_t i = 0; i < c->na; i++) c->out[i] += ((const int64_t *)vacc)[i];
}

static const canopy_pair_app near_app = {"near", near_test, near_visit, near_merge, NULL};
CANOPY_PAIR_CPU_INSTANTIATE(near, &near_app)

static uint64_t rng;
static float uniform(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng >> 40) / (float)(1u << 24);
}

static void check_case(int64_t na, int64_t nb, int32_t d, int cross, int coarse, float r) {
    float *xa = malloc(sizeof(float) * (size_t)(na * d + 1));
    float *xb = malloc(sizeof(float) * (size_t)(nb * d + 1));
    for (int64_t i = 0; i < na * d; i++) xa[i] = coarse ? (float)(int)(uniform() * 4) : uniform();
    for (int64_t i = 0; i < nb * d; i++) xb[i] = coarse ? (float)(int)(uniform() * 4) : uniform();
    if (!cross) {
        xb = memcpy(realloc(xb, sizeof(float) * (size_t)(na * d + 1)), xa,
                    sizeof(float) * (size_t)(na * d + 1));
        nb = na;
    }
    int64_t *want = calloc((size_t)na + 1, sizeof *want),
            *got = calloc((size_t)na + 1, sizeof *got);
    for (int64_t i = 0; i < na; i++)
        for (int64_t j = 0; j < nb; j++)
            if ((cross || i != j) && canopy_dist2(xa + i * d, xb + j * d, d) < r * r) want[i]++;
    canopy_tree *ta = NULL, *tb = NULL;
    for (int run = 0; run < 8; run++) {
        canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
        to.leaf_size = 1 + (int32_t)(uniform() * 20);
        CHECK_OK(canopy_tree_build(canopy_points_make(xa, na, d), &to, &ta));
        if (cross) CHECK_OK(canopy_tree_build(canopy_points_make(xb, nb, d), &to, &tb));
        near_ctx ctx = {r * r, na, got};
        memset(got, 0, sizeof *got * (size_t)na);
        canopy_pair_traversal tr = {"near", &near_app, near_pair_cpu_runners,
                                    NULL,   &ctx,      sizeof(int64_t) * (size_t)(na + 1)};
        canopy_run_options o = canopy_run_options_default();
        o.variant = run % 3 == 0   ? CANOPY_VARIANT_AUTO
                    : run % 3 == 1 ? CANOPY_VARIANT_REC
                                   : CANOPY_VARIANT_DR;
        canopy_set_threads(1 + run % 2);
        canopy_pair_counters cnt;
        canopy_stats st;
        memset(&st, 0, sizeof st);
        CHECK_OK(canopy_pair_traverse(ta, cross ? tb : NULL, &tr, &o, &cnt, &st));
        int ok = !memcmp(got, want, sizeof *got * (size_t)na);
        CHECK_MSG(ok, "na=%lld nb=%lld d=%d cross=%d coarse=%d r=%g leaf=%d %s threads %d",
                  (long long)na, (long long)nb, (int)d, cross, coarse, (double)r, (int)to.leaf_size,
                  canopy_variant_name(o.variant), canopy_threads());
        CHECK(st.backend == CANOPY_BACKEND_CPU && st.variant != CANOPY_VARIANT_AUTO);
        /* every leaf pair visited counts its point pairs: at most all of them */
        CHECK(cnt.point_pairs <= (cross ? na * nb : na * (na - 1) / 2));
        canopy_tree_free(ta);
        canopy_tree_free(tb);
        ta = tb = NULL;
    }
    canopy_set_threads(0);
    free(xa);
    free(xb);
    free(want);
    free(got);
}

static void check_refusals(void) {
    float x[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
    canopy_tree *t = NULL, *t1 = NULL;
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    CHECK_OK(canopy_tree_build(canopy_points_make(x, 3, 2), &to, &t));
    CHECK_OK(canopy_tree_build(canopy_points_make(x, 6, 1), &to, &t1));
    int64_t out[8] = {0};
    near_ctx ctx = {0.01f, 3, out};
    canopy_pair_traversal tr = {"near", &near_app, near_pair_cpu_runners, NULL, &ctx, sizeof out};
    canopy_run_options o = canopy_run_options_default();
    canopy_pair_counters cnt;
    o.variant = CANOPY_VARIANT_SR;
    CHECK_FAILS(canopy_pair_traverse(t, NULL, &tr, &o, &cnt, NULL), CANOPY_ERR_UNSUPPORTED,
                "rec and dr");
    o.variant = CANOPY_VARIANT_DR;
    o.backend = CANOPY_BACKEND_GPU;
    CHECK_FAILS(canopy_pair_traverse(t, NULL, &tr, &o, &cnt, NULL), CANOPY_ERR_UNSUPPORTED,
                "no GPU runner");
    o.backend = CANOPY_BACKEND_CPU;
    CHECK_FAILS(canopy_pair_traverse(t, t1, &tr, &o, &cnt, NULL), CANOPY_ERR_INVALID, "dimensions");
    canopy_tree_free(t);
    canopy_tree_free(t1);
}

int main(void) {
    rng = check_seed();
    for (int rep = 0; rep < 3; rep++) {
        check_case(1, 0, 2, 0, 0, 0.5f);
        check_case(2, 1, 2, 1, 0, 0.5f);
        check_case(400, 0, 1, 0, 0, 0.01f);
        check_case(700, 0, 2, 0, 0, 0.1f);
        check_case(900, 0, 3, 0, 0, 0.3f);
        check_case(600, 500, 3, 1, 0, 0.2f);
        check_case(500, 300, 2, 1, 1, 1.5f);
        check_case(500, 0, 3, 0, 1, 1.01f);
        check_case(800, 0, 4, 0, 0, 2.5f); /* everything within r: all accepted whole */
    }
    check_refusals();
    return check_finish();
}
