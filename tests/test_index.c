/* SPDX-License-Identifier: MIT */
/* canopy_index: built once and queried many times (different queries, k, r), equal to
 * brute force for every tree kind; saved and loaded back (mmap) with equal answers;
 * bad files, bad handles and mismatched queries rejected with clear errors. */
#include "canopy/traverse.h"
#include "check.h"
#include "io/sectionfile.h"
#include "core/cpu_internal.h"
#include "core/device.h"
#include "tree/tree.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float *rand_points(int64_t n, int32_t d, uint64_t seed, int dup) {
    float *p = malloc(sizeof(float) * (size_t)(n * d + 1));
    canopy_rng r = canopy_rng_make(seed, 0);
    for (int64_t i = 0; i < n * d; i++) p[i] = (float)canopy_rng_uniform(&r);
    for (int64_t i = 1; dup && i < n; i += 3) memcpy(p + i * d, p + (i - 1) * d, sizeof(float) * d);
    return p;
}

/* kNN of q against the index equals brute force (indices, distances). */
static void check_knn(canopy_index *ix, canopy_points ref, canopy_points q, int32_t k,
                      const char *what) {
    int64_t nq = q.data ? q.n : ref.n;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)(nq * k + 1));
    int64_t *b = malloc(sizeof(int64_t) * (size_t)(nq * k + 1));
    float *da = malloc(sizeof(float) * (size_t)(nq * k + 1));
    float *db = malloc(sizeof(float) * (size_t)(nq * k + 1));
    canopy_stats st;
    CHECK_OK(canopy_index_knn(ix, q, k, NULL, a, da, &st));
    CHECK_MSG(st.index_reused == 1 && st.build_seconds == 0.0, "%s: no rebuild", what);
    CHECK_OK(canopy_knn_brute(ref, q, k, b, db));
    int ok = 1;
    for (int64_t i = 0; i < nq * k; i++) ok &= a[i] == b[i] && (da[i] == db[i] || a[i] < 0);
    CHECK_MSG(ok, "%s: knn k=%d equals brute force", what, (int)k);
    free(a);
    free(b);
    free(da);
    free(db);
}

static void check_radius(canopy_index *ix, canopy_points ref, canopy_points q, float r,
                         const char *what) {
    int64_t nq = q.data ? q.n : ref.n;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)(nq + 1));
    int64_t *b = malloc(sizeof(int64_t) * (size_t)(nq + 1));
    CHECK_OK(canopy_index_radius_count(ix, q, r, NULL, a, NULL));
    CHECK_OK(canopy_radius_count_brute(ref, q, r, b));
    CHECK_MSG(memcmp(a, b, sizeof(int64_t) * (size_t)nq) == 0, "%s: radius %g", what, (double)r);
    free(a);
    free(b);
}

static void metric_kinds(uint64_t seed) {
    const canopy_tree_kind kinds[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP};
    const int32_t dims[] = {1, 2, 7};
    for (int ki = 0; ki < 3; ki++)
        for (int di = 0; di < 3; di++) {
            int32_t d = dims[di];
            int64_t n = 500 + (int64_t)(seed % 300);
            float *rp = rand_points(n, d, seed + (uint64_t)(ki * 10 + di), di == 1);
            canopy_points ref = canopy_points_make(rp, n, d);
            canopy_index_options o = canopy_index_options_default(kinds[ki]);
            canopy_index *ix = NULL;
            CHECK_OK(canopy_index_build(ref, &o, &ix));
            char what[64];
            snprintf(what, sizeof what, "%s d=%d", canopy_tree_kind_name(kinds[ki]), (int)d);
            for (int round = 0; round < 3; round++) {
                int64_t nq = 50 + round * 40;
                float *qp = rand_points(nq, d, seed * 7 + (uint64_t)round, 0);
                canopy_points q = canopy_points_make(qp, nq, d);
                check_knn(ix, ref, q, 1 + round * 4, what);
                check_radius(ix, ref, q, 0.05f * (float)(round + 1), what);
                free(qp);
            }
            canopy_points self = {0};
            check_knn(ix, ref, self, 3, what);
            check_radius(ix, ref, self, 0.1f, what);
            canopy_index_info info;
            CHECK_OK(canopy_index_get_info(ix, &info));
            CHECK(info.builds == 1 && info.queries == 8 && info.n == n && info.d == d &&
                  !info.mapped);

            /* save -> load (mmap) -> the same answers */
            const char *path = check_tmp_path("ix.idx");
            CHECK_OK(canopy_index_save(ix, path));
            canopy_index *lx = NULL;
            CHECK_OK(canopy_index_load(path, &lx));
            if (lx) {
                CHECK_OK(canopy_index_get_info(lx, &info));
                CHECK(info.mapped && info.builds == 0 && info.n == n);
                float *qp = rand_points(64, d, seed + 99, 0);
                canopy_points q = canopy_points_make(qp, 64, d);
                check_knn(lx, ref, q, 4, "loaded");
                check_knn(lx, ref, self, 2, "loaded self");
                check_radius(lx, ref, q, 0.1f, "loaded");
                /* mismatched dimension */
                canopy_points wrong = canopy_points_make(qp, 64 * d / (d + 1), d + 1);
                int64_t out[64 * 8];
                CHECK_FAILS(canopy_index_knn(lx, wrong, 1, NULL, out, NULL, NULL),
                            CANOPY_ERR_INVALID, "dimensions but the index has");
                free(qp);
                canopy_index_free(lx);
            }
            canopy_index_free(ix);
            free(rp);
        }
}

static void oct_and_bst(uint64_t seed) {
    int64_t n = 400;
    float *rp = rand_points(n, 3, seed, 0);
    canopy_points bodies = canopy_points_make(rp, n, 3);
    canopy_index *ix = NULL;
    canopy_index_options o = canopy_index_options_default(CANOPY_TREE_OCT);
    CHECK_OK(canopy_index_build(bodies, &o, &ix));
    float *a = malloc(sizeof(float) * 3 * (size_t)n), *b = malloc(sizeof(float) * 3 * (size_t)n);
    canopy_run_options ro = canopy_run_options_default();
    ro.tree = CANOPY_TREE_OCT;
    CHECK_OK(canopy_index_gravity(ix, 0.5f, 0.01f, NULL, a, NULL));
    CHECK_OK(canopy_gravity(bodies, NULL, 0.5f, 0.01f, &ro, b, NULL));
    CHECK_MSG(memcmp(a, b, sizeof(float) * 3 * (size_t)n) == 0, "index gravity == gravity");
    int64_t cnt[4];
    CHECK_FAILS(canopy_index_knn(ix, bodies, 1, NULL, cnt, NULL, NULL), CANOPY_ERR_INVALID,
                "cannot answer");
    const char *path = check_tmp_path("oct.idx");
    CHECK_OK(canopy_index_save(ix, path));
    canopy_index *lx = NULL;
    CHECK_OK(canopy_index_load(path, &lx));
    if (lx) {
        memset(a, 0, sizeof(float) * 3 * (size_t)n);
        CHECK_OK(canopy_index_gravity(lx, 0.5f, 0.01f, NULL, a, NULL));
        CHECK_MSG(memcmp(a, b, sizeof(float) * 3 * (size_t)n) == 0, "loaded gravity");
    }
    canopy_index_free(lx);
    canopy_index_free(ix);
    free(a);
    free(b);

    /* bst: sorted keys, duplicates */
    float *keys = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) keys[i] = (float)(i / 3);
    o = canopy_index_options_default(CANOPY_TREE_BST);
    CHECK_OK(canopy_index_build(canopy_points_make(keys, n, 1), &o, &ix));
    float qs[5] = {-1.0f, 0.0f, 7.5f, 133.0f, 1e9f};
    int64_t got[5], want[5];
    CHECK_OK(canopy_index_search(ix, qs, 5, NULL, got, NULL));
    CHECK_OK(canopy_search(keys, n, qs, 5, NULL, want, NULL));
    CHECK(memcmp(got, want, sizeof got) == 0);
    canopy_index_free(ix);
    keys[5] = -3.0f;
    CHECK_FAILS(canopy_index_build(canopy_points_make(keys, n, 1), &o, &ix), CANOPY_ERR_INVALID,
                "sorted");
    free(keys);
    free(rp);
}

static void edge_cases(uint64_t seed) {
    /* n < k: the tail is -1 / +inf as for canopy_knn */
    float *rp = rand_points(5, 2, seed, 0);
    canopy_points ref = canopy_points_make(rp, 5, 2);
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(ref, NULL, &ix));
    check_knn(ix, ref, ref, 8, "n<k");
    /* freed handle and NULL */
    canopy_index *dead = ix;
    canopy_index_free(ix);
    int64_t out[64];
    CHECK_FAILS(canopy_index_knn(dead, ref, 1, NULL, out, NULL, NULL), CANOPY_ERR_INVALID,
                "not a live index");
    CHECK_FAILS(canopy_index_knn(NULL, ref, 1, NULL, out, NULL, NULL), CANOPY_ERR_INVALID, "NULL");
    canopy_index_free(dead); /* double free is a no-op */
    /* residency */
    canopy_index_options o = canopy_index_options_default(CANOPY_TREE_KD);
    o.residency = CANOPY_RESIDENCY_DEVICE;
    if (canopy_gpu_usable()) { /* a CUDA build on a GPU machine: tests/gpu/test_gpu_index.c */
        CHECK_OK(canopy_index_build(ref, &o, &ix));
        canopy_index_free(ix);
    } else {
        CHECK_FAILS(canopy_index_build(ref, &o, &ix), CANOPY_ERR_UNSUPPORTED, "residency device");
        o.residency = CANOPY_RESIDENCY_BOTH;
        CHECK_FAILS(canopy_index_build(ref, &o, &ix), CANOPY_ERR_UNSUPPORTED, "residency both");
        CHECK(ix == NULL);
    }
    /* empty index */
    canopy_points empty = canopy_points_make(rp, 0, 2);
    canopy_status s = canopy_index_build(empty, NULL, &ix);
    if (!s) {
        float q[2] = {0.5f, 0.5f};
        int64_t i1[2];
        float d1[2];
        CHECK_OK(canopy_index_knn(ix, canopy_points_make(q, 1, 2), 2, NULL, i1, d1, NULL));
        CHECK(i1[0] == -1 && i1[1] == -1);
        canopy_index_free(ix);
    } else {
        CHECK_MSG(s == CANOPY_ERR_INVALID, "empty index: %s", canopy_last_error());
    }
    free(rp);
}

static unsigned char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(*len + 1);
    *len = fread(b, 1, *len, f);
    fclose(f);
    return b;
}

/* Section `id` of a saved index, in place. */
static unsigned char *section(unsigned char *c, uint32_t id) {
    uint32_t n;
    memcpy(&n, c + 24, 4);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t sid;
        uint64_t off;
        memcpy(&sid, c + 64 + 24 * i, 4);
        memcpy(&off, c + 64 + 24 * i + 8, 8);
        if (sid == id) return c + off;
    }
    return NULL;
}

static void recrc(unsigned char *c, size_t len) {
    memset(c + 28, 0, 4);
    uint32_t crc = canopy_crc32c(0, c, len);
    memcpy(c + 28, &crc, 4);
}

/* Rewrites one 32-bit word of section `id` and recomputes the checksum: a file made
 * wrong, not damaged, which only the content checks can catch. */
static void patch(unsigned char *c, size_t len, uint32_t id, size_t word, uint32_t value) {
    unsigned char *sec = section(c, id);
    if (sec) memcpy(sec + 4 * word, &value, 4);
    recrc(c, len);
}

static void bad_files(uint64_t seed) {
    float *rp = rand_points(300, 3, seed, 0);
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(canopy_points_make(rp, 300, 3), NULL, &ix));
    const char *path = check_tmp_path("good.idx");
    CHECK_OK(canopy_index_save(ix, path));
    canopy_index_free(ix);
    size_t len;
    unsigned char *b = slurp(path, &len);
    canopy_index *lx = NULL;
    CHECK_OK(canopy_index_load_mem(b, len, "good", &lx));
    canopy_index_free(lx);
    CHECK_FAILS(canopy_index_load_mem(b, len / 2, "half.idx", &lx), CANOPY_ERR_FORMAT,
                "half.idx: truncated");
    CHECK_FAILS(canopy_index_load_mem(b, 10, "tiny.idx", &lx), CANOPY_ERR_FORMAT, "truncated");
    unsigned char *c = malloc(len);
    memcpy(c, b, len);
    c[len - 100] ^= 0x40;
    CHECK_FAILS(canopy_index_load_mem(c, len, "flip.idx", &lx), CANOPY_ERR_FORMAT, "checksum");
    memcpy(c, b, len);
    c[12] = 9; /* version */
    CHECK_FAILS(canopy_index_load_mem(c, len, "v9.idx", &lx), CANOPY_ERR_FORMAT, "version 9");
    memcpy(c, b, len);
    for (int i = 0; i < 4; i++) c[8 + i] = b[11 - i]; /* byte-swapped endianness marker */
    CHECK_FAILS(canopy_index_load_mem(c, len, "be.idx", &lx), CANOPY_ERR_FORMAT, "byte order");
    memcpy(c, b, len);
    c[0] = 'X';
    CHECK_FAILS(canopy_index_load_mem(c, len, "magic.idx", &lx), CANOPY_ERR_FORMAT, "not a");
    memcpy(c, b, len);
    patch(c, len, 5, 0, 0); /* the root's rope points at itself: a cycle */
    CHECK_FAILS(canopy_index_load_mem(c, len, "rope.idx", &lx), CANOPY_ERR_FORMAT,
                "ropes do not match");
    memcpy(c, b, len);
    patch(c, len, 4, 2, 0); /* ids[1] = 0 (little-endian low word), as ids[0] may be */
    patch(c, len, 4, 0, 0);
    CHECK_FAILS(canopy_index_load_mem(c, len, "ids.idx", &lx), CANOPY_ERR_FORMAT, "permutation");
    memcpy(c, b, len);
    patch(c, len, 2, 0, 5); /* the root's first child index moved */
    CHECK_FAILS(canopy_index_load_mem(c, len, "child.idx", &lx), CANOPY_ERR_FORMAT,
                "child.idx: inconsistent index");
    CHECK_FAILS(canopy_index_load("/nonexistent/x.idx", &lx), CANOPY_ERR_IO, "/nonexistent/x.idx");
    CHECK(lx == NULL);
    free(c);
    free(b);
    free(rp);
}

/* A saved index of `kind` whose node `node` (or, node < 0, the first leaf with more
 * than one point) gets `edit`, checksum recomputed: the loader must refuse it with a
 * message containing `needle` (issue 35, rows 1, 2 and 6). */
typedef void (*node_edit)(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts);

static void craft(canopy_tree_kind kind, int32_t d, int32_t node, node_edit edit,
                  const char *needle, uint64_t seed) {
    int64_t n = 400;
    float *rp = rand_points(n, d, seed, 1);
    canopy_index_options o = canopy_index_options_default(kind);
    canopy_index *ix = NULL;
    CHECK_OK(canopy_index_build(canopy_points_make(rp, n, d), &o, &ix));
    const char *path = check_tmp_path("craft.idx");
    CHECK_OK(canopy_index_save(ix, path));
    canopy_index_free(ix);
    size_t len;
    unsigned char *c = slurp(path, &len);
    int64_t meta[8];
    memcpy(meta, section(c, 1), sizeof meta);
    unsigned char *hot = section(c, 2);
    int32_t stride = (int32_t)meta[4], nodes = (int32_t)meta[3];
    if (node < 0)
        for (int32_t i = 0; i < nodes && node < 0; i++) {
            canopy_node *nd = (canopy_node *)(hot + (int64_t)i * stride);
            if (nd->child < 0 && nd->end - nd->begin > 1) node = i;
        }
    CHECK_MSG(node >= 0 && node < nodes, "%s: a node to edit", needle);
    canopy_node *nd = (canopy_node *)(hot + (int64_t)node * stride);
    edit(nd, (float *)(nd + 1), d, meta, (float *)section(c, 3));
    memcpy(section(c, 1), meta, sizeof meta);
    recrc(c, len);
    canopy_index *lx = NULL;
    CHECK_FAILS(canopy_index_load_mem(c, len, "craft.idx", &lx), CANOPY_ERR_FORMAT,
                "craft.idx: inconsistent index");
    CHECK_MSG(check_contains(canopy_last_error(), needle), "%s: got '%s'", needle,
              canopy_last_error());
    CHECK(lx == NULL);
    free(c);
    free(rp);
}

static void fan_out_9(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)g, (void)d, (void)pts;
    meta[7] = 9;
    nd->nchild = 9;
}
static void fan_out_1024(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)g, (void)d, (void)pts;
    meta[7] = 1024;
}
static void one_child(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)g, (void)d, (void)meta, (void)pts;
    nd->nchild = 1;
}
static void hi_below_lo(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)meta, (void)pts;
    g[d] = g[0] - 1.0f;
}
static void false_root_box(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)meta, (void)pts;
    g[0] = g[d] = 2.0f; /* a box that holds none of the points in [0, 1) */
}
static void shrunk_leaf_box(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)meta;
    g[d] = g[0]; /* some point of the leaf lies beyond (the points are not all equal) */
    for (int32_t i = nd->begin; i < nd->end; i++)
        if (pts[(int64_t)i * d] > g[0]) return;
    g[0] = g[d] = -1.0f;
}
static void nan_point(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)g, (void)meta;
    pts[(int64_t)nd->begin * d] = NAN;
}
static void small_radius(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)meta, (void)pts;
    g[d] *= 0.5f; /* ball: radius; vp: mu (unused by the bounds); oct: ignored */
}
static void vp_shell(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)meta, (void)pts;
    g[d + 2] = g[d + 1]; /* the shell [lo, hi] collapsed to its inner radius */
}
static void oct_cell(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)d, (void)meta, (void)pts;
    g[7] *= 0.25f;
}
static void oct_mass(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)d, (void)meta, (void)pts;
    g[3] = INFINITY;
}
static void no_split_dim(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)nd, (void)meta, (void)pts;
    g[2 * d] = -1.0f; /* an inner node marked as a leaf: kNN's order read q[-1] */
}
static void ranges_shifted(canopy_node *nd, float *g, int32_t d, int64_t *meta, float *pts) {
    (void)g, (void)d, (void)meta, (void)pts;
    nd->end--; /* the parent's last point falls between its children */
}

static void crafted_files(uint64_t seed) {
    craft(CANOPY_TREE_KD, 3, 0, fan_out_9, "fan-out of a binary tree kind is not 2", seed);
    craft(CANOPY_TREE_OCT, 3, 0, fan_out_1024, "fan-out above the engines' limit of 8", seed);
    craft(CANOPY_TREE_KD, 3, 0, one_child, "without exactly two children", seed);
    craft(CANOPY_TREE_BALL, 2, 0, one_child, "without exactly two children", seed);
    craft(CANOPY_TREE_KD, 3, -1, hi_below_lo, "box has lo > hi", seed);
    craft(CANOPY_TREE_KD, 3, 0, false_root_box, "not inside its parent's", seed);
    craft(CANOPY_TREE_KD, 2, -1, shrunk_leaf_box, "outside its node's bound", seed);
    craft(CANOPY_TREE_KD, 1, -1, shrunk_leaf_box, "outside its node's bound", seed);
    craft(CANOPY_TREE_KD, 3, -1, nan_point, "point coordinate is not finite", seed);
    craft(CANOPY_TREE_BALL, 4, 0, small_radius, "outside its node's bound", seed);
    craft(CANOPY_TREE_VP, 4, 0, vp_shell, "outside its node's bound", seed);
    craft(CANOPY_TREE_OCT, 3, 0, oct_cell, "outside its node's bound", seed);
    craft(CANOPY_TREE_OCT, 3, 0, oct_mass, "mass or centre of mass", seed);
    craft(CANOPY_TREE_KD, 3, 0, no_split_dim, "kd split dimension out of range", seed);
    craft(CANOPY_TREE_KD, 3, 1, ranges_shifted, "children do not split", seed);
    craft(CANOPY_TREE_VP, 3, 1, ranges_shifted, "children do not split", seed);
}

/* Host kd indexes of d <= 3 are kd curve trees (split at Morton-key bits, tree.h): kNN
 * (k 1 and 8), self-queries and radius counts equal brute force on 2-D clusters, clusters
 * far denser than the first key grid (with one point far away), duplicates, n below the
 * leaf size, d = 1 and 3; on 1 and 2 threads, with the AVX2 and the scalar kernels. */
static void curve_indexes(uint64_t seed) {
    for (int c = 0; c < 6; c++) {
        int32_t d = c == 4 ? 1 : c == 5 ? 3 : 2;
        int64_t n = c == 3 ? 20 : 5000 + (int64_t)(seed % 1000), nq = 300;
        float scale = c == 1 ? 1e-5f : 1.0f;
        float *rp = c == 2 || c == 4 ? rand_points(n, d, seed + (uint64_t)c, 1)
                                     : malloc(sizeof(float) * (size_t)(n * d));
        if (c != 2 && c != 4) CHECK_OK(canopy_gen_clusters(rp, NULL, n, d, 16, 0.01, seed + c));
        for (int64_t i = 0; i < n * d; i++) rp[i] *= scale;
        for (int64_t i = 0; c == 1 && i < d; i++) rp[i] = -1e3f; /* the far point */
        for (int64_t i = 5; c == 2 && i < n; i += 5) memcpy(rp + i * d, rp, sizeof(float) * d);
        /* queries: half on points, moved a little; half anywhere in the unit box */
        float *qp = rand_points(nq, d, seed * 3 + (uint64_t)c, 0);
        canopy_rng r = canopy_rng_make(seed, 40 + (uint64_t)c);
        for (int64_t i = 0; i < nq; i += 2)
            for (int32_t j = 0; j < d; j++)
                qp[i * d + j] = rp[canopy_rng_below(&r, (uint64_t)n) * d + j] +
                                (float)(canopy_rng_uniform(&r) - 0.5) * 1e-3f * scale;
        for (int64_t i = 1; i < nq; i += 2)
            for (int32_t j = 0; j < d; j++) qp[i * d + j] *= scale;
        canopy_points ref = canopy_points_make(rp, n, d), q = canopy_points_make(qp, nq, d);
        canopy_index *ix = NULL;
        canopy_index_options o = canopy_index_options_default(CANOPY_TREE_KD);
        CHECK_OK(canopy_index_build(ref, &o, &ix));
        canopy_index_info info;
        if (ix) CHECK_OK(canopy_index_get_info(ix, &info));
        CHECK_MSG(ix && info.leaf_size == CANOPY_KD_CURVE_LEAF, "curve index %d: leaf size", c);
        static const int isas[] = {-1, CANOPY_ISA_AVX2, CANOPY_ISA_SCALAR};
        for (int threads = 1; ix && threads <= 2; threads++)
            for (int ii = 0; ii < 3; ii++) {
                char what[80];
                snprintf(what, sizeof what, "curve index case %d, d %d, %d threads, isa %d", c,
                         (int)d, threads, isas[ii]);
                canopy_set_threads(threads);
                canopy_cpu_isa_override(isas[ii]);
                check_knn(ix, ref, q, 8, what);
                check_knn(ix, ref, q, 1, what);
                canopy_points self = {0};
                if (ii == 0) check_knn(ix, ref, self, 3, what);
                if (ii == 0) check_radius(ix, ref, q, 0.02f * scale, what);
            }
        canopy_cpu_isa_override(-1);
        canopy_set_threads(0);
        canopy_index_free(ix);
        free(rp);
        free(qp);
    }
}

int main(void) {
    uint64_t seed = check_seed();
    for (int rep = 0; rep < 2; rep++) metric_kinds(seed + (uint64_t)rep * 1000);
    oct_and_bst(seed);
    curve_indexes(seed);
    edge_cases(seed);
    bad_files(seed);
    crafted_files(seed);
    return check_finish();
}
