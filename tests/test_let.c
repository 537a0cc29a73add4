/* SPDX-License-Identifier: MIT */
/* Locally essential trees (gravity/let.h), no MPI: bodies split along the Morton curve
 * into R domains, each domain walks its own tree plus the pieces the others export
 * for its bounding box. With the corrected radius (about the centre of mass, the
 * walk's own test) every body gets bit for bit the forces of walking the other
 * domains' whole trees, nothing is dropped, and the error against float64 direct
 * summation stays at the single-domain walk's. With the naive radius (the same
 * radius about the geometric centre) a configuration whose centre of mass sits far
 * from the cell centre loses interactions and the forces differ. */
#include "check.h"
#include "inclusion_case.h"
#include "gravity/let.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct problem {
    int64_t n;
    float *pos, *mass;
    int32_t r;
    int64_t *owner_start; /* r + 1 boundaries in perm */
    int64_t *perm;        /* bodies of domain k: perm[owner_start[k] .. owner_start[k+1]) */
} problem;

typedef struct domain_data {
    float *pos, *mass;
    int64_t *gid;
    int64_t n;
    let_domain dom;
} domain_data;

/* Pairs (receiver, source) that walked the source's top tree instead of a piece. */
static int64_t tops_used;

/* Forces on all bodies: each domain walks its whole tree, then the others' pieces
 * exported with `radius` (LET_RADIUS_ALL: the others' whole trees, the reference).
 * With the corrected radius a source's top tree stands in for its piece wherever
 * canopy_let_top_suffices, as in src/dist/gravity.c (no bytes counted for it). */
static void distributed(const problem *pb, int32_t order, float theta, float eps, let_radius radius,
                        float *acc, let_walk_stats *total, int64_t *bytes) {
    int32_t r = pb->r;
    domain_data *dd = calloc((size_t)r, sizeof *dd);
    for (int32_t k = 0; k < r; k++) {
        domain_data *d = dd + k;
        d->n = pb->owner_start[k + 1] - pb->owner_start[k];
        d->pos = malloc((size_t)(d->n + 1) * 3 * sizeof(float));
        d->mass = malloc((size_t)(d->n + 1) * sizeof(float));
        d->gid = malloc((size_t)(d->n + 1) * sizeof(int64_t));
        for (int64_t i = 0; i < d->n; i++) {
            int64_t g = pb->perm[pb->owner_start[k] + i];
            memcpy(d->pos + 3 * i, pb->pos + 3 * g, 3 * sizeof(float));
            d->mass[i] = pb->mass[g];
            d->gid[i] = g;
        }
        CHECK_OK(canopy_let_domain_build(canopy_points_make(d->pos, d->n, 3), d->mass, d->gid,
                                         order, 0, &d->dom));
    }
    memset(total, 0, sizeof *total);
    *bytes = 0;
    let_piece *pieces = calloc((size_t)r, sizeof *pieces);
    for (int32_t i = 0; i < r; i++) {
        domain_data *d = dd + i;
        for (int32_t j = 0; j < r; j++) {
            let_radius rad = j == i ? LET_RADIUS_ALL : radius;
            if (rad == LET_RADIUS_CORRECTED) {
                CHECK_OK(canopy_let_export(&dd[j].dom, NULL, 0, 1.0f / theta, LET_RADIUS_TOP,
                                           pieces + j));
                if (canopy_let_top_suffices(pieces + j, d->dom.boxes[0], d->dom.n_boxes,
                                            1.0f / theta)) {
                    tops_used += pieces[j].n_cells > 0;
                    continue;
                }
                canopy_let_piece_free(pieces + j);
            }
            CHECK_OK(canopy_let_export(&dd[j].dom, d->dom.boxes[0], d->dom.n_boxes, 1.0f / theta,
                                       rad, pieces + j));
            if (j != i) *bytes += canopy_let_piece_bytes(pieces + j);
        }
        float *a = malloc((size_t)(d->n + 1) * 3 * sizeof(float));
        let_walk_stats st;
        CHECK_OK(canopy_let_forces(pieces, r, canopy_points_make(d->pos, d->n, 3), d->gid,
                                   1.0f / theta, eps * eps, a, NULL, NULL, &st));
        for (int64_t b = 0; b < d->n; b++)
            memcpy(acc + 3 * d->gid[b], a + 3 * b, 3 * sizeof(float));
        total->expansions += st.expansions;
        total->direct += st.direct;
        total->dropped += st.dropped;
        free(a);
        for (int32_t j = 0; j < r; j++) canopy_let_piece_free(pieces + j);
    }
    free(pieces);
    for (int32_t k = 0; k < r; k++) {
        canopy_let_domain_free(&dd[k].dom);
        free(dd[k].pos);
        free(dd[k].mass);
        free(dd[k].gid);
    }
    free(dd);
}

static double median_error(const float *acc, const double *ref, const int64_t *sample, int64_t ns) {
    double *rel = malloc((size_t)(ns + 1) * sizeof *rel);
    for (int64_t k = 0; k < ns; k++) {
        double d2 = 0.0, r2 = 0.0;
        for (int j = 0; j < 3; j++) {
            double e = acc[3 * sample[k] + j] - ref[3 * k + j];
            d2 += e * e;
            r2 += ref[3 * k + j] * ref[3 * k + j];
        }
        rel[k] = r2 > 0.0 ? sqrt(d2 / r2) : sqrt(d2);
    }
    for (int64_t a = 1; a < ns; a++) /* insertion sort: ns is small */
        for (int64_t b = a; b > 0 && rel[b - 1] > rel[b]; b--) {
            double t = rel[b];
            rel[b] = rel[b - 1];
            rel[b - 1] = t;
        }
    double m = ns ? rel[ns / 2] : 0.0;
    free(rel);
    return m;
}

static void make_plummer(problem *pb, int64_t n, uint64_t seed) {
    pb->n = n;
    pb->pos = malloc((size_t)(n + 1) * 3 * sizeof(float));
    pb->mass = malloc((size_t)(n + 1) * sizeof(float));
    float *vel = malloc((size_t)(n + 1) * 3 * sizeof(float));
    CHECK_OK(canopy_gen_plummer(pb->pos, vel, n, seed));
    free(vel);
    canopy_rng g = canopy_rng_make(seed, 7);
    for (int64_t i = 0; i < n; i++) pb->mass[i] = (float)((0.5 + canopy_rng_uniform(&g)) / n);
    if (n >= 4) /* a duplicate pair: coincident bodies in one leaf */
        memcpy(pb->pos + 3 * (n - 1), pb->pos + 3 * (n / 2), 3 * sizeof(float));
}

static void split(problem *pb, int32_t r) {
    pb->r = r;
    pb->perm = malloc((size_t)(pb->n + 1) * sizeof(int64_t));
    pb->owner_start = malloc((size_t)(r + 1) * sizeof(int64_t));
    CHECK_OK(canopy_let_split_curve(canopy_points_make(pb->pos, pb->n, 3), CANOPY_SCHEDULE_MORTON,
                                    NULL, r, pb->perm, pb->owner_start));
}

static void unsplit(problem *pb) {
    free(pb->perm);
    free(pb->owner_start);
}

/* Corrected LET = the others' whole trees, bit for bit; error at the single-domain
 * walk's level against float64 direct summation. */
static void check_corrected_plummer(uint64_t seed) {
    static const int64_t sizes[] = {1, 5, 700, 3000};
    static const int32_t ranks[] = {1, 2, 3, 4, 7};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        problem pb;
        int64_t n = sizes[si];
        make_plummer(&pb, n, seed + (uint64_t)si);
        float *acc = malloc((size_t)n * 3 * sizeof(float));
        float *ref = malloc((size_t)n * 3 * sizeof(float));
        float *one = malloc((size_t)n * 3 * sizeof(float));
        int64_t ns = n < 200 ? n : 200, *sample = malloc((size_t)ns * sizeof *sample);
        for (int64_t k = 0; k < ns; k++) sample[k] = k * n / ns;
        double *direct = malloc((size_t)(ns + 1) * 3 * sizeof(double));
        const float eps = 0.01f;
        CHECK_OK(canopy_gravity_direct_sample(canopy_points_make(pb.pos, n, 3), pb.mass, eps,
                                              sample, ns, direct, NULL));
        for (int32_t order = 0; order <= 2; order += 2)
            for (float theta = 0.3f; theta < 0.8f; theta += 0.4f) {
                canopy_gravity_options g = canopy_gravity_options_default();
                g.opening = CANOPY_OPENING_BODY; /* the per-body walk the pieces use */
                g.theta = theta;
                g.order = order;
                g.softening = eps;
                CHECK_OK(canopy_gravity_multipole(canopy_points_make(pb.pos, n, 3), pb.mass, &g,
                                                  NULL, one, NULL, NULL));
                double e1 = median_error(one, direct, sample, ns);
                for (size_t ri = 0; ri < sizeof ranks / sizeof *ranks; ri++) {
                    split(&pb, ranks[ri]);
                    let_walk_stats st, st_ref;
                    int64_t bytes, bytes_ref;
                    distributed(&pb, order, theta, eps, LET_RADIUS_CORRECTED, acc, &st, &bytes);
                    distributed(&pb, order, theta, eps, LET_RADIUS_ALL, ref, &st_ref, &bytes_ref);
                    CHECK_MSG(memcmp(acc, ref, (size_t)n * 3 * sizeof(float)) == 0,
                              "corrected LET != whole remote trees (n %lld, R %d, order %d, "
                              "theta %g)",
                              (long long)n, (int)ranks[ri], (int)order, (double)theta);
                    CHECK_MSG(st.dropped == 0 && st_ref.dropped == 0,
                              "dropped %lld interactions (n %lld, R %d)", (long long)st.dropped,
                              (long long)n, (int)ranks[ri]);
                    CHECK(st.expansions == st_ref.expansions && st.direct == st_ref.direct);
                    CHECK(bytes <= bytes_ref);
                    double er = median_error(acc, direct, sample, ns);
                    double bound = fmax(2.0 * e1, canopy_gravity_expected_error(theta, order));
                    CHECK_MSG(n < 500 || er <= bound, /* a few bodies: noisy medians */
                              "R %d median error %.3g vs one domain %.3g (n %lld, order %d, "
                              "theta %g)",
                              (int)ranks[ri], er, e1, (long long)n, (int)order, (double)theta);
                    if (ranks[ri] == 1) { /* one domain: the library's walk, to round-off */
                        double worst = 0.0;
                        for (int64_t b = 0; b < n; b++) {
                            double d2 = 0.0, r2 = 0.0;
                            for (int j = 0; j < 3; j++) {
                                double e = (double)acc[3 * b + j] - one[3 * b + j];
                                d2 += e * e;
                                r2 += (double)one[3 * b + j] * one[3 * b + j];
                            }
                            worst = fmax(worst, sqrt(d2 / fmax(r2, 1e-30)));
                        }
                        CHECK_MSG(worst < 1e-4,
                                  "R 1 vs canopy_gravity_multipole: %.3g (n %lld, order %d)", worst,
                                  (long long)n, (int)order);
                    }
                    unsplit(&pb);
                }
            }
        free(acc);
        free(ref);
        free(one);
        free(sample);
        free(direct);
        free(pb.pos);
        free(pb.mass);
    }
}

/* inclusion_case.h: domain 1 is the clump (bodies 0..K-1), domain 0 the light
 * bodies. The naive test prunes the root that those bodies must open: the whole
 * domain 1 goes missing from their forces. */
static void check_naive_drops(uint64_t seed) {
    enum { K = 60, M = 12 };
    const float theta = 0.5f, eps = 0.001f;
    problem pb;
    pb.n = K + M;
    pb.pos = malloc((size_t)pb.n * 3 * sizeof(float));
    pb.mass = malloc((size_t)pb.n * sizeof(float));
    inclusion_case(pb.pos, pb.mass, K, pb.pos + 3 * K, pb.mass + K, M, theta, seed);

    pb.r = 2;
    int64_t start[3] = {0, M, K + M};
    pb.owner_start = start;
    pb.perm = malloc((size_t)pb.n * sizeof(int64_t));
    for (int64_t i = 0; i < M; i++) pb.perm[i] = K + i;
    for (int64_t i = 0; i < K; i++) pb.perm[M + i] = i;

    float *ref = malloc((size_t)pb.n * 3 * sizeof(float));
    float *cor = malloc((size_t)pb.n * 3 * sizeof(float));
    float *nai = malloc((size_t)pb.n * 3 * sizeof(float));
    let_walk_stats sr, sc, sn;
    int64_t br, bc, bn;
    for (int32_t order = 0; order <= 2; order += 2) {
        distributed(&pb, order, theta, eps, LET_RADIUS_ALL, ref, &sr, &br);
        distributed(&pb, order, theta, eps, LET_RADIUS_CORRECTED, cor, &sc, &bc);
        distributed(&pb, order, theta, eps, LET_RADIUS_NAIVE, nai, &sn, &bn);
        CHECK_MSG(memcmp(cor, ref, (size_t)pb.n * 3 * sizeof(float)) == 0,
                  "corrected LET differs from the whole trees (order %d)", (int)order);
        CHECK_MSG(sc.dropped == 0, "corrected LET dropped %lld", (long long)sc.dropped);
        CHECK_MSG(sn.dropped >= M, "naive LET dropped only %lld (order %d)", (long long)sn.dropped,
                  (int)order);
        double worst = 0.0;
        for (int64_t i = K; i < pb.n; i++) {
            double d2 = 0.0, r2 = 0.0;
            for (int j = 0; j < 3; j++) {
                double e = (double)nai[3 * i + j] - ref[3 * i + j];
                d2 += e * e;
                r2 += (double)ref[3 * i + j] * ref[3 * i + j];
            }
            worst = fmax(worst, sqrt(d2 / r2));
        }
        CHECK_MSG(worst > 0.5, "naive LET forces differ by only %.3g (order %d)", worst,
                  (int)order);
        printf("naive radius, order %d: %lld interactions dropped, worst relative force "
               "error %.3g; corrected: 0 dropped, %lld vs %lld bytes sent\n",
               (int)order, (long long)sn.dropped, worst, (long long)bc, (long long)bn);
    }
    free(ref);
    free(cor);
    free(nai);
    free(pb.perm);
    free(pb.pos);
    free(pb.mass);
}

/* The Morton split: a permutation; equal counts without work; with work every run
 * but the last stays within total / r, and the last takes the rest. */
static void check_split(uint64_t seed) {
    problem pb;
    make_plummer(&pb, 1000, seed);
    double *work = malloc(1000 * sizeof *work);
    canopy_rng g = canopy_rng_make(seed, 3);
    double total = 0.0;
    for (int i = 0; i < 1000; i++) total += work[i] = 1.0 + 99.0 * canopy_rng_uniform(&g);
    int64_t perm[1000], start[6];
    char seen[1000];
    for (int pass = 0; pass < 2; pass++) {
        CHECK_OK(canopy_let_split_curve(canopy_points_make(pb.pos, 1000, 3), CANOPY_SCHEDULE_MORTON,
                                        pass ? work : NULL, 5, perm, start));
        memset(seen, 0, sizeof seen);
        int ok = 1;
        for (int i = 0; i < 1000; i++) {
            ok &= perm[i] >= 0 && perm[i] < 1000 && !seen[perm[i]];
            if (ok) seen[perm[i]] = 1;
        }
        CHECK(ok && start[0] == 0 && start[5] == 1000);
        for (int k = 0; k < 5; k++) {
            CHECK(start[k] <= start[k + 1]);
            double w = 0.0;
            for (int64_t i = start[k]; i < start[k + 1]; i++) w += pass ? work[perm[i]] : 1.0;
            if (!pass) CHECK(w == 200.0);
            if (pass && k < 4)
                CHECK_MSG(w <= total / 5 + 100.0 && w >= total / 5 - 200.0,
                          "run %d has work %g of %g", k, w, total);
        }
    }
    CHECK_FAILS(canopy_let_split_curve(canopy_points_make(pb.pos, 1000, 3), CANOPY_SCHEDULE_MORTON,
                                       NULL, 0, perm, start),
                CANOPY_ERR_INVALID, "domains");
    free(work);
    free(pb.pos);
    free(pb.mass);
}

/* The shared top tree: two unit cubes of bodies 10 apart, each cut into two domains.
 * A domain of the other cube accepts each far domain's top cells, so that top tree
 * replaces the far domain's piece (nothing sent), and every body's forces stay bit
 * for bit those of walking the whole remote trees. Near domains still exchange. */
static void check_top_tree(uint64_t seed) {
    problem pb;
    pb.n = 1200;
    pb.pos = malloc((size_t)pb.n * 3 * sizeof(float));
    pb.mass = malloc((size_t)pb.n * sizeof(float));
    canopy_rng g = canopy_rng_make(seed, 5);
    for (int64_t i = 0; i < pb.n; i++) {
        for (int j = 0; j < 3; j++)
            pb.pos[3 * i + j] = (float)canopy_rng_uniform(&g) + (i >= pb.n / 2 ? 10.0f : 0.0f);
        pb.mass[i] = (float)((0.5 + canopy_rng_uniform(&g)) / (double)pb.n);
    }
    float *acc = malloc((size_t)pb.n * 3 * sizeof(float)), *ref = malloc((size_t)pb.n * 12);
    for (int32_t order = 0; order <= 2; order += 2) {
        split(&pb, 4);
        let_walk_stats st, st_ref;
        int64_t bytes, bytes_ref, before = tops_used;
        distributed(&pb, order, 0.5f, 0.01f, LET_RADIUS_CORRECTED, acc, &st, &bytes);
        int64_t used = tops_used - before;
        distributed(&pb, order, 0.5f, 0.01f, LET_RADIUS_ALL, ref, &st_ref, &bytes_ref);
        CHECK_MSG(memcmp(acc, ref, (size_t)pb.n * 3 * sizeof(float)) == 0,
                  "top trees for far domains changed the forces (order %d)", (int)order);
        CHECK(st.dropped == 0 && st.expansions == st_ref.expansions && st.direct == st_ref.direct);
        /* 4 domains, 2 per cube: each domain takes the other cube's two tops. */
        CHECK_MSG(used == 8, "%lld of 12 pairs used the top tree, want 8 (order %d)",
                  (long long)used, (int)order);
        printf("top trees, order %d: %lld of 12 pairs walk the top tree, %lld bytes of pieces "
               "instead of %lld\n",
               (int)order, (long long)used, (long long)bytes, (long long)bytes_ref);
        unsplit(&pb);
    }
    free(acc);
    free(ref);
    free(pb.pos);
    free(pb.mass);
}

int main(void) {
    uint64_t seed = check_seed();
    check_split(seed);
    check_naive_drops(seed);
    check_top_tree(seed);
    check_corrected_plummer(seed);
    printf("%lld domain pairs walked a top tree in place of a piece\n", (long long)tops_used);
    return check_finish();
}
