/* SPDX-License-Identifier: MIT */
/* Cartesian multipoles of orders 0-4 for Plummer-softened gravity, shared by every CPU
 * multipole engine (list engine, body and bucket walks, LET pieces).
 *
 * Moments are built bottom-up in float64 as raw monomial sums M_abc = sum_k m_k x^a
 * y^b z^c (x = body - expansion centre, a + b + c <= 4): a leaf from its bodies, a cell
 * from its children shifted binomially (mp_mono_add_*). They are then packed into the
 * floats the kernels read (canopy_mp_mono_pack). With eps > 0 the potential is
 * g(R) = 1 / R, R^2 = r^2 + eps^2, which is not harmonic: its derivatives contract with
 * the moments' traces as well as their traceless parts. Each tensor is packed as its
 * traceless part and its traces, so that the traces' terms are exactly those carrying
 * a factor eps^2 / R^2 (none for 1 / r), and a kernel may leave them out where that
 * factor is negligible (mp_cell_terms' traces):
 *   0-5   Q = traceless quadrupole 3 S - tr(S) 1 (xx yy zz xy xz yz), S = second moments
 *   6     T = tr(S) = sum m |x|^2            (the "T eps^2" term of the GPU walk)
 *   7-16  traceless third moments  xxx yyy zzz xxy xxz xyy yyz xzz yzz xyz  (order >= 3)
 *   17-19 V_k = sum_i M_iik                                                  (order >= 3)
 *   20-34 traceless fourth moments xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz xxyy
 *         xxzz yyzz xxyz xyyz xyzz                                           (order 4)
 *   35-40 W_kl = sum_i M_iikl (xx yy zz xy xz yz), 41 U = W_kk               (order 4)
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
 * and R^-(n+2) in the force and stays in float range. With the moments split into
 * traceless parts and traces (see above), the order 3 and 4 terms are (e = eps^2 / R^2,
 * A3 = M3 : rn^3, B1 = V . rn, A4 = M4 : rn^4, B2 = rn . W . rn):
 *   -phi_3 R^4 = 5/2 A3 - 3/2 e B1,
 *   -phi_4 R^5 = 35/8 A4 - 15/4 e B2 + 3/4 e U (1 - e / 2).
 * traces (a compile-time constant too): 0 leaves out every term with the factor e
 * (T's, V's, W's and U's), exact for eps = 0 and otherwise off by a fraction ~e of the
 * order 2-4 terms; callers take it only where e is negligible. r^2 + eps^2 = 0
 * (padding) contributes nothing. Exact for a point mass (all q zero). */
CANOPY_HD void mp_cell_terms(int order, int traces, float m, float dx, float dy, float dz,
                             float eps2, const float *q, int64_t s, float *ax, float *ay, float *az,
                             float *p) {
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = 1.0f / sqrtf(r2 > 0.0f ? r2 : 1.0f); /* selects, not branches: they */
    inv = r2 > 0.0f ? inv : 0.0f;                    /* vectorise on every ISA */
    float inv2 = inv * inv, e = eps2 * inv2;
    float x = dx * inv, y = dy * inv, z = dz * inv;
    float mi = m * inv, g = mi * inv;
    float fx = -g * x, fy = -g * y, fz = -g * z, pp = mi;
    if (order >= 2) {
        float inv3 = inv2 * inv, inv4 = inv2 * inv2;
        float qx = q[0] * x + q[3 * s] * y + q[4 * s] * z;
        float qy = q[3 * s] * x + q[1 * s] * y + q[5 * s] * z;
        float qz = q[4 * s] * x + q[5 * s] * y + q[2 * s] * z;
        float u = x * qx + y * qy + z * qz;
        if (traces) u -= q[6 * s] * e;
        pp += 0.5f * u * inv3;
        fx += (qx - 2.5f * u * x) * inv4;
        fy += (qy - 2.5f * u * y) * inv4;
        fz += (qz - 2.5f * u * z) * inv4;
        if (order >= 3) {
            /* Every monomial of rn once, with the tensors' multiplicities folded in (2 at
             * order 3; 3 and 6 at order 4), and each contraction summed in short chains
             * (the compilers may not re-associate a long sum). */
            const float *M = q + 7 * s; /* traceless xxx yyy zzz xxy xxz xyy yyz xzz yzz xyz */
            float xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
            float xy2 = xy + xy, xz2 = xz + xz, yz2 = yz + yz;
            float gx = (M[0] * xx + M[5 * s] * yy + M[7 * s] * zz) +
                       (M[3 * s] * xy2 + M[4 * s] * xz2 + M[9 * s] * yz2);
            float gy = (M[3 * s] * xx + M[1 * s] * yy + M[8 * s] * zz) +
                       (M[5 * s] * xy2 + M[9 * s] * xz2 + M[6 * s] * yz2);
            float gz = (M[4 * s] * xx + M[6 * s] * yy + M[2 * s] * zz) +
                       (M[9 * s] * xy2 + M[7 * s] * xz2 + M[8 * s] * yz2);
            float a3 = x * gx + y * gy + z * gz, inv5 = inv4 * inv, c = -17.5f * a3;
            float tx = 7.5f * gx, ty = 7.5f * gy, tz = 7.5f * gz, p3 = 2.5f * a3;
            if (traces) {
                float vx = e * M[10 * s], vy = e * M[11 * s], vz = e * M[12 * s];
                float b1 = vx * x + vy * y + vz * z;
                p3 -= 1.5f * b1, c += 10.5f * b1;
                tx -= 1.5f * vx, ty -= 1.5f * vy, tz -= 1.5f * vz;
            }
            pp += p3 * inv4;
            fx += (c * x + tx) * inv5;
            fy += (c * y + ty) * inv5;
            fz += (c * z + tz) * inv5;
            if (order >= 4) {
                /* traceless xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz xxyy xxzz yyzz
                 * xxyz xyyz xyzz, then W (xx yy zz xy xz yz) and U */
                const float *F = q + 20 * s, *W = q + 35 * s;
                float xxx = xx * x, yyy = yy * y, zzz = zz * z, xyz6 = 6.0f * xy * z;
                float xx3 = 3.0f * xx, yy3 = 3.0f * yy, zz3 = 3.0f * zz;
                float xxy3 = xx3 * y, xxz3 = xx3 * z, xyy3 = yy3 * x, yyz3 = yy3 * z,
                      xzz3 = zz3 * x, yzz3 = zz3 * y;
                float hx = (F[0] * xxx + F[5 * s] * yyy + F[7 * s] * zzz + F[12 * s] * xyz6) +
                           (F[3 * s] * xxy3 + F[4 * s] * xxz3 + F[9 * s] * xyy3) +
                           (F[13 * s] * yyz3 + F[10 * s] * xzz3 + F[14 * s] * yzz3);
                float hy = (F[3 * s] * xxx + F[1 * s] * yyy + F[8 * s] * zzz + F[13 * s] * xyz6) +
                           (F[9 * s] * xxy3 + F[12 * s] * xxz3 + F[5 * s] * xyy3) +
                           (F[6 * s] * yyz3 + F[14 * s] * xzz3 + F[11 * s] * yzz3);
                float hz = (F[4 * s] * xxx + F[6 * s] * yyy + F[2 * s] * zzz + F[14 * s] * xyz6) +
                           (F[12 * s] * xxy3 + F[10 * s] * xxz3 + F[13 * s] * xyy3) +
                           (F[11 * s] * yyz3 + F[7 * s] * xzz3 + F[8 * s] * yzz3);
                float a4 = x * hx + y * hy + z * hz, inv6 = inv3 * inv3, c4 = -39.375f * a4;
                float sx = 17.5f * hx, sy = 17.5f * hy, sz = 17.5f * hz, p4 = 4.375f * a4;
                if (traces) {
                    float wx = e * (W[0] * x + W[3 * s] * y + W[4 * s] * z);
                    float wy = e * (W[3 * s] * x + W[1 * s] * y + W[5 * s] * z);
                    float wz = e * (W[4 * s] * x + W[5 * s] * y + W[2 * s] * z);
                    float b2 = x * wx + y * wy + z * wz, eu = e * W[6 * s];
                    p4 += eu * (0.75f - 0.375f * e) - 3.75f * b2;
                    c4 += 33.75f * b2 - eu * (5.25f - 3.375f * e);
                    sx -= 7.5f * wx, sy -= 7.5f * wy, sz -= 7.5f * wz;
                }
                pp += p4 * inv5;
                fx += (c4 * x + sx) * inv6;
                fy += (c4 * y + sy) * inv6;
                fz += (c4 * z + sz) * inv6;
            }
        }
    }
    *ax += fx, *ay += fy, *az += fz, *p += pp;
}

#endif
