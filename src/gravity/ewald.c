/* SPDX-License-Identifier: MIT */
/* The Ewald correction table (apps/ewald.h): direct real- and reciprocal-space sums in
 * float64 for a unit mass in the unit box, with the neutralising background. */
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

static float *cache[EWALD_GRID_MAX + 1];

static float *compute(int32_t n) {
    int64_t m = n + 1;
    float *T = malloc((size_t)(m * m * m) * 4 * sizeof *T);
    if (!T) return NULL;
#pragma omp parallel for schedule(dynamic, 1) num_threads(canopy_threads())
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < m; j++)
            for (int64_t k = 0; k < m; k++) {
                double r[3] = {0.5 * (double)i / n, 0.5 * (double)j / n, 0.5 * (double)k / n}, a[3],
                       p;
                canopy_ewald_exact(r, a, &p);
                float *e = T + 4 * ((i * m + j) * m + k);
                for (int q = 0; q < 3; q++) e[q] = (float)a[q];
                e[3] = (float)(p + EWALD_HARMONIC * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]));
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
