/* SPDX-License-Identifier: MIT */
/* Plummer sphere by the recipe of Aarseth, Hénon & Wielen (1974, A&A 37, 183).
 *
 * Body i uses stream i of the seed: a mass fraction X uniform in [0, 0.999) gives the
 * radius r = (X^(-2/3) - 1)^(-1/2) in Plummer scale units (a = G = M = 1); the cut at
 * 99.9 % of the mass drops the rare bodies beyond r ≈ 38.7 that would otherwise
 * stretch any bounding box. The speed is q times the local escape speed
 * sqrt(2) (1 + r^2)^(-1/4), with q drawn by von Neumann rejection from
 * g(q) = q^2 (1 - q^2)^(7/2) (maximum ≈ 0.092 < 0.1). Both directions are isotropic.
 * Positions and velocities are then scaled to standard N-body (Hénon) units,
 * E = -1/4, and shifted to the centre-of-mass frame (equal masses 1/n). */
#include "canopy.h"

#include <math.h>

#define PI 3.14159265358979323846
#define MASS_CUT 0.999
/* Centre-of-mass partial sums are taken over fixed blocks and added in block order,
 * so the shift, like everything else, does not depend on the thread count. */
#define COM_BLOCK 4096

static void unit_vector(canopy_rng *r, double u[3]) {
    double z = 2.0 * canopy_rng_uniform(r) - 1.0;
    double phi = 2.0 * PI * canopy_rng_uniform(r);
    double s = sqrt(1.0 - z * z);
    u[0] = s * cos(phi);
    u[1] = s * sin(phi);
    u[2] = z;
}

/* Subtracts the mean of each of the three columns of x (n rows). */
static canopy_status shift_to_mean(float *x, int64_t n) {
    int64_t blocks = (n + COM_BLOCK - 1) / COM_BLOCK;
    double *part;
    canopy_status s = canopy_alloc((void **)&part, (size_t)blocks, 3 * sizeof *part);
    if (s != CANOPY_OK) return s;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t b = 0; b < blocks; b++) {
        double sum[3] = {0.0, 0.0, 0.0};
        int64_t end = (b + 1) * COM_BLOCK < n ? (b + 1) * COM_BLOCK : n;
        for (int64_t i = b * COM_BLOCK; i < end; i++)
            for (int j = 0; j < 3; j++) sum[j] += x[i * 3 + j];
        for (int j = 0; j < 3; j++) part[b * 3 + j] = sum[j];
    }
    double mean[3] = {0.0, 0.0, 0.0};
    for (int64_t b = 0; b < blocks; b++)
        for (int j = 0; j < 3; j++) mean[j] += part[b * 3 + j];
    for (int j = 0; j < 3; j++) mean[j] /= (double)n;
    canopy_free(part);
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++)
        for (int j = 0; j < 3; j++) x[i * 3 + j] = (float)(x[i * 3 + j] - mean[j]);
    return CANOPY_OK;
}

canopy_status canopy_gen_plummer(float *pos, float *vel, int64_t n, uint64_t seed) {
    if (n < 0)
        return canopy_fail(CANOPY_ERR_INVALID, "gen plummer: n = %lld, must be >= 0", (long long)n);
    if (n > 0 && !pos) return canopy_fail(CANOPY_ERR_INVALID, "gen plummer: pos is NULL");
    if (n > INT64_MAX / 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gen plummer: n = %lld is too large", (long long)n);
    if (n == 0) return CANOPY_OK;

    /* Scale units to Hénon units: r_H = r (3π/16), v_H = v (16/(3π))^(1/2). */
    const double rscale = 3.0 * PI / 16.0;
    const double vscale = sqrt(16.0 / (3.0 * PI));
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) {
        canopy_rng rng = canopy_rng_make(seed, (uint64_t)i);
        /* X^(1/3) / sqrt(1 - X^(2/3)) is (X^(-2/3) - 1)^(-1/2) without dividing by 0 at X = 0. */
        double c = cbrt(MASS_CUT * canopy_rng_uniform(&rng));
        double r = c / sqrt(1.0 - c * c);
        double u[3];
        unit_vector(&rng, u);
        for (int j = 0; j < 3; j++) pos[i * 3 + j] = (float)(r * rscale * u[j]);
        if (!vel) continue; /* velocities come last on the stream: positions are unchanged */
        double q, g;
        do {
            q = canopy_rng_uniform(&rng);
            g = 0.1 * canopy_rng_uniform(&rng);
        } while (g >= q * q * pow(1.0 - q * q, 3.5));
        double v = q * sqrt(2.0) * pow(1.0 + r * r, -0.25);
        unit_vector(&rng, u);
        for (int j = 0; j < 3; j++) vel[i * 3 + j] = (float)(v * vscale * u[j]);
    }

    canopy_status s = shift_to_mean(pos, n);
    if (s == CANOPY_OK && vel) s = shift_to_mean(vel, n);
    return s;
}
