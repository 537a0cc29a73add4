/* SPDX-License-Identifier: MIT */
/* Internal: gravity/'s GPU entry points in the CUDA module (the GPU multipoles, n-body stepping,
 * LET walk, device binding and NCCL exchange), its slice "gravity" (core/cuda_module.h; forwarders
 * in gravity/gpu_forward.c). */
#ifndef CANOPY_GRAVITY_GPU_ENTRIES_H
#define CANOPY_GRAVITY_GPU_ENTRIES_H

#include "core/cuda_module.h"
#include "gravity/gpu_multipole.h"
#include "gravity/let_gpu.h"

#define CANOPY_GRAVITY_GPU_ENTRIES(STATUS, OUT, RELEASE)                                           \
    OUT(canopy_gpu_mp_create, (gpu_mp * *out), (out), out)                                         \
    RELEASE(canopy_gpu_mp_free, (gpu_mp * m), (m))                                                 \
    STATUS(canopy_gpu_mp_forces,                                                                   \
           (gpu_mp * m, const float *d_xyzm, int64_t n, const gpu_mp_params *p, float *d_acc,      \
            float *d_pot, int *d_work, gpu_mp_timing *t),                                          \
           (m, d_xyzm, n, p, d_acc, d_pot, d_work, t))                                             \
    STATUS(canopy_gpu_mp_forces_host,                                                              \
           (canopy_points bodies, const float *mass, const gpu_mp_params *p, float *acc,           \
            float *pot, int32_t *work, gpu_mp_timing *t),                                          \
           (bodies, mass, p, acc, pot, work, t))                                                   \
    STATUS(canopy_gpu_mp_direct_sample,                                                            \
           (canopy_points bodies, const float *mass, float softening, const int64_t *sample,       \
            int64_t ns, double *acc, double *pot),                                                 \
           (bodies, mass, softening, sample, ns, acc, pot))                                        \
    STATUS(canopy_gravity_multipole_gpu,                                                           \
           (canopy_points bodies, const float *mass, const canopy_gravity_options *g,              \
            int32_t leaf, float *acc, float *pot, int device, void *stream, canopy_stats *stats),  \
           (bodies, mass, g, leaf, acc, pot, device, stream, stats))                               \
    OUT(canopy_gpu_nbody_create,                                                                   \
        (const double *pos, const double *vel, const float *mass, int64_t n,                       \
         const gpu_mp_params *p, gpu_nbody **out),                                                 \
        (pos, vel, mass, n, p, out), out)                                                          \
    STATUS(canopy_gpu_nbody_step, (gpu_nbody * s, double dt, int64_t steps), (s, dt, steps))       \
    STATUS(canopy_gpu_nbody_download, (const gpu_nbody *s, double *pos, double *vel),              \
           (s, pos, vel))                                                                          \
    STATUS(canopy_gpu_nbody_energy,                                                                \
           (const gpu_nbody *s, int direct, double *kinetic, double *potential,                    \
            double momentum[3], double angular[3]),                                                \
           (s, direct, kinetic, potential, momentum, angular))                                     \
    RELEASE(canopy_gpu_nbody_free, (gpu_nbody * s), (s))                                           \
    OUT(canopy_gpu_let_create, (gpu_let * *out), (out), out)                                       \
    RELEASE(canopy_gpu_let_free, (gpu_let * g), (g))                                               \
    STATUS(canopy_gpu_let_launch,                                                                  \
           (gpu_let * g, const let_piece *pieces, int32_t n_pieces, canopy_points q,               \
            const int64_t *qid, float inv_theta, float eps2),                                      \
           (g, pieces, n_pieces, q, qid, inv_theta, eps2))                                         \
    STATUS(canopy_gpu_let_finish,                                                                  \
           (gpu_let * g, float *acc, float *pot, int64_t *work, let_walk_stats *stats,             \
            double *walk_seconds),                                                                 \
           (g, acc, pot, work, stats, walk_seconds))                                               \
    STATUS(canopy_gpu_bind_device, (int device), (device))                                         \
    STATUS(canopy_gpu_nccl_load, (void), ())                                                       \
    STATUS(canopy_gpu_nccl_unique_id, (unsigned char *id), (id))                                   \
    OUT(canopy_gpu_nccl_create, (const unsigned char *id, int nranks, int rank, gpu_nccl **out),   \
        (id, nranks, rank, out), out)                                                              \
    RELEASE(canopy_gpu_nccl_free, (gpu_nccl * c), (c))                                             \
    STATUS(canopy_gpu_nccl_alltoallv,                                                              \
           (gpu_nccl * c, const void *send, const int64_t *send_counts,                            \
            const int64_t *recv_counts, char **recv, void *heads, size_t head_bytes),              \
           (c, send, send_counts, recv_counts, recv, heads, head_bytes))

CANOPY_CUDA_SLICE_STRUCT(canopy_gravity_gpu_entries, CANOPY_GRAVITY_GPU_ENTRIES)

#endif
