/* SPDX-License-Identifier: MIT */
/* Constants and host steps the SIMT applications share with their scalar references
 * (the CUDA module includes this too: static inline only). */
#ifndef CANOPY_SIMT_CONSTS_H
#define CANOPY_SIMT_CONSTS_H

#include <stddef.h>

/* Levenshtein: the pattern's length (the chapter's 8-character substrings). */
enum { SIMT_LEV_M = 8 };

/* Hotspot (Rodinia: a 0.016 m square chip 0.5 mm thick), computed once in floats so the
 * kernel and the reference use the same values. */
typedef struct hotspot_consts {
    float step_cap, rx1, ry1, rz1, amb;
} hotspot_consts;

static inline hotspot_consts hotspot_consts_for(int rows, int cols) {
    const double chip = 0.016, t_chip = 0.0005, k_si = 100.0, spec_heat = 1.75e6, factor_chip = 0.5,
                 precision = 0.001, max_pd = 3.0e6;
    double w = chip / cols, h = chip / rows;
    double cap = factor_chip * spec_heat * t_chip * w * h;
    double rx = w / (2.0 * k_si * t_chip * h), ry = h / (2.0 * k_si * t_chip * w);
    double rz = t_chip / (k_si * h * w);
    double step = precision / (max_pd / (factor_chip * t_chip * spec_heat));
    hotspot_consts k = {(float)(step / cap), (float)(1.0 / rx), (float)(1.0 / ry),
                        (float)(1.0 / rz), 80.0f};
    return k;
}

/* Hotspot's next temperature of a cell t from its power p and its neighbours (south,
 * north, east, west), in one order for the kernels and the reference (bit-equal results);
 * arguments are evaluated more than once. */
#define HOTSPOT_NEXT(k, t, p, s, n, e, w)                                                          \
    ((t) + (k).step_cap * ((p) + ((s) + (n)-2.0f * (t)) * (k).ry1 +                                \
                           ((e) + (w)-2.0f * (t)) * (k).rx1 + ((k).amb - (t)) * (k).rz1))

/* Gaussian elimination's back substitution (Rodinia's BackSub, on the host in every
 * build): x from the upper triangle of a and b after the elimination steps. */
static inline void simt_gauss_back(const float *a, const float *b, int n, float *x) {
    for (int i = n - 1; i >= 0; i--) {
        float v = b[i];
        for (int j = n - 1; j > i; j--) v = v - a[(size_t)i * n + j] * x[j];
        x[i] = v / a[(size_t)i * n + i];
    }
}

#endif
