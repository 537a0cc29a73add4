// SPDX-License-Identifier: MIT
/* canopy_dist_gravity and canopy_dist_nbody on R ranks against the one-process
 * code: forces within the single-rank error bound against float64 direct summation
 * (every body, caller's order), a rank with no bodies, bad input refused on every
 * rank; a short Plummer run whose energy error stays within 2x of the one-process
 * run's and whose bodies track it. */
#include "dist/gravity.h"
#include "inclusion_case.h"
#include "mpi_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median relative error of acc against float64 direct summation over all bodies. */
static double median_error(canopy_points b, const float *mass, float eps, const float *acc) {
    int64_t *all = calloc((size_t)b.n + 1, sizeof *all);
    double *ref = malloc((size_t)b.n * 3 * sizeof *ref), *rel = malloc((size_t)b.n * sizeof *rel);
    for (int64_t i = 0; i < b.n; i++) all[i] = i;
    CHECK_OK(canopy_gravity_direct_sample(b, mass, eps, all, b.n, ref, NULL));
    for (int64_t i = 0; i < b.n; i++) {
        double d2 = 0.0, r2 = 0.0;
        for (int j = 0; j < 3; j++) {
            double e = acc[3 * i + j] - ref[3 * i + j];
            d2 += e * e;
            r2 += ref[3 * i + j] * ref[3 * i + j];
        }
        rel[i] = sqrt(d2 / r2);
    }
    qsort(rel, (size_t)b.n, sizeof *rel, cmp_double);
    double m = rel[b.n / 2];
    free(all);
    free(ref);
    free(rel);
    return m;
}

enum { PLUMMER = 0, TWO_CUBES = 1 };

/* Forces of bodies [lo, hi) on this rank, gathered on rank 0 in global order. Bodies:
 * a Plummer sphere, or two unit cubes 10 apart (half the bodies each), where the
 * Hilbert split gives each cube to half the ranks, and a rank needs nothing of the
 * other cube's ranks beyond their top trees, so it exchanges pieces only with the
 * ranks of its own cube. */
static void check_forces(int64_t n, int32_t order, float theta, int with_mass, int skew, int layout,
                         uint64_t seed) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    float *pos = malloc((size_t)n * 3 * sizeof *pos), *vel = malloc((size_t)n * 3 * sizeof *vel);
    float *mass = malloc((size_t)n * sizeof *mass);
    CHECK_OK(canopy_gen_plummer(pos, vel, n, seed));
    canopy_rng g = canopy_rng_make(seed, 5);
    for (int64_t i = 0; layout == TWO_CUBES && i < 3 * n; i++)
        pos[i] = (float)canopy_rng_uniform(&g) + (i >= 3 * (n / 2) ? 10.0f : 0.0f);
    for (int64_t i = 0; i < n; i++) mass[i] = (float)((0.5 + canopy_rng_uniform(&g)) / n);
    int64_t lo, hi;
    mpi_check_block(n, &lo, &hi);
    if (skew) { /* all bodies on the last rank, none elsewhere */
        int last = canopy_dist_size(MPI_COMM_WORLD) - 1;
        lo = rank == last ? 0 : n;
        hi = n;
    }
    const float eps = 0.01f;
    canopy_gravity_options go = canopy_gravity_options_default();
    go.opening = CANOPY_OPENING_BODY; /* the distributed walk's */
    go.theta = theta;
    go.order = order;
    go.softening = eps;
    float *acc = malloc((size_t)(hi - lo + 1) * 3 * sizeof *acc);
    canopy_dist_stats st;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(pos + 3 * lo, hi - lo, 3),
                                 with_mass ? mass + lo : NULL, &go, NULL, acc, NULL, &st));
    float *all = NULL;
    int64_t got = 0;
    CHECK_OK(canopy_dist_gatherv(MPI_COMM_WORLD, 0, acc, hi - lo, 3 * sizeof(float), (void **)&all,
                                 NULL, &got));
    if (rank == 0) {
        CHECK(got == n);
        float *one = malloc((size_t)n * 3 * sizeof *one);
        canopy_points b = canopy_points_make(pos, n, 3);
        const float *m = with_mass ? mass : NULL;
        CHECK_OK(canopy_gravity_multipole(b, m, &go, NULL, one, NULL, NULL));
        double e1 = median_error(b, m, eps, one), er = median_error(b, m, eps, all);
        double bound = fmax(2.0 * e1, canopy_gravity_expected_error(theta, order));
        CHECK_MSG(
            er <= bound, "R %d: median error %.3g, one rank %.3g (n %lld, order %d, theta %g)",
            canopy_dist_size(MPI_COMM_WORLD), er, e1, (long long)n, (int)order, (double)theta);
        free(one);
    }
    if (size == 1) CHECK(st.bytes_sent == 0);
    if (layout == TWO_CUBES && size % 2 == 0 && !skew) {
        /* The force evaluation alone on the rank blocks (each within one cube): its
         * statistics count the LET exchange only, not the placing of the bodies. */
        int64_t *gid = malloc((size_t)(hi - lo + 1) * sizeof *gid);
        for (int64_t i = lo; i < hi; i++) gid[i - lo] = i;
        canopy_dist_stats sl;
        memset(&sl, 0, sizeof sl);
        CHECK_OK(dist_domain_forces(MPI_COMM_WORLD, canopy_points_make(pos + 3 * lo, hi - lo, 3),
                                    mass + lo, gid, &go, 0, 0, acc, NULL, NULL, &sl));
        CHECK_MSG(sl.messages <= size / 2 - 1,
                  "rank %d sent pieces to %lld ranks; only the %d others of its cube need them",
                  rank, (long long)sl.messages, size / 2 - 1);
        free(gid);
    }
    free(all);
    free(acc);
    free(pos);
    free(vel);
    free(mass);
}

/* The largest |E(t) - E(0)| / |E(0)| over STEPS steps, sampled every EVERY steps. */
enum { N_BODIES = 400, STEPS = 40, EVERY = 5 };

/* A 400-body Plummer sphere for 40 steps on R ranks and on one process (rank 0), with
 * body opening (the octree LET) or list opening (the list engine over ranks).
 * The step (1/32) is long enough that the integrator's energy error dominates the
 * tree's force error, so the two runs' errors are comparable numbers. */
static void check_nbody(uint64_t seed, canopy_opening opening) {
    enum { N = N_BODIES };
    int rank = canopy_dist_rank(MPI_COMM_WORLD);
    float pf[3 * N], vf[3 * N];
    double pos[3 * N], vel[3 * N];
    CHECK_OK(canopy_gen_plummer(pf, vf, N, seed));
    for (int i = 0; i < 3 * N; i++) pos[i] = pf[i], vel[i] = vf[i];
    canopy_nbody_options o = canopy_nbody_options_default();
    o.gravity.opening = opening;
    o.dt = 1.0 / 32;
    o.gravity.softening = 0.05f;
    o.gravity.theta = 0.3f;
    o.gravity.order = 2;
    int64_t lo, hi;
    mpi_check_block(N, &lo, &hi);
    canopy_dist_nbody *d = NULL, *d2 = NULL;
    CHECK_OK(canopy_dist_nbody_create(MPI_COMM_WORLD, pos + 3 * lo, vel + 3 * lo, NULL, hi - lo, &o,
                                      &d));
    CHECK_OK(canopy_dist_nbody_create(MPI_COMM_WORLD, pos + 3 * lo, vel + 3 * lo, NULL, hi - lo, &o,
                                      &d2));
    if (!d || !d2) return;
    canopy_nbody_energy e0, e;
    CHECK_OK(canopy_dist_nbody_energy(d, N, &e0));
    double der = 0.0;
    for (int k = 0; k < STEPS; k += EVERY) {
        CHECK_OK(canopy_dist_nbody_step(d, EVERY));
        CHECK_OK(canopy_dist_nbody_energy(d, N, &e));
        der = fmax(der, fabs((e.total - e0.total) / e0.total));
    }
    for (int j = 0; j < 3; j++) CHECK(fabs(e.momentum[j] - e0.momentum[j]) < 1e-4);
    CHECK(canopy_dist_nbody_stats(d).opening == (int32_t)opening);
    CHECK(canopy_dist_nbody_n(d) == N && canopy_dist_nbody_steps_done(d) == STEPS);
    int64_t nl = canopy_dist_nbody_n_local(d), sum = 0;
    MPI_Allreduce(&nl, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == N);
    double *gp = rank == 0 ? malloc(sizeof pos) : NULL;
    CHECK_OK(canopy_dist_nbody_gather(d, 0, gp, NULL));
    if (rank == 0) {
        canopy_nbody *s = NULL;
        CHECK_OK(canopy_nbody_create(pos, vel, NULL, N, &o, &s));
        canopy_nbody_energy r0, r;
        CHECK_OK(canopy_nbody_energy_get(s, N, &r0));
        double de1 = 0.0;
        for (int k = 0; k < STEPS; k += EVERY) {
            CHECK_OK(canopy_nbody_step(s, EVERY));
            CHECK_OK(canopy_nbody_energy_get(s, N, &r));
            de1 = fmax(de1, fabs((r.total - r0.total) / r0.total));
        }
        CHECK_MSG(fabs(e0.total - r0.total) <= 1e-12 * fabs(r0.total), "E0 %.15g vs %.15g",
                  e0.total, r0.total);
        CHECK_MSG(der <= 2.0 * de1 && de1 <= 2.0 * der, "R %d: max |dE/E| %.3g, one process %.3g",
                  canopy_dist_size(MPI_COMM_WORLD), der, de1);
        const double *p1 = canopy_nbody_positions(s);
        double dmax = 0.0;
        for (int i = 0; i < 3 * N; i++) dmax = fmax(dmax, fabs(gp[i] - p1[i]));
        CHECK_MSG(dmax < 1e-2, "positions drift from the one-process run by %.3g", dmax);
        printf("nbody R %d: max |dE/E| %.3g (one process %.3g), max position difference %.3g\n",
               canopy_dist_size(MPI_COMM_WORLD), der, de1, dmax);
        canopy_nbody_free(s);
    }
    free(gp);
    /* Tree potentials on request (an evaluation of their own) near the direct sum; then
     * asked for every step (computed along the steps): the same bits as d2's, stepped
     * without requests and asked once. */
    canopy_nbody_energy et, ea, eb;
    CHECK_OK(canopy_dist_nbody_energy(d, 0, &et));
    CHECK_MSG(et.direct == 0 && fabs((et.potential - e.potential) / e.potential) < 5e-3,
              "R %d: tree potential %.9g, direct %.9g", canopy_dist_size(MPI_COMM_WORLD),
              et.potential, e.potential);
    for (int k = 0; k < 3; k++) {
        CHECK_OK(canopy_dist_nbody_step(d, 1));
        CHECK_OK(canopy_dist_nbody_energy(d, 0, &ea));
    }
    CHECK_OK(canopy_dist_nbody_step(d2, STEPS + 3));
    CHECK_OK(canopy_dist_nbody_energy(d2, 0, &eb));
    CHECK_MSG(ea.potential == eb.potential && ea.kinetic == eb.kinetic,
              "R %d: tree potential along the steps %.17g, on request %.17g",
              canopy_dist_size(MPI_COMM_WORLD), ea.potential, eb.potential);
    canopy_dist_nbody_free(d);
    canopy_dist_nbody_free(d2);
}

/* The inclusion condition across ranks (inclusion_case.h): the last rank's domain is
 * the clump, the other ranks hold the light bodies, which the Hilbert split (equal
 * counts) puts first. Pruning with the naive radius would drop the clump from their
 * forces; the corrected exchange keeps the error small. With list opening a rank's
 * box accepts the clump's cell only where none of its bodies could open it. */
static void check_inclusion(uint64_t seed, canopy_opening opening) {
    enum { K = 61 };
    int size = canopy_dist_size(MPI_COMM_WORLD), rank = canopy_dist_rank(MPI_COMM_WORLD);
    const float theta = 0.5f, eps = 0.001f;
    int64_t m = (int64_t)(size - 1) * K, n = m + K;
    float *pos = malloc((size_t)n * 3 * sizeof *pos), *mass = malloc((size_t)n * sizeof *mass);
    inclusion_case(pos + 3 * m, mass + m, K, pos, mass, m, theta, seed);
    canopy_gravity_options go = canopy_gravity_options_default();
    go.opening = opening;
    go.theta = theta;
    go.order = 2;
    go.softening = eps;
    int64_t lo, hi;
    mpi_check_block(n, &lo, &hi);
    float *acc = malloc((size_t)(hi - lo + 1) * 3 * sizeof *acc), *all = NULL;
    int64_t got = 0;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(pos + 3 * lo, hi - lo, 3),
                                 mass + lo, &go, NULL, acc, NULL, NULL));
    CHECK_OK(canopy_dist_gatherv(MPI_COMM_WORLD, 0, acc, hi - lo, 3 * sizeof(float), (void **)&all,
                                 NULL, &got));
    if (rank == 0) { /* the light bodies against float64 direct summation */
        int64_t *sample = malloc((size_t)m * sizeof *sample);
        double *ref = malloc((size_t)m * 3 * sizeof *ref);
        for (int64_t i = 0; i < m; i++) sample[i] = i;
        CHECK_OK(canopy_gravity_direct_sample(canopy_points_make(pos, n, 3), mass, eps, sample, m,
                                              ref, NULL));
        double worst = 0.0;
        for (int64_t i = 0; i < m; i++) {
            double d2 = 0.0, r2 = 0.0;
            for (int j = 0; j < 3; j++) {
                double e = (double)all[3 * i + j] - ref[3 * i + j];
                d2 += e * e;
                r2 += ref[3 * i + j] * ref[3 * i + j];
            }
            worst = fmax(worst, sqrt(d2 / r2));
        }
        /* theta 0.5 with quadrupoles: a few percent at worst; the clump dropped: ~1. */
        CHECK_MSG(worst < 0.05, "R %d: light bodies' forces off by %.3g", size, worst);
        free(sample);
        free(ref);
    }
    free(all);
    free(acc);
    free(pos);
    free(mass);
}

static void check_bad_input(void) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    float p[6] = {0, 0, 0, 1, 1, 1}, acc[6];
    if (rank == size - 1) p[4] = NAN; /* one rank's bad body fails every rank */
    canopy_gravity_options go = canopy_gravity_options_default();
    go.opening = CANOPY_OPENING_BODY; /* the distributed walk's */
    CHECK_FAILS(canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(p, 2, 3), NULL, &go, NULL,
                                    acc, NULL, NULL),
                CANOPY_ERR_INVALID, "NaN");
    p[4] = 1.0f;
    go.opening = CANOPY_OPENING_BUCKET;
    CHECK_FAILS(canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(p, 2, 3), NULL, &go, NULL,
                                    acc, NULL, NULL),
                CANOPY_ERR_UNSUPPORTED, "body opening");
    canopy_nbody_options o = canopy_nbody_options_default();
    o.gravity.opening = CANOPY_OPENING_BODY;
    double x[6] = {0, 0, 0, 1, 1, 1}, v[6] = {0};
    canopy_dist_nbody *d = NULL;
    CHECK_FAILS(canopy_dist_nbody_create(MPI_COMM_WORLD, x, v, NULL, 2, &o, &d), CANOPY_ERR_INVALID,
                "dt");
    CHECK(d == NULL);
    o.dt = 0.01;
    o.gravity.softening = 0.1f;
    o.max_rung = 2; /* block steps run in one process only */
    CHECK_FAILS(canopy_dist_nbody_create(MPI_COMM_WORLD, x, v, NULL, 2, &o, &d),
                CANOPY_ERR_UNSUPPORTED, "block time steps");
    CHECK(d == NULL);
}

int main(int argc, char **argv) {
    mpi_check_init(&argc, &argv);
    uint64_t seed = mpi_check_seed();
    check_forces(3000, 0, 0.5f, 0, 0, PLUMMER, seed);
    check_forces(3000, 2, 0.4f, 1, 0, PLUMMER, seed + 1);
    check_forces(2000, 2, 0.7f, 1, 1, PLUMMER, seed + 2);
    check_forces(3, 2, 0.5f, 1, 0, PLUMMER, seed + 3); /* fewer bodies than ranks */
    check_forces(2000, 2, 0.5f, 1, 0, TWO_CUBES, seed + 6);
    check_inclusion(seed + 5, CANOPY_OPENING_BODY);
    check_inclusion(seed + 5, CANOPY_OPENING_LIST);
    check_nbody(seed + 4, CANOPY_OPENING_BODY);
    check_nbody(seed + 4, CANOPY_OPENING_LIST);
    check_bad_input();
    return mpi_check_finish();
}
