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

/* Index of x^a y^b z^c in mono (a + b + c <= 4). */
static int mono_at(int a, int b, int c) {
    static const int first[5] = {0, 1, 4, 10, 20};
    int n = a + b + c;
    for (int e = first[n];; e++)
        if (mono[e][0] == a && mono[e][1] == b) return e;
}

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
    int8_t at[5][5][5] = {{{0}}}; /* mono_at as a table: the loop below asks it ~200 times */
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

void canopy_mp_mono_pack(const double *M, int order, float *q, int64_t s) {
    if (order < 2) return;
    double tr = M[4] + M[5] + M[6];
    for (int e = 0; e < 3; e++) q[e * s] = (float)(3.0 * M[4 + e] - tr);
    for (int e = 3; e < 6; e++) q[e * s] = (float)(3.0 * M[4 + e]);
    q[6 * s] = (float)tr;
    if (order < 3) return;
    for (int e = 0; e < 10; e++) q[(7 + e) * s] = (float)M[10 + e];
    for (int k = 0; k < 3; k++) { /* V_k = sum_i M_iik */
        double v = 0.0;
        for (int i = 0; i < 3; i++) {
            int x[3] = {0, 0, 0};
            x[i] += 2, x[k] += 1;
            v += M[mono_at(x[0], x[1], x[2])];
        }
        q[(17 + k) * s] = (float)v;
    }
    if (order < 4) return;
    for (int e = 0; e < 15; e++) q[(20 + e) * s] = (float)M[20 + e];
    static const int kl[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    double u = 0.0;
    for (int p = 0; p < 6; p++) { /* W_kl = sum_i M_iikl */
        double w = 0.0;
        for (int i = 0; i < 3; i++) {
            int x[3] = {0, 0, 0};
            x[i] += 2, x[kl[p][0]] += 1, x[kl[p][1]] += 1;
            w += M[mono_at(x[0], x[1], x[2])];
        }
        q[(35 + p) * s] = (float)w;
        if (p < 3) u += w;
    }
    q[41 * s] = (float)u;
}
