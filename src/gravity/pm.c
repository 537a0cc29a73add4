// SPDX-License-Identifier: MIT
/* TreePM's long-range forces on a mesh (gravity/pm.h). */
#include "gravity/pm.h"

#include "core/cpu_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef CANOPY_HAVE_FFTW
#include <fftw3.h>

#define PM_PI 3.14159265358979323846

/* The mesh of one evaluation: g^3 reals, g * g * (g / 2 + 1) complex of the potential
 * and as many of scratch; the plans of the split 3-D transform. */
typedef struct pm_mesh {
    int32_t g, gz; /* cells per side; complex values along z */
    float *real;
    fftwf_complex *phi, *work;
    fftwf_plan plane_r2c, plane_c2r, line_fwd, line_bwd;
} pm_mesh;

static void mesh_free(pm_mesh *M) {
#pragma omp critical(canopy_fftw_planner)
    {
        if (M->plane_r2c) fftwf_destroy_plan(M->plane_r2c);
        if (M->plane_c2r) fftwf_destroy_plan(M->plane_c2r);
        if (M->line_fwd) fftwf_destroy_plan(M->line_fwd);
        if (M->line_bwd) fftwf_destroy_plan(M->line_bwd);
    }
    fftwf_free(M->real), fftwf_free(M->phi), fftwf_free(M->work);
}

/* A 3-D transform as 2-D transforms of the x planes and 1-D transforms along x, each
 * the same plan whichever thread runs it: the bits do not depend on the threads, as a
 * threaded FFTW plan's would. FFTW's planner is not thread-safe; its plans' execution on
 * distinct arrays is. */
static int mesh_alloc(pm_mesh *M, int32_t g) {
    memset(M, 0, sizeof *M);
    M->g = g, M->gz = g / 2 + 1;
    size_t nr = (size_t)g * g * g, nc = (size_t)g * g * (size_t)M->gz;
    M->real = fftwf_alloc_real(nr);
    M->phi = fftwf_alloc_complex(nc);
    M->work = fftwf_alloc_complex(nc);
    if (!M->real || !M->phi || !M->work) return 1;
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    int stride = g * M->gz;
#pragma omp critical(canopy_fftw_planner)
    {
        M->plane_r2c = fftwf_plan_dft_r2c_2d(g, g, M->real, M->work, flags);
        M->plane_c2r = fftwf_plan_dft_c2r_2d(g, g, M->work, M->real, flags);
        M->line_fwd = fftwf_plan_many_dft(1, &g, M->gz, M->work, NULL, stride, 1, M->work, NULL,
                                          stride, 1, FFTW_FORWARD, flags);
        M->line_bwd = fftwf_plan_many_dft(1, &g, M->gz, M->work, NULL, stride, 1, M->work, NULL,
                                          stride, 1, FFTW_BACKWARD, flags);
    }
    return !M->plane_r2c || !M->plane_c2r || !M->line_fwd || !M->line_bwd;
}

/* real -> work, unnormalised forward transform. */
static void mesh_forward(pm_mesh *M) {
    int32_t g = M->g;
    size_t plane = (size_t)g * M->gz;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t p = 0; p < g; p++)
        fftwf_execute_dft_r2c(M->plane_r2c, M->real + (size_t)p * g * g, M->work + p * plane);
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t y = 0; y < g; y++)
        fftwf_execute_dft(M->line_fwd, M->work + (size_t)y * M->gz, M->work + (size_t)y * M->gz);
}

/* work -> real, unnormalised backward transform (work is overwritten). */
static void mesh_backward(pm_mesh *M) {
    int32_t g = M->g;
    size_t plane = (size_t)g * M->gz;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t y = 0; y < g; y++)
        fftwf_execute_dft(M->line_bwd, M->work + (size_t)y * M->gz, M->work + (size_t)y * M->gz);
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t p = 0; p < g; p++)
        fftwf_execute_dft_c2r(M->plane_c2r, M->work + p * plane, M->real + (size_t)p * g * g);
}

/* The TSC stencil along one axis of a coordinate u in cells: first cell (not wrapped)
 * and its three weights. */
static inline int32_t tsc(double u, double w[3]) {
    double c = floor(u + 0.5), d = u - c;
    w[0] = 0.5 * (0.5 - d) * (0.5 - d);
    w[1] = 0.75 - d * d;
    w[2] = 0.5 * (0.5 + d) * (0.5 + d);
    return (int32_t)c - 1;
}

static inline int32_t wrap(int32_t i, int32_t g) {
    return i < 0 ? i + g : i >= g ? i - g : i;
}

/* The bodies: coordinate arrays, masses and where each one's results go. */
typedef struct pm_bodies {
    const float *xyz[3], *m;
    const int64_t *ids; /* NULL: body i's results at i */
    int64_t n;
} pm_bodies;

/* Body i's stencil: wrapped cell indices and weights per axis. */
static inline void stencil(const pm_bodies *B, int64_t i, double scale, int32_t g,
                           int32_t idx[3][3], double w[3][3]) {
    for (int a = 0; a < 3; a++) {
        int32_t c = tsc((double)B->xyz[a][i] * scale, w[a]);
        for (int k = 0; k < 3; k++) idx[a][k] = wrap(c + k, g);
    }
}

/* Body i's mass on the 27 cells of its stencil, in units of 1 / unit of the total. */
static inline void spread_body(int64_t *q, const pm_bodies *B, int64_t i, double scale, int32_t g,
                               double unit, int atomic) {
    int32_t idx[3][3];
    double w[3][3];
    stencil(B, i, scale, g, idx, w);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            size_t row = ((size_t)idx[0][a] * g + idx[1][b]) * g;
            double wab = (double)B->m[i] * unit * w[0][a] * w[1][b];
            for (int c = 0; c < 3; c++) {
                int64_t add = llrint(wab * w[2][c]);
                if (atomic) {
#pragma omp atomic
                    q[row + idx[2][c]] += add;
                } else {
                    q[row + idx[2][c]] += add;
                }
            }
        }
}

/* Density (mass per unit volume of the unit box) on M->real. Masses are summed as
 * integers in units of 2^-52 of the total, so the sums do not depend on their order
 * (atomic adds only where threads share the mesh). */
static int assign_mass(pm_mesh *M, const pm_bodies *B, double scale) {
    int32_t g = M->g;
    size_t nr = (size_t)g * g * g;
    int64_t *q = calloc(nr, sizeof *q);
    if (!q) return 1;
    double total = 0.0;
    for (int64_t i = 0; i < B->n; i++) total += B->m[i];
    if (total <= 0.0) total = 1.0;
    double unit = ldexp(1.0, 52) / total;
    int threads = canopy_threads();
    if (threads == 1)
        for (int64_t i = 0; i < B->n; i++) spread_body(q, B, i, scale, g, unit, 0);
    else
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t i = 0; i < B->n; i++) spread_body(q, B, i, scale, g, unit, 1);
    /* The mean density goes now, not with the k = 0 mode: in float32 transforms its
     * rounding, ~sqrt(n) times the fluctuations' modes, gave 7e-4 of median force error
     * at 1M bodies (4e-4 without it). */
    int64_t sum = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : sum)
    for (size_t c = 0; c < nr; c++) sum += q[c];
    double to_density = (double)g * g * g / unit, mean = (double)sum / unit;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t c = 0; c < nr; c++) M->real[c] = (float)((double)q[c] * to_density - mean);
    free(q);
    return 0;
}

/* The Green's function times the Gaussian, over the TSC window squared twice (the
 * assignment's and the interpolation's), with the transforms' 1 / g^3: work -> phi. */
static int potential_modes(pm_mesh *M, double rs) {
    int32_t g = M->g, gz = M->gz;
    double norm = 1.0 / ((double)g * g * g);
    double *k2 = malloc((size_t)g * sizeof *k2), *win = malloc((size_t)g * sizeof *win);
    if (!k2 || !win) {
        free(k2), free(win);
        return 1;
    }
    for (int32_t i = 0; i < g; i++) { /* per axis: (2 pi n)^2 and the window sinc^3 */
        int32_t n = i <= g / 2 ? i : i - g;
        double t = PM_PI * n / g, s = n == 0 ? 1.0 : sin(t) / t;
        k2[i] = 4.0 * PM_PI * PM_PI * n * n, win[i] = s * s * s;
    }
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t i = 0; i < g; i++)
        for (int32_t j = 0; j < g; j++)
            for (int32_t k = 0; k < gz; k++) {
                size_t e = ((size_t)i * g + j) * gz + k;
                double kk = k2[i] + k2[j] + k2[k], w = win[i] * win[j] * win[k];
                double green = kk == 0.0 ? 0.0 : -4.0 * PM_PI / kk * exp(-kk * rs * rs) / (w * w);
                M->phi[e][0] = (float)(green * norm * M->work[e][0]);
                M->phi[e][1] = (float)(green * norm * M->work[e][1]);
            }
    free(k2), free(win);
    return 0;
}

/* work = -i k_axis phi (axis 0..2), or phi itself (axis 3). */
static void mode_component(pm_mesh *M, int axis) {
    int32_t g = M->g, gz = M->gz;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int32_t i = 0; i < g; i++)
        for (int32_t j = 0; j < g; j++) {
            int32_t n3[3] = {i <= g / 2 ? i : i - g, j <= g / 2 ? j : j - g, 0};
            for (int32_t k = 0; k < gz; k++) {
                size_t e = ((size_t)i * g + j) * gz + k;
                if (axis == 3) {
                    M->work[e][0] = M->phi[e][0], M->work[e][1] = M->phi[e][1];
                    continue;
                }
                n3[2] = k;
                /* the Nyquist planes' sine modes are not real on the mesh: dropped */
                int nyq = 2 * n3[axis] == g || 2 * n3[axis] == -g;
                float ka = nyq ? 0.0f : (float)(2.0 * PM_PI * n3[axis]);
                float re = M->phi[e][0], im = M->phi[e][1];
                M->work[e][0] = ka * im, M->work[e][1] = -ka * re;
            }
        }
}

/* out[id * ostride] += factor * (the mesh on M->real at the body), TSC-interpolated,
 * id the body's result index. */
static void interpolate(const pm_mesh *M, const pm_bodies *B, double scale,
                        const unsigned char *active, double factor, float *out, int64_t ostride) {
    int32_t g = M->g;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < B->n; i++) {
        int64_t id = B->ids ? B->ids[i] : i;
        if (active && !active[id]) continue;
        int32_t idx[3][3];
        double w[3][3], s = 0.0;
        stencil(B, i, scale, g, idx, w);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                const float *row = M->real + ((size_t)idx[0][a] * g + idx[1][b]) * g;
                double r =
                    w[2][0] * row[idx[2][0]] + w[2][1] * row[idx[2][1]] + w[2][2] * row[idx[2][2]];
                s += w[0][a] * w[1][b] * r;
            }
        out[id * ostride] += (float)(factor * s);
    }
}

canopy_status canopy_pm_long_range(const float *x, const float *y, const float *z, const float *m,
                                   const int64_t *ids, int64_t n, float box, int32_t grid,
                                   double rs, const unsigned char *active, float *acc, float *pot) {
    if (grid < 8 || grid > 1024 || grid % 2)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: the PM grid must be even, 8..1024 (got %d)", (int)grid);
    if (n == 0) return CANOPY_OK;
    pm_bodies B = {{x, y, z}, m, ids, n};
    pm_mesh M;
    double scale = (double)grid / box; /* coordinate -> cells */
    if (mesh_alloc(&M, grid) || assign_mass(&M, &B, scale)) {
        mesh_free(&M);
        return canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the PM mesh (%d^3)",
                           (int)grid);
    }
    mesh_forward(&M);
    if (potential_modes(&M, rs)) {
        mesh_free(&M);
        return canopy_fail(CANOPY_ERR_NOMEM, "gravity: out of memory for the PM mesh");
    }
    /* unit box -> box: accelerations scale as 1 / box^2, potentials as 1 / box */
    double inv_box = 1.0 / box;
    for (int axis = 0; axis < (pot ? 4 : 3); axis++) {
        mode_component(&M, axis);
        mesh_backward(&M);
        if (axis < 3)
            interpolate(&M, &B, scale, active, inv_box * inv_box, acc + axis, 3);
        else
            interpolate(&M, &B, scale, active, inv_box, pot, 1);
    }
    /* The mesh's potential holds each body's own long-range term erf(r / 2 rs) / r at
     * r = 0, 1 / (rs sqrt(pi)), which the Ewald sum's does not; and the short range,
     * erfc(r / 2 rs) / r, has mean 4 pi rs^2 per unit mass and volume, which the
     * neutralising background takes away (as the k = 0 mode does on the mesh). */
    if (pot) {
        double self = 1.0 / (rs * sqrt(PM_PI)) * inv_box, total = 0.0;
        for (int64_t i = 0; i < n; i++) total += m[i];
        double background = 4.0 * PM_PI * rs * rs * total * inv_box;
        for (int64_t i = 0; i < n; i++) {
            int64_t id = ids ? ids[i] : i;
            if (!active || active[id]) pot[id] += (float)(self * m[i] + background);
        }
    }
    mesh_free(&M);
    return CANOPY_OK;
}

#else

canopy_status canopy_pm_long_range(const float *x, const float *y, const float *z, const float *m,
                                   const int64_t *ids, int64_t n, float box, int32_t grid,
                                   double rs, const unsigned char *active, float *acc, float *pot) {
    (void)x, (void)y, (void)z, (void)m, (void)ids, (void)n, (void)box, (void)grid, (void)rs;
    (void)active, (void)acc, (void)pot;
    return canopy_pm_require();
}

#endif

int canopy_pm_available(void) {
#ifdef CANOPY_HAVE_FFTW
    return 1;
#else
    return 0;
#endif
}

canopy_status canopy_pm_require(void) {
    if (canopy_pm_available()) return CANOPY_OK;
    return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                       "gravity: TreePM needs FFTW, and this canopy was built without it "
                       "(install libfftw3-dev and rebuild, or use --periodic ewald)");
}
