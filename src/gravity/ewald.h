/* SPDX-License-Identifier: MIT */
/* Ewald summation for a periodic cube (Hernquist, Bouchet & Suto 1991; Gadget-2 and
 * Gadget-4 use the same scheme): the potential of a body and all its periodic images,
 * with a uniform background of the opposite mean density, is the Newtonian potential of
 * one chosen image plus a smooth correction psi(r) = phi_ewald(r) + 1 / |r| (unit mass,
 * unit box; r from that image). psi is analytic except at the other lattice points, so
 * near any image it is a Taylor series; Gadget-4 evaluates it that way. Its derivatives
 * up to the fourth are tabulated once on a grid over the octant [0, 1/2]^3 (a derivative
 * is odd in an axis as often as the axis appears in it; psi itself is even in all three)
 * and read by a Taylor expansion about the nearest grid point; a box of side L scales
 * the n-th derivative of a mass m by m / L^(n + 1). */
#ifndef CANOPY_APPS_EWALD_H
#define CANOPY_APPS_EWALD_H

#include "canopy.h"

#include <math.h>

enum { EWALD_GRID_DEFAULT = 32, EWALD_GRID_MIN = 8, EWALD_GRID_MAX = 128 };

/* Derivatives of psi per point, in this order: psi; x y z; xx yy zz xy xz yz; xxx yyy zzz
 * xxy xxz xyy yyz xzz yzz xyz (the third moments' order in gravity/multipole_terms.h);
 * xxxx yyyy zzzz xxxy xxxz xyyy yyyz xzzz yzzz xxyy xxzz yyzz xxyz xyyz xyzz. The fourth
 * carry a sink group's correction to fourth order in its offset from the group's centre:
 * at third order the remainder of uniform bodies' correction (the quartic term of a
 * cube's potential, ~4 e^3 in the force) was most of a uniform box's force error. */
enum { EWALD_NDER = 35 };

/* Ewald splitting parameter of the unit box: real-space images |n_k| <= 2 and
 * reciprocal vectors |h|^2 <= 10 bring each sum within 1e-11 of its limit (1e-8 for
 * the third derivatives, 1e-7 for the fourth). */
#define EWALD_ALPHA 2.0

/* The table of grid N (EWALD_GRID_MIN..EWALD_GRID_MAX points per half side): (N + 1)^3
 * records of EWALD_NDER floats at r = (i, j, k) / (2N), k fastest. Computed on first
 * use, then kept for the process (a table depends only on N). */
canopy_status canopy_ewald_table(int32_t n, const float **out);

/* The exact correction of a unit mass in the unit box at r (float64 direct sums),
 * acceleration a[3] = -grad psi and potential *pot = psi; r = 0 gives the self term
 * (a = 0, pot = lim (phi_ewald + 1 / |r|) = 2.8372975...). */
void canopy_ewald_exact(const double r[3], double a[3], double *pot);

/* psi and its derivatives up to the fourth at r (|r_k| <= 1/2), float64, in the
 * EWALD_NDER order: the table's entries, written from the same sums as
 * canopy_ewald_exact but differentiated analytically. */
void canopy_ewald_derivs(const double r[3], double d[EWALD_NDER]);

/* Index of the second derivative ab and of the third derivative abc in the
 * EWALD_NDER order (a, b, c axes 0..2). */
static inline int ewald_i2(int a, int b) {
    static const signed char I[3][3] = {{4, 7, 8}, {7, 5, 9}, {8, 9, 6}};
    return I[a][b];
}
static inline int ewald_i3(int a, int b, int c) {
    static const signed char I[3][3][3] = {{{10, 13, 14}, {13, 15, 19}, {14, 19, 17}},
                                           {{13, 15, 19}, {15, 11, 16}, {19, 16, 18}},
                                           {{14, 19, 17}, {19, 16, 18}, {17, 18, 12}}};
    return I[a][b][c];
}
/* ... and of the fourth derivative abcd, by how often x and y occur in it. */
static inline int ewald_i4(int a, int b, int c, int d) {
    static const signed char I[5][5] = {{22, 28, 31, 26, 21},
                                        {27, 34, 33, 25, -1},
                                        {30, 32, 29, -1, -1},
                                        {24, 23, -1, -1, -1},
                                        {20, -1, -1, -1, -1}};
    int n[3] = {0, 0, 0};
    n[a]++, n[b]++, n[c]++, n[d]++;
    return I[n[0]][n[1]];
}

/* Adds the Cartesian derivatives up to the fourth of a radial function at u, given its
 * radial ones H_l = (d / (r dr))^l, l = 0..4: d_a = H1 u_a, d_ab = H2 u_a u_b + H1 delta_ab,
 * d_abc = H3 u_a u_b u_c + H2 (delta_ab u_c + 2 more), d_abcd = H4 u_a u_b u_c u_d + H3
 * (delta_ab u_c u_d + 5 more) + H2 (delta_ab delta_cd + 2 more). */
#define EWALD_ADD_RADIAL(T, u, H, d)                                                               \
    do {                                                                                           \
        (d)[0] += (H)[0];                                                                          \
        for (int a_ = 0; a_ < 3; a_++) {                                                           \
            (d)[1 + a_] += (H)[1] * (u)[a_];                                                       \
            for (int b_ = a_; b_ < 3; b_++) {                                                      \
                T ab_ = (T)(a_ == b_);                                                             \
                (d)[ewald_i2(a_, b_)] += (H)[2] * (u)[a_] * (u)[b_] + ab_ * (H)[1];                \
                for (int c_ = b_; c_ < 3; c_++) {                                                  \
                    T ac_ = (T)(a_ == c_), bc_ = (T)(b_ == c_);                                    \
                    (d)[ewald_i3(a_, b_, c_)] +=                                                   \
                        (H)[3] * (u)[a_] * (u)[b_] * (u)[c_] +                                     \
                        (H)[2] * (ab_ * (u)[c_] + ac_ * (u)[b_] + bc_ * (u)[a_]);                  \
                    for (int e_ = c_; e_ < 3; e_++) {                                              \
                        T ae_ = (T)(a_ == e_), be_ = (T)(b_ == e_), ce_ = (T)(c_ == e_);           \
                        (d)[ewald_i4(a_, b_, c_, e_)] +=                                           \
                            (H)[4] * (u)[a_] * (u)[b_] * (u)[c_] * (u)[e_] +                       \
                            (H)[3] * (ab_ * (u)[c_] * (u)[e_] + ac_ * (u)[b_] * (u)[e_] +          \
                                      ae_ * (u)[b_] * (u)[c_] + bc_ * (u)[a_] * (u)[e_] +          \
                                      be_ * (u)[a_] * (u)[c_] + ce_ * (u)[a_] * (u)[b_]) +         \
                            (H)[2] * (ab_ * ce_ + ac_ * be_ + ae_ * bc_);                          \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Adds w times 1 / |u| and its derivatives up to the fourth, in the EWALD_NDER order. */
static inline void ewald_newton_add(const float u[3], float w, float d[EWALD_NDER]) {
    float r2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], i2 = 1.0f / r2, i1 = sqrtf(i2);
    float H[5] = {w * i1, -w * i1 * i2, 3.0f * w * i1 * i2 * i2, -15.0f * w * i1 * i2 * i2 * i2,
                  105.0f * w * i1 * i2 * i2 * i2 * i2};
    EWALD_ADD_RADIAL(float, u, H, d);
}

/* The derivative one order higher: EWALD_UP[q][a] is the index of derivative q (of
 * order <= 3) differentiated once more along axis a. */
static const unsigned char EWALD_UP[20][3] = {
    {1, 2, 3},    {4, 7, 8},    {7, 5, 9},    {8, 9, 6},    {10, 13, 14},
    {15, 11, 16}, {17, 18, 12}, {13, 15, 19}, {14, 19, 17}, {19, 16, 18},
    {20, 23, 24}, {25, 21, 26}, {27, 28, 22}, {23, 29, 32}, {24, 32, 30},
    {29, 25, 33}, {33, 26, 31}, {30, 34, 27}, {34, 31, 28}, {32, 33, 34}};

/* Carries the derivatives c up to the fourth at a point over the offset e (their
 * Taylor series, each to fourth order overall: the fourth derivatives as they are):
 * the k-th directional derivative (e . grad)^k of every entry by k contractions with
 * EWALD_UP, about 100 multiply-adds. Only out[0..3] are needed by a sink; inlined,
 * the rest is dropped. */
static inline void ewald_shift(const float c[EWALD_NDER], const float e[3], float out[EWALD_NDER]) {
    float a1[20], a2[10], a3[4], a4;
    for (int q = 0; q < 20; q++)
        a1[q] = c[EWALD_UP[q][0]] * e[0] + c[EWALD_UP[q][1]] * e[1] + c[EWALD_UP[q][2]] * e[2];
    for (int q = 0; q < 10; q++)
        a2[q] = a1[EWALD_UP[q][0]] * e[0] + a1[EWALD_UP[q][1]] * e[1] + a1[EWALD_UP[q][2]] * e[2];
    for (int q = 0; q < 4; q++)
        a3[q] = a2[EWALD_UP[q][0]] * e[0] + a2[EWALD_UP[q][1]] * e[1] + a2[EWALD_UP[q][2]] * e[2];
    a4 = a3[1] * e[0] + a3[2] * e[1] + a3[3] * e[2];
    out[0] = c[0] + a1[0] + a2[0] / 2.0f + a3[0] / 6.0f + a4 / 24.0f;
    for (int q = 1; q < 4; q++) out[q] = c[q] + a1[q] + a2[q] / 2.0f + a3[q] / 6.0f;
    for (int q = 4; q < 10; q++) out[q] = c[q] + a1[q] + a2[q] / 2.0f;
    for (int q = 10; q < 20; q++) out[q] = c[q] + a1[q];
    for (int q = 20; q < EWALD_NDER; q++) out[q] = c[q];
}

/* Which axes derivative q is odd in (bit k: axis k), so its sign under a reflection. */
static const unsigned char EWALD_ODD[EWALD_NDER] = {0, 1, 2, 4, 0, 0, 0, 3, 5, 6, 1, 2,
                                                    4, 2, 4, 1, 4, 1, 2, 7, 0, 0, 0, 3,
                                                    5, 3, 6, 5, 6, 0, 0, 0, 6, 5, 3};

/* psi and its derivatives at u (unit box, |u_k| <= 1/2 give or take rounding) from
 * table T of grid n: the nearest point's entries carried over the offset by their
 * Taylor series (ewald_shift), then the signs of the octant. */
static inline void ewald_table_at(const float *T, int32_t n, const float u[3],
                                  float d[EWALD_NDER]) {
    float s = 2.0f * (float)n, e[3];
    int32_t ix[3], neg = 0;
    for (int k = 0; k < 3; k++) {
        float g = fabsf(u[k]) * s;
        int32_t i = (int32_t)(g + 0.5f);
        ix[k] = i < n ? i : n;
        e[k] = fabsf(u[k]) - (float)ix[k] / s;
        neg |= (u[k] < 0.0f) << k;
    }
    int32_t m = n + 1;
    ewald_shift(T + (size_t)EWALD_NDER * (size_t)((ix[0] * m + ix[1]) * m + ix[2]), e, d);
    for (int q = 0; q < EWALD_NDER; q++)
        if (__builtin_parity((unsigned)(EWALD_ODD[q] & neg))) d[q] = -d[q];
}

/* ewald_table_at for any u away from the other lattice points: phi_ewald is periodic,
 * so psi(u) = psi(u') + 1 / |u| - 1 / |u'| with u' = u less the nearest lattice point. */
static inline void ewald_derivs_at(const float *T, int32_t n, const float u[3],
                                   float d[EWALD_NDER]) {
    float w[3] = {u[0] - rintf(u[0]), u[1] - rintf(u[1]), u[2] - rintf(u[2])};
    ewald_table_at(T, n, w, d);
    if (w[0] == u[0] && w[1] == u[1] && w[2] == u[2]) return;
    ewald_newton_add(u, 1.0f, d);
    ewald_newton_add(w, -1.0f, d);
}

#endif
