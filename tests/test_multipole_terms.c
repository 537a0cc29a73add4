// SPDX-License-Identifier: MIT
/* The softened Cartesian expansion (gravity/multipole_terms.h) of one cluster of bodies
 * against its float64 direct sum, at sinks 5-20 half-widths away and softenings
 * 0 to 4 radii: the error falls with the order (0, 2, 3, 4) and with distance
 * as (radius / distance)^(order + 1); with softening, the T eps^2 trace term makes
 * order 2 far more exact than the traceless quadrupole alone; moments built from two
 * sub-clusters by the binomial shift equal those summed directly; a point mass is
 * exact at every order. Random clusters, several seeds. */
#include "gravity/multipole_terms.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K = 40, SINKS = 64 };

typedef struct cluster {
    double x[K][3], m[K], com[3], mass;
    float q[MP_PACK_MAX];
} cluster;

static void make_cluster(canopy_rng *r, cluster *c, int coincident) {
    c->mass = 0.0;
    for (int j = 0; j < 3; j++) c->com[j] = 0.0;
    for (int k = 0; k < K; k++) {
        for (int j = 0; j < 3; j++)
            c->x[k][j] = coincident ? 0.25 : 2.0 * canopy_rng_uniform(r) - 1.0;
        c->m[k] = 0.2 + canopy_rng_uniform(r);
        c->mass += c->m[k];
        for (int j = 0; j < 3; j++) c->com[j] += c->m[k] * c->x[k][j];
    }
    for (int j = 0; j < 3; j++) c->com[j] /= c->mass;
}

/* Packed moments of order 4 (the lower orders' records are its prefixes). */
static void pack(cluster *c, int split) {
    double M[MP_MONO_MAX] = {0};
    if (!split) {
        for (int k = 0; k < K; k++)
            canopy_mp_mono_add_body(M, 4, c->m[k], c->x[k][0] - c->com[0], c->x[k][1] - c->com[1],
                                    c->x[k][2] - c->com[2]);
    } else { /* two children about their own centres of mass, shifted */
        for (int h = 0; h < 2; h++) {
            double C[MP_MONO_MAX] = {0}, cc[3] = {0, 0, 0}, w = 0.0;
            for (int k = h * K / 2; k < (h + 1) * K / 2; k++) {
                w += c->m[k];
                for (int j = 0; j < 3; j++) cc[j] += c->m[k] * c->x[k][j];
            }
            for (int j = 0; j < 3; j++) cc[j] /= w;
            for (int k = h * K / 2; k < (h + 1) * K / 2; k++)
                canopy_mp_mono_add_body(C, 4, c->m[k], c->x[k][0] - cc[0], c->x[k][1] - cc[1],
                                        c->x[k][2] - cc[2]);
            canopy_mp_mono_add_shifted(M, 4, C, cc[0] - c->com[0], cc[1] - c->com[1],
                                       cc[2] - c->com[2]);
        }
    }
    CHECK_MSG(fabs(M[0] - c->mass) < 1e-12 * c->mass && fabs(M[1]) < 1e-12 && fabs(M[2]) < 1e-12,
              "moments: mass %.17g vs %.17g, dipole %.3g %.3g", M[0], c->mass, M[1], M[2]);
    canopy_mp_mono_pack(M, 4, c->q, 1);
}

/* traces: mp_cell_terms' (1: exact for any softening). */
static void expand(const cluster *c, int order, int traces, const float *q, const double *s,
                   double eps2, double a[4]) {
    float ax = 0, ay = 0, az = 0, p = 0;
    float d[3] = {(float)(s[0] - c->com[0]), (float)(s[1] - c->com[1]), (float)(s[2] - c->com[2])};
    switch (order) {
    case 0:
        mp_cell_terms(0, traces, (float)c->mass, d[0], d[1], d[2], (float)eps2, q, 1, &ax, &ay, &az,
                      &p);
        break;
    case 2:
        mp_cell_terms(2, traces, (float)c->mass, d[0], d[1], d[2], (float)eps2, q, 1, &ax, &ay, &az,
                      &p);
        break;
    case 3:
        mp_cell_terms(3, traces, (float)c->mass, d[0], d[1], d[2], (float)eps2, q, 1, &ax, &ay, &az,
                      &p);
        break;
    default:
        mp_cell_terms(4, traces, (float)c->mass, d[0], d[1], d[2], (float)eps2, q, 1, &ax, &ay, &az,
                      &p);
        break;
    }
    a[0] = ax, a[1] = ay, a[2] = az, a[3] = -p;
}

static void direct(const cluster *c, const double *s, double eps2, double a[4]) {
    a[0] = a[1] = a[2] = a[3] = 0.0;
    for (int k = 0; k < K; k++) {
        double d[3] = {s[0] - c->x[k][0], s[1] - c->x[k][1], s[2] - c->x[k][2]};
        double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + eps2, r = sqrt(r2);
        for (int j = 0; j < 3; j++) a[j] -= c->m[k] * d[j] / (r2 * r);
        a[3] -= c->m[k] / r;
    }
}

static double rel_err(const double *a, const double *ref) {
    double e = 0.0, n = 0.0;
    for (int j = 0; j < 3; j++) e += (a[j] - ref[j]) * (a[j] - ref[j]), n += ref[j] * ref[j];
    return sqrt(e / n);
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Median over SINKS random directions at distance dist of the relative force error,
 * per order (index 0, 2, 3, 4), and of order 2 without the trace term (index 1). Each
 * order without its trace terms: the same bits without softening, and otherwise within
 * e = eps^2 / R^2 (R at the cluster's near side) of the force with them, e's share of
 * the order 2-4 terms (themselves a small part of the force) being what they miss. */
static void errors(canopy_rng *r, const cluster *c, double dist, double eps2, double med[5]) {
    double e[5][SINKS], R = dist - sqrt(3.0);
    for (int k = 0; k < SINKS; k++) {
        double u[3], n = 0.0, s[3], ref[4], a[4];
        do {
            n = 0.0;
            for (int j = 0; j < 3; j++) u[j] = 2.0 * canopy_rng_uniform(r) - 1.0, n += u[j] * u[j];
        } while (n > 1.0 || n < 1e-4);
        for (int j = 0; j < 3; j++) s[j] = c->com[j] + dist * u[j] / sqrt(n);
        direct(c, s, eps2, ref);
        for (int o = 0; o < 5; o++) {
            expand(c, o == 1 ? 2 : o, o != 1, c->q, s, eps2, a);
            e[o][k] = rel_err(a, ref);
        }
        for (int o = 2; o <= 4; o++) {
            double full[4], bare[4];
            expand(c, o, 1, c->q, s, eps2, full);
            expand(c, o, 0, c->q, s, eps2, bare);
            if (eps2 == 0.0)
                CHECK_MSG(!memcmp(full, bare, sizeof full),
                          "order %d without softening: the trace terms changed the result", o);
            else
                CHECK_MSG(rel_err(bare, full) <= eps2 / (R * R * R * R) * 3.0 + 1e-6 ||
                              eps2 > 1e-2 * R * R,
                          "order %d, eps^2 / R^2 %.3g: without the trace terms off by %.3g", o,
                          eps2 / (R * R), rel_err(bare, full));
        }
        expand(c, 4, 1, c->q, s, eps2, a);
        CHECK_MSG(fabs(a[3] - ref[3]) < 1e-3 * fabs(ref[3]), "potential %.9g vs direct %.9g", a[3],
                  ref[3]);
    }
    for (int o = 0; o < 5; o++) {
        qsort(e[o], SINKS, sizeof(double), cmp);
        med[o] = e[o][SINKS / 2];
    }
}

static void check_cluster(uint64_t seed) {
    canopy_rng r = canopy_rng_make(seed, 23);
    cluster c;
    make_cluster(&r, &c, 0);
    pack(&c, 1);
    float shifted[MP_PACK_MAX];
    memcpy(shifted, c.q, sizeof shifted);
    pack(&c, 0);
    for (int e = 0; e < MP_PACK_MAX; e++)
        CHECK_MSG(fabsf(shifted[e] - c.q[e]) <= 1e-5f * (fabsf(c.q[e]) + 1.0f),
                  "seed %llu: packed element %d shifted %.9g vs direct %.9g",
                  (unsigned long long)seed, e, (double)shifted[e], (double)c.q[e]);
    /* The third and fourth moments are packed traceless: M_iik = 0, M_iikl = 0. */
    static const int tr3[3][3] = {{0, 5, 7}, {3, 1, 8}, {4, 6, 2}};
    static const int tr4[6][3] = {{0, 9, 10}, {9, 1, 11}, {10, 11, 2},
                                  {3, 5, 14}, {4, 13, 7}, {12, 6, 8}};
    for (int k = 0; k < 9; k++) {
        const float *q = k < 3 ? c.q + 7 : c.q + 20;
        const int *t = k < 3 ? tr3[k] : tr4[k - 3];
        double sum = (double)q[t[0]] + q[t[1]] + q[t[2]];
        double scale = fabs(q[t[0]]) + fabs(q[t[1]]) + fabs(q[t[2]]) + 1e-3 * c.mass;
        CHECK_MSG(fabs(sum) <= 1e-6 * scale, "seed %llu: trace %d of the packed moments is %.3g",
                  (unsigned long long)seed, k, sum);
    }
    /* The cluster fills a cube of side 2 about the origin; sinks at 5, 10 and 20. */
    static const double eps[] = {0.0, 0.5, 2.0, 4.0, 0.1};
    for (int ei = 0; ei < 5; ei++) {
        double prev[5] = {0};
        for (int di = 0; di < 3; di++) {
            double dist = 5.0 * (1 << di), med[5];
            errors(&r, &c, dist, eps[ei] * eps[ei], med);
            /* Nearest (5 half-widths: theta ~ 0.35-0.7) orders 2 and 3 gain little on
             * the order below; ask for the gain over two orders there. Farther, order
             * 2's gain over the monopole depends on the cluster's shape (one whose
             * quadrupole is small next to its octupole gains least: 0.92 of the
             * monopole's error at worst over 3000 seeds, where "< 0.7" failed 8 times):
             * there order 2 must not be worse and order 3 must gain over both. */
            int ok = di ? med[2] < med[0] && med[3] < 0.7 * med[0] && med[3] < 0.9 * med[2]
                        : med[3] < 0.7 * med[0] && med[2] < 1.2 * med[0];
            CHECK_MSG(ok && med[4] < 0.7 * med[3],
                      "seed %llu eps %g dist %.1f: error must fall with order: %.3g %.3g %.3g "
                      "%.3g",
                      (unsigned long long)seed, eps[ei], dist, med[0], med[2], med[3], med[4]);
            /* The trace term: where the softening is not small against the distance
             * (the term is ~ eps^2 / r^2 of the quadrupole's), the traceless part alone
             * is far worse. */
            if (eps[ei] >= dist / 4.0)
                CHECK_MSG(med[2] < 0.5 * med[1],
                          "seed %llu eps %g dist %.1f: order 2 error %.3g, without T eps^2 %.3g",
                          (unsigned long long)seed, eps[ei], dist, med[2], med[1]);
            /* Twice as far: the error falls as 2^-(p+1) (the monopole's as 2^-2: the
             * dipole about the com vanishes); half of that asked, above float rounding. */
            static const int p1[5] = {2, 3, 3, 4, 5};
            for (int o = 0; o < 5 && di > 0 && eps[ei] == 0.0; o++)
                CHECK_MSG(o == 1 || med[o] < prev[o] * 2.0 / (1 << p1[o]) + 3e-7,
                          "seed %llu order %d: error %.3g at %.0f, %.3g at half that",
                          (unsigned long long)seed, o, med[o], dist, prev[o]);
            memcpy(prev, med, sizeof prev);
        }
    }
}

/* Coincident bodies: all higher moments are zero, so every order gives order 0's bits,
 * and that is the direct sum to float rounding, with and without softening. */
static void check_point_mass(uint64_t seed) {
    canopy_rng r = canopy_rng_make(seed, 29);
    cluster c;
    make_cluster(&r, &c, 1);
    pack(&c, 0);
    for (int e = 0; e < MP_PACK_MAX; e++)
        CHECK_MSG(c.q[e] == 0.0f, "point mass: packed element %d is %g", e, (double)c.q[e]);
    double s[3] = {3.0, -2.0, 1.5};
    for (int ei = 0; ei < 2; ei++) {
        double eps2 = ei ? 0.3 : 0.0, ref[4], a0[4], a[4];
        direct(&c, s, eps2, ref);
        expand(&c, 0, 1, c.q, s, eps2, a0);
        CHECK_MSG(rel_err(a0, ref) < 1e-6, "point mass: error %.3g", rel_err(a0, ref));
        for (int o = 2; o <= 4; o++) {
            expand(&c, o, 1, c.q, s, eps2, a);
            CHECK_MSG(!memcmp(a, a0, sizeof a), "point mass: order %d differs from order 0", o);
        }
    }
}

int main(void) {
    uint64_t seed = check_seed();
    for (uint64_t k = 0; k < 4; k++) check_cluster(seed + k);
    check_point_mass(seed);
    return check_finish();
}
