/* SPDX-License-Identifier: MIT */
/* Generators: determinism (seed, thread count, row ranges), argument checks, and
 * statistical checks against the distributions each generator claims to sample.
 * Every statistical bound is 5 standard errors, so a correct generator fails one
 * such check about once in 1.7 million runs; seeds are fresh each run. */
#include "check.h"
#include "gen/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

static void *xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static int same(const void *a, const void *b, size_t bytes) {
    return memcmp(a, b, bytes) == 0;
}

/* ----------------------------------------------------------------- uniform -- */

static void test_uniform_determinism(uint64_t seed) {
    const int64_t n = 10007, first = 4000;
    const int32_t d = 7;
    const size_t bytes = (size_t)(n * d) * sizeof(float);
    float *a = xcalloc((size_t)(n * d), sizeof(float));
    float *b = xcalloc((size_t)(n * d), sizeof(float));
    canopy_set_threads(1);
    CHECK_OK(canopy_gen_uniform(a, n, d, 0.0, 1.0, seed));
    canopy_set_threads(2);
    CHECK_OK(canopy_gen_uniform(b, n, d, 0.0, 1.0, seed));
    CHECK_MSG(same(a, b, bytes), "uniform: 1 and 2 threads differ");
    canopy_set_threads(3);
    CHECK_OK(canopy_gen_uniform(b, n, d, 0.0, 1.0, seed));
    CHECK_MSG(same(a, b, bytes), "uniform: 1 and 3 threads differ");
    canopy_set_threads(0);
    CHECK_OK(canopy_gen_uniform_rows(b, first, n - first, d, 0.0, 1.0, seed));
    CHECK_MSG(same(a + first * d, b, (size_t)((n - first) * d) * sizeof(float)),
              "uniform: rows from %lld differ from the tail of the whole", (long long)first);
    CHECK_OK(canopy_gen_uniform(b, n, d, 0.0, 1.0, seed + 1));
    CHECK_MSG(!same(a, b, bytes), "uniform: seeds %llu and %llu give the same points",
              (unsigned long long)seed, (unsigned long long)seed + 1);
    free(a);
    free(b);
}

static void test_uniform_stats(uint64_t seed, double lo, double hi) {
    const int64_t n = 200000;
    const int32_t d = 3;
    float *x = xcalloc((size_t)(n * d), sizeof(float));
    CHECK_OK(canopy_gen_uniform(x, n, d, lo, hi, seed));
    int64_t outside = 0;
    for (int64_t i = 0; i < n * d; i++) outside += !(x[i] >= lo && x[i] < hi);
    CHECK_MSG(outside == 0, "uniform [%g,%g): %lld values outside", lo, hi, (long long)outside);
    const double w = hi - lo, mu = (lo + hi) / 2, var = w * w / 12;
    const double se_mean = w / sqrt(12.0 * n), se_var = w * w / sqrt(180.0 * n);
    for (int32_t j = 0; j < d; j++) {
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < n; i++) s += x[i * d + j];
        double mean = s / n;
        for (int64_t i = 0; i < n; i++) s2 += (x[i * d + j] - mean) * (x[i * d + j] - mean);
        double v = s2 / (n - 1);
        CHECK_MSG(fabs(mean - mu) < 5 * se_mean, "uniform [%g,%g) column %d: mean %g, want %g", lo,
                  hi, j, mean, mu);
        CHECK_MSG(fabs(v - var) < 5 * se_var, "uniform [%g,%g) column %d: variance %g, want %g", lo,
                  hi, j, v, var);
    }
    free(x);
}

/* Boxes narrower than a float32 step: rounding alone would leave the box. */
static void test_uniform_float_edges(uint64_t seed) {
    enum { N = 1000 };
    float x[N];
    CHECK_OK(canopy_gen_uniform(x, N, 1, 1.0, 1.0 + 1e-7, seed));
    int bad = 0;
    for (int i = 0; i < N; i++) bad += x[i] != 1.0f;
    CHECK_MSG(bad == 0, "box [1, 1+1e-7): %d values are not 1.0f", bad);
    /* 0.7f is below 0.7, so the only float in [0.7, 0.7+1e-7) is the next one up. */
    const float only = nextafterf(0.7f, 1.0f);
    CHECK_OK(canopy_gen_uniform(x, N, 1, 0.7, 0.7 + 1e-7, seed));
    bad = 0;
    for (int i = 0; i < N; i++) bad += x[i] != only;
    CHECK_MSG(bad == 0, "box [0.7, 0.7+1e-7): %d values are not %.9g", bad, (double)only);
    CHECK_FAILS(canopy_gen_uniform(x, N, 1, 1.0 + 1e-10, 1.0 + 2e-10, seed), CANOPY_ERR_INVALID,
                "no float32");
}

/* ---------------------------------------------------------------- clusters -- */

typedef canopy_status (*mixture_rows_fn)(float *out, int32_t *labels, int64_t first, int64_t n,
                                         int32_t d, int32_t k, double spread, uint64_t seed);

/* What both mixtures promise (docs/generators.md): the same points and labels for 1 and
 * 2 threads and with or without labels, and rows from 1000 on equal to the tail of the
 * whole. Leaves the whole generation in x and label. */
static void check_mixture_determinism(const char *name, mixture_rows_fn gen, float *x,
                                      int32_t *label, int64_t n, int32_t d, int32_t k,
                                      double spread, uint64_t seed) {
    const size_t bytes = (size_t)(n * d) * sizeof(float);
    float *y = xcalloc((size_t)(n * d), sizeof(float));
    int32_t *label2 = xcalloc((size_t)n, sizeof(int32_t));
    canopy_set_threads(1);
    CHECK_OK(gen(x, label, 0, n, d, k, spread, seed));
    canopy_set_threads(2);
    CHECK_OK(gen(y, label2, 0, n, d, k, spread, seed));
    canopy_set_threads(0);
    CHECK_MSG(same(x, y, bytes) && same(label, label2, (size_t)n * sizeof(int32_t)),
              "%s: 1 and 2 threads differ", name);
    CHECK_OK(gen(y, NULL, 0, n, d, k, spread, seed));
    CHECK_MSG(same(x, y, bytes), "%s: points depend on whether labels are asked for", name);
    CHECK_OK(gen(y, label2, 1000, n - 1000, d, k, spread, seed));
    CHECK_MSG(same(x + 1000 * d, y, (size_t)((n - 1000) * d) * sizeof(float)) &&
                  same(label + 1000, label2, (size_t)(n - 1000) * sizeof(int32_t)),
              "%s: rows from 1000 differ from the tail of the whole", name);
    free(y);
    free(label2);
}

static void test_clusters(uint64_t seed) {
    const int64_t n = 200000;
    const int32_t d = 2, k = 64;
    const double spread = 0.01;
    const size_t bytes = (size_t)(n * d) * sizeof(float);
    float *x = xcalloc((size_t)(n * d), sizeof(float));
    float *y = xcalloc((size_t)(n * d), sizeof(float));
    int32_t *label = xcalloc((size_t)n, sizeof(int32_t));
    int32_t *label2 = xcalloc((size_t)n, sizeof(int32_t));

    check_mixture_determinism("clusters", canopy_gen_clusters_rows, x, label, n, d, k, spread,
                              seed);
    CHECK_OK(canopy_gen_clusters(y, NULL, n, d, k, spread, seed ^ 1));
    CHECK_MSG(!same(x, y, bytes), "clusters: different seeds give the same points");

    /* Centres as docs/generators.md defines them: stream UINT64_MAX - c of the seed. */
    double *centre = xcalloc((size_t)(k * d), sizeof(double));
    for (int32_t c = 0; c < k; c++) {
        canopy_rng r = canopy_rng_make(seed, UINT64_MAX - (uint64_t)c);
        for (int32_t j = 0; j < d; j++) centre[c * d + j] = canopy_rng_uniform(&r);
    }
    int64_t *size = xcalloc((size_t)k, sizeof(int64_t));
    double *sum = xcalloc((size_t)(k * d), sizeof(double));
    double ss = 0;
    int bad_label = 0;
    for (int64_t i = 0; i < n; i++) {
        int32_t c = label[i];
        if (c < 0 || c >= k) {
            bad_label++;
            continue;
        }
        size[c]++;
        for (int32_t j = 0; j < d; j++) {
            double e = x[i * d + j] - centre[c * d + j];
            sum[c * d + j] += e;
            ss += e * e;
        }
    }
    CHECK_MSG(bad_label == 0, "clusters: %d labels outside [0, %d)", bad_label, k);
    const double p = 1.0 / k, se_size = sqrt(n * p * (1 - p));
    for (int32_t c = 0; c < k; c++) {
        CHECK_MSG(fabs(size[c] - n * p) < 5 * se_size, "cluster %d has %lld points, want %g", c,
                  (long long)size[c], n * p);
        for (int32_t j = 0; j < d && size[c] > 0; j++) {
            double off = sum[c * d + j] / size[c];
            CHECK_MSG(fabs(off) < 5 * spread / sqrt((double)size[c]),
                      "cluster %d column %d: mean is %g from its centre", c, j, off);
        }
    }
    /* Squared distance to the centre over spread^2 is chi-square with n d degrees. */
    double ratio = ss / (n * d * spread * spread);
    CHECK_MSG(fabs(ratio - 1) < 5 * sqrt(2.0 / (n * d)),
              "clusters: mean squared distance is %g d spread^2", ratio);

    /* spread 0 puts every point on its centre, rounded to float. */
    CHECK_OK(canopy_gen_clusters(y, label2, 1000, d, k, 0.0, seed));
    int off_centre = 0;
    for (int64_t i = 0; i < 1000; i++)
        for (int32_t j = 0; j < d; j++)
            off_centre += y[i * d + j] != (float)centre[label2[i] * d + j];
    CHECK_MSG(off_centre == 0, "clusters: spread 0 leaves %d coordinates off centre", off_centre);

    free(x);
    free(y);
    free(label);
    free(label2);
    free(centre);
    free(size);
    free(sum);
}

/* ----------------------------------------------------------------- plummer -- */

static double norm3(const float *x) {
    return sqrt((double)x[0] * x[0] + (double)x[1] * x[1] + (double)x[2] * x[2]);
}

static void test_plummer_determinism(uint64_t seed) {
    const int64_t n = 9001;
    const size_t bytes = (size_t)(n * 3) * sizeof(float);
    float *p1 = xcalloc((size_t)(n * 3), sizeof(float)), *v1 = xcalloc((size_t)(n * 3), 4);
    float *p2 = xcalloc((size_t)(n * 3), sizeof(float)), *v2 = xcalloc((size_t)(n * 3), 4);
    canopy_set_threads(1);
    CHECK_OK(canopy_gen_plummer(p1, v1, n, seed));
    canopy_set_threads(2);
    CHECK_OK(canopy_gen_plummer(p2, v2, n, seed));
    canopy_set_threads(0);
    CHECK_MSG(same(p1, p2, bytes) && same(v1, v2, bytes), "plummer: 1 and 2 threads differ");
    CHECK_OK(canopy_gen_plummer(p2, NULL, n, seed));
    CHECK_MSG(same(p1, p2, bytes), "plummer: positions depend on whether velocities are asked");
    CHECK_OK(canopy_gen_plummer(p2, v2, n, seed + 1));
    CHECK_MSG(!same(p1, p2, bytes) && !same(v1, v2, bytes),
              "plummer: different seeds give the same bodies");
    float one[3], onev[3];
    CHECK_OK(canopy_gen_plummer(one, onev, 1, seed));
    CHECK_MSG(one[0] == 0 && one[1] == 0 && one[2] == 0 && onev[0] == 0 && onev[1] == 0 &&
                  onev[2] == 0,
              "plummer: a single body is not at rest at the origin");
    free(p1);
    free(v1);
    free(p2);
    free(v2);
}

/* Mean of the speed fraction q = |v| / v_esc under g(q) = q^2 (1 - q^2)^3.5, and its
 * standard deviation, by the midpoint rule. */
static void q_moments(double *mean, double *sd) {
    const int steps = 100000;
    double z = 0, m1 = 0, m2 = 0;
    for (int i = 0; i < steps; i++) {
        double q = (i + 0.5) / steps, g = q * q * pow(1 - q * q, 3.5);
        z += g;
        m1 += q * g;
        m2 += q * q * g;
    }
    *mean = m1 / z;
    *sd = sqrt(m2 / z - *mean * *mean);
}

static void test_plummer_physics(uint64_t seed) {
    const int64_t n = 200000;
    const double a = 3 * PI / 16; /* the Plummer scale radius in Hénon units */
    float *pos = xcalloc((size_t)(n * 3), sizeof(float));
    float *vel = xcalloc((size_t)(n * 3), sizeof(float));
    CHECK_OK(canopy_gen_plummer(pos, vel, n, seed));

    double com[6] = {0};
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) {
            com[j] += pos[i * 3 + j];
            com[3 + j] += vel[i * 3 + j];
        }
    for (int j = 0; j < 6; j++)
        CHECK_MSG(fabs(com[j] / n) < 1e-5, "plummer: centre of mass component %d is %g", j,
                  com[j] / n);

    /* Cumulative mass profile in scale units against r^3 / (1 + r^2)^(3/2), which the
     * 99.9 % cut rescales by 1 / 0.999 inside the cut. */
    static const double radii[] = {0.1, 0.3, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0};
    for (size_t t = 0; t < sizeof radii / sizeof radii[0]; t++) {
        double R = radii[t];
        int64_t inside = 0;
        for (int64_t i = 0; i < n; i++) inside += norm3(pos + i * 3) / a < R;
        double p = pow(R, 3) / pow(1 + R * R, 1.5) / 0.999, got = (double)inside / n;
        CHECK_MSG(fabs(got - p) < 5 * sqrt(p * (1 - p) / n),
                  "plummer: fraction inside r = %g is %g, want %g", R, got, p);
    }
    /* Nothing beyond the cut radius, nothing faster than escape (the centre-of-mass
     * shift moves bodies by about 1e-3, hence the small allowance). */
    const double cut = cbrt(0.999), r_cut = cut / sqrt(1 - cut * cut) * a;
    int64_t beyond = 0, unbound = 0;
    double q_sum = 0;
    for (int64_t i = 0; i < n; i++) {
        double r = norm3(pos + i * 3), v = norm3(vel + i * 3);
        double v_esc = sqrt(2 / sqrt(r * r + a * a));
        beyond += r > r_cut + 0.01;
        unbound += v > v_esc + 0.005;
        q_sum += v / v_esc;
    }
    CHECK_MSG(beyond == 0, "plummer: %lld bodies beyond the cut radius %g", (long long)beyond,
              r_cut);
    CHECK_MSG(unbound == 0, "plummer: %lld bodies faster than escape", (long long)unbound);
    double q_mean, q_sd;
    q_moments(&q_mean, &q_sd);
    CHECK_MSG(fabs(q_sum / n - q_mean) < 5 * q_sd / sqrt((double)n),
              "plummer: mean |v|/v_esc is %g, want %g", q_sum / n, q_mean);

    /* Virial ratio 2K/|W|: K over all bodies; W from the mean inverse pair distance
     * of the first m bodies (an iid sample), scaled to n bodies of mass 1/n. */
    double kin = 0;
    for (int64_t i = 0; i < n; i++) kin += norm3(vel + i * 3) * norm3(vel + i * 3);
    kin *= 0.5 / n;
    const int64_t m = 20000;
    double inv_sum = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : inv_sum)
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = i + 1; j < m; j++) {
            double dx = (double)pos[i * 3] - pos[j * 3],
                   dy = (double)pos[i * 3 + 1] - pos[j * 3 + 1];
            double dz = (double)pos[i * 3 + 2] - pos[j * 3 + 2];
            inv_sum += 1 / sqrt(dx * dx + dy * dy + dz * dz);
        }
    double mean_inv = inv_sum / ((double)m * (m - 1) / 2);
    double pot = -0.5 * (double)(n - 1) / n * mean_inv;
    double virial = 2 * kin / fabs(pot);
    CHECK_MSG(fabs(virial - 1) < 0.05, "plummer: virial ratio 2K/|W| = %g (K %g, W %g)", virial,
              kin, pot);
    CHECK_MSG(fabs(kin + pot + 0.25) < 0.0125, "plummer: energy %g, want -1/4", kin + pot);
    free(pos);
    free(vel);
}

/* ---------------------------------------------------------------- errors -- */

static void test_errors(void) {
    float x[16];
    int32_t l[4];
    CHECK_FAILS(canopy_gen_uniform(x, -1, 3, 0, 1, 1), CANOPY_ERR_INVALID, "row range");
    CHECK_FAILS(canopy_gen_uniform(x, 4, 0, 0, 1, 1), CANOPY_ERR_INVALID, "d = 0");
    CHECK_FAILS(canopy_gen_uniform(x, 4, 3, 1, 1, 1), CANOPY_ERR_INVALID, "lo >= hi");
    CHECK_FAILS(canopy_gen_uniform(x, 4, 3, 2, 1, 1), CANOPY_ERR_INVALID, "lo >= hi");
    CHECK_FAILS(canopy_gen_uniform(x, 4, 3, NAN, 1, 1), CANOPY_ERR_INVALID, "finite");
    CHECK_FAILS(canopy_gen_uniform(x, 4, 3, 0, INFINITY, 1), CANOPY_ERR_INVALID, "finite");
    CHECK_FAILS(canopy_gen_uniform(x, 4, 3, 0, 1e39, 1), CANOPY_ERR_INVALID, "float32 range");
    CHECK_FAILS(canopy_gen_uniform(NULL, 4, 3, 0, 1, 1), CANOPY_ERR_INVALID, "NULL");
    CHECK_OK(canopy_gen_uniform(NULL, 0, 3, 0, 1, 1));
    CHECK_FAILS(canopy_gen_uniform_rows(x, INT64_MAX, 2, 3, 0, 1, 1), CANOPY_ERR_INVALID,
                "row range");

    CHECK_FAILS(canopy_gen_clusters(x, l, -1, 2, 3, 0.1, 1), CANOPY_ERR_INVALID, "row range");
    CHECK_FAILS(canopy_gen_clusters(x, l, 4, 0, 3, 0.1, 1), CANOPY_ERR_INVALID, "d = 0");
    CHECK_FAILS(canopy_gen_clusters(x, l, 4, 2, 0, 0.1, 1), CANOPY_ERR_INVALID, "k = 0");
    CHECK_FAILS(canopy_gen_clusters(x, l, 4, 2, -5, 0.1, 1), CANOPY_ERR_INVALID, "k = -5");
    CHECK_FAILS(canopy_gen_clusters(x, l, 4, 2, 3, -0.1, 1), CANOPY_ERR_INVALID, "spread");
    CHECK_FAILS(canopy_gen_clusters(x, l, 4, 2, 3, NAN, 1), CANOPY_ERR_INVALID, "spread");
    CHECK_FAILS(canopy_gen_clusters(x, l, 4, 2, 3, 1e37, 1), CANOPY_ERR_INVALID, "spread");
    CHECK_FAILS(canopy_gen_clusters(NULL, l, 4, 2, 3, 0.1, 1), CANOPY_ERR_INVALID, "NULL");
    CHECK_OK(canopy_gen_clusters(NULL, NULL, 0, 2, 3, 0.1, 1));

    CHECK_FAILS(canopy_gen_plummer(x, NULL, -1, 1), CANOPY_ERR_INVALID, "n = -1");
    CHECK_FAILS(canopy_gen_plummer(NULL, NULL, 4, 1), CANOPY_ERR_INVALID, "NULL");
    CHECK_OK(canopy_gen_plummer(NULL, NULL, 0, 1));
}

/* --------------------------------------------------------------- workloads -- */

static void test_workloads(void) {
    static const char *names[] = {"rand7", "clust2", "city2", "plummer1m", "rand1m3"};
    int count = 0;
    for (const canopy_workload *w = canopy_workloads(); w->name; w++) count++;
    CHECK_MSG(count == 5, "%d workloads, want 5", count);
    for (int i = 0; i < 5; i++) {
        const canopy_workload *w = canopy_workload_find(names[i]);
        CHECK_MSG(w && !strcmp(w->name, names[i]), "workload %s not found", names[i]);
    }
    CHECK(canopy_workload_find("rand8") == NULL);
    CHECK(canopy_workload_find(NULL) == NULL);
    const canopy_workload *r7 = canopy_workload_find("rand7");
    const canopy_workload *c2 = canopy_workload_find("clust2");
    const canopy_workload *p1 = canopy_workload_find("plummer1m");
    const canopy_workload *r3 = canopy_workload_find("rand1m3");
    if (!r7 || !c2 || !p1 || !r3) return;
    CHECK(r7->kind == CANOPY_GEN_UNIFORM && r7->n == 200000 && r7->n_query == 200000 && r7->d == 7);
    CHECK(c2->kind == CANOPY_GEN_CLUSTERS && c2->n == 200000 && c2->n_query == 200000 &&
          c2->d == 2 && c2->clusters == 64 && c2->spread > 0);
    const canopy_workload *ct = canopy_workload_find("city2");
    CHECK(ct && ct->kind == CANOPY_GEN_CITIES && ct->n == 200000 && ct->n_query == 200000 &&
          ct->d == 2 && ct->clusters == 256 && ct->spread > 0);
    CHECK(p1->kind == CANOPY_GEN_PLUMMER && p1->n == 1000000 && p1->n_query == 0 && p1->d == 3);
    CHECK(r3->kind == CANOPY_GEN_UNIFORM && r3->n == 1000000 && r3->n_query == 0 && r3->d == 3);
}

/* ------------------------------------------------------------------ cities -- */

/* cities as docs/generators.md defines it: determinism (threads, row ranges, labels),
 * the background share, Zipf sizes, and every cluster's spread within [S/100, S]. */
static void test_cities(uint64_t seed) {
    const int64_t n = 100000;
    const int32_t d = 2, k = 16;
    const double spread = 0.02;
    const size_t bytes = (size_t)(n * d) * sizeof(float);
    float *x = xcalloc((size_t)(n * d), sizeof(float));
    float *y = xcalloc((size_t)(n * d), sizeof(float));
    int32_t *label = xcalloc((size_t)n, sizeof(int32_t));
    check_mixture_determinism("cities", canopy_gen_cities_rows, x, label, n, d, k, spread, seed);
    CHECK_OK(canopy_gen_cities(y, NULL, n, d, k, spread, seed));
    CHECK_MSG(same(x, y, bytes), "cities: canopy_gen_cities differs from its rows form");
    CHECK_OK(canopy_gen_clusters(y, NULL, n, d, k, spread, seed));
    CHECK_MSG(!same(x, y, bytes), "cities: the same points as clusters");
    CHECK_FAILS(canopy_gen_cities(x, NULL, 4, 2, 0, 0.1, 1), CANOPY_ERR_INVALID, "k = 0");

    int64_t size[16] = {0}, background = 0, outside = 0;
    double ss[16] = {0};
    double centre[16][2], total = 0;
    for (int32_t c = 0; c < k; c++) {
        canopy_rng r = canopy_rng_make(seed, UINT64_MAX - (uint64_t)c);
        for (int32_t j = 0; j < d; j++) centre[c][j] = canopy_rng_uniform(&r);
        total += 1.0 / (c + 1);
    }
    for (int64_t i = 0; i < n; i++) {
        int32_t c = label[i];
        if (c == -1) {
            background++;
            for (int32_t j = 0; j < d; j++) outside += x[i * d + j] < 0 || x[i * d + j] >= 1;
            continue;
        }
        CHECK_MSG(c >= 0 && c < k, "cities: label %d outside [-1, %d)", c, k);
        if (c < 0 || c >= k) break;
        size[c]++;
        for (int32_t j = 0; j < d; j++) {
            double e = x[i * d + j] - centre[c][j];
            ss[c] += e * e;
        }
    }
    double se = sqrt(n * 0.125 * 0.875);
    CHECK_MSG(fabs(background - n * 0.125) < 5 * se && outside == 0,
              "cities: %lld background points (want %g), %lld outside [0,1)", (long long)background,
              n * 0.125, (long long)outside);
    for (int32_t c = 0; c < k; c++) {
        double p = 0.875 / total / (c + 1), want = n * p;
        CHECK_MSG(fabs(size[c] - want) < 5 * sqrt(n * p * (1 - p)),
                  "cities: cluster %d has %lld points, want %g (Zipf)", c, (long long)size[c],
                  want);
        double sd = size[c] > 1 ? sqrt(ss[c] / (size[c] * d)) : spread;
        CHECK_MSG(sd > 0.8 * spread / 100 && sd < 1.2 * spread,
                  "cities: cluster %d has spread %g outside [%g, %g]", c, sd, spread / 100, spread);
    }
    free(x);
    free(y);
    free(label);
}

int main(void) {
    uint64_t seed = check_seed();
    test_errors();
    test_workloads();
    test_uniform_determinism(seed);
    test_uniform_stats(seed, 0.0, 1.0);
    test_uniform_stats(seed + 7, -2.5, 4.0);
    test_uniform_float_edges(seed);
    test_clusters(seed);
    test_cities(seed);
    test_plummer_determinism(seed);
    test_plummer_physics(seed);
    return check_finish();
}
