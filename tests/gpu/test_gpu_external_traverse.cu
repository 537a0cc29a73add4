/* SPDX-License-Identifier: MIT */
/* The GPU twin of tests/external: traversals compiled by nvcc outside src/ with
 * include/ as the only include directory, instantiated for the GPU with
 * canopy/traverse_cuda.cuh, run under every GPU variant and schedule and compared
 * with brute force (empty, d = 1, duplicates). Exit 77 without a GPU. */
#include "../external/ball_count.h"

#include <canopy/traverse_cuda.cuh>
#include <canopy/traverse_geom.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

/* ---- nearest point (guided; on the GPU the order is two-way: near child first;
 * the host side, which auto and the hybrid schedule use, takes its permutation) ---- */
typedef struct near_ctx {
    canopy_points query;
    int64_t *idx;
} near_ctx;
typedef struct near_state {
    const float *q;
    float best;
    int64_t id;
} near_state;

CANOPY_HD void near_init(const void *vc, void *vs, int64_t q) {
    near_state *s = (near_state *)vs;
    s->q = canopy_point(((const near_ctx *)vc)->query, q);
    s->best = INFINITY;
    s->id = -1;
}
CANOPY_HD int near_truncate(const void *, void *vs, const canopy_tree_view *t, int32_t node) {
    const near_state *s = (const near_state *)vs;
    return canopy_node_min_dist2(t, node, s->q) > s->best;
}
CANOPY_HD void near_visit_leaf(const void *, void *vs, const canopy_tree_view *t, int32_t node) {
    near_state *s = (near_state *)vs;
    const canopy_node *h = canopy_tv_node(t, node);
    for (int32_t i = h->begin; i < h->end; i++) {
        float d2 = canopy_dist2(s->q, canopy_tv_point(t, i), t->d);
        int64_t id = t->ids[i];
        if (d2 < s->best || (d2 == s->best && id < s->id)) {
            s->best = d2;
            s->id = id;
        }
    }
}
CANOPY_HD int near_order(const void *, const void *vs, const canopy_tree_view *t, int32_t node) {
    const near_state *s = (const near_state *)vs;
    const canopy_node *h = canopy_tv_node(t, node);
    return canopy_node_min_dist2(t, h->child + h->nchild - 1, s->q) <
           canopy_node_min_dist2(t, h->child, s->q);
}
CANOPY_HD void near_order_perm(const void *vc, const void *vs, const canopy_tree_view *t,
                               int32_t node, int32_t *perm) {
    canopy_order_flip(perm, canopy_tv_node(t, node)->nchild, near_order(vc, vs, t, node));
}
CANOPY_HD void near_finish(const void *vc, void *vs, int64_t q) {
    ((const near_ctx *)vc)->idx[q] = ((const near_state *)vs)->id;
}

/* The descriptors as GPU types (every GPU engine is instantiated for them). */
CANOPY_GPU_APP_UNGUIDED(ball, ball_ctx, ball_state)
CANOPY_GPU_APP_GUIDED(near, near_ctx, near_state, true)

/* Their GPU runners: upload the queries, register the outputs. */
static canopy_status ball_gpu_run(const void *vctx, const canopy_tree_view *tree,
                                  const int64_t *order, int64_t nq, canopy_variant v,
                                  const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    const ball_ctx *h = (const ball_ctx *)vctx;
    return canopy_gpu_run_app<ball_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, ball_ctx &d, canopy_gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "queries");
            if (!s)
                s = canopy_gpu_add_output(B, &d.counts, h->counts, (size_t)nq * sizeof(int64_t),
                                          "counts", o, n);
            return s;
        });
}
static canopy_status near_gpu_run(const void *vctx, const canopy_tree_view *tree,
                                  const int64_t *order, int64_t nq, canopy_variant v,
                                  const canopy_profile_plan *plan, canopy_gpu_report *rep) {
    const near_ctx *h = (const near_ctx *)vctx;
    return canopy_gpu_run_app<near_gpu>(
        *h, tree, order, nq, v, plan, rep,
        [&](canopy_trav_buffers &B, near_ctx &d, canopy_gpu_output *o, int &n) {
            canopy_status s = B.upload_points(&d.query, h->query, "queries");
            if (!s)
                s = canopy_gpu_add_output(B, &d.idx, h->idx, (size_t)nq * sizeof(int64_t),
                                          "indices", o, n);
            return s;
        });
}

/* The descriptors for the host side of canopy_traverse (auto's sample and the
 * hybrid schedule walk them there); no CPU runners: the CPU engines are C11
 * (canopy/traverse_cpu.h), this file is CUDA C++, and it tests the GPU. */
static const canopy_app ball_app = {"ball",        sizeof(ball_state), 0,    1,           ball_init,
                                    ball_truncate, ball_visit_leaf,    NULL, ball_finish, 0};
static const canopy_app near_app = {
    "near",          sizeof(near_state), 1,           1, near_init, near_truncate,
    near_visit_leaf, near_order_perm,    near_finish, 0};
static const canopy_cpu_runner no_cpu[CANOPY_VARIANT_COUNT] = {};

static uint64_t rng;
static float uniform(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(rng >> 40) / (float)(1u << 24);
}

static void check_case(canopy_tree_kind kind, int64_t n, int64_t nq, int32_t d, int coarse) {
    float *ref = (float *)malloc((size_t)(n * d + 1) * sizeof(float));
    float *qry = (float *)malloc((size_t)(nq * d + 1) * sizeof(float));
    for (int64_t i = 0; i < n * d; i++) ref[i] = coarse ? (float)(int)(uniform() * 6) : uniform();
    for (int64_t i = 0; i < nq * d; i++) qry[i] = coarse ? (float)(int)(uniform() * 6) : uniform();
    canopy_points rp = canopy_points_make(ref, n, d), qp = canopy_points_make(qry, nq, d);
    canopy_tree_options to = canopy_tree_options_default(kind);
    canopy_tree *tree = NULL;
    EXPECT(canopy_tree_build(rp, &to, &tree) == CANOPY_OK, "build");
    float r = coarse ? 1.5f : 0.2f, r2 = r * r;
    int64_t *want_c = (int64_t *)calloc((size_t)nq + 1, 8),
            *want_i = (int64_t *)calloc((size_t)nq + 1, 8);
    for (int64_t q = 0; q < nq; q++) {
        float best = INFINITY;
        want_i[q] = -1;
        for (int64_t i = 0; i < n; i++) {
            float d2 = canopy_dist2(canopy_point(qp, q), canopy_point(rp, i), d);
            want_c[q] += d2 <= r2;
            if (d2 < best) {
                best = d2;
                want_i[q] = i;
            }
        }
    }
    int64_t *got = (int64_t *)calloc((size_t)nq + 1, 8);
    const canopy_variant vs[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_REC,  CANOPY_VARIANT_DR,
                                 CANOPY_VARIANT_SR,   CANOPY_VARIANT_GDR,  CANOPY_VARIANT_DR_L,
                                 CANOPY_VARIANT_SR_L, CANOPY_VARIANT_FSM_L};
    const canopy_schedule ss[] = {CANOPY_SCHEDULE_AUTO, CANOPY_SCHEDULE_NONE,
                                  CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_TREE,
                                  CANOPY_SCHEDULE_HYBRID};
    for (size_t v = 0; v < sizeof vs / sizeof *vs; v++)
        for (size_t s = 0; s < sizeof ss / sizeof *ss; s++) {
            canopy_run_options o = canopy_run_options_default();
            o.backend = CANOPY_BACKEND_GPU;
            o.variant = vs[v];
            o.schedule = ss[s];
            const char *vn = canopy_variant_name(vs[v]), *sn = canopy_schedule_name(ss[s]);
            ball_ctx bc = {qp, r2, got};
            canopy_traversal bt = {"ball", &ball_app, no_cpu, ball_gpu_run, &bc, qp, nq, NULL};
            canopy_status st = canopy_traverse(tree, &bt, &o, NULL);
            EXPECT(st == CANOPY_OK, "ball %s %s n=%lld", vn, sn, (long long)n);
            for (int64_t q = 0; !st && q < nq; q++)
                if (got[q] != want_c[q]) {
                    EXPECT(0, "ball %s/%s %s n=%lld d=%d q=%lld: %lld want %lld",
                           canopy_tree_kind_name(kind), vn, sn, (long long)n, (int)d, (long long)q,
                           (long long)got[q], (long long)want_c[q]);
                    break;
                }
            near_ctx nc = {qp, got};
            canopy_traversal nt = {"near", &near_app, no_cpu, near_gpu_run, &nc, qp, nq, NULL};
            st = canopy_traverse(tree, &nt, &o, NULL);
            if (vs[v] == CANOPY_VARIANT_SR || vs[v] == CANOPY_VARIANT_SR_L) {
                EXPECT(st == CANOPY_ERR_INVALID, "near: %s must refuse a guided traversal", vn);
                continue;
            }
            EXPECT(st == CANOPY_OK, "near %s %s n=%lld", vn, sn, (long long)n);
            for (int64_t q = 0; !st && q < nq; q++)
                if (got[q] != want_i[q]) {
                    EXPECT(0, "near %s/%s %s n=%lld d=%d q=%lld: %lld want %lld",
                           canopy_tree_kind_name(kind), vn, sn, (long long)n, (int)d, (long long)q,
                           (long long)got[q], (long long)want_i[q]);
                    break;
                }
        }
    canopy_tree_free(tree);
    free(ref);
    free(qry);
    free(want_c);
    free(want_i);
    free(got);
}

int main(void) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("test_gpu_external_traverse: no GPU, skipped\n");
        return 77;
    }
    const canopy_tree_kind kinds[] = {CANOPY_TREE_KD, CANOPY_TREE_BALL, CANOPY_TREE_VP,
                                      CANOPY_TREE_OCT};
    const int64_t sizes[] = {0, 1, 9, 700, 5000};
    for (uint64_t seed = 1; seed <= 2; seed++) {
        rng = seed * 0x9e3779b97f4a7c15ull;
        for (size_t k = 0; k < 4; k++)
            for (size_t z = 0; z < 5; z++) {
                int32_t d = kinds[k] == CANOPY_TREE_OCT ? 3 : (int32_t)(1 + (z + seed) % 3);
                check_case(kinds[k], sizes[z], sizes[z] ? sizes[z] / 2 + 37 : 40, d,
                           (int)(seed & 1));
            }
    }
    if (failures) {
        printf("test_gpu_external_traverse: %d failures\n", failures);
        return 1;
    }
    printf("test_gpu_external_traverse: ok\n");
    return 0;
}
