/* SPDX-License-Identifier: MIT */
/* GPU multipole gravity and n-body in a build without CUDA: they say so. */
#ifndef CANOPY_HAVE_CUDA
#include "nbody/gpu_multipole.h"

#include <stddef.h>

static canopy_status no_cuda(void) {
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "GPU gravity: this build has no CUDA");
}
canopy_status gpu_mp_create(gpu_mp **out) {
    *out = NULL;
    return no_cuda();
}
void gpu_mp_free(gpu_mp *m) {
    (void)m;
}
canopy_status gpu_mp_forces(gpu_mp *m, const float *d_xyzm, int64_t n, const gpu_mp_params *p,
                            float *d_acc, float *d_pot, gpu_mp_timing *t) {
    (void)m, (void)d_xyzm, (void)n, (void)p, (void)d_acc, (void)d_pot, (void)t;
    return no_cuda();
}
canopy_status gpu_mp_forces_host(canopy_points bodies, const float *mass, const gpu_mp_params *p,
                                 float *acc, float *pot, gpu_mp_timing *t) {
    (void)bodies, (void)mass, (void)p, (void)acc, (void)pot, (void)t;
    return no_cuda();
}
canopy_status gpu_mp_direct_sample(canopy_points bodies, const float *mass, float softening,
                                   const int64_t *sample, int64_t ns, double *acc, double *pot) {
    (void)bodies, (void)mass, (void)softening, (void)sample, (void)ns, (void)acc, (void)pot;
    return no_cuda();
}
canopy_status canopy_gravity_multipole_gpu(canopy_points bodies, const float *mass,
                                           const canopy_gravity_options *g, int32_t leaf,
                                           float *acc, float *pot, canopy_stats *stats) {
    (void)bodies, (void)mass, (void)g, (void)leaf, (void)acc, (void)pot, (void)stats;
    return no_cuda();
}
canopy_status gpu_nbody_create(const double *pos, const double *vel, const float *mass, int64_t n,
                               const gpu_mp_params *p, gpu_nbody **out) {
    (void)pos, (void)vel, (void)mass, (void)n, (void)p;
    *out = NULL;
    return no_cuda();
}
canopy_status gpu_nbody_step(gpu_nbody *s, double dt, int64_t steps) {
    (void)s, (void)dt, (void)steps;
    return no_cuda();
}
canopy_status gpu_nbody_download(const gpu_nbody *s, double *pos, double *vel) {
    (void)s, (void)pos, (void)vel;
    return no_cuda();
}
canopy_status gpu_nbody_energy(const gpu_nbody *s, int direct, double *kinetic, double *potential,
                               double momentum[3], double angular[3]) {
    (void)s, (void)direct, (void)kinetic, (void)potential, (void)momentum, (void)angular;
    return no_cuda();
}
void gpu_nbody_free(gpu_nbody *s) {
    (void)s;
}
#else
typedef int canopy_gpu_multipole_none_unused;
#endif
