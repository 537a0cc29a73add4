/* SPDX-License-Identifier: MIT */
/* Monomial moments up to order 4: accumulation from bodies, the binomial shift that
 * builds a cell from its children, and the packing the kernels read
 * (gravity/multipole_terms.h). */
#include "gravity/multipole_terms.h"

/* Exponents (a, b, c) of x^a y^b z^c, in the order of the packed layout. */
static const uint8_t mono[MP_MONO_MAX][3] = {
    {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0}, {0, 2, 0}, {0, 0, 2},
    {1, 1, 0}, {1, 0, 1}, {0, 1, 1}, {3, 0, 0}, {0, 3, 0}, {0, 0, 3}, {2, 1, 0},
    {2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {1, 0, 2}, {0, 1, 2}, {1, 1, 1}, {4, 0, 0},
    {0, 4, 0}, {0, 0, 4}, {3, 1, 0}, {3, 0, 1}, {1, 3, 0}, {0, 3, 1}, {1, 0, 3},
    {0, 1, 3}, {2, 2, 0}, {2, 0, 2}, {0, 2, 2}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2},
};

static const double binom[5][5] = {
    {1, 0, 0, 0, 0}, {1, 1, 0, 0, 0}, {1, 2, 1, 0, 0}, {1, 3, 3, 1, 0}, {1, 4, 6, 4, 1}};

static void powers(double v, double p[5]) {
    p[0] = 1.0, p[1] = v, p[2] = v * v, p[3] = p[2] * v, p[4] = p[2] * p[2];
}

void canopy_mp_mono_add_body(double *M, int order, double w, double x, double y, double z) {
    double px[5], py[5], pz[5];
    powers(x, px), powers(y, py), powers(z, pz);
    for (int e = 0, n = mp_mono_count(order); e < n; e++)
        M[e] += w * px[mono[e][0]] * py[mono[e][1]] * pz[mono[e][2]];
}

/* M_abc += sum over a' <= a, b' <= b, c' <= c of C(a,a') C(b,b') C(c,c') C_a'b'c'
 * dx^(a-a') dy^(b-b') dz^(c-c'): the child's bodies are at x' + d about M's centre. */
void canopy_mp_mono_add_shifted(double *M, int order, const double *C, double dx, double dy,
                                double dz) {
    double px[5], py[5], pz[5];
    powers(dx, px), powers(dy, py), powers(dz, pz);
    int8_t at[5][5][5] = {{{0}}}; /* the index of x^i y^j z^k, asked ~200 times below */
    int n = mp_mono_count(order);
    for (int e = 0; e < n; e++) at[mono[e][0]][mono[e][1]][mono[e][2]] = (int8_t)e;
    for (int e = 0; e < n; e++) {
        int a = mono[e][0], b = mono[e][1], c = mono[e][2];
        double sum = 0.0;
        for (int i = 0; i <= a; i++)
            for (int j = 0; j <= b; j++)
                for (int k = 0; k <= c; k++)
                    sum += binom[a][i] * binom[b][j] * binom[c][k] * C[at[i][j][k]] * px[a - i] *
                           py[b - j] * pz[c - k];
        M[e] += sum;
    }
}

/* The traceless parts, per packed monomial: M_abc - (d_ab V_c + d_ac V_b + d_bc V_a) / 5
 * at order 3, and at order 4 M_abcd - (the 6 terms d_ab Wt_cd) / 7 - (the 3 terms d_ab
 * d_cd) U / 15, Wt = W - U / 3 1 the traceless part of W: the V_k each third moment's
 * equal-index pairs leave (how many of each), and the two Wt entries (xx yy zz xy xz yz)
 * each fourth moment's leave, with how many times, then its pairings into two equal
 * pairs. Tables rather than loops over index tuples: packing runs for every tree node. */
static const uint8_t tl3[10][3] = {{3, 0, 0}, {0, 3, 0}, {0, 0, 3}, {0, 1, 0}, {0, 0, 1},
                                   {1, 0, 0}, {0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {0, 0, 0}};
static const uint8_t tl4[15][5] = {
    {6, 0, 0, 0, 3}, {6, 1, 0, 0, 3}, {6, 2, 0, 0, 3}, {3, 3, 0, 0, 0}, {3, 4, 0, 0, 0},
    {3, 3, 0, 0, 0}, {3, 5, 0, 0, 0}, {3, 4, 0, 0, 0}, {3, 5, 0, 0, 0}, {1, 0, 1, 1, 1},
    {1, 0, 1, 2, 1}, {1, 1, 1, 2, 1}, {1, 5, 0, 0, 0}, {1, 4, 0, 0, 0}, {1, 3, 0, 0, 0}};

void canopy_mp_mono_pack(const double *M, int order, float *q, int64_t s) {
    if (order < 2) return;
    double tr = M[4] + M[5] + M[6];
    for (int e = 0; e < 3; e++) q[e * s] = (float)(3.0 * M[4 + e] - tr);
    for (int e = 3; e < 6; e++) q[e * s] = (float)(3.0 * M[4 + e]);
    q[6 * s] = (float)tr;
    if (order < 3) return;
    /* V_k = sum_i M_iik: xxx + xyy + xzz, xxy + yyy + yzz, xxz + yyz + zzz */
    const double V[3] = {M[10] + M[15] + M[17], M[13] + M[11] + M[18], M[14] + M[16] + M[12]};
    for (int k = 0; k < 3; k++) q[(17 + k) * s] = (float)V[k];
    for (int e = 0; e < 10; e++)
        q[(7 + e) * s] =
            (float)(M[10 + e] - (tl3[e][0] * V[0] + tl3[e][1] * V[1] + tl3[e][2] * V[2]) / 5.0);
    if (order < 4) return;
    /* W_kl = sum_i M_iikl (xx yy zz xy xz yz), U = W_kk */
    const double W[6] = {M[20] + M[29] + M[30], M[29] + M[21] + M[31], M[30] + M[31] + M[22],
                         M[23] + M[25] + M[34], M[24] + M[33] + M[27], M[32] + M[26] + M[28]};
    double U = W[0] + W[1] + W[2], Wt[6];
    for (int p = 0; p < 6; p++) {
        q[(35 + p) * s] = (float)W[p];
        Wt[p] = W[p] - (p < 3 ? U / 3.0 : 0.0);
    }
    q[41 * s] = (float)U;
    for (int e = 0; e < 15; e++) {
        const uint8_t *t = tl4[e];
        q[(20 + e) * s] =
            (float)(M[20 + e] - (t[0] * Wt[t[1]] + t[2] * Wt[t[3]]) / 7.0 - t[4] * U / 15.0);
    }
}
