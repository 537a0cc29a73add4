/* SPDX-License-Identifier: MIT */
/* B+-tree forests: every layout x engine (and the pointer-based baseline) returns
 * what a binary search over the sorted keys returns, on fresh random keys of several
 * kinds and sizes (0 and 1 key included), bucket counts from 1 to mostly-empty,
 * queries that hit, miss by one ulp, fall below/above the key range, repeat, are
 * NaN/inf/-0, or all land in one bucket; plus input errors and the biased sampler. */
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct config {
    canopy_bptree_method method;
    canopy_forest_layout layout;
    canopy_forest_engine engine;
    int32_t hier_depth, switch_level, compaction;
} config;

static config cfgs[64];
static int n_cfgs;

static void add(canopy_bptree_method m, canopy_forest_layout l, canopy_forest_engine e, int32_t hd,
                int32_t sw, int32_t comp) {
    cfgs[n_cfgs++] = (config){m, l, e, hd, sw, comp};
}

static void make_configs(void) {
    add(CANOPY_BPTREE_POINTER, 0, 0, 0, 0, 1);
    add(CANOPY_BPTREE_FOREST, CANOPY_FOREST_LAYOUT_AUTO, CANOPY_FOREST_ENGINE_AUTO, 0, 0, 1);
    add(CANOPY_BPTREE_FOREST, CANOPY_FOREST_LAYOUT_CSR, CANOPY_FOREST_ENGINE_SCALAR, 0, 0, 1);
    for (int d = 3; d <= 5; d++)
        add(CANOPY_BPTREE_FOREST, CANOPY_FOREST_LAYOUT_HIER, CANOPY_FOREST_ENGINE_SCALAR, d, 0, 1);
    for (int l = CANOPY_FOREST_LAYOUT_DF; l <= CANOPY_FOREST_LAYOUT_HYBRID; l++) {
        int sw_max = l == CANOPY_FOREST_LAYOUT_HYBRID ? 3 : 0;
        for (int sw = 0; sw <= sw_max; sw++) {
            add(CANOPY_BPTREE_FOREST, l, CANOPY_FOREST_ENGINE_SCALAR, 0, sw, 1);
            add(CANOPY_BPTREE_FOREST, l, CANOPY_FOREST_ENGINE_VM, 0, sw, 1);
            add(CANOPY_BPTREE_FOREST, l, CANOPY_FOREST_ENGINE_VM_SIMD, 0, sw, 1);
            add(CANOPY_BPTREE_FOREST, l, CANOPY_FOREST_ENGINE_VM_SIMD, 0, sw, 0);
        }
    }
}

static const char *cfg_name(const config *c) {
    static char buf[128];
    if (c->method == CANOPY_BPTREE_POINTER) return "pointer";
    snprintf(buf, sizeof buf, "%s/%s hd=%d sw=%d comp=%d", canopy_forest_layout_name(c->layout),
             canopy_forest_engine_name(c->engine), c->hier_depth, c->switch_level, c->compaction);
    return buf;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* n distinct finite keys (fewer when the draw repeats), sorted. kind 0: small
 * integers; 1: wide-range normals; 2: a tight cluster plus far outliers (buckets
 * very unequal). */
static int64_t make_keys(canopy_rng *r, int kind, int64_t n, float *keys) {
    for (int64_t i = 0; i < n; i++) {
        double v;
        if (kind == 0)
            v = (double)canopy_rng_below(r, (uint64_t)(3 * n + 3)) - (double)n;
        else if (kind == 1)
            v = canopy_rng_normal(r) * 1e4;
        else
            v = canopy_rng_below(r, 10) == 0 ? canopy_rng_normal(r) * 1e6
                                             : 5.0 + canopy_rng_uniform(r) * 1e-3;
        keys[i] = (float)v;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_float);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || keys[i] != keys[m - 1]) keys[m++] = keys[i];
    return m;
}

/* The reference: binary search for equality over the sorted keys. */
static int64_t ref_lookup(const float *keys, const int64_t *vals, int64_t n, float q, int64_t nf) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < q)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && keys[lo] == q ? vals[lo] : nf;
}

/* Queries: hits (repeated), one-ulp misses on both sides, out-of-range, specials,
 * random in-range values. */
static int64_t make_queries(canopy_rng *r, const float *keys, int64_t n, float *q, int64_t cap) {
    int64_t m = 0;
    float lo = n ? keys[0] : -1.0f, hi = n ? keys[n - 1] : 1.0f;
    const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -FLT_MAX, FLT_MAX};
    for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) q[m++] = specials[i];
    q[m++] = lo - 1.0f;
    q[m++] = nextafterf(lo, -INFINITY);
    q[m++] = hi + 1.0f;
    q[m++] = nextafterf(hi, INFINITY);
    while (m < cap) {
        uint64_t k = canopy_rng_below(r, 4);
        if (n > 0 && k < 2) {
            q[m++] = keys[canopy_rng_below(r, (uint64_t)n)];
        } else if (n > 0 && k == 2) {
            float x = keys[canopy_rng_below(r, (uint64_t)n)];
            q[m++] = nextafterf(x, canopy_rng_below(r, 2) ? INFINITY : -INFINITY);
        } else {
            q[m++] = (float)(lo + (hi - lo) * canopy_rng_uniform(r));
        }
    }
    /* a few exact repeats next to each other (the same task twice in a SIMD packet) */
    for (int64_t i = 1; i + 1 < m; i += 37) q[i + 1] = q[i];
    return m;
}

/* Runs every configuration on one tree and query set; returns the failures. */
static int64_t check_all(canopy_bptree *t, const float *keys, const int64_t *vals, int64_t n,
                         const float *q, int64_t nq, const char *what) {
    int64_t *got = malloc((size_t)(nq + 1) * sizeof *got), *want = malloc((size_t)(nq + 1) * 8);
    int64_t failures = 0, nf = -7;
    int64_t found = 0;
    for (int64_t i = 0; i < nq; i++) {
        want[i] = ref_lookup(keys, vals, n, q[i], nf);
        found += want[i] != nf;
    }
    for (int c = 0; c < n_cfgs; c++) {
        canopy_bptree_options o = canopy_bptree_options_default();
        o.method = cfgs[c].method;
        o.layout = cfgs[c].layout;
        o.engine = cfgs[c].engine;
        o.hier_depth = cfgs[c].hier_depth;
        o.switch_level = cfgs[c].switch_level;
        o.compaction = cfgs[c].compaction;
        o.not_found = nf;
        canopy_bptree_stats st;
        for (int64_t i = 0; i < nq; i++) got[i] = 12345;
        canopy_status s = canopy_bptree_lookup(t, q, nq, &o, got, &st);
        CHECK_MSG(s == CANOPY_OK, "%s %s: %s", what, cfg_name(&cfgs[c]), canopy_last_error());
        if (s) {
            failures++;
            continue;
        }
        int64_t bad = 0, first = -1;
        for (int64_t i = 0; i < nq; i++)
            if (got[i] != want[i]) {
                if (first < 0) first = i;
                bad++;
            }
        CHECK_MSG(bad == 0,
                  "%s %s: %lld of %lld wrong (first: query %lld = %.9g got %lld want %lld)", what,
                  cfg_name(&cfgs[c]), (long long)bad, (long long)nq, (long long)first,
                  first >= 0 ? (double)q[first] : 0.0, first >= 0 ? (long long)got[first] : 0LL,
                  first >= 0 ? (long long)want[first] : 0LL);
        CHECK_MSG(st.found == found, "%s %s: found %lld, want %lld", what, cfg_name(&cfgs[c]),
                  (long long)st.found, (long long)found);
        failures += bad > 0;
    }
    free(got);
    free(want);
    return failures;
}

static void shuffle(canopy_rng *r, float *k, int64_t *v, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)canopy_rng_below(r, (uint64_t)(i + 1));
        float tk = k[i];
        int64_t tv = v[i];
        k[i] = k[j];
        v[i] = v[j];
        k[j] = tk;
        v[j] = tv;
    }
}

static void random_trees(uint64_t seed) {
    static const int64_t sizes[] = {0, 1, 2, 3, 17, 300, 5000, 30000};
    canopy_rng r = canopy_rng_make(seed, 1);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int64_t want_n = sizes[si];
        for (int kind = 0; kind < 3; kind++) {
            float *keys = malloc((size_t)(want_n + 1) * sizeof *keys);
            int64_t n = make_keys(&r, kind, want_n, keys);
            int64_t *vals = malloc((size_t)(n + 1) * sizeof *vals);
            for (int64_t i = 0; i < n; i++) vals[i] = (int64_t)(canopy_rng_u64(&r) >> 2) - i;
            /* build from a shuffled copy: the tree sorts keys and values together */
            float *sk = malloc((size_t)(n + 1) * sizeof *sk);
            int64_t *sv = malloc((size_t)(n + 1) * sizeof *sv);
            memcpy(sk, keys, (size_t)n * sizeof *sk);
            memcpy(sv, vals, (size_t)n * sizeof *sv);
            shuffle(&r, sk, sv, n);
            int64_t nq = n < 5000 ? 4 * n + 64 : 9000; /* > CBP_SERIAL_BELOW: parallel */
            float *q = malloc((size_t)nq * sizeof *q);
            nq = make_queries(&r, keys, n, q, nq);
            const int64_t buckets[] = {0, 1, 3, n > 0 ? n : 2, 4 * n + 5};
            int nb = want_n >= 5000 ? 2 : 5; /* the large sizes: auto and 1 bucket */
            for (int b = 0; b < nb; b++) {
                canopy_bptree *t = NULL;
                int sorted_input = b % 2;
                CHECK_OK(canopy_bptree_build(sorted_input ? keys : sk, sorted_input ? vals : sv, n,
                                             buckets[b], &t));
                if (!t) continue;
                canopy_bptree_info info;
                canopy_bptree_get_info(t, &info);
                CHECK(info.n_keys == n);
                CHECK(info.n_buckets == (buckets[b] ? buckets[b] : (n / 256 > 1 ? n / 256 : 1)));
                CHECK(info.largest_bucket <= n);
                char what[96];
                snprintf(what, sizeof what, "n=%lld kind=%d buckets=%lld", (long long)n, kind,
                         (long long)info.n_buckets);
                check_all(t, keys, vals, n, q, nq, what);
                canopy_bptree_free(t);
            }
            /* values NULL: a key's position in the caller's array */
            canopy_bptree *t = NULL;
            CHECK_OK(canopy_bptree_build(sk, NULL, n, 0, &t));
            if (t && n > 0) {
                int64_t *pos = malloc((size_t)n * sizeof *pos);
                canopy_bptree_options o = canopy_bptree_options_default();
                o.layout = CANOPY_FOREST_LAYOUT_SLL;
                CHECK_OK(canopy_bptree_lookup(t, sk, n, &o, pos, NULL));
                int64_t bad = 0;
                for (int64_t i = 0; i < n; i++) bad += pos[i] != i;
                CHECK_MSG(bad == 0, "values NULL: %lld keys not mapped to their position",
                          (long long)bad);
                free(pos);
            }
            canopy_bptree_free(t);
            free(q);
            free(sk);
            free(sv);
            free(vals);
            free(keys);
        }
    }
}

/* Many buckets, every query inside one of them (sparse bucket access at its most
 * extreme: one tree busy, the rest idle). */
static void one_bucket(uint64_t seed) {
    canopy_rng r = canopy_rng_make(seed, 2);
    int64_t n = 4096;
    float *keys = malloc((size_t)n * sizeof *keys);
    int64_t *vals = malloc((size_t)n * sizeof *vals);
    for (int64_t i = 0; i < n; i++) {
        keys[i] = (float)i;
        vals[i] = i * 3;
    }
    canopy_bptree *t = NULL;
    CHECK_OK(canopy_bptree_build(keys, vals, n, 64, &t));
    if (!t) return;
    int64_t nq = 3000;
    float *q = malloc((size_t)nq * sizeof *q);
    /* 64 buckets over [0, 4095]: keys 1088..1151 are bucket 17 (17.004 to 17.99 after
     * scaling by 64 / 4095); hits and misses between them */
    for (int64_t i = 0; i < nq; i++)
        q[i] =
            keys[17 * 64 + canopy_rng_below(&r, 64)] + (canopy_rng_below(&r, 3) == 0 ? 0.25f : 0);
    check_all(t, keys, vals, n, q, nq, "one bucket");
    canopy_bptree_free(t);
    free(q);
    free(keys);
    free(vals);
}

static void errors(void) {
    canopy_bptree *t = NULL;
    float k[] = {1, 2, 3, 4};
    int64_t v[] = {10, 20, 30, 40};
    float nan_keys[] = {1, NAN, 3};
    float inf_keys[] = {1, 2, INFINITY};
    float dup_sorted[] = {1, 2, 2, 3};
    float dup_unsorted[] = {3, 1, 2, 1};
    float zeros[] = {-0.0f, 1, 0.0f};
    CHECK_FAILS(canopy_bptree_build(nan_keys, NULL, 3, 0, &t), CANOPY_ERR_INVALID, "key 1 is NaN");
    CHECK(t == NULL);
    CHECK_FAILS(canopy_bptree_build(inf_keys, NULL, 3, 0, &t), CANOPY_ERR_INVALID,
                "key 2 is infinite");
    CHECK_FAILS(canopy_bptree_build(dup_sorted, NULL, 4, 0, &t), CANOPY_ERR_INVALID,
                "duplicate key 2 (positions 1 and 2)");
    CHECK_FAILS(canopy_bptree_build(dup_unsorted, NULL, 4, 0, &t), CANOPY_ERR_INVALID,
                "duplicate key 1 (positions 1 and 3)");
    CHECK_FAILS(canopy_bptree_build(zeros, NULL, 3, 0, &t), CANOPY_ERR_INVALID, "duplicate key 0");
    CHECK_FAILS(canopy_bptree_build(k, v, 4, -1, &t), CANOPY_ERR_INVALID, "bucket count -1");
    CHECK_FAILS(canopy_bptree_build(NULL, NULL, 4, 0, &t), CANOPY_ERR_INVALID, "bad key array");
    CHECK_OK(canopy_bptree_build(k, v, 4, 2, &t));
    if (!t) return;
    int64_t out[4];
    canopy_bptree_options o = canopy_bptree_options_default();
    o.layout = CANOPY_FOREST_LAYOUT_CSR;
    o.engine = CANOPY_FOREST_ENGINE_VM;
    CHECK_FAILS(canopy_bptree_lookup(t, k, 4, &o, out, NULL), CANOPY_ERR_UNSUPPORTED,
                "runs the linked layouts");
    o = canopy_bptree_options_default();
    o.engine = CANOPY_FOREST_ENGINE_SIMD;
    CHECK_FAILS(canopy_bptree_lookup(t, k, 4, &o, out, NULL), CANOPY_ERR_UNSUPPORTED,
                "engine simd walks whole forests");
    o.engine = CANOPY_FOREST_ENGINE_GPU_REN;
    CHECK_FAILS(canopy_bptree_lookup(t, k, 4, &o, out, NULL), CANOPY_ERR_UNSUPPORTED,
                "engine ren walks whole forests");
    o = canopy_bptree_options_default();
    o.hier_depth = 7;
    CHECK_FAILS(canopy_bptree_lookup(t, k, 4, &o, out, NULL), CANOPY_ERR_INVALID,
                "hier subtree depth 7");
    o = canopy_bptree_options_default();
    o.layout = CANOPY_FOREST_LAYOUT_COUNT;
    CHECK_FAILS(canopy_bptree_lookup(t, k, 4, &o, out, NULL), CANOPY_ERR_INVALID, "options");
    CHECK_FAILS(canopy_bptree_lookup(t, NULL, 4, NULL, out, NULL), CANOPY_ERR_INVALID,
                "bad arguments");
    /* an empty batch is fine, and the default marker is -1 */
    CHECK_OK(canopy_bptree_lookup(t, NULL, 0, NULL, NULL, NULL));
    float miss = 2.5f;
    CHECK_OK(canopy_bptree_lookup(t, &miss, 1, NULL, out, NULL));
    CHECK(out[0] == CANOPY_BPTREE_NOT_FOUND);
    float sq[2];
    CHECK_FAILS(canopy_bptree_sample_queries(t, 2, 1.5, 1, sq), CANOPY_ERR_INVALID, "bias 1.5");
    canopy_bptree_free(t);
    CHECK_OK(canopy_bptree_build(NULL, NULL, 0, 0, &t));
    CHECK_FAILS(canopy_bptree_sample_queries(t, 2, 0.5, 1, sq), CANOPY_ERR_INVALID, "no keys");
    canopy_bptree_free(t);
    canopy_bptree_method m;
    CHECK_OK(canopy_bptree_method_parse("pointer", &m));
    CHECK(m == CANOPY_BPTREE_POINTER);
    CHECK_FAILS(canopy_bptree_method_parse("btree", &m), CANOPY_ERR_INVALID, "forest, pointer");
}

/* Share of left turns of a query along its subtree, rebuilt from the sorted keys with
 * the tree's split rule (left child: the first ceil(m / 2) keys of its range). */
static void sampler(uint64_t seed) {
    int64_t n = 1 << 14;
    float *keys = malloc((size_t)n * sizeof *keys);
    for (int64_t i = 0; i < n; i++) keys[i] = (float)(3 * i);
    canopy_bptree *t = NULL;
    int64_t B = 64; /* 256 keys a bucket: 8 decisions per query */
    CHECK_OK(canopy_bptree_build(keys, NULL, n, B, &t));
    if (!t) return;
    const double biases[] = {0.5, 0.625, 0.75, 0.875, 1.0};
    int64_t nq = 20000;
    float *q = malloc((size_t)nq * sizeof *q), *q2 = malloc((size_t)nq * sizeof *q2);
    int64_t *pos = malloc((size_t)nq * sizeof *pos);
    for (size_t bi = 0; bi < sizeof biases / sizeof *biases; bi++) {
        CHECK_OK(canopy_bptree_sample_queries(t, nq, biases[bi], seed, q));
        CHECK_OK(canopy_bptree_sample_queries(t, nq, biases[bi], seed, q2));
        CHECK_MSG(memcmp(q, q2, (size_t)nq * sizeof *q) == 0, "sampler not deterministic");
        canopy_bptree_stats st;
        CHECK_OK(canopy_bptree_lookup(t, q, nq, NULL, pos, &st));
        CHECK_MSG(st.found == nq, "bias %g: %lld of %lld sampled queries are keys", biases[bi],
                  (long long)st.found, (long long)nq);
        int64_t left = 0, total = 0;
        for (int64_t i = 0; i < nq; i++) {
            int64_t rank = (int64_t)(q[i] / 3), lo = rank / 256 * 256, hi = lo + 256;
            while (hi - lo > 1) {
                int64_t mid = lo + (hi - lo + 1) / 2;
                int l = rank < mid;
                left += l;
                total++;
                if (l)
                    hi = mid;
                else
                    lo = mid;
            }
        }
        double share = (double)left / (double)total;
        CHECK_MSG(fabs(share - biases[bi]) < 0.01, "bias %g: measured share of left turns %g",
                  biases[bi], share);
        CHECK_MSG(fabs(st.beta - biases[bi]) < 0.03, "bias %g: lookup sampled beta %g", biases[bi],
                  st.beta);
    }
    canopy_bptree_free(t);
    free(q);
    free(q2);
    free(pos);
    free(keys);
}

int main(void) {
    uint64_t seed = check_seed();
    make_configs();
    for (uint64_t s = 0; s < 2; s++) random_trees(seed + s);
    one_bucket(seed);
    errors();
    sampler(seed);
    return check_finish();
}
