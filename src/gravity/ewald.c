/* SPDX-License-Identifier: MIT */
/* The Ewald correction and its table (gravity/ewald.h): direct real- and reciprocal-space
 * sums in float64 for a unit mass in the unit box, with the neutralising background. */
#include "gravity/ewald.h"

#include "core/cpu_internal.h"

#include <stdlib.h>

void canopy_ewald_exact(const double r[3], double a[3], double *pot) {
    const double al = EWALD_ALPHA, pi = 3.14159265358979323846;
    double ax = 0.0, ay = 0.0, az = 0.0, p = pi / (al * al);
    for (int nx = -2; nx <= 2; nx++)
        for (int ny = -2; ny <= 2; ny++)
            for (int nz = -2; nz <= 2; nz++) {
                double dx = r[0] - nx, dy = r[1] - ny, dz = r[2] - nz;
                double d = sqrt(dx * dx + dy * dy + dz * dz);
                if (nx == 0 && ny == 0 && nz == 0) {
                    /* the nearest image minus its Newtonian part: erf(a d) / d, and
                     * its limit 2 a / sqrt(pi) at d = 0 */
                    if (d < 1e-12) {
                        p += 2.0 * al / sqrt(pi);
                        continue;
                    }
                    double g = erf(al * d) - 2.0 * al * d / sqrt(pi) * exp(-al * al * d * d);
                    double f = g / (d * d * d);
                    ax += f * dx, ay += f * dy, az += f * dz;
                    p += erf(al * d) / d;
                    continue;
                }
                double g = erfc(al * d) + 2.0 * al * d / sqrt(pi) * exp(-al * al * d * d);
                double f = g / (d * d * d);
                ax -= f * dx, ay -= f * dy, az -= f * dz;
                p -= erfc(al * d) / d;
            }
    for (int hx = -3; hx <= 3; hx++)
        for (int hy = -3; hy <= 3; hy++)
            for (int hz = -3; hz <= 3; hz++) {
                int h2 = hx * hx + hy * hy + hz * hz;
                if (h2 == 0 || h2 > 10) continue;
                double e = exp(-pi * pi * h2 / (al * al)) / h2;
                double ph = 2.0 * pi * (hx * r[0] + hy * r[1] + hz * r[2]);
                double s = 2.0 * e * sin(ph);
                ax -= s * hx, ay -= s * hy, az -= s * hz;
                p -= e / pi * cos(ph);
            }
    a[0] = ax, a[1] = ay, a[2] = az;
    *pot = p;
}

void canopy_ewald_derivs(const double r[3], double d[EWALD_NDER]) {
    double P2[5] = {1.0}; /* (2 a^2)^l, l = 0..4 */
    for (int l = 1; l < 5; l++) P2[l] = P2[l - 1] * 2.0 * EWALD_ALPHA * EWALD_ALPHA;
    const double al = EWALD_ALPHA, pi = 3.14159265358979323846, sp = sqrt(pi);
    for (int q = 0; q < EWALD_NDER; q++) d[q] = 0.0;
    d[0] = pi / (al * al);
    for (int nx = -2; nx <= 2; nx++)
        for (int ny = -2; ny <= 2; ny++)
            for (int nz = -2; nz <= 2; nz++) {
                double x[3] = {r[0] - nx, r[1] - ny, r[2] - nz}, H[5];
                double r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2], s = al * al * r2;
                if (nx == 0 && ny == 0 && nz == 0) {
                    /* erf(a r) / r = a E(a^2 r^2), E(s) = 2 / sqrt(pi) sum_k (-s)^k /
                     * (k! (2k + 1)): its series has no cancellation near r = 0, where
                     * 1 / r - erfc(a r) / r would */
                    for (int l = 0; l < 5; l++) {
                        double sum = 0.0, term = 1.0; /* (-1)^k s^(k-l) / (k-l)! */
                        for (int k = l; k < l + 60; k++) {
                            sum += (l % 2 ? -term : term) / (2 * k + 1);
                            term *= -s / (k - l + 1);
                        }
                        H[l] = al * P2[l] * 2.0 / sp * sum;
                    }
                } else {
                    /* -erfc(a r) / r: B_0 = erfc(a r) / r, B_l = ((2l - 1) B_(l-1) +
                     * (2 a^2)^l e^(-a^2 r^2) / (a sqrt(pi))) / r^2, H_l = -(-1)^l B_l */
                    double rr = sqrt(r2), B = erfc(al * rr) / rr, ex = exp(-s) / (al * sp);
                    H[0] = -B;
                    for (int l = 1; l < 5; l++) {
                        B = ((2 * l - 1) * B + P2[l] * ex) / r2;
                        H[l] = l % 2 ? B : -B;
                    }
                }
                EWALD_ADD_RADIAL(double, x, H, d);
            }
    /* half of the wave vectors (the first non-zero component positive), each twice: h
     * and -h add the same terms (cos is even, sin odd and so are the odd orders) */
    for (int hx = 0; hx <= 3; hx++)
        for (int hy = -3; hy <= 3; hy++)
            for (int hz = -3; hz <= 3; hz++) {
                int h2 = hx * hx + hy * hy + hz * hz, first = hx ? hx : hy ? hy : hz;
                if (h2 == 0 || h2 > 10 || first < 0) continue;
                /* -(1 / pi) e cos(2 pi h.r), e = exp(-pi^2 h^2 / a^2) / h^2, twice */
                double e = 2.0 * exp(-pi * pi * h2 / (al * al)) / h2, h[3] = {hx, hy, hz};
                double ph = 2.0 * pi * (hx * r[0] + hy * r[1] + hz * r[2]);
                double sn = sin(ph), cs = cos(ph);
                d[0] -= e / pi * cs;
                for (int a = 0; a < 3; a++) {
                    d[1 + a] += 2.0 * e * h[a] * sn;
                    for (int b = a; b < 3; b++) {
                        d[ewald_i2(a, b)] += 4.0 * pi * e * h[a] * h[b] * cs;
                        for (int c = b; c < 3; c++) {
                            d[ewald_i3(a, b, c)] -= 8.0 * pi * pi * e * h[a] * h[b] * h[c] * sn;
                            for (int q = c; q < 3; q++)
                                d[ewald_i4(a, b, c, q)] -=
                                    16.0 * pi * pi * pi * e * h[a] * h[b] * h[c] * h[q] * cs;
                        }
                    }
                }
            }
}

static float *cache[EWALD_GRID_MAX + 1];

/* The derivatives at the point whose coordinates are the source's permuted, source
 * axis a becoming axis p[a]: psi is symmetric under the cube's axis permutations. */
static void permute_derivs(const float *s, const int p[3], float *t) {
    t[0] = s[0];
    for (int a = 0; a < 3; a++) {
        t[1 + p[a]] = s[1 + a];
        for (int b = a; b < 3; b++) {
            t[ewald_i2(p[a], p[b])] = s[ewald_i2(a, b)];
            for (int c = b; c < 3; c++) {
                t[ewald_i3(p[a], p[b], p[c])] = s[ewald_i3(a, b, c)];
                for (int e = c; e < 3; e++)
                    t[ewald_i4(p[a], p[b], p[c], p[e])] = s[ewald_i4(a, b, c, e)];
            }
        }
    }
}

/* The sums run only for i >= j >= k (a sixth of the grid; a 2-body periodic run paid
 * 1.3 s of one core for grid 32 before); the rest are those entries' permutations. */
static float *compute(int32_t n) {
    int64_t m = n + 1;
    float *T = malloc((size_t)(m * m * m) * EWALD_NDER * sizeof *T);
    if (!T) return NULL;
#pragma omp parallel num_threads(canopy_threads())
    {
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = m - 1; i >= 0; i--)
            for (int64_t j = 0; j <= i; j++)
                for (int64_t k = 0; k <= j; k++) {
                    double r[3] = {0.5 * (double)i / n, 0.5 * (double)j / n, 0.5 * (double)k / n},
                           d[EWALD_NDER];
                    canopy_ewald_derivs(r, d);
                    float *e = T + EWALD_NDER * ((i * m + j) * m + k);
                    for (int q = 0; q < EWALD_NDER; q++) e[q] = (float)d[q];
                }
#pragma omp for schedule(static)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < m; j++)
                for (int64_t k = 0; k < m; k++) {
                    if (i >= j && j >= k) continue;
                    /* p: the axes of the sorted (descending) coordinates */
                    int64_t v[3] = {i, j, k};
                    int p[3] = {0, 1, 2};
                    for (int a = 0; a < 2; a++)
                        for (int b = 0; b < 2 - a; b++)
                            if (v[p[b]] < v[p[b + 1]]) {
                                int w = p[b];
                                p[b] = p[b + 1], p[b + 1] = w;
                            }
                    const float *s = T + EWALD_NDER * ((v[p[0]] * m + v[p[1]]) * m + v[p[2]]);
                    permute_derivs(s, p, T + EWALD_NDER * ((i * m + j) * m + k));
                }
    }
    return T;
}

canopy_status canopy_ewald_table(int32_t n, const float **out) {
    *out = NULL;
    if (n < EWALD_GRID_MIN || n > EWALD_GRID_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: Ewald grid must be in [%d, %d] (got %d)",
                           EWALD_GRID_MIN, EWALD_GRID_MAX, (int)n);
    float *T;
#pragma omp critical(canopy_ewald_table)
    {
        if (!cache[n]) cache[n] = compute(n);
        T = cache[n];
    }
    if (!T) return canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the Ewald table");
    *out = T;
    return CANOPY_OK;
}
