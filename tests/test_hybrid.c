/* SPDX-License-Identifier: MIT */
/* The inspector-executor schedule: its keys, its sort (checked against Liu's sandpile
 * partition and guided clustering written out literally), chunking, the top-tree
 * plan, the sample auto looks at, and identical results under every profile depth
 * and chunk size. Results of every application under hybrid and auto are also
 * checked against brute force in test_apps. */
#define _POSIX_C_SOURCE 200809L
#include "check.h"

#include "apps/knn/knn.h"
#include "apps/radius/radius.h"
#include "traverse/inspect.h"
#include "tree/tree.h"

#include <stdlib.h>
#include <string.h>

static const canopy_app radius_desc = {
    "radius", sizeof(radius_state), 0, 1, radius_init, radius_truncate, radius_visit_leaf,
    NULL,     radius_finish,        0};
static const canopy_app knn_desc = {
    "knn",          sizeof(knn_state), 1,          1, knn_init, knn_truncate,
    knn_visit_leaf, knn_order_perm,    knn_finish, 0};

static float *random_points(int64_t n, int32_t d, uint64_t seed) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    canopy_rng r = canopy_rng_make(seed, 0);
    for (int64_t i = 0; i < n * d; i++) p[i] = (float)canopy_rng_uniform(&r);
    return p;
}

static int key_cmp(const uint64_t *a, const uint64_t *b, int32_t words) {
    for (int32_t w = 0; w < words; w++)
        if (a[w] != b[w]) return a[w] < b[w] ? -1 : 1;
    return 0;
}

static int is_permutation(const int64_t *order, int64_t n) {
    char *seen = calloc((size_t)n + 1, 1);
    int ok = 1;
    for (int64_t i = 0; i < n && ok; i++) {
        ok = order[i] >= 0 && order[i] < n && !seen[order[i]];
        if (ok) seen[order[i]] = 1;
    }
    free(seen);
    return ok;
}

/* canopy_sort_by_keys is a stable lexicographic sort, whatever the word count. */
static void test_sort_by_keys(uint64_t seed) {
    canopy_rng r = canopy_rng_make(seed, 1);
    for (int32_t words = 1; words <= 3; words++)
        for (int64_t n = 0; n <= 300; n += 37) {
            uint64_t *keys = malloc(sizeof *keys * (size_t)(n * words + 1));
            int64_t *perm = malloc(sizeof *perm * (size_t)(n + 1));
            for (int64_t i = 0; i < n * words; i++) /* few distinct values: many ties */
                keys[i] = (canopy_rng_u64(&r) % 3) << (canopy_rng_u64(&r) % 64);
            CHECK_OK(canopy_sort_by_keys(keys, words, n, perm));
            CHECK(is_permutation(perm, n));
            for (int64_t i = 1; i < n; i++) {
                int c = key_cmp(keys + perm[i - 1] * words, keys + perm[i] * words, words);
                CHECK_MSG(c < 0 || (c == 0 && perm[i - 1] < perm[i]),
                          "sort_by_keys words=%d n=%lld: not stable-sorted at %lld", (int)words,
                          (long long)n, (long long)i);
            }
            free(keys);
            free(perm);
        }
}

/* Liu Fig. 3.6: for each top-tree leaf column in turn, a stable partition of the
 * current sequence into the queries that did not reach it, then those that did.
 * Going from the last column to the first gives exactly the ascending order of the
 * bit-vector keys (column 0 most significant). */
static void sandpile(const uint64_t *keys, int32_t words, int32_t n_cols, int64_t n, int64_t *out) {
    int64_t *tmp = malloc(sizeof *tmp * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) out[i] = i;
    for (int32_t c = n_cols - 1; c >= 0; c--) {
        int64_t m = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t i = 0; i < n; i++) {
                uint64_t bit = keys[out[i] * words + (c >> 6)] >> (63 - (c & 63)) & 1;
                if ((int)bit == pass) tmp[m++] = out[i];
            }
        memcpy(out, tmp, sizeof *out * (size_t)n);
    }
    free(tmp);
}

typedef struct fixture {
    float *ref, *qry;
    canopy_points rp, qp;
    canopy_tree *tree;
    int64_t nq;
} fixture;

static void fixture_make(fixture *f, int64_t n, int64_t nq, int32_t d, int32_t leaf,
                         uint64_t seed) {
    f->ref = random_points(n, d, seed);
    f->qry = random_points(nq, d, seed + 1);
    f->rp = canopy_points_make(f->ref, n, d);
    f->qp = canopy_points_make(f->qry, nq, d);
    f->nq = nq;
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = leaf;
    CHECK_OK(canopy_tree_build(f->rp, &to, &f->tree));
}

static void fixture_free(fixture *f) {
    canopy_tree_free(f->tree);
    free(f->ref);
    free(f->qry);
}

/* Unguided (radius): the hybrid order is the sandpile order of the profile keys. */
static void test_unguided(uint64_t seed) {
    fixture f;
    fixture_make(&f, 3000, 2500, 3, 4, seed);
    int64_t *counts = malloc(sizeof *counts * (size_t)f.nq);
    radius_ctx ctx = {f.qp, 0.05f * 0.05f, 0, counts};
    const canopy_tree_view *t = &f.tree->view;
    for (int32_t depth = 0; depth <= 6; depth++) {
        canopy_profile_plan p;
        CHECK_OK(canopy_profile_plan_make(t, 0, depth, &p));
        CHECK(p.step_bits == 0 && p.words == (p.n_cols + 63) / 64 && p.n_cols >= 1);
        uint64_t *keys = malloc(sizeof *keys * (size_t)(f.nq * p.words));
        canopy_profile_cpu(&radius_desc, &ctx, t, &p, NULL, 0, f.nq, keys);
        int64_t *want = malloc(sizeof *want * (size_t)f.nq);
        int64_t *got = malloc(sizeof *got * (size_t)f.nq);
        sandpile(keys, p.words, p.n_cols, f.nq, want);
        canopy_profile_info info;
        CHECK_OK(canopy_schedule_hybrid(&radius_desc, &ctx, t, depth, f.nq, got, &info));
        CHECK_MSG(memcmp(want, got, sizeof *got * (size_t)f.nq) == 0,
                  "hybrid order differs from the sandpile at profile depth %d", (int)depth);
        CHECK(info.depth == p.depth && info.n_cols == p.n_cols && info.chunks == 1);
        int64_t reached = 0; /* every query reaches some top-tree leaf unless truncated */
        for (int64_t i = 0; i < f.nq * p.words; i++) reached += keys[i] != 0;
        CHECK(reached > 0);
        free(keys);
        free(want);
        free(got);
        canopy_profile_plan_free(&p);
    }
    free(counts);
    fixture_free(&f);
}

/* Guided (knn): queries are clustered by the first top-tree leaf they visit, then by
 * the next one (Liu Fig. 3.8; sorting refines clusters of any size). */
static void test_guided(uint64_t seed) {
    fixture f;
    fixture_make(&f, 2000, 1500, 2, 4, seed + 11);
    int32_t k = 4;
    int64_t *idx = malloc(sizeof *idx * (size_t)(f.nq * k));
    float *d2 = malloc(sizeof *d2 * (size_t)(f.nq * k));
    knn_ctx ctx = {f.qp, k, 0, idx, d2};
    const canopy_tree_view *t = &f.tree->view;
    canopy_profile_plan p;
    CHECK_OK(canopy_profile_plan_make(t, 1, 0, &p));
    CHECK(p.step_bits > 0 && (1 << p.step_bits) > p.n_cols);
    uint64_t *keys = malloc(sizeof *keys * (size_t)(f.nq * p.words));
    int64_t *order = malloc(sizeof *order * (size_t)f.nq);
    canopy_profile_cpu(&knn_desc, &ctx, t, &p, NULL, 0, f.nq, keys);
    CHECK_OK(canopy_schedule_hybrid(&knn_desc, &ctx, t, 0, f.nq, order, NULL));
    CHECK(is_permutation(order, f.nq));
    int32_t shift = 64 - p.step_bits;
    for (int64_t i = 0; i < f.nq; i++) {
        uint64_t first = keys[order[i] * p.words] >> shift;
        CHECK_MSG(first >= 1 && first <= (uint64_t)p.n_cols,
                  "guided key of query %lld has no first top-tree leaf", (long long)order[i]);
        if (i) {
            uint64_t prev = keys[order[i - 1] * p.words] >> shift;
            int c = key_cmp(keys + order[i - 1] * p.words, keys + order[i] * p.words, p.words);
            CHECK_MSG(prev <= first && c <= 0, "guided clusters out of order at %lld",
                      (long long)i);
        }
    }
    /* A guided profile never truncates above the leaves it first reaches, so every
     * query visits every top-tree leaf: the recorded steps are all present. */
    int32_t per_word = 64 / p.step_bits, recorded = per_word * p.words;
    int32_t expect = p.n_cols < recorded ? p.n_cols : recorded;
    for (int32_t s = 0; s < expect; s++) {
        uint64_t v = keys[(s / per_word)] >> (64 - p.step_bits * (s % per_word + 1));
        CHECK((v & ((1u << p.step_bits) - 1)) != 0);
    }
    free(keys);
    free(order);
    free(idx);
    free(d2);
    canopy_profile_plan_free(&p);
    fixture_free(&f);
}

/* Small chunks: each chunk is a sorted permutation of its own range, and results
 * through the public API do not change. */
static void test_chunks(uint64_t seed) {
    fixture f;
    fixture_make(&f, 1500, 1000, 3, 3, seed + 23);
    int64_t *want = malloc(sizeof *want * (size_t)f.nq);
    int64_t *got = malloc(sizeof *got * (size_t)f.nq);
    int64_t *order = malloc(sizeof *order * (size_t)f.nq);
    float r = 0.1f;
    CHECK_OK(canopy_radius_count_brute(f.rp, f.qp, r, want));
    radius_ctx ctx = {f.qp, r * r, 0, got};
    setenv("CANOPY_PROFILE_MAX_BYTES", "1000", 1); /* 125 key words: several chunks */
    canopy_profile_info info;
    CHECK_OK(canopy_schedule_hybrid(&radius_desc, &ctx, &f.tree->view, 0, f.nq, order, &info));
    CHECK(is_permutation(order, f.nq));
    canopy_profile_plan p;
    CHECK_OK(canopy_profile_plan_make(&f.tree->view, 0, 0, &p));
    int64_t chunk = canopy_profile_chunk(p.words);
    canopy_profile_plan_free(&p);
    CHECK_MSG(info.chunks == (f.nq + chunk - 1) / chunk && info.chunks > 1, "chunks %lld",
              (long long)info.chunks);
    for (int64_t i = 0; i < f.nq; i++)
        CHECK_MSG(order[i] / chunk == i / chunk, "query %lld left its chunk", (long long)order[i]);
    for (int32_t depth = 0; depth <= 4; depth++) {
        canopy_run_options o = canopy_run_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        o.schedule = CANOPY_SCHEDULE_HYBRID;
        o.profile_depth = depth;
        canopy_stats st;
        memset(got, 0xff, sizeof *got * (size_t)f.nq);
        CHECK_OK(canopy_radius_count(f.rp, f.qp, r, &o, got, &st));
        CHECK_MSG(memcmp(want, got, sizeof *got * (size_t)f.nq) == 0,
                  "hybrid radius (chunked, depth %d) differs from brute force", (int)depth);
        CHECK(st.schedule == CANOPY_SCHEDULE_HYBRID && st.profile_depth >= 1 &&
              st.profile_leaves >= 1);
    }
    unsetenv("CANOPY_PROFILE_MAX_BYTES");
    free(want);
    free(got);
    free(order);
    fixture_free(&f);
}

/* Plans: automatic depth about a third of the height, explicit depths clamped to the
 * height, and a top tree too wide for the keys refused with a message. */
static void test_plans(uint64_t seed) {
    fixture f;
    fixture_make(&f, 20000, 10, 2, 1, seed + 31);
    const canopy_tree_view *t = &f.tree->view;
    canopy_profile_plan p;
    CHECK_OK(canopy_profile_plan_make(t, 0, 0, &p));
    int32_t auto_depth = p.depth, auto_cols = p.n_cols;
    canopy_profile_plan_free(&p);
    CHECK_OK(canopy_profile_plan_make(t, 0, auto_depth + 1, &p));
    CHECK_MSG(auto_cols <= 256 && p.n_cols > 256, "auto depth %d has %d leaves, next has %d",
              (int)auto_depth, (int)auto_cols, (int)p.n_cols);
    canopy_profile_plan_free(&p);
    CHECK_FAILS(canopy_profile_plan_make(t, 0, 12, &p), CANOPY_ERR_INVALID, "--profile-depth");
    CHECK_FAILS(canopy_profile_plan_make(t, 0, -1, &p), CANOPY_ERR_INVALID, ">= 0");
    fixture_free(&f);

    fixture_make(&f, 5, 3, 1, 8, seed + 37); /* a single leaf */
    CHECK_OK(canopy_profile_plan_make(&f.tree->view, 0, 9, &p));
    CHECK(p.depth == 1 && p.n_cols == 1 && p.col[0] == 0);
    canopy_profile_plan_free(&p);
    fixture_free(&f);
}

/* The sample auto looks at: tree-sorted queries look coherent, shuffled ones do not. */
static void test_sample(uint64_t seed) {
    fixture f;
    fixture_make(&f, 20000, 8192, 3, 8, seed + 41);
    int64_t *counts = malloc(sizeof *counts * (size_t)f.nq);
    int64_t *order = malloc(sizeof *order * (size_t)f.nq);
    float *sorted = malloc(sizeof(float) * (size_t)(f.nq * 3));
    CHECK_OK(canopy_schedule_queries(CANOPY_SCHEDULE_TREE, f.qp, &f.tree->view, order));
    for (int64_t i = 0; i < f.nq; i++)
        memcpy(sorted + i * 3, f.qry + order[i] * 3, sizeof(float) * 3);
    canopy_sample shuffled_s, sorted_s;
    radius_ctx ctx = {f.qp, 0.02f * 0.02f, 0, counts};
    CHECK_OK(canopy_inspect_sample(&radius_desc, &ctx, &f.tree->view, f.nq, &shuffled_s));
    ctx.query = canopy_points_make(sorted, f.nq, 3);
    CHECK_OK(canopy_inspect_sample(&radius_desc, &ctx, &f.tree->view, f.nq, &sorted_s));
    CHECK_MSG(sorted_s.coherence >= 0.5 && shuffled_s.coherence < 0.5,
              "coherence sorted %.3f shuffled %.3f", sorted_s.coherence, shuffled_s.coherence);
    CHECK(shuffled_s.windows == 8 && shuffled_s.queries == 32 && shuffled_s.nodes_per_query > 1.0);
    /* guided: knn on the same queries */
    int64_t *idx = malloc(sizeof *idx * (size_t)f.nq * 2);
    float *d2 = malloc(sizeof *d2 * (size_t)f.nq * 2);
    knn_ctx kc = {f.qp, 2, 0, idx, d2};
    CHECK_OK(canopy_inspect_sample(&knn_desc, &kc, &f.tree->view, f.nq, &shuffled_s));
    kc.query = canopy_points_make(sorted, f.nq, 3);
    CHECK_OK(canopy_inspect_sample(&knn_desc, &kc, &f.tree->view, f.nq, &sorted_s));
    CHECK_MSG(sorted_s.coherence >= 0.5 && shuffled_s.coherence < 0.5,
              "guided coherence sorted %.3f shuffled %.3f", sorted_s.coherence,
              shuffled_s.coherence);
    free(idx);
    free(d2);

    /* auto's choice through the public API on the CPU: radius has vector hooks, so
     * simd_l, sorted unless already coherent; short traversals of a scalar variant
     * are never sorted */
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_CPU;
    canopy_stats st;
    CHECK_OK(canopy_radius_count(f.rp, canopy_points_make(sorted, f.nq, 3), 0.2f, &o, counts, &st));
    CHECK_MSG(st.schedule == CANOPY_SCHEDULE_NONE && st.variant == CANOPY_VARIANT_SIMD_L &&
                  strstr(st.note, "coherence") != NULL,
              "auto on sorted input chose %s/%s (%s)", canopy_variant_name(st.variant),
              canopy_schedule_name(st.schedule), st.note);
    CHECK_OK(canopy_radius_count(f.rp, f.qp, 0.2f, &o, counts, &st));
    CHECK_MSG(st.schedule == CANOPY_SCHEDULE_TREE && st.variant == CANOPY_VARIANT_SIMD_L,
              "auto on shuffled input chose %s/%s (%s)", canopy_variant_name(st.variant),
              canopy_schedule_name(st.schedule), st.note);
    CHECK_OK(canopy_radius_count(f.rp, f.qp, 0.01f, &o, counts, &st));
    CHECK_MSG(st.schedule == CANOPY_SCHEDULE_MORTON && st.variant == CANOPY_VARIANT_SIMD_L,
              "auto on short simd_l traversals chose %s/%s (%s)", canopy_variant_name(st.variant),
              canopy_schedule_name(st.schedule), st.note);
    o.variant = CANOPY_VARIANT_SR;
    CHECK_OK(canopy_radius_count(f.rp, f.qp, 0.01f, &o, counts, &st));
    CHECK_MSG(st.schedule == CANOPY_SCHEDULE_NONE && strstr(st.note, "short traversals"),
              "auto on short traversals chose %s (%s)", canopy_schedule_name(st.schedule), st.note);
    free(counts);
    free(order);
    free(sorted);
    fixture_free(&f);
}

/* Few queries (128 up to the sampled schedules' 4096): auto runs simd_l on Morton order
 * without the coherence sample, below 128 dr unsorted, and both equal brute force. */
static void test_few_queries(uint64_t seed) {
    static const int64_t sizes[] = {40, 127, 128, 1000, 4095};
    for (int i = 0; i < 5; i++) {
        int64_t nq = sizes[i], n = 300 + (int64_t)((seed + (uint64_t)i) % 900);
        int32_t d = 2 + (int32_t)((seed + (uint64_t)i) % 3), k = i % 2 ? 8 : 1;
        float *ref = random_points(n, d, seed + 50 + (uint64_t)i);
        float *qry = random_points(nq, d, seed + 60 + (uint64_t)i);
        size_t cells = (size_t)(nq * k);
        int64_t *bi = malloc(sizeof *bi * cells), *ti = malloc(sizeof *ti * cells);
        float *bd = malloc(sizeof *bd * cells), *td = malloc(sizeof *td * cells);
        canopy_points rp = canopy_points_make(ref, n, d), qp = canopy_points_make(qry, nq, d);
        canopy_run_options o = canopy_run_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        canopy_stats st;
        CHECK_OK(canopy_knn_brute(rp, qp, k, bi, bd));
        CHECK_OK(canopy_knn(rp, qp, k, &o, ti, td, &st));
        CHECK_MSG(!memcmp(bi, ti, sizeof *bi * cells) && !memcmp(bd, td, sizeof *bd * cells),
                  "knn auto nq=%lld n=%lld d=%d k=%d differs from brute force", (long long)nq,
                  (long long)n, (int)d, (int)k);
        int lanes = nq >= 128;
        CHECK_MSG(st.variant == (lanes ? CANOPY_VARIANT_SIMD_L : CANOPY_VARIANT_DR) &&
                      st.schedule == (lanes ? CANOPY_SCHEDULE_MORTON : CANOPY_SCHEDULE_NONE) &&
                      !strstr(st.note, "coherence"),
                  "auto on %lld queries chose %s/%s (%s)", (long long)nq,
                  canopy_variant_name(st.variant), canopy_schedule_name(st.schedule), st.note);
        free(ref);
        free(qry);
        free(bi);
        free(ti);
        free(bd);
        free(td);
    }
}

int main(void) {
    uint64_t seed = check_seed();
    test_sort_by_keys(seed);
    for (uint64_t s = 0; s < 3; s++) {
        test_unguided(seed + s * 7919u);
        test_guided(seed + s * 7919u);
    }
    test_chunks(seed);
    test_plans(seed);
    test_sample(seed);
    for (uint64_t s = 0; s < 3; s++) test_few_queries(seed + s * 104729u);
    return check_finish();
}
