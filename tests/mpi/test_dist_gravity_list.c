// SPDX-License-Identifier: MIT
/* canopy_dist_gravity with list opening (the single-process list engine under the
 * LET, dist/gravity_list.c) on R ranks: on one rank the very sums of canopy_gl_gravity; on
 * every R the median error against float64 direct summation within 1.5x (order 0: 2x) of the
 * single process's at the same options (binary and oct trees, orders 0, 2 and 4,
 * masses or not), near-direct sums at a tiny theta (a dropped or doubled remote piece
 * shows), empty ranks, far-apart clusters, duplicates, the opening and tree
 * reported, and bad options refused (the inclusion case and the n-body run with
 * list opening: test_dist_gravity.c). */
#include "gravity/gravity_lists.h"
#include "dist/gravity.h"
#include "mpi_check.h"
#include "gravity/force_error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Median and largest relative error of acc against ref, float64 direct summation on all n
 * bodies (computed once for both runs of a case: it is most of this test's time). */
static void errors(const double *ref, const int64_t *all, int64_t n, const float *acc, double *med,
                   double *worst) {
    double *rel = malloc((size_t)n * sizeof *rel);
    canopy_nbody_relative_errors(acc, ref, all, n, rel);
    *med = rel[n / 2];
    *worst = rel[n - 1];
    free(rel);
}

enum { PLUMMER, CLUSTERS, DUPLICATES, COINCIDENT };

/* The bodies of a case: a Plummer sphere; two Plummer spheres 50 apart; a Plummer
 * sphere whose every body appears twice; or one whose second half sits at its first
 * body's position (point leaves on several ranks, opened in each other's pieces). */
static void make_bodies(int layout, int64_t n, uint64_t seed, float *pos, float *mass) {
    float *vel = malloc((size_t)n * 3 * sizeof *vel);
    CHECK_OK(canopy_gen_plummer(pos, vel, layout == DUPLICATES ? n / 2 : n, seed));
    for (int64_t i = n / 2; layout == DUPLICATES && i < n; i++)
        memcpy(pos + 3 * i, pos + 3 * (i - n / 2), 3 * sizeof *pos);
    for (int64_t i = n / 2; layout == CLUSTERS && i < n; i++) pos[3 * i] += 50.0f;
    for (int64_t i = n / 2; layout == COINCIDENT && i < n; i++)
        memcpy(pos + 3 * i, pos, 3 * sizeof *pos);
    canopy_rng g = canopy_rng_make(seed, 7);
    for (int64_t i = 0; i < n; i++) mass[i] = (float)((0.5 + canopy_rng_uniform(&g)) / n);
    free(vel);
}

/* Forces of n bodies spread over the ranks (each its block, or all on the last rank:
 * skew) against the single process's at the same options; max_worst > 0 also bounds
 * the largest error. */
static void check_case(int layout, int64_t n, int32_t order, float theta, int tree, int with_mass,
                       int skew, double max_worst, uint64_t seed) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    float *pos = malloc((size_t)n * 3 * sizeof *pos), *mass = malloc((size_t)n * sizeof *mass);
    make_bodies(layout, n, seed, pos, mass);
    int64_t lo, hi;
    mpi_check_block(n, &lo, &hi);
    if (skew) {
        lo = rank == size - 1 ? 0 : n;
        hi = n;
    }
    const float eps = 0.01f;
    canopy_gravity_options go = canopy_gravity_options_default();
    go.opening = CANOPY_OPENING_LIST;
    go.tree = tree;
    go.theta = theta;
    go.order = order;
    go.softening = eps;
    const float *m = with_mass ? mass : NULL;
    float *acc = malloc((size_t)(hi - lo + 1) * 3 * sizeof *acc), *all = NULL;
    canopy_dist_stats st;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(pos + 3 * lo, hi - lo, 3),
                                 m ? m + lo : NULL, &go, NULL, acc, NULL, &st));
    CHECK(st.opening == CANOPY_OPENING_LIST && st.tree == tree);
    /* potentials only when asked for, the forces the same bits either way */
    float *acc2 = malloc((size_t)(hi - lo + 1) * 3 * sizeof *acc2),
          *pot = malloc((size_t)(hi - lo + 1) * sizeof *pot), *pots = NULL;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(pos + 3 * lo, hi - lo, 3),
                                 m ? m + lo : NULL, &go, NULL, acc2, pot, NULL));
    CHECK(!memcmp(acc, acc2, (size_t)(hi - lo) * 3 * sizeof *acc));
    int64_t got_pots = 0;
    CHECK_OK(canopy_dist_gatherv(MPI_COMM_WORLD, 0, pot, hi - lo, sizeof *pot, (void **)&pots, NULL,
                                 &got_pots));
    free(acc2);
    free(pot);
    if (size == 1) CHECK(st.bytes_sent == 0 && st.messages == 0);
    if (size > 1 && !skew && hi > lo) CHECK(st.bytes_received > 0);
    int64_t got = 0;
    CHECK_OK(canopy_dist_gatherv(MPI_COMM_WORLD, 0, acc, hi - lo, 3 * sizeof(float), (void **)&all,
                                 NULL, &got));
    if (rank == 0) {
        CHECK(got == n);
        canopy_points b = canopy_points_make(pos, n, 3);
        float *one = malloc((size_t)n * 3 * sizeof *one);
        CHECK_OK(canopy_gravity_multipole(b, m, &go, NULL, one, NULL, NULL));
        int64_t *every = malloc((size_t)n * sizeof *every);
        double *ref = malloc((size_t)n * 3 * sizeof *ref), e1, w1, er, wr;
        for (int64_t i = 0; i < n; i++) every[i] = i;
        double *ref_pot = malloc((size_t)n * sizeof *ref_pot);
        CHECK_OK(canopy_gravity_direct_sample(b, m, eps, every, n, ref, ref_pot));
        int64_t pot_off = 0;
        for (int64_t i = 0; i < n; i++)
            pot_off += !(fabs(pots[i] - ref_pot[i]) <= 1e-2 * fabs(ref_pot[i]));
        CHECK_MSG(pot_off == 0, "R %d layout %d: %lld potentials off by > 1%%", size, layout,
                  (long long)pot_off);
        free(ref_pot);
        errors(ref, every, n, one, &e1, &w1);
        errors(ref, every, n, all, &er, &wr);
        /* Below 1e-6 the errors are float rounding, not the opening. Monopoles' errors
         * come from few cells, so R trees' medians scatter most (up to 1.40x seen). */
        double tol = order == 0 ? 2.0 : 1.5;
        CHECK_MSG(er <= fmax(tol * e1, 1e-6) && isfinite(wr),
                  "R %d layout %d: median error %.3g, one process %.3g (n %lld, order %d, theta "
                  "%g, tree %d)",
                  size, layout, er, e1, (long long)n, (int)order, (double)theta, tree);
        if (max_worst > 0.0)
            CHECK_MSG(wr <= max_worst, "R %d layout %d: largest error %.3g > %.3g", size, layout,
                      wr, max_worst);
        printf("R %d layout %d n %lld order %d theta %g tree %d: median error %.3g (one process "
               "%.3g), largest %.3g (%.3g)\n",
               size, layout, (long long)n, (int)order, (double)theta, tree, er, e1, wr, w1);
        free(one), free(every), free(ref);
    }
    free(all);
    canopy_free(pots);
    free(acc);
    free(pos);
    free(mass);
}

/* One rank: dist_list_forces sums exactly what canopy_gl_gravity sums (same tree, no pieces). */
static void check_one_rank_bits(uint64_t seed) {
    if (canopy_dist_size(MPI_COMM_WORLD) != 1) return;
    enum { N = 3000 };
    float *pos = malloc(N * 3 * sizeof *pos), *mass = malloc(N * sizeof *mass);
    float *a = malloc(N * 3 * sizeof *a), *b = malloc(N * 3 * sizeof *b);
    float *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb);
    make_bodies(PLUMMER, N, seed, pos, mass);
    canopy_gravity_options go = canopy_gravity_options_default();
    go.opening = CANOPY_OPENING_LIST;
    go.order = 4;
    go.theta = 0.6f;
    go.softening = 0.02f;
    canopy_points x = canopy_points_make(pos, N, 3);
    gl_config cfg = {1, 0, 0, GL_DEFAULT_BUCKET, GL_DEFAULT_GROUP};
    CHECK_OK(canopy_gl_gravity(x, mass, go.theta, go.order, go.softening * go.softening, &cfg, a,
                               pa, NULL));
    canopy_dist_stats st;
    memset(&st, 0, sizeof st);
    double *work = malloc(N * sizeof *work);
    CHECK_OK(dist_domain_forces(MPI_COMM_WORLD, x, mass, NULL, &go, 0, 0, b, pb, work, &st));
    CHECK(memcmp(a, b, N * 3 * sizeof *a) == 0 && memcmp(pa, pb, N * sizeof *pa) == 0);
    double sum = 0.0;
    for (int i = 0; i < N; i++) {
        CHECK(work[i] >= 1.0);
        sum += work[i];
    }
    CHECK_MSG(sum == (double)st.interactions, "work sums to %.0f, %lld interactions", sum,
              (long long)st.interactions);
    free(pos), free(mass), free(a), free(b), free(pa), free(pb), free(work);
}

static void check_bad_options(void) {
    float p[6] = {0, 0, 0, 1, 1, 1}, acc[6];
    canopy_points b = canopy_points_make(p, 2, 3);
    canopy_gravity_options go = canopy_gravity_options_default();
    go.order = 1;
    CHECK_FAILS(canopy_dist_gravity(MPI_COMM_WORLD, b, NULL, &go, NULL, acc, NULL, NULL),
                CANOPY_ERR_INVALID, "order");
    go.order = 4;
    go.opening = CANOPY_OPENING_BODY;
    CHECK_FAILS(canopy_dist_gravity(MPI_COMM_WORLD, b, NULL, &go, NULL, acc, NULL, NULL),
                CANOPY_ERR_INVALID, "body opening");
    go = canopy_gravity_options_default();
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    CHECK_FAILS(canopy_dist_gravity(MPI_COMM_WORLD, b, NULL, &go, &o, acc, NULL, NULL),
                CANOPY_ERR_UNSUPPORTED, "bucket or body opening");
}

int main(int argc, char **argv) {
    mpi_check_init(&argc, &argv);
    uint64_t seed = mpi_check_seed();
    check_one_rank_bits(seed);
    check_case(PLUMMER, 6000, 2, 0.7f, CANOPY_GRAVITY_TREE_BINARY, 1, 0, 0.0, seed);
    check_case(PLUMMER, 6000, 4, 0.7f, CANOPY_GRAVITY_TREE_OCT, 0, 0, 0.0, seed + 1);
    check_case(PLUMMER, 8000, 0, 0.5f, CANOPY_GRAVITY_TREE_BINARY, 0, 0, 0.0, seed + 2);
    /* theta 0.05 opens nearly everything: near-direct sums, a lost piece shows at once */
    check_case(PLUMMER, 1500, 2, 0.05f, CANOPY_GRAVITY_TREE_BINARY, 1, 0, 2e-5, seed + 3);
    check_case(CLUSTERS, 3000, 2, 0.05f, CANOPY_GRAVITY_TREE_OCT, 1, 0, 2e-5, seed + 4);
    check_case(CLUSTERS, 6000, 2, 0.7f, CANOPY_GRAVITY_TREE_BINARY, 1, 0, 0.0, seed + 5);
    check_case(DUPLICATES, 3000, 2, 0.7f, CANOPY_GRAVITY_TREE_BINARY, 1, 0, 0.0, seed + 6);
    check_case(COINCIDENT, 3000, 2, 0.05f, CANOPY_GRAVITY_TREE_BINARY, 1, 0, 2e-5, seed + 9);
    check_case(PLUMMER, 2000, 2, 0.7f, CANOPY_GRAVITY_TREE_BINARY, 1, 1, 0.0, seed + 7);
    check_case(PLUMMER, 2, 2, 0.7f, CANOPY_GRAVITY_TREE_OCT, 0, 0, 1e-5, seed + 8);
    check_bad_options();
    return mpi_check_finish();
}
