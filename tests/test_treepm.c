// SPDX-License-Identifier: MIT
/* Periodic boxes by TreePM (canopy_gravity_options.periodic; gravity/pm.h and the list
 * engine's short-range walk) against the float64 Ewald sum: with the walk exact (theta
 * near 0) only the mesh's error is left; at the default accuracy the median force error
 * is <= 1e-3 on uniform and clustered bodies, potentials too; a lattice feels no force;
 * two bodies attract through the boundary; a shift by whole boxes changes nothing and a
 * shift by a vector only the mesh's share; results do not depend on the threads; the
 * active bodies' forces are those of the full evaluation; auto is Ewald; bad options
 * are refused; nbody runs and restarts with it. Without FFTW in the build, TreePM is
 * refused with a message. */
#include "gravity/gravity_lists.h"
#include "gravity/pm.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static canopy_gravity_options treepm(float box) {
    canopy_gravity_options g = canopy_gravity_options_default();
    g.box = box;
    g.periodic = CANOPY_PERIODIC_TREEPM;
    g.accuracy = 1e-3;
    return g;
}

/* Uniform bodies, or clustered: half of them in a cube of 0.06 box across a corner. */
static void make_bodies(canopy_rng *r, int64_t n, float box, int clustered, float *pos,
                        float *mass) {
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            double x = canopy_rng_uniform(r);
            if (clustered && i % 2) x = 0.97 + 0.06 * canopy_rng_uniform(r);
            x -= floor(x);
            pos[3 * i + k] = (float)(x * box);
        }
        mass[i] = (float)(0.5 + canopy_rng_uniform(r)) / (float)n;
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over the sample of |pot - ref - c| / rms(ref), c the median of pot - ref: the
 * periodic potential has mean 0, and TreePM's differs from the Ewald sum's by a constant
 * with softening (the Ewald sum softens only the nearest image's 1 / r, TreePM its
 * erfc(r / 2 r_s) / r: 2 pi eps^2 rho ln(L / r_s), docs/nbody.md). */
static double pot_error(const float *pot, const double *ref, const int64_t *idx, int64_t ns) {
    double rms = 0.0, *e = malloc((size_t)ns * sizeof *e);
    for (int64_t k = 0; k < ns; k++) rms += ref[k] * ref[k], e[k] = pot[idx[k]] - ref[k];
    rms = sqrt(rms / (double)ns);
    qsort(e, (size_t)ns, sizeof *e, cmp_double);
    double c = e[ns / 2];
    for (int64_t k = 0; k < ns; k++) e[k] = fabs(pot[idx[k]] - ref[k] - c) / rms;
    qsort(e, (size_t)ns, sizeof *e, cmp_double);
    double med = e[ns / 2];
    free(e);
    return med;
}

/* Forces (and potentials) of g against the Ewald sum on up to 400 evenly spaced bodies:
 * the median relative force error, and the potential's in *pe. */
static double error_vs_ewald(const float *pos, const float *mass, int64_t n,
                             const canopy_gravity_options *g, double *pe) {
    int64_t ns = n < 400 ? n : 400;
    float *acc = malloc((size_t)n * 3 * sizeof *acc), *pot = malloc((size_t)n * sizeof *pot);
    float *sa = malloc((size_t)ns * 3 * sizeof *sa);
    int64_t *idx = malloc((size_t)ns * sizeof *idx);
    double *ref = malloc((size_t)ns * 3 * sizeof *ref), *rpot = malloc((size_t)ns * sizeof *rpot);
    for (int64_t k = 0; k < ns; k++) idx[k] = k * (n / ns);
    canopy_points b = canopy_points_make(pos, n, 3);
    CHECK_OK(canopy_gravity_multipole(b, mass, g, NULL, acc, pot, NULL));
    CHECK_OK(canopy_gravity_ewald_direct_sample(b, mass, g->softening, g->box, idx, ns, ref, rpot));
    for (int64_t k = 0; k < ns; k++)
        for (int c = 0; c < 3; c++) sa[3 * k + c] = acc[3 * idx[k] + c];
    double fe = check_median_rel_error3(sa, ref, ns);
    *pe = pot_error(pot, rpot, idx, ns);
    free(acc), free(pot), free(sa), free(idx), free(ref), free(rpot);
    return fe;
}

/* The walk exact (theta 1e-3, order 0): the mesh's error alone, <= 1e-3 (measured 3-5e-4
 * from 20k bodies, 5.3e-4 at 1000; bench/results/nbody.md), at 1000 and 3000 bodies, two
 * box sides; and the
 * default accuracy on uniform and clustered bodies: <= 1e-3, potentials too. Auto is
 * Ewald summation: its choice and accuracy at 2, 60 and 500 bodies (where TreePM's
 * least mesh, 18 cells, puts the split scale well under the spacing). */
static void check_accuracy(canopy_rng *r) {
    static const int64_t sizes[] = {2, 60, 500, 1000, 3000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int clustered = 0; clustered < 2; clustered++) {
            int64_t n = sizes[si];
            float box = clustered ? 2.5f : 1.0f;
            float *pos = malloc((size_t)n * 3 * sizeof *pos), *mass = malloc((size_t)n * 4);
            make_bodies(r, n, box, clustered, pos, mass);
            canopy_gravity_options g = treepm(box);
            g.softening = 1e-3f * box;
            if (n < 1000) {
                canopy_stats st;
                float *acc = malloc((size_t)n * 3 * sizeof *acc);
                g.periodic = CANOPY_PERIODIC_AUTO;
                CHECK_OK(canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL,
                                                  acc, NULL, &st));
                CHECK_MSG(strstr(st.note, "Ewald"), "auto at n %lld: %s", (long long)n, st.note);
                free(acc);
            }
            double pe, fe = error_vs_ewald(pos, mass, n, &g, &pe);
            CHECK_MSG(fe <= 1e-3 && pe <= 1e-3,
                      "default, n %lld, %s: median force error %.2e, potential %.2e", (long long)n,
                      clustered ? "clustered" : "uniform", fe, pe);
            if (n < 1000) {
                free(pos), free(mass);
                continue;
            }
            g.accuracy = 0.0, g.theta = 1e-3f, g.order = 0;
            fe = error_vs_ewald(pos, mass, n, &g, &pe);
            CHECK_MSG(fe <= 1e-3 && pe <= 1e-3,
                      "walk exact, n %lld, %s: median force error %.2e, potential %.2e",
                      (long long)n, clustered ? "clustered" : "uniform", fe, pe);
            free(pos), free(mass);
        }
}

/* The default at sizes where the mesh is not the smallest (18 cells): uniform bodies,
 * several seeds, and the clustered set. Quick runs: one of each. */
static void check_default(canopy_rng *r) {
    const int reps = check_quick() ? 1 : 3;
    for (int rep = 0; rep < reps; rep++)
        for (int clustered = 0; clustered < 2; clustered++) {
            int64_t n = 20000 + 10000 * rep;
            float *pos = malloc((size_t)n * 3 * sizeof *pos), *mass = malloc((size_t)n * 4);
            make_bodies(r, n, 1.0f, clustered, pos, mass);
            canopy_gravity_options g = treepm(1.0f);
            g.softening = 1e-3f;
            double pe, fe = error_vs_ewald(pos, mass, n, &g, &pe);
            CHECK_MSG(fe <= 1e-3 && pe <= 1e-3,
                      "n %lld, %s: median force error %.2e, potential %.2e", (long long)n,
                      clustered ? "clustered" : "uniform", fe, pe);
            free(pos), free(mass);
        }
}

/* k^3 equal bodies on a lattice (at a random offset): no force, beside the pull of one
 * neighbour: < 2e-2 of it. The mesh does not share the lattice's symmetry: measured
 * 4e-6 to 7e-6 where the lattice sits on mesh points, 0.6% at other offsets, 1.2% on a
 * mesh that does not match it (10^3 bodies on 24 cells); theta 0.7, which the table
 * leaves out, gave 25%. */
static void check_lattice(canopy_rng *r) {
    for (int k = 10; k <= 14; k += 2) {
        int64_t n = (int64_t)k * k * k;
        float box = 3.0f, *pos = malloc((size_t)n * 3 * sizeof *pos);
        float *acc = malloc((size_t)n * 3 * sizeof *acc);
        double off[3];
        for (int j = 0; j < 3; j++) off[j] = canopy_rng_uniform(r);
        for (int64_t i = 0; i < n; i++) {
            int64_t c[3] = {i % k, i / k % k, i / k / k};
            for (int j = 0; j < 3; j++) {
                double x = ((double)c[j] + off[j]) / k;
                pos[3 * i + j] = (float)((x - floor(x)) * box);
            }
        }
        canopy_gravity_options g = treepm(box);
        g.pm_grid = k == 14 ? 24 : 0; /* 14^3 bodies on 24 cells */
        CHECK_OK(canopy_gravity_multipole(canopy_points_make(pos, n, 3), NULL, &g, NULL, acc, NULL,
                                          NULL));
        double unit = (1.0 / (double)n) / ((box / k) * (box / k)), worst = 0.0;
        for (int64_t i = 0; i < n; i++) {
            double a = 0.0;
            for (int j = 0; j < 3; j++) a += (double)acc[3 * i + j] * acc[3 * i + j];
            worst = fmax(worst, sqrt(a));
        }
        CHECK_MSG(worst <= 2e-2 * unit, "lattice %d^3: largest |a| %.2e (one neighbour's %.2e)", k,
                  worst, unit);
        free(pos), free(acc);
    }
}

/* Two bodies near opposite faces attract through the boundary as the same pair in the
 * middle of the box does (to the mesh's error: TreePM asked for, at 2 bodies). */
static void check_across(void) {
    float box = 2.0f, edge[6] = {0.1f, 1.0f, 1.0f, 1.9f, 1.0f, 1.0f};
    float mid[6] = {0.9f, 1.0f, 1.0f, 1.1f, 1.0f, 1.0f}, a[6], b[6];
    canopy_gravity_options g = treepm(box);
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(edge, 2, 3), NULL, &g, NULL, a, NULL, NULL));
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(mid, 2, 3), NULL, &g, NULL, b, NULL, NULL));
    CHECK_MSG(a[0] < 0.0f && a[3] > 0.0f && b[0] > 0.0f && fabsf(a[0] + b[0]) <= 5e-3f * b[0],
              "across the boundary: a_x %g, in the middle %g", (double)a[0], (double)b[0]);
    CHECK(fabsf(a[0]) > 10.0f && fabsf(a[0]) < 13.0f); /* the nearest image: 0.5 / 0.2^2 */
}

/* Whole boxes: the same forces to rounding; a shift by a vector moves the bodies across
 * the mesh, so only the mesh's share may change; 1 and 2 threads: the same bits; the
 * active bodies alone: the full evaluation's bits. */
static void check_invariance(canopy_rng *r) {
    int64_t n = 3000;
    float box = 1.5f, *pos = malloc((size_t)n * 3 * 4), *mass = malloc((size_t)n * 4);
    float *moved = malloc((size_t)n * 3 * 4), *far = malloc((size_t)n * 3 * 4);
    float *a = malloc((size_t)n * 3 * 4), *b = malloc((size_t)n * 3 * 4),
          *c = malloc((size_t)n * 12);
    double *ref = malloc((size_t)n * 3 * 8), shift[3] = {0.3 * box, -0.7 * box, 2.2 * box};
    make_bodies(r, n, box, 1, pos, mass);
    for (int64_t i = 0; i < 3 * n; i++) {
        double x = (pos[i] + shift[i % 3]) / box;
        moved[i] = (float)((x - floor(x)) * box);
        far[i] = pos[i] + (float)((i % 3) - 1) * 3.0f * box;
    }
    canopy_gravity_options g = treepm(box);
    g.softening = 1e-3f;
    canopy_set_threads(1);
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL, a, NULL, NULL));
    canopy_set_threads(2);
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL, b, NULL, NULL));
    CHECK_MSG(!memcmp(a, b, (size_t)n * 3 * sizeof *a), "1 and 2 threads differ");
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(moved, n, 3), mass, &g, NULL, b, NULL, NULL));
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(far, n, 3), mass, &g, NULL, c, NULL, NULL));
    for (int64_t i = 0; i < 3 * n; i++) ref[i] = a[i];
    double eb = check_median_rel_error3(b, ref, n), ec = check_median_rel_error3(c, ref, n);
    CHECK_MSG(eb <= 1e-3 && ec <= 1e-5, "shifted: median difference %.2e, by whole boxes %.2e", eb,
              ec);
    /* the active third of the bodies over a tree of all: the full run's bits for them */
    gl_config cfg = {1, 0, 0, GL_DEFAULT_BUCKET, GL_TREEPM_GROUP};
    gl_periodic per = canopy_gravity_treepm_split(&g, n);
    unsigned char *active = malloc((size_t)n);
    for (int64_t i = 0; i < n; i++) active[i] = canopy_rng_below(r, 3) == 0;
    float th;
    int32_t ord;
    CHECK_OK(canopy_gravity_choose_for_n(&g, 1e-3, n, &th, &ord, NULL));
    CHECK_OK(canopy_gl_gravity_periodic(canopy_points_make(pos, n, 3), mass, th, ord,
                                        g.softening * g.softening, &cfg, &per, NULL, a, NULL,
                                        NULL));
    for (int64_t i = 0; i < 3 * n; i++) c[i] = -1.0f;
    CHECK_OK(canopy_gl_gravity_periodic(canopy_points_make(pos, n, 3), mass, th, ord,
                                        g.softening * g.softening, &cfg, &per, active, c, NULL,
                                        NULL));
    int same = 1;
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            same &= active[i] ? c[3 * i + k] == a[3 * i + k] : c[3 * i + k] == -1.0f;
    CHECK_MSG(same, "active bodies differ from the full evaluation (or inactive ones written)");
    free(pos), free(mass), free(moved), free(far), free(a), free(b), free(c), free(ref);
    free(active);
}

/* auto: Ewald; TreePM on request, at its table's accuracies and orders 0 and 2; bad
 * methods, grids and orders refused. */
static void check_options(void) {
    float pos[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, acc[6];
    canopy_points b = canopy_points_make(pos, 2, 3);
    canopy_stats st;
    canopy_gravity_options g = canopy_gravity_options_default();
    g.box = 1.0f;
    g.accuracy = 1e-3;
    CHECK_OK(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, &st));
    CHECK_MSG(strstr(st.note, "Ewald"), "auto at 1e-3: %s", st.note);
    g.periodic = CANOPY_PERIODIC_TREEPM;
    CHECK_OK(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, &st));
    CHECK_MSG(strstr(st.note, "TreePM"), "treepm at 1e-3: %s", st.note);
    g.accuracy = 1e-4; /* below TreePM's table, where Ewald's reaches */
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "calibrated range");
    g.accuracy = 0.0, g.theta = 0.5f, g.order = 4;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "order 0 or 2");
    g.order = 2;
    g.periodic = (canopy_periodic_method)7;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "periodic method");
    g.periodic = CANOPY_PERIODIC_TREEPM;
    const int32_t bad_grid[] = {16, 19, 1026, -2};
    for (int i = 0; i < 4; i++) {
        g.pm_grid = bad_grid[i];
        CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL),
                    CANOPY_ERR_INVALID, "TreePM grid");
    }
    g.pm_grid = 64;
    CHECK_OK(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL));
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, &o, acc, NULL, NULL), CANOPY_ERR_UNSUPPORTED,
                "GPU");
}

/* nbody with TreePM, global and block steps: bodies stay in the box, momentum is
 * nearly kept (the mesh's forces are not exactly pairwise), a restart continues with
 * the same method and bits. */
static void check_nbody(canopy_rng *r) {
    int64_t n = 600;
    float box = 1.0f, *p32 = malloc((size_t)n * 3 * 4), *mass = malloc((size_t)n * 4);
    double *pos = malloc((size_t)n * 3 * 8), *vel = malloc((size_t)n * 3 * 8);
    make_bodies(r, n, box, 1, p32, mass);
    for (int64_t i = 0; i < 3 * n; i++) pos[i] = p32[i], vel[i] = 0.0;
    for (int rungs = 0; rungs <= 2; rungs += 2) {
        canopy_nbody_options o = canopy_nbody_options_default();
        o.dt = 0.01;
        o.gravity.softening = 0.01f;
        o.gravity.box = box;
        o.gravity.periodic = CANOPY_PERIODIC_TREEPM;
        o.max_rung = rungs;
        canopy_nbody *s = NULL;
        CHECK_OK(canopy_nbody_create(pos, vel, mass, n, &o, &s));
        if (!s) continue;
        CHECK(canopy_nbody_get_options(s)->gravity.periodic == CANOPY_PERIODIC_TREEPM);
        for (int step = 0; step < 10; step++) CHECK_OK(canopy_nbody_step(s, 1));
        const double *x = canopy_nbody_positions(s), *v = canopy_nbody_velocities(s);
        int inside = 1;
        double sum_mv = 0.0;
        for (int64_t i = 0; i < 3 * n; i++) inside &= x[i] >= 0.0 && x[i] < box;
        for (int64_t i = 0; i < 3 * n; i++) sum_mv += mass[i / 3] * fabs(v[i]);
        CHECK_MSG(inside, "rungs %d: a body left the box", rungs);
        canopy_nbody_energy e;
        CHECK_OK(canopy_nbody_energy_get(s, 1000, &e));
        double P = fabs(e.momentum[0]) + fabs(e.momentum[1]) + fabs(e.momentum[2]);
        CHECK_MSG(P <= 5e-3 * sum_mv, "rungs %d: momentum %.2e (sum m|v| %.2e)", rungs, P, sum_mv);
        const char *path = check_tmp_path("treepm.ckpt");
        CHECK_OK(canopy_nbody_checkpoint(s, path));
        canopy_nbody *t = NULL;
        CHECK_OK(canopy_nbody_restart(path, NULL, &t));
        if (t) {
            CHECK(canopy_nbody_get_options(t)->gravity.periodic == CANOPY_PERIODIC_TREEPM);
            CHECK_OK(canopy_nbody_step(s, 2));
            CHECK_OK(canopy_nbody_step(t, 2));
            CHECK(memcmp(canopy_nbody_positions(s), canopy_nbody_positions(t),
                         (size_t)n * 3 * sizeof(double)) == 0);
        }
        canopy_nbody_free(t);
        canopy_nbody_free(s);
    }
    free(p32), free(mass), free(pos), free(vel);
}

int main(void) {
    uint64_t seed = check_seed();
    canopy_rng r = canopy_rng_make(seed, 36);
    if (!canopy_pm_available()) {
        float pos[3] = {0.5f, 0.5f, 0.5f}, acc[3];
        canopy_gravity_options g = treepm(1.0f);
        CHECK_FAILS(canopy_gravity_multipole(canopy_points_make(pos, 1, 3), NULL, &g, NULL, acc,
                                             NULL, NULL),
                    CANOPY_ERR_UNSUPPORTED, "FFTW");
        return check_finish();
    }
    check_accuracy(&r);
    check_default(&r);
    check_lattice(&r);
    check_across();
    check_invariance(&r);
    check_options();
    check_nbody(&r);
    return check_finish();
}
