/* SPDX-License-Identifier: MIT */
/* Cartesian multipoles of orders 0-4 for Plummer-softened gravity, shared by every CPU
 * multipole engine (list engine, body and bucket walks, LET pieces).
 *
 * Moments are built bottom-up in float64 as raw monomial sums M_abc = sum_k m_k x^a
 * y^b z^c (x = body - expansion centre, a + b + c <= 4): a leaf from its bodies, a cell
 * from its children shifted binomially (mp_mono_add_*). They are then packed into the
 * floats the kernels read (canopy_mp_mono_pack). With eps > 0 the potential is
 * g(R) = 1 / R, R^2 = r^2 + eps^2; its derivatives contract with the moments' traces
 * as well as their traceless parts (the trace terms vanish only for eps = 0), so the
 * packed layout keeps both:
 *   0-5   Q = traceless quadrupole 3 S - tr(S) 1 (xx yy zz xy xz yz), S = second moments
 *   6     T = tr(S) = sum m |x|^2            (the "T eps^2" term of the GPU walk)
 *   7-16  raw third moments  xxx yyy zzz xxy xxz xyy yyz xzz yzz xyz   (order >= 3)
 *   17-19 V_k = sum_i M_iik                                              (order >= 3)
 *   20-34 raw fourth moments xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz xxyy xxzz yyzz
 *         xxyz xyyz xyzz                                                 (order 4)
 *   35-40 W_kl = sum_i M_iikl (xx yy zz xy xz yz), 41 U = W_kk           (order 4)
 * Element e of a packed record is q[e * s] (s = 1 for a record, the array length for
 * structure-of-arrays lists). The dipole about the centre of mass vanishes, so orders
 * 0, 2, 3 and 4 are the choices. */
#ifndef CANOPY_APPS_MULTIPOLE_TERMS_H
#define CANOPY_APPS_MULTIPOLE_TERMS_H

#include "canopy/traverse.h" /* CANOPY_HD */

#include <math.h>
#include <stdint.h>

enum { MP_MONO_MAX = 35, MP_PACK_MAX = 42, MP_ORDER_MAX = 4 };

/* Monomial sums kept for an order (mass, dipole and orders 2..max(order, 2)). */
static inline int mp_mono_count(int order) {
    return order <= 2 ? 10 : order == 3 ? 20 : MP_MONO_MAX;
}
/* Packed floats per cell for an order: 0, 7, 20 or 42. */
CANOPY_HD int mp_pack_count(int order) {
    return order < 2 ? 0 : order == 2 ? 7 : order == 3 ? 20 : MP_PACK_MAX;
}
/* M += w x^a y^b z^c for every monomial of the order. */
void canopy_mp_mono_add_body(double *M, int order, double w, double x, double y, double z);
/* M += the moments C (about a centre d away from M's: d = C's centre - M's centre),
 * shifted to M's centre. */
void canopy_mp_mono_add_shifted(double *M, int order, const double *C, double dx, double dy,
                                double dz);
/* The packed floats of an order from the monomial sums (about the centre of mass). */
void canopy_mp_mono_pack(const double *M, int order, float *q, int64_t s);

/* Adds to (ax, ay, az, p) the acceleration and minus the potential at r = sink - com
 * of a cell of mass m with packed moments q (stride s) expanded to the order (0, 2,
 * 3 or 4; a compile-time constant where it is inlined, so unused terms vanish):
 *   phi = -sum_n (-1)^n / n! M_n : d^n g(r),   a = -grad phi.
 * Each order n term is written with rn = r / R, so it costs R^-(n+1) in the potential
 * and R^-(n+2) in the force and stays in float range. r^2 + eps^2 = 0 (padding)
 * contributes nothing. Exact for a point mass (all q zero). */
CANOPY_HD void mp_cell_terms(int order, float m, float dx, float dy, float dz, float eps2,
                             const float *q, int64_t s, float *ax, float *ay, float *az, float *p) {
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrtf(r2 > 0.0f ? r2 : 1.0f); /* selects, not branches: they */
    inv = r2 > 0.0f ? inv : 0.0f;                    /* vectorise on every ISA */
    float inv2 = inv * inv;
    float x = dx * inv, y = dy * inv, z = dz * inv;
    float mi = m * inv, g = mi * inv;
    float fx = -g * x, fy = -g * y, fz = -g * z, pp = mi;
    if (order >= 2) {
        float inv3 = inv2 * inv, inv4 = inv2 * inv2;
        float qx = q[0] * x + q[3 * s] * y + q[4 * s] * z;
        float qy = q[3 * s] * x + q[1 * s] * y + q[5 * s] * z;
        float qz = q[4 * s] * x + q[5 * s] * y + q[2 * s] * z;
        float u = x * qx + y * qy + z * qz - q[6 * s] * eps2 * inv2;
        pp += 0.5f * u * inv3;
        fx += (qx - 2.5f * u * x) * inv4;
        fy += (qy - 2.5f * u * y) * inv4;
        fz += (qz - 2.5f * u * z) * inv4;
        if (order >= 3) {
            const float *M = q + 7 * s; /* xxx yyy zzz xxy xxz xyy yyz xzz yzz xyz, V */
            float xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
            float gx = M[0] * xx + M[5 * s] * yy + M[7 * s] * zz +
                       2.0f * (M[3 * s] * xy + M[4 * s] * xz + M[9 * s] * yz);
            float gy = M[3 * s] * xx + M[1 * s] * yy + M[8 * s] * zz +
                       2.0f * (M[5 * s] * xy + M[9 * s] * xz + M[6 * s] * yz);
            float gz = M[4 * s] * xx + M[6 * s] * yy + M[2 * s] * zz +
                       2.0f * (M[9 * s] * xy + M[7 * s] * xz + M[8 * s] * yz);
            float vx = M[10 * s], vy = M[11 * s], vz = M[12 * s];
            float a3 = x * gx + y * gy + z * gz, b1 = vx * x + vy * y + vz * z;
            float inv5 = inv4 * inv, c = 7.5f * b1 - 17.5f * a3;
            pp += (2.5f * a3 - 1.5f * b1) * inv4;
            fx += (c * x + 7.5f * gx - 1.5f * vx) * inv5;
            fy += (c * y + 7.5f * gy - 1.5f * vy) * inv5;
            fz += (c * z + 7.5f * gz - 1.5f * vz) * inv5;
            if (order >= 4) {
                /* xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz xxyy xxzz yyzz xxyz xyyz
                 * xyzz, then W (xx yy zz xy xz yz) and U */
                const float *F = q + 20 * s, *W = q + 35 * s;
                float xxx = xx * x, yyy = yy * y, zzz = zz * z, xyz = xy * z;
                float hx = F[0] * xxx + F[5 * s] * yyy + F[7 * s] * zzz +
                           3.0f * (F[3 * s] * xx * y + F[4 * s] * xx * z + F[9 * s] * x * yy +
                                   F[13 * s] * yy * z + F[10 * s] * x * zz + F[14 * s] * y * zz) +
                           6.0f * F[12 * s] * xyz;
                float hy = F[3 * s] * xxx + F[1 * s] * yyy + F[8 * s] * zzz +
                           3.0f * (F[9 * s] * xx * y + F[12 * s] * xx * z + F[5 * s] * x * yy +
                                   F[6 * s] * yy * z + F[14 * s] * x * zz + F[11 * s] * y * zz) +
                           6.0f * F[13 * s] * xyz;
                float hz = F[4 * s] * xxx + F[6 * s] * yyy + F[2 * s] * zzz +
                           3.0f * (F[12 * s] * xx * y + F[10 * s] * xx * z + F[13 * s] * x * yy +
                                   F[11 * s] * yy * z + F[7 * s] * x * zz + F[8 * s] * y * zz) +
                           6.0f * F[14 * s] * xyz;
                float wx = W[0] * x + W[3 * s] * y + W[4 * s] * z;
                float wy = W[3 * s] * x + W[1 * s] * y + W[5 * s] * z;
                float wz = W[4 * s] * x + W[5 * s] * y + W[2 * s] * z;
                float a4 = x * hx + y * hy + z * hz, b2 = x * wx + y * wy + z * wz, uu = W[6 * s];
                float inv6 = inv3 * inv3, c4 = 26.25f * b2 - 39.375f * a4 - 1.875f * uu;
                pp += (4.375f * a4 - 3.75f * b2 + 0.375f * uu) * inv5;
                fx += (c4 * x + 17.5f * hx - 7.5f * wx) * inv6;
                fy += (c4 * y + 17.5f * hy - 7.5f * wy) * inv6;
                fz += (c4 * z + 17.5f * hz - 7.5f * wz) * inv6;
            }
        }
    }
    *ax += fx, *ay += fy, *az += fz, *p += pp;
}

#endif
