// SPDX-License-Identifier: MIT
/* Periodic boxes with Ewald summation (canopy_gravity_options.box; gravity/ewald.h, the
 * list engine's periodic walk): the correction table's exact sums against the float64
 * Ewald reference (two independent implementations, alpha 2 and 4); the list engine
 * against the reference on random and clustered bodies (median force error <= 1e-3 at
 * the default accuracy, potentials too; near the direct limit, only the table's
 * interpolation error); a uniform lattice feels no force; two bodies attract through
 * the boundary; shifting every body by a vector (mod box) or by whole boxes leaves the
 * forces unchanged; bad options are refused; nbody in a box keeps its bodies in the
 * box and its momentum. */
#include "gravity/ewald.h"
#include "gravity/gravity_lists.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static canopy_gravity_options periodic(float box, canopy_gravity_tree tree) {
    canopy_gravity_options g = canopy_gravity_options_default();
    g.box = box;
    g.periodic = CANOPY_PERIODIC_EWALD;
    g.tree = tree;
    canopy_gravity_choose_for(&g, 1e-3, &g.theta, &g.order, NULL);
    return g;
}

static double *reference(const float *pos, const float *mass, int64_t n, float eps, float box,
                         double *pot) {
    int64_t *all = malloc((size_t)n * sizeof *all);
    double *acc = malloc((size_t)n * 3 * sizeof *acc);
    for (int64_t i = 0; i < n; i++) all[i] = i;
    CHECK_OK(canopy_gravity_ewald_direct_sample(canopy_points_make(pos, n, 3), mass, eps, box, all,
                                                n, acc, pot));
    free(all);
    return acc;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over bodies of |pot - ref| / rms(ref): the periodic potential has mean zero,
 * so a relative error per body would divide by values near 0. */
static double pot_error(const float *pot, const double *ref, int64_t n) {
    double rms = 0.0, *e = malloc((size_t)n * sizeof *e);
    for (int64_t i = 0; i < n; i++) rms += ref[i] * ref[i];
    rms = sqrt(rms / (double)n);
    for (int64_t i = 0; i < n; i++) e[i] = fabs(pot[i] - ref[i]) / rms;
    qsort(e, (size_t)n, sizeof *e, cmp_double);
    double med = e[n / 2];
    free(e);
    return med;
}

/* Two bodies: the reference (alpha 4, structure factors) equals Newton plus the
 * table's exact correction (alpha 2, sums per point), forces and potentials. */
static void check_exact_sums(canopy_rng *r) {
    for (int t = 0; t < 20; t++) {
        float pos[6], mass[2] = {0.25f + 0.5f * (float)canopy_rng_uniform(r), 0.75f};
        for (int k = 0; k < 6; k++) pos[k] = (float)canopy_rng_uniform(r);
        double acc[6], pot[2];
        int64_t both[2] = {0, 1};
        CHECK_OK(canopy_gravity_ewald_direct_sample(canopy_points_make(pos, 2, 3), mass, 0.0f, 1.0f,
                                                    both, 2, acc, pot));
        double u[3], a[3], psi, self_a[3], self;
        for (int k = 0; k < 3; k++) {
            u[k] = (double)pos[k] - pos[3 + k];
            u[k] -= nearbyint(u[k]);
        }
        canopy_ewald_exact(u, a, &psi);
        double zero[3] = {0, 0, 0};
        canopy_ewald_exact(zero, self_a, &self);
        double d = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), err = 0.0, scale = 0.0;
        for (int k = 0; k < 3; k++) {
            double want = mass[1] * (a[k] - u[k] / (d * d * d));
            err = fmax(err, fabs(acc[k] - want));
            scale = fmax(scale, fabs(want));
        }
        double want_pot = mass[1] * (psi - 1.0 / d) + mass[0] * self;
        /* The reference's real-space sum stops at distance 1, where erfc(4) = 1.5e-8:
         * its potential is good to a few 1e-8 per unit mass, whatever the sum's size. */
        double pot_floor = 4e-8 * (mass[0] + mass[1]);
        /* Its force, by the same cut, to erfc(4) + 8 / sqrt(pi) e^-16 = 5.1e-7 per unit
         * mass (a pair with a small force failed 1e-6 relative alone: 5.7e-7 at 0.52). */
        double force_floor = 8e-7 * mass[1];
        CHECK_MSG(err <= 1e-6 * scale + force_floor, "pair %d: force differs by %g (scale %g)", t,
                  err, scale);
        CHECK_MSG(fabs(pot[0] - want_pot) <= 1e-6 * fabs(want_pot) + pot_floor,
                  "pair %d: potential %.10g, want %.10g", t, pot[0], want_pot);
        CHECK(fabs(self_a[0]) + fabs(self_a[1]) + fabs(self_a[2]) < 1e-12);
    }
    double zero[3] = {0, 0, 0}, a[3], self;
    canopy_ewald_exact(zero, a, &self);
    CHECK_MSG(fabs(self - 2.8372975) < 1e-6, "self term %.9f, the lattice constant 2.8372975",
              self);
}

/* The index tables of the Taylor shift (EWALD_UP, EWALD_ODD) against ewald_i2/i3/i4,
 * and the shift itself against the double sum it stands for on random entries. */
static void check_index_tables(canopy_rng *r) {
    for (int a = 0; a < 3; a++) {
        CHECK(EWALD_UP[0][a] == 1 + a && EWALD_ODD[1 + a] == 1u << a);
        for (int b = 0; b < 3; b++) {
            CHECK(EWALD_UP[1 + a][b] == ewald_i2(a, b));
            CHECK(EWALD_ODD[ewald_i2(a, b)] == ((1u << a) ^ (1u << b)));
            for (int c = 0; c < 3; c++) {
                CHECK(EWALD_UP[ewald_i2(a, b)][c] == ewald_i3(a, b, c));
                CHECK(EWALD_ODD[ewald_i3(a, b, c)] == ((1u << a) ^ (1u << b) ^ (1u << c)));
                for (int f = 0; f < 3; f++) {
                    CHECK(EWALD_UP[ewald_i3(a, b, c)][f] == ewald_i4(a, b, c, f));
                    CHECK(EWALD_ODD[ewald_i4(a, b, c, f)] ==
                          ((1u << a) ^ (1u << b) ^ (1u << c) ^ (1u << f)));
                }
            }
        }
    }
    for (int t = 0; t < 20; t++) {
        float c[EWALD_NDER], e[3], out[EWALD_NDER];
        for (int q = 0; q < EWALD_NDER; q++) c[q] = (float)canopy_rng_uniform(r) * 2.0f - 1.0f;
        for (int k = 0; k < 3; k++) e[k] = (float)canopy_rng_uniform(r) * 0.2f - 0.1f;
        ewald_shift(c, e, out);
        /* psi and its gradient written out as sums over ordered index tuples */
        double p = c[0], g[3];
        for (int a = 0; a < 3; a++) {
            p += c[1 + a] * e[a];
            g[a] = c[1 + a];
            for (int b = 0; b < 3; b++) {
                p += c[ewald_i2(a, b)] * e[a] * e[b] / 2.0;
                g[a] += c[ewald_i2(a, b)] * e[b];
                for (int k = 0; k < 3; k++) {
                    p += c[ewald_i3(a, b, k)] * e[a] * e[b] * e[k] / 6.0;
                    g[a] += c[ewald_i3(a, b, k)] * e[b] * e[k] / 2.0;
                    for (int f = 0; f < 3; f++) {
                        p += c[ewald_i4(a, b, k, f)] * e[a] * e[b] * e[k] * e[f] / 24.0;
                        g[a] += c[ewald_i4(a, b, k, f)] * e[b] * e[k] * e[f] / 6.0;
                    }
                }
            }
        }
        CHECK_MSG(fabs(out[0] - p) < 1e-5 &&
                      fabs(out[1] - g[0]) + fabs(out[2] - g[1]) + fabs(out[3] - g[2]) < 1e-5,
                  "shift %d: psi %.7g vs %.7g", t, out[0], p);
    }
}

/* Every entry of small tables (even and odd grids) equals the float64 sums at its point:
 * the table computes a sixth of them and permutes the axes for the rest. */
static void check_table_entries(void) {
    for (int32_t n = EWALD_GRID_MIN; n <= EWALD_GRID_MIN + 1; n++) {
        const float *T;
        CHECK_OK(canopy_ewald_table(n, &T));
        int64_t m = n + 1, bad = 0;
        for (int64_t i = 0; i < m && T; i++)
            for (int64_t j = 0; j < m; j++)
                for (int64_t k = 0; k < m; k++) {
                    double r[3] = {0.5 * (double)i / n, 0.5 * (double)j / n, 0.5 * (double)k / n},
                           d[EWALD_NDER];
                    canopy_ewald_derivs(r, d);
                    const float *e = T + EWALD_NDER * ((i * m + j) * m + k);
                    for (int q = 0; q < EWALD_NDER; q++)
                        bad += fabs(e[q] - d[q]) > 1e-6 * (1.0 + fabs(d[q]));
                }
        CHECK_MSG(bad == 0, "grid %d: %lld table entries differ from the sums", (int)n,
                  (long long)bad);
    }
}

/* psi's analytic derivatives (the table's entries) against canopy_ewald_exact and against
 * central differences of each other; its Laplacian is the background's -4 pi; the
 * table's Taylor lookup against the exact sums at random points of the whole box. */
static void check_derivs(canopy_rng *r) {
    const double h = 1e-4, four_pi = 4.0 * 3.14159265358979323846;
    double worst_fd = 0.0, worst_lookup = 0.0, worst_high[3] = {0};
    const float *T;
    CHECK_OK(canopy_ewald_table(EWALD_GRID_DEFAULT, &T));
    for (int t = 0; t < 200 && T; t++) {
        double u[3], d[EWALD_NDER], a[3], p;
        for (int k = 0; k < 3; k++) u[k] = canopy_rng_uniform(r) - 0.5;
        canopy_ewald_derivs(u, d);
        canopy_ewald_exact(u, a, &p);
        CHECK_MSG(fabs(d[0] - p) < 1e-9 &&
                      fabs(d[1] + a[0]) + fabs(d[2] + a[1]) + fabs(d[3] + a[2]) < 1e-9,
                  "point %d: psi %.12g vs %.12g", t, d[0], p);
        CHECK_MSG(fabs(d[4] + d[5] + d[6] + four_pi) < 1e-7, "point %d: Laplacian %.10g", t,
                  d[4] + d[5] + d[6]);
        for (int c = 0; c < 3; c++) { /* d/dx_c of the first and second derivatives */
            double up[3] = {u[0], u[1], u[2]}, dn[3] = {u[0], u[1], u[2]}, dp[EWALD_NDER],
                   dm[EWALD_NDER];
            up[c] += h, dn[c] -= h;
            canopy_ewald_derivs(up, dp);
            canopy_ewald_derivs(dn, dm);
            for (int a2 = 0; a2 < 3; a2++) {
                worst_fd =
                    fmax(worst_fd, fabs((dp[1 + a2] - dm[1 + a2]) / (2 * h) - d[ewald_i2(a2, c)]));
                for (int b = 0; b < 3; b++) {
                    worst_fd =
                        fmax(worst_fd, fabs((dp[ewald_i2(a2, b)] - dm[ewald_i2(a2, b)]) / (2 * h) -
                                            d[ewald_i3(a2, b, c)]) /
                                           10.0);
                    for (int e = 0; e < 3; e++) /* the fourth: larger, so relative to 100 */
                        worst_fd =
                            fmax(worst_fd,
                                 fabs((dp[ewald_i3(a2, b, e)] - dm[ewald_i3(a2, b, e)]) / (2 * h) -
                                      d[ewald_i4(a2, b, e, c)]) /
                                     100.0);
                }
            }
        }
        float uf[3] = {(float)u[0], (float)u[1], (float)u[2]}, df[EWALD_NDER];
        ewald_derivs_at(T, EWALD_GRID_DEFAULT, uf, df);
        for (int q = 0; q < 4; q++) worst_lookup = fmax(worst_lookup, fabs(df[q] - d[q]));
        for (int q = 4; q < EWALD_NDER; q++) {
            int o = q < 10 ? 0 : q < 20 ? 1 : 2;
            worst_high[o] = fmax(worst_high[o], fabs(df[q] - d[q]));
        }
    }
    CHECK_MSG(worst_fd < 1e-5, "derivatives vs central differences: %.2e", worst_fd);
    /* the higher derivatives by shorter series (the fourth: the nearest point's, of
     * values up to ~800 near the faces, where the fifth is ~8000 and the point 1/128 away) */
    CHECK_MSG(worst_high[0] < 2e-3 && worst_high[1] < 0.5 && worst_high[2] < 100.0,
              "table lookup vs exact sums (second, third, fourth): %.2e %.2e %.2e", worst_high[0],
              worst_high[1], worst_high[2]);
    CHECK_MSG(worst_lookup < 1e-4, "table lookup vs exact sums (psi, grad psi): %.2e",
              worst_lookup);
    double zero[3] = {0, 0, 0}, d[EWALD_NDER];
    canopy_ewald_derivs(zero, d);
    CHECK_MSG(fabs(d[0] - 2.8372975) < 1e-6 && fabs(d[4] + four_pi / 3.0) < 1e-9,
              "at 0: psi %.9f, psi_xx %.9f", d[0], d[4]);
    /* psi + (2 pi / 3) r^2 is harmonic with the cube's symmetry: its quartic part is
     * c (x^4 + y^4 + z^4 - 3/5 r^4), so psi_xxxx = -2 psi_xxyy at 0 */
    CHECK_MSG(fabs(d[20] + 2.0 * d[29]) < 1e-6 && fabs(d[20] - d[21]) < 1e-9 && d[20] < -10.0,
              "at 0: psi_xxxx %.9f, psi_yyyy %.9f, psi_xxyy %.9f", d[20], d[21], d[29]);
}

/* Uniform (clustered = 0) or half the bodies in a small clump near a corner, so the
 * clump straddles the box's faces. */
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

static void check_accuracy(canopy_rng *r) {
    static const int64_t sizes[] = {300, 1000};
    for (size_t si = 0; si < 2; si++)
        for (int clustered = 0; clustered < 2; clustered++)
            for (int tr = 0; tr < 2; tr++) {
                int64_t n = sizes[si];
                float box = 2.5f, eps = clustered ? 1e-3f : 0.0f;
                float *pos = malloc((size_t)n * 3 * sizeof *pos);
                float *mass = malloc((size_t)n * sizeof *mass);
                float *acc = malloc((size_t)n * 3 * sizeof *acc), *pot = malloc((size_t)n * 4);
                double *rpot = malloc((size_t)n * sizeof *rpot);
                make_bodies(r, n, box, clustered, pos, mass);
                double *ref = reference(pos, mass, n, eps, box, rpot);
                canopy_gravity_options g =
                    periodic(box, tr ? CANOPY_GRAVITY_TREE_BINARY : CANOPY_GRAVITY_TREE_OCT);
                g.softening = eps;
                CHECK_OK(canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL,
                                                  acc, pot, NULL));
                double fe = check_median_rel_error3(acc, ref, n), pe = pot_error(pot, rpot, n);
                /* the goal holds for the default (binary) tree; the octree's list table
                 * was calibrated with open boundaries, where forces cancel less */
                double goal = tr ? 1e-3 : 1e-2;
                CHECK_MSG(fe <= goal && pe <= goal,
                          "n %lld, %s, tree %d: median force error %.2e, potential %.2e",
                          (long long)n, clustered ? "clustered" : "uniform", tr, fe, pe);
                /* near the direct limit only the table's interpolation is left */
                g.theta = 1e-3f;
                g.order = 0;
                CHECK_OK(canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL,
                                                  acc, pot, NULL));
                fe = check_median_rel_error3(acc, ref, n), pe = pot_error(pot, rpot, n);
                CHECK_MSG(fe <= 5e-4 && pe <= 5e-4,
                          "n %lld, theta 1e-3: median force error %.2e, potential %.2e",
                          (long long)n, fe, pe);
                free(pos), free(mass), free(acc), free(pot), free(rpot), free(ref);
            }
}

/* The default periodic accuracy (what canopy gravity --box runs: accuracy 1e-3 through
 * the periodic table) on uniform boxes, where periodic forces cancel most: median force
 * error <= 1e-3 against the Ewald sum on 400 evenly spaced bodies, for several seeds
 * (the generator's random stream), sizes and box sides. And the table's choice differs
 * from the open one: uniform bodies need it. */
static void check_default_uniform(canopy_rng *r) {
    static const int64_t sizes[] = {4000, 12000};
    /* quick: 4000 only; both sizes fit in one chunk of the list build (GL_CHUNK, 16384
     * bodies), so 12000 deepens the tree without another code path. And one repetition,
     * its box side drawn (the seed changes every run): under ASan each takes 15 s of CPU,
     * mostly in the group Ewald sums (ewald_sum_body), not the reference */
    const size_t nsizes = check_quick() ? 1 : 2;
    const int reps = check_quick() ? 1 : 3, first = check_quick() ? (int)canopy_rng_below(r, 2) : 0;
    for (int rep = first; rep < first + reps; rep++)
        for (size_t si = 0; si < nsizes; si++) {
            int64_t n = sizes[si], ns = 400;
            float box = rep == 1 ? 7.0f : 1.0f, eps = 1e-3f * box;
            float *pos = malloc((size_t)n * 3 * sizeof *pos);
            float *mass = malloc((size_t)n * sizeof *mass);
            float *acc = malloc((size_t)n * 3 * sizeof *acc);
            int64_t *idx = malloc((size_t)ns * sizeof *idx);
            double *ref = malloc((size_t)ns * 3 * sizeof *ref);
            make_bodies(r, n, box, 0, pos, mass);
            for (int64_t k = 0; k < ns; k++) idx[k] = k * (n / ns);
            canopy_gravity_options g = canopy_gravity_options_default(), o = g;
            g.box = box;
            g.periodic = CANOPY_PERIODIC_EWALD;
            g.softening = o.softening = eps;
            g.accuracy = o.accuracy = 1e-3;
            CHECK_OK(canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL, acc,
                                              NULL, NULL));
            CHECK_OK(canopy_gravity_ewald_direct_sample(canopy_points_make(pos, n, 3), mass, eps,
                                                        box, idx, ns, ref, NULL));
            float *sa = malloc((size_t)ns * 3 * sizeof *sa);
            for (int64_t k = 0; k < ns; k++)
                for (int c = 0; c < 3; c++) sa[3 * k + c] = acc[3 * idx[k] + c];
            double fe = check_median_rel_error3(sa, ref, ns);
            CHECK_MSG(fe <= 1e-3, "uniform n %lld, box %g, repetition %d: median force error %.2e",
                      (long long)n, (double)box, rep, fe);
            float th_p, th_o;
            int32_t or_p, or_o;
            CHECK_OK(canopy_gravity_choose_for(&g, 1e-3, &th_p, &or_p, NULL));
            CHECK_OK(canopy_gravity_choose_for(&o, 1e-3, &th_o, &or_o, NULL));
            CHECK_MSG(th_p != th_o || or_p != or_o, "periodic and open choices are the same");
            free(pos), free(mass), free(acc), free(idx), free(ref), free(sa);
        }
}

/* The periodic choice read at n (canopy_gravity_choose_for_n): at the table's n it is
 * the old choice; n <= 0 is the table's n and open boundaries ignore n; each row's error
 * is a power law in n (flat below the table's n, log-log straight to 1M and beyond it
 * at least as steep as n^0.5) that never falls as n grows; so the choice at a larger n met the
 * accuracy at every smaller n too (it never gets cheaper), and at 1e-3 its order never falls nor,
 * at one order, its theta grows. Accuracies out of [1e-6, 0.1] are refused at every n. */
static void check_choice_vs_n(void) {
    static const double accs[] = {3e-2, 1e-2, 3e-3, 1e-3, 6e-4, 3e-4, 2e-4};
    canopy_gravity_options g = canopy_gravity_options_default(), open = g;
    g.box = 1.0f;
    g.periodic = CANOPY_PERIODIC_EWALD;
    for (size_t ai = 0; ai < sizeof accs / sizeof accs[0]; ai++) {
        double a = accs[ai], e0, e;
        float th0, th;
        int32_t ord0, ord;
        CHECK_OK(canopy_gravity_choose_for(&g, a, &th0, &ord0, &e0));
        CHECK_OK(canopy_gravity_choose_for_n(&g, a, 200000, &th, &ord, &e));
        CHECK_MSG(th == th0 && ord == ord0 && e == e0,
                  "accuracy %g at the table's n: theta %.2f order %d, not %.2f %d", a, (double)th,
                  (int)ord, (double)th0, (int)ord0);
        CHECK_OK(canopy_gravity_choose_for_n(&g, a, 0, &th, &ord, &e));
        CHECK(th == th0 && ord == ord0 && e == e0);
        CHECK_OK(canopy_gravity_choose_for(&open, a, &th0, &ord0, &e0));
        CHECK_OK(canopy_gravity_choose_for_n(&open, a, 10000000, &th, &ord, &e));
        CHECK(th == th0 && ord == ord0 && e == e0);
        canopy_gravity_options prev = g;
        int64_t prev_n = 0;
        for (int64_t n = 1000; n <= 100000000; n = n * 3 / 2) {
            canopy_gravity_options c = g;
            canopy_status s = canopy_gravity_choose_for_n(&g, a, n, &c.theta, &c.order, &e);
            if (s) {
                CHECK_MSG(s == CANOPY_ERR_INVALID &&
                              strstr(canopy_last_error(), "calibrated range"),
                          "accuracy %g, n %lld: %s", a, (long long)n, canopy_last_error());
                prev_n = -1; /* once out of range, it stays out */
                continue;
            }
            CHECK_MSG(prev_n >= 0, "accuracy %g: refused below n %lld but chosen there", a,
                      (long long)n);
            CHECK_MSG(e <= a && e == canopy_gravity_expected_error_for_n(&c, n),
                      "accuracy %g, n %lld: expected %.3g", a, (long long)n, e);
            if (prev_n > 0) {
                double then = canopy_gravity_expected_error_for_n(&c, prev_n);
                CHECK_MSG(then <= e && then <= a,
                          "accuracy %g: theta %.2f order %d (n %lld) expects %.3g at n %lld", a,
                          (double)c.theta, (int)c.order, (long long)n, then, (long long)prev_n);
                if (a == 1e-3)
                    CHECK_MSG(
                        c.order > prev.order || (c.order == prev.order && c.theta <= prev.theta),
                        "1e-3: n %lld theta %.2f order %d after theta %.2f order %d", (long long)n,
                        (double)c.theta, (int)c.order, (double)prev.theta, (int)prev.order);
            }
            prev = c, prev_n = n;
        }
    }
    /* one row's law: flat below the table's n, a straight line in log-log above it, at
     * least as steep as n^0.5 above 1M */
    g.theta = 0.66f, g.order = 4;
    double e1 = canopy_gravity_expected_error_for_n(&g, 1000),
           e2 = canopy_gravity_expected_error_for_n(&g, 200000),
           e3 = canopy_gravity_expected_error_for_n(&g, 300000),
           e4 = canopy_gravity_expected_error_for_n(&g, 1000000),
           e5 = canopy_gravity_expected_error_for_n(&g, 8000000);
    double k1 = log(e4 / e3) / log(1e6 / 3e5), k2 = log(e5 / e4) / log(8.0);
    CHECK_MSG(e1 == e2 && e2 < e3 && k1 > 0.0 && fabs(fmax(k1, 0.5) - k2) < 1e-9,
              "order 4 theta 0.66: %.4g %.4g %.4g %.4g %.4g (exponents %.4f %.4f)", e1, e2, e3, e4,
              e5, k1, k2);
    float th;
    int32_t ord;
    CHECK_FAILS(canopy_gravity_choose_for_n(&g, 1e-7, 1000000, &th, &ord, NULL), CANOPY_ERR_INVALID,
                "accuracy must be");
    CHECK_FAILS(canopy_gravity_choose_for_n(&g, 0.5, 1000, &th, &ord, NULL), CANOPY_ERR_INVALID,
                "accuracy must be");
    CHECK_FAILS(canopy_gravity_choose_for_n(&g, 1e-4, 1000, &th, &ord, NULL), CANOPY_ERR_INVALID,
                "calibrated range");
}

/* The entry points read the periodic table at their n: at 400k uniform bodies (where
 * 1e-3 needs a smaller theta than at the table's 200k) canopy_gravity_multipole's forces
 * for accuracy 1e-3 are those of choose_for_n's (theta, order), and canopy_nbody_create
 * resolves to them. Not in quick runs (three evaluations of 400k bodies: ~7 s). */
static void check_choice_wiring(canopy_rng *r) {
    if (check_quick()) return;
    int64_t n = 400000;
    float *pos = malloc((size_t)n * 3 * sizeof *pos), *mass = malloc((size_t)n * sizeof *mass);
    float *acc = malloc((size_t)n * 3 * sizeof *acc), *acc_n = malloc((size_t)n * 3 * sizeof *acc);
    double *p64 = malloc((size_t)n * 3 * sizeof *p64), *v64 = calloc((size_t)n * 3, sizeof *v64);
    make_bodies(r, n, 1.0f, 0, pos, mass);
    for (int64_t i = 0; i < 3 * n; i++) p64[i] = pos[i];
    canopy_gravity_options g = canopy_gravity_options_default(), at_n, at_table;
    g.box = 1.0f;
    g.periodic = CANOPY_PERIODIC_EWALD;
    g.softening = 1e-3f;
    at_n = at_table = g;
    CHECK_OK(canopy_gravity_choose_for_n(&g, 1e-3, n, &at_n.theta, &at_n.order, NULL));
    CHECK_OK(canopy_gravity_choose_for(&g, 1e-3, &at_table.theta, &at_table.order, NULL));
    CHECK_MSG(at_n.theta < at_table.theta && at_n.order == at_table.order,
              "1e-3 at n %lld: theta %.2f order %d, at the table's n %.2f %d", (long long)n,
              (double)at_n.theta, (int)at_n.order, (double)at_table.theta, (int)at_table.order);
    g.accuracy = 1e-3;
    canopy_points b = canopy_points_make(pos, n, 3);
    CHECK_OK(canopy_gravity_multipole(b, mass, &g, NULL, acc, NULL, NULL));
    CHECK_OK(canopy_gravity_multipole(b, mass, &at_n, NULL, acc_n, NULL, NULL));
    CHECK_MSG(!memcmp(acc, acc_n, (size_t)n * 3 * sizeof *acc),
              "gravity at accuracy 1e-3 differs from theta %.2f order %d", (double)at_n.theta,
              (int)at_n.order);
    canopy_nbody_options o = canopy_nbody_options_default();
    o.gravity = g;
    o.dt = 1e-3;
    canopy_nbody *sim = NULL;
    CHECK_OK(canopy_nbody_create(p64, v64, mass, n, &o, &sim));
    if (sim) {
        const canopy_nbody_options *got = canopy_nbody_get_options(sim);
        CHECK_MSG(got->gravity.theta == at_n.theta && got->gravity.order == at_n.order,
                  "nbody at n %lld resolved theta %.2f order %d", (long long)n,
                  (double)got->gravity.theta, (int)got->gravity.order);
    }
    canopy_nbody_free(sim);
    free(pos), free(mass), free(acc), free(acc_n), free(p64), free(v64);
}

/* k^3 equal bodies on a lattice (shifted by an arbitrary offset): by symmetry every
 * body feels no force, whatever the tree makes of it. */
static void check_lattice(canopy_rng *r) {
    for (int k = 4; k <= 8; k += 4)
        for (int tr = 0; tr < 2; tr++) {
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
            canopy_gravity_options g =
                periodic(box, tr ? CANOPY_GRAVITY_TREE_BINARY : CANOPY_GRAVITY_TREE_OCT);
            CHECK_OK(canopy_gravity_multipole(canopy_points_make(pos, n, 3), NULL, &g, NULL, acc,
                                              NULL, NULL));
            /* the pull of one neighbour, for scale */
            double unit = (1.0 / (double)n) / ((box / k) * (box / k)), worst = 0.0, tot[3] = {0};
            for (int64_t i = 0; i < n; i++) {
                double a = 0.0;
                for (int j = 0; j < 3; j++) a += (double)acc[3 * i + j] * acc[3 * i + j];
                worst = fmax(worst, sqrt(a));
                for (int j = 0; j < 3; j++) tot[j] += acc[3 * i + j] / (double)n;
            }
            double total = sqrt(tot[0] * tot[0] + tot[1] * tot[1] + tot[2] * tot[2]);
            CHECK_MSG(worst <= 1e-4 * unit && total <= 1e-5 * unit,
                      "lattice %d^3, tree %d: largest |a| %.2e, mean a %.2e (one neighbour's "
                      "pull %.2e)",
                      k, tr, worst, total, unit);
            free(pos), free(acc);
        }
}

/* Two bodies near opposite faces attract through the boundary, as strongly as the same
 * pair moved to the middle of the box. */
static void check_across(void) {
    float box = 2.0f, edge[6] = {0.1f, 1.0f, 1.0f, 1.9f, 1.0f, 1.0f};
    float mid[6] = {0.9f, 1.0f, 1.0f, 1.1f, 1.0f, 1.0f}, a[6], b[6];
    canopy_gravity_options g = periodic(box, CANOPY_GRAVITY_TREE_BINARY);
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(edge, 2, 3), NULL, &g, NULL, a, NULL, NULL));
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(mid, 2, 3), NULL, &g, NULL, b, NULL, NULL));
    CHECK_MSG(a[0] < 0.0f && a[3] > 0.0f, "across the boundary: a_x %g and %g", (double)a[0],
              (double)a[3]);
    CHECK_MSG(b[0] > 0.0f && fabsf(a[0] + b[0]) <= 1e-5f * b[0], "edge %g vs middle %g",
              (double)a[0], (double)b[0]);
    /* the pull of the nearest image dominates: 0.5 / 0.2^2 = 12.5 */
    CHECK(fabsf(a[0]) > 10.0f && fabsf(a[0]) < 13.0f);
}

static void check_translation(canopy_rng *r) {
    int64_t n = 800;
    float box = 1.5f, *pos = malloc((size_t)n * 3 * sizeof *pos), *mass = malloc((size_t)n * 4);
    float *moved = malloc((size_t)n * 3 * sizeof *moved), *far = malloc((size_t)n * 3 * 4);
    float *a = malloc((size_t)n * 3 * 4), *b = malloc((size_t)n * 3 * 4),
          *c = malloc((size_t)n * 12);
    make_bodies(r, n, box, 1, pos, mass);
    double shift[3] = {0.3 * box, -0.7 * box, 2.2 * box}, *ref = malloc((size_t)n * 3 * 8);
    for (int64_t i = 0; i < 3 * n; i++) {
        double x = (pos[i] + shift[i % 3]) / box;
        moved[i] = (float)((x - floor(x)) * box);
        far[i] = pos[i] + (float)((i % 3) - 1) * 3.0f * box; /* whole boxes: -3, 0, +3 */
    }
    canopy_gravity_options g = periodic(box, CANOPY_GRAVITY_TREE_BINARY);
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(pos, n, 3), mass, &g, NULL, a, NULL, NULL));
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(moved, n, 3), mass, &g, NULL, b, NULL, NULL));
    CHECK_OK(
        canopy_gravity_multipole(canopy_points_make(far, n, 3), mass, &g, NULL, c, NULL, NULL));
    for (int64_t i = 0; i < 3 * n; i++) ref[i] = a[i];
    double eb = check_median_rel_error3(b, ref, n), ec = check_median_rel_error3(c, ref, n);
    CHECK_MSG(eb <= 1e-3 && ec <= 1e-4, "shifted: median difference %.2e, by whole boxes %.2e", eb,
              ec);
    free(pos), free(mass), free(moved), free(far), free(a), free(b), free(c), free(ref);
}

static void check_bad_options(void) {
    float pos[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f}, acc[6];
    canopy_points b = canopy_points_make(pos, 2, 3);
    canopy_gravity_options g = periodic(1.0f, CANOPY_GRAVITY_TREE_BINARY);
    float bad_box[] = {-1.0f, NAN, INFINITY};
    for (int i = 0; i < 3; i++) {
        g.box = bad_box[i];
        CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL),
                    CANOPY_ERR_INVALID, "box must be finite");
    }
    g.box = 1.0f;
    g.periodic = CANOPY_PERIODIC_EWALD;
    g.ewald_grid = 7;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "Ewald grid");
    g.ewald_grid = 129;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "Ewald grid");
    g.ewald_grid = 0;
    g.opening = CANOPY_OPENING_BODY;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL),
                CANOPY_ERR_UNSUPPORTED, "list opening only");
    g.opening = CANOPY_OPENING_BUCKET;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL),
                CANOPY_ERR_UNSUPPORTED, "list opening only");
    g.opening = CANOPY_OPENING_LIST;
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, &o, acc, NULL, NULL), CANOPY_ERR_UNSUPPORTED,
                "GPU");
    pos[4] = 6.0f; /* 5 boxes beyond the far face */
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "more than 4 boxes");
    pos[4] = -4.5f;
    CHECK_FAILS(canopy_gravity_multipole(b, NULL, &g, NULL, acc, NULL, NULL), CANOPY_ERR_INVALID,
                "more than 4 boxes");
    pos[4] = 0.5f;
    int64_t one = 0;
    double ra[3];
    CHECK_FAILS(canopy_gravity_ewald_direct_sample(b, NULL, 0.0f, 0.0f, &one, 1, ra, NULL),
                CANOPY_ERR_INVALID, "box must be finite");
    /* the table's own bounds (the option's checks come first) */
    const float *T;
    CHECK_FAILS(canopy_ewald_table(EWALD_GRID_MAX + 1, &T), CANOPY_ERR_INVALID, "Ewald grid");
}

/* nbody in a box: positions stay in [0, box); the momentum (zero at the start) stays
 * small next to the bodies' momenta; block steps and a checkpoint keep the box. */
static void check_nbody(canopy_rng *r) {
    int64_t n = 400;
    float box = 1.0f, *p32 = malloc((size_t)n * 3 * 4), *mass = malloc((size_t)n * 4);
    double *pos = malloc((size_t)n * 3 * 8), *vel = malloc((size_t)n * 3 * 8);
    make_bodies(r, n, box, 1, p32, mass);
    double pm[3] = {0, 0, 0}, mt = 0.0;
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            pos[3 * i + k] = p32[3 * i + k];
            vel[3 * i + k] = 0.5 * (canopy_rng_uniform(r) - 0.5);
            pm[k] += mass[i] * vel[3 * i + k];
        }
        mt += mass[i];
    }
    for (int64_t i = 0; i < 3 * n; i++) vel[i] -= pm[i % 3] / mt;
    for (int rungs = 0; rungs <= 2; rungs += 2) {
        canopy_nbody_options o = canopy_nbody_options_default();
        o.dt = 0.01;
        o.gravity.softening = 0.01f;
        o.gravity.box = box;
        o.gravity.periodic = CANOPY_PERIODIC_EWALD;
        o.max_rung = rungs;
        canopy_nbody *s = NULL;
        CHECK_OK(canopy_nbody_create(pos, vel, mass, n, &o, &s));
        if (!s) continue;
        double sum_mv = 0.0;
        for (int step = 0; step < 10; step++) {
            CHECK_OK(canopy_nbody_step(s, 1));
            const double *x = canopy_nbody_positions(s);
            int inside = 1;
            for (int64_t i = 0; i < 3 * n; i++) inside &= x[i] >= 0.0 && x[i] < box;
            CHECK_MSG(inside, "rungs %d, step %d: a body left the box", rungs, step);
        }
        canopy_nbody_energy e;
        CHECK_OK(canopy_nbody_energy_get(s, 1000, &e));
        CHECK(e.direct == 0); /* the open-boundary direct sum does not apply */
        const double *v = canopy_nbody_velocities(s);
        for (int64_t i = 0; i < n; i++)
            sum_mv += mass[i] * sqrt(v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] +
                                     v[3 * i + 2] * v[3 * i + 2]);
        double P = sqrt(e.momentum[0] * e.momentum[0] + e.momentum[1] * e.momentum[1] +
                        e.momentum[2] * e.momentum[2]);
        /* block steps kick a pair's two bodies at different times, so their momentum
         * exchange is not symmetric within a base step (seen: 1.5e-3 of sum m|v|) */
        CHECK_MSG(P <= (rungs ? 5e-3 : 1e-3) * sum_mv, "rungs %d: momentum %.2e (sum m|v| %.2e)",
                  rungs, P, sum_mv);
        const char *path = check_tmp_path("ewald.ckpt");
        CHECK_OK(canopy_nbody_checkpoint(s, path));
        canopy_nbody *t = NULL;
        CHECK_OK(canopy_nbody_restart(path, NULL, &t));
        if (t) {
            CHECK(canopy_nbody_get_options(t)->gravity.box == box);
            CHECK(canopy_nbody_get_options(t)->gravity.ewald_grid == EWALD_GRID_DEFAULT);
            CHECK_OK(canopy_nbody_step(s, 2));
            CHECK_OK(canopy_nbody_step(t, 2));
            CHECK(memcmp(canopy_nbody_positions(s), canopy_nbody_positions(t),
                         (size_t)n * 3 * sizeof(double)) == 0);
        }
        canopy_nbody_free(t);
        canopy_nbody_free(s);
    }
    canopy_nbody_options o = canopy_nbody_options_default();
    o.dt = 0.01;
    o.gravity.box = box;
    o.gravity.periodic = CANOPY_PERIODIC_EWALD;
    o.gravity.softening = 0.01f;
    o.run.backend = CANOPY_BACKEND_GPU;
    canopy_nbody *s = NULL;
    CHECK_FAILS(canopy_nbody_create(pos, vel, mass, n, &o, &s), CANOPY_ERR_UNSUPPORTED, "GPU");
    free(p32), free(mass), free(pos), free(vel);
}

int main(void) {
    uint64_t seed = check_seed();
    canopy_rng r = canopy_rng_make(seed, 33);
    check_exact_sums(&r);
    check_index_tables(&r);
    check_table_entries();
    check_derivs(&r);
    check_accuracy(&r);
    check_default_uniform(&r);
    check_choice_vs_n();
    check_choice_wiring(&r);
    check_lattice(&r);
    check_across();
    check_translation(&r);
    check_bad_options();
    check_nbody(&r);
    return check_finish();
}
