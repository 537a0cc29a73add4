/* SPDX-License-Identifier: MIT */
/* Ewald summation for a periodic cube (Hernquist, Bouchet & Suto 1991; Gadget-2 and
 * Gadget-4 use the same scheme): the force of a body and all its periodic images, with
 * a uniform background of the opposite mean density, is the Newtonian force of the
 * nearest image plus a smooth correction f_corr(r) = f_ewald(r) - f_newton(r). The
 * correction of a unit mass in a unit box is tabulated once on a grid over the octant
 * [0, 1/2]^3 (its x component is odd in x and even in y and z, and so on; the
 * potential correction is even in all three) and read by trilinear interpolation;
 * a box of side L scales it by m / L^2 (acceleration) and m / L (potential). */
#ifndef CANOPY_APPS_EWALD_H
#define CANOPY_APPS_EWALD_H

#include "canopy.h"

#include <math.h>

enum { EWALD_GRID_DEFAULT = 32, EWALD_GRID_MIN = 8, EWALD_GRID_MAX = 128 };

/* Ewald splitting parameter of the unit box: real-space images |n_k| <= 2 and
 * reciprocal vectors |h|^2 <= 10 bring each sum within 1e-11 of its limit. */
#define EWALD_ALPHA 2.0

/* The potential correction has the Laplacian -4 pi everywhere (the background's), so
 * trilinear interpolation would bias it by about -(pi / 3) h^2 (h the grid step); the
 * table holds it plus (2 pi / 3) |r|^2, which is harmonic, and the lookup takes that
 * back off. */
#define EWALD_HARMONIC 2.0943951023931953 /* 2 pi / 3 */

/* The table of grid N (EWALD_GRID_MIN..EWALD_GRID_MAX points per half side): (N + 1)^3
 * records of 4 floats (ax, ay, az, potential + EWALD_HARMONIC |r|^2) at
 * r = (i, j, k) / (2N), i fastest last.
 * Computed on first use, then kept for the process (a table depends only on N). */
canopy_status canopy_ewald_table(int32_t n, const float **out);

/* The exact correction of a unit mass in the unit box at r (float64 direct sums),
 * acceleration a[3] and potential *pot; r = 0 gives the self term (a = 0, pot =
 * lim (phi_ewald + 1 / |r|) = 2.8372975...). */
void canopy_ewald_exact(const double r[3], double a[3], double *pot);

/* r - nearest multiple of box (box > 0): r in [-box/2, box/2]. */
static inline float ewald_wrap(float r, float box, float inv_box) {
    return r - box * rintf(r * inv_box);
}

/* The correction of a unit mass in the unit box at u (|u_k| <= 1/2) from table T of
 * grid n, added times wa to a[3] and times wp to *p (wa = m / L^2, wp = m / L for a
 * box of side L). */
static inline __attribute__((always_inline)) void ewald_add(const float *T, int32_t n, float ux,
                                                            float uy, float uz, float wa, float wp,
                                                            float *ax, float *ay, float *az,
                                                            float *p) {
    float s = 2.0f * (float)n, gx = fabsf(ux) * s, gy = fabsf(uy) * s, gz = fabsf(uz) * s;
    int32_t i = (int32_t)gx, j = (int32_t)gy, k = (int32_t)gz;
    i = i < n ? i : n - 1, j = j < n ? j : n - 1, k = k < n ? k : n - 1;
    float fx = gx - (float)i, fy = gy - (float)j, fz = gz - (float)k;
    int32_t m = n + 1;
    const float *c = T + 4 * ((i * m + j) * m + k);
    float v[4] = {0, 0, 0, 0};
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 2; b++)
            for (int d = 0; d < 2; d++) {
                float w = (a ? fx : 1.0f - fx) * (b ? fy : 1.0f - fy) * (d ? fz : 1.0f - fz);
                const float *e = c + 4 * ((a * m + b) * m + d);
                for (int q = 0; q < 4; q++) v[q] += w * e[q];
            }
    *ax += wa * (ux < 0.0f ? -v[0] : v[0]);
    *ay += wa * (uy < 0.0f ? -v[1] : v[1]);
    *az += wa * (uz < 0.0f ? -v[2] : v[2]);
    *p += wp * (v[3] - (float)EWALD_HARMONIC * (ux * ux + uy * uy + uz * uz));
}

#endif
