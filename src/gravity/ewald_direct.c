/* SPDX-License-Identifier: MIT */
/* canopy_gravity_ewald_direct_sample: the float64 Ewald sum that periodic force errors
 * are measured against. In the unit box (positions / box), with splitting alpha = 4:
 * the real-space sum over the images within distance 1 of each pair (erfc(4) = 1.5e-8),
 * the reciprocal sum over |h|^2 <= 36 (exp(-pi^2 36 / 16) = 2e-10) through structure
 * factors (O(n) per wave vector), and the background term pi / alpha^2 per unit mass.
 * It shares nothing with the correction table (gravity/ewald.c: alpha = 2, sums per
 * point), so the two check each other. */
#include "canopy.h"
#include "core/cpu_internal.h"

#include <math.h>
#include <stdlib.h>

enum { EWD_H2_MAX = 36, EWD_H_MAX = 6 };
#define EWD_ALPHA 4.0
#define EWD_PI 3.14159265358979323846

static double wrap_unit(double r) {
    return r - nearbyint(r);
}

/* Half of the wave vectors (the first non-zero component positive): h and -h add the
 * same terms. h[3 * k + j] and weight w[k] = exp(-pi^2 |h|^2 / alpha^2) / |h|^2. */
static int wave_vectors(int *h, double *w) {
    int nh = 0;
    for (int x = -EWD_H_MAX; x <= EWD_H_MAX; x++)
        for (int y = -EWD_H_MAX; y <= EWD_H_MAX; y++)
            for (int z = -EWD_H_MAX; z <= EWD_H_MAX; z++) {
                int h2 = x * x + y * y + z * z;
                int first = x ? x : y ? y : z;
                if (h2 == 0 || h2 > EWD_H2_MAX || first < 0) continue;
                h[3 * nh] = x, h[3 * nh + 1] = y, h[3 * nh + 2] = z;
                w[nh++] = exp(-EWD_PI * EWD_PI * h2 / (EWD_ALPHA * EWD_ALPHA)) / h2;
            }
    return nh;
}

canopy_status canopy_gravity_ewald_direct_sample(canopy_points bodies, const float *mass, float eps,
                                                 float box, const int64_t *sample, int64_t ns,
                                                 double *acc, double *pot) {
    canopy_status s = canopy_points_check(bodies, "gravity bodies");
    if (s) return s;
    if (bodies.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: bodies must have 3 coordinates (got %d)",
                           (int)bodies.d);
    if (!(box > 0.0f) || !isfinite(box))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: box must be finite and > 0 (got %g)",
                           (double)box);
    if (!(eps >= 0.0f) || !isfinite(eps))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: softening must be finite and >= 0");
    for (int64_t k = 0; k < ns; k++)
        if (sample[k] < 0 || sample[k] >= bodies.n)
            return canopy_fail(CANOPY_ERR_INVALID, "gravity: sample index %lld out of range",
                               (long long)sample[k]);
    int64_t n = bodies.n;
    int nh_cap = (2 * EWD_H_MAX + 1) * (2 * EWD_H_MAX + 1) * (2 * EWD_H_MAX + 1);
    int *h = malloc((size_t)nh_cap * 3 * sizeof *h);
    double *w = malloc((size_t)nh_cap * sizeof *w), *u = malloc((size_t)(3 * n + 1) * sizeof *u);
    double *m = malloc((size_t)(n + 1) * sizeof *m), *cs = NULL;
    if (!h || !w || !u || !m) {
        s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the Ewald sum");
        goto done;
    }
    const double L = box, al = EWD_ALPHA;
    double total = 0.0;
    for (int64_t j = 0; j < n; j++) {
        const float *p = canopy_point(bodies, j);
        for (int k = 0; k < 3; k++) u[3 * j + k] = (double)p[k] / L;
        m[j] = mass ? mass[j] : 1.0 / (double)n;
        if (!(m[j] >= 0.0) || !isfinite(m[j])) {
            s = canopy_fail(CANOPY_ERR_INVALID, "gravity: mass of body %lld is %g", (long long)j,
                            m[j]);
            goto done;
        }
        total += m[j];
    }
    int nh = wave_vectors(h, w);
    /* structure factors C_h = sum m cos(2 pi h.u), S_h = sum m sin(2 pi h.u) */
    if (!(cs = calloc((size_t)nh * 2, sizeof *cs))) {
        s = canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the Ewald sum");
        goto done;
    }
#pragma omp parallel for schedule(dynamic, 4) num_threads(canopy_threads())
    for (int k = 0; k < nh; k++) {
        double c = 0.0, sn = 0.0;
        for (int64_t j = 0; j < n; j++) {
            double ph =
                2.0 * EWD_PI *
                (h[3 * k] * u[3 * j] + h[3 * k + 1] * u[3 * j + 1] + h[3 * k + 2] * u[3 * j + 2]);
            c += m[j] * cos(ph), sn += m[j] * sin(ph);
        }
        cs[2 * k] = c, cs[2 * k + 1] = sn;
    }
    /* a body's own images: real space within distance 1, and 2 alpha / sqrt(pi) */
    double self = 2.0 * al / sqrt(EWD_PI);
    for (int x = -1; x <= 1; x++)
        for (int y = -1; y <= 1; y++)
            for (int z = -1; z <= 1; z++) {
                double d = sqrt((double)(x * x + y * y + z * z));
                if (d > 0.0 && d < 1.0 + 1e-9) self -= erfc(al * d) / d;
            }
    double e2 = ((double)eps / L) * ((double)eps / L);
#pragma omp parallel for schedule(dynamic, 1) num_threads(canopy_threads())
    for (int64_t q = 0; q < ns; q++) {
        int64_t i = sample[q];
        const double *ui = u + 3 * i;
        double a[3] = {0, 0, 0}, phi = m[i] * self + total * EWD_PI / (al * al);
        for (int64_t j = 0; j < n; j++) {
            if (j == i) continue;
            double r[3];
            for (int k = 0; k < 3; k++) r[k] = wrap_unit(ui[k] - u[3 * j + k]);
            for (int x = -1; x <= 1; x++)
                for (int y = -1; y <= 1; y++)
                    for (int z = -1; z <= 1; z++) {
                        double dx = r[0] - x, dy = r[1] - y, dz = r[2] - z;
                        double d2 = dx * dx + dy * dy + dz * dz;
                        if (d2 > 1.0) continue;
                        double d = sqrt(d2), ec = erfc(al * d);
                        double f = m[j] * (ec + 2.0 * al * d / sqrt(EWD_PI) * exp(-al * al * d2)) /
                                   (d2 * d);
                        a[0] -= f * dx, a[1] -= f * dy, a[2] -= f * dz;
                        phi -= m[j] * ec / d;
                    }
            if (e2 > 0.0) { /* the nearest image softened, as the tree walk has it */
                double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], d = sqrt(d2);
                double ds2 = d2 + e2, ds = sqrt(ds2);
                double f = m[j] * (1.0 / (ds2 * ds) - 1.0 / (d2 * d));
                for (int k = 0; k < 3; k++) a[k] -= f * r[k];
                phi -= m[j] * (1.0 / ds - 1.0 / d);
            }
        }
        for (int k = 0; k < nh; k++) {
            const int *hk = h + 3 * k;
            double ph = 2.0 * EWD_PI * (hk[0] * ui[0] + hk[1] * ui[1] + hk[2] * ui[2]);
            double c = cos(ph), sn = sin(ph);
            /* sum_j m_j sin(2 pi h.(u_i - u_j)), and the cosine sum (j = i included) */
            double sdiff = sn * cs[2 * k] - c * cs[2 * k + 1];
            double cdiff = c * cs[2 * k] + sn * cs[2 * k + 1];
            for (int j = 0; j < 3; j++) a[j] -= 2.0 * 2.0 * w[k] * hk[j] * sdiff;
            phi -= 2.0 * w[k] / EWD_PI * cdiff;
        }
        for (int k = 0; k < 3; k++) acc[3 * q + k] = a[k] / (L * L);
        if (pot) pot[q] = phi / L;
    }
done:
    free(h), free(w), free(u), free(m), free(cs);
    return s;
}
