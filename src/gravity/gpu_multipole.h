/* SPDX-License-Identifier: MIT */
/* Internal: multipole gravity and leapfrog n-body on the GPU (docs/nbody.md, "GPU").
 * Every evaluation builds a binary radix tree over 63-bit Morton keys on the device
 * (Karras 2012: ChaNGa-like binary tree, leaves of at most `leaf` bodies), computes
 * mass, centre of mass, tight box and traceless quadrupole bottom-up, and walks it
 * with Liu's bucket-to-node test: one warp per bucket of at most 32 bodies, accepted
 * cells and bodies batched so that each lane evaluates 32 interactions at a time.
 * Builds without CUDA get stubs that return CANOPY_ERR_UNSUPPORTED. */
#ifndef CANOPY_GRAVITY_GPU_MULTIPOLE_H
#define CANOPY_GRAVITY_GPU_MULTIPOLE_H

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { GPU_MP_LEAF_MAX = 16 };
/* Backend auto runs multipole gravity and n-body on the GPU from this many bodies (when
 * one is usable): there it wins by far, and smaller runs keep the CPU's exact bits. */
enum { GPU_MP_AUTO_MIN = 200000 };

/* 1 when backend b runs multipole gravity of n bodies on the GPU: gpu, or auto with
 * n >= GPU_MP_AUTO_MIN and a usable GPU. */
int canopy_gpu_mp_wanted(canopy_backend b, int64_t n);
/* canopy_gravity_choose and canopy_gravity_expected_error for the GPU walk: its own
 * calibration (plummer1m; bench/results/nbody.md, GPU). */
canopy_status canopy_gpu_mp_choose(double accuracy, float *theta, int32_t *order, double *expected);
double canopy_gpu_mp_expected_error(float theta, int32_t order);

typedef struct gpu_mp_params {
    float theta;     /* opening angle > 0 */
    int32_t order;   /* 0 or 2 */
    float softening; /* Plummer softening >= 0 */
    int32_t leaf;    /* a node of at most this many bodies opens into its bodies, 1..16 (0: 8) */
    int32_t
        group; /* bodies per bucket (a warp each): 32 or 64 (0: 64 from 500,000 bodies, else 32) */
} gpu_mp_params;

/* Device times of the phases of the last evaluation (ms, from CUDA events), the
 * walk's counts and the host-array call's copies. */
typedef struct gpu_mp_timing {
    double build_ms, moments_ms, walk_ms, total_ms;
    /* canopy_gpu_mp_forces_host only: host wall of packing + copying the bodies up, and of
     * copying the results back */
    double upload_ms, download_ms;
    int64_t groups; /* buckets walked (one warp each) */
    int64_t tests;  /* bucket-to-node opening tests */
    int64_t cells;  /* accepted cells, summed over buckets */
    int64_t bodies; /* body-body batches entries, summed over buckets */
} gpu_mp_timing;

typedef struct gpu_mp gpu_mp; /* device buffers, grown on demand and reused */
canopy_status canopy_gpu_mp_create(gpu_mp **out);
void canopy_gpu_mp_free(gpu_mp *m);

/* Forces of n bodies given on the device as float (n, 4): x y z mass. d_acc (n, 3),
 * d_pot (n, or NULL) and d_work (n, or NULL) are device memory, in the bodies' order;
 * d_work gets each body's interactions (its bucket's accepted cells plus body terms,
 * the work that cuts distributed domains). Synchronous when t is not NULL (then t gets
 * the phase times). */
canopy_status canopy_gpu_mp_forces(gpu_mp *m, const float *d_xyzm, int64_t n,
                                   const gpu_mp_params *p, float *d_acc, float *d_pot, int *d_work,
                                   gpu_mp_timing *t);

/* The same for host arrays (bodies' first three coordinates; mass NULL: 1/n; pot and
 * work may be NULL). */
canopy_status canopy_gpu_mp_forces_host(canopy_points bodies, const float *mass,
                                        const gpu_mp_params *p, float *acc, float *pot,
                                        int32_t *work, gpu_mp_timing *t);

/* Float64 direct summation on the GPU for bodies sample[0..ns) against all n
 * (host arrays in and out; acc (ns, 3), pot (ns) or NULL). */
canopy_status canopy_gpu_mp_direct_sample(canopy_points bodies, const float *mass, float softening,
                                          const int64_t *sample, int64_t ns, double *acc,
                                          double *pot);

/* canopy_gravity_multipole's GPU backend (its arguments checked by it); device: bodies,
 * masses, acc and pot are device pointers (canopy_gravity_multipole_device; the bodies
 * are checked for NaN there), the work runs after what was queued on stream. */
canopy_status canopy_gravity_multipole_gpu(canopy_points bodies, const float *mass,
                                           const canopy_gravity_options *g, int32_t leaf,
                                           float *acc, float *pot, int device, void *stream,
                                           canopy_stats *stats);

/* Leapfrog kick-drift-kick with the state resident on the device (float64 positions
 * and velocities; forces from canopy_gpu_mp_forces on positions rounded to float32). */
typedef struct gpu_nbody gpu_nbody;
/* Uploads the bodies (mass NULL: 1/n) and computes the first forces. */
canopy_status canopy_gpu_nbody_create(const double *pos, const double *vel, const float *mass,
                                      int64_t n, const gpu_mp_params *p, gpu_nbody **out);
canopy_status canopy_gpu_nbody_step(gpu_nbody *s, double dt, int64_t steps);
/* Copies positions and velocities (n, 3) to the host. */
canopy_status canopy_gpu_nbody_download(const gpu_nbody *s, double *pos, double *vel);
/* Kinetic energy, momentum, angular momentum and potential energy on the device:
 * the potential by float64 direct summation when direct != 0, else half the sum of
 * m phi from the last tree walk. */
canopy_status canopy_gpu_nbody_energy(const gpu_nbody *s, int direct, double *kinetic,
                                      double *potential, double momentum[3], double angular[3]);
void canopy_gpu_nbody_free(gpu_nbody *s);

#ifdef __cplusplus
}
#endif

#endif
