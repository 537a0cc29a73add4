/* SPDX-License-Identifier: MIT */
/* GPU multipole gravity and n-body (bench/results/nbody.md, "GPU"; issue 15 goals).
 *
 *   canopy-bench-nbody-gpu [--n 1000000] [--eps 0.05] [--reps 11] [--sample 10000]
 *                          [--steps 1000] [--step-n 100000] [--step-theta T]
 *                          [--step-leaf L] [--step-bucket B] [--config ORDER,THETA,LEAF,BUCKET]
 *
 * Forces: plummer1m (canopy_gen_plummer seed 1, the `canopy gen plummer1m` bodies),
 * positions already on the device; per (order, theta, leaf) one warm-up, then `reps`
 * timed evaluations (CUDA events: build = box, keys, sort, radix tree; moments =
 * bottom-up moments and buckets; walk), median (min-max); errors against a float64
 * direct sum on the GPU for `sample` random bodies: median relative error and global
 * rms (sqrt(sum |da|^2 / sum |a|^2)). Steps: `steps` leapfrog steps of a Plummer
 * sphere of step-n bodies (seed 1, eps 0.01, dt 1/128), the state on the device;
 * energy with the float64 direct potential at start and end; steps per second. */
#include "bench_util.h"
#include "canopy.h"
#include "gravity/gpu_multipole.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what) {
    fprintf(stderr, "bench_nbody_gpu: %s: %s\n", what, canopy_last_error());
    return 1;
}

typedef struct config {
    int order;
    float theta;
    int leaf, group;
} config;

static int forces(int64_t n, double eps, int reps, int64_t ns, const config *only) {
    float *pos = malloc(sizeof(float) * 3 * (size_t)n),
          *acc = malloc(sizeof(float) * 3 * (size_t)n);
    float *xyzm = malloc(sizeof(float) * 4 * (size_t)n);
    int64_t *sample = malloc(sizeof(int64_t) * (size_t)ns);
    double *ref = malloc(sizeof(double) * 3 * (size_t)ns);
    if (!pos || !acc || !xyzm || !sample || !ref) return die("out of memory");
    if (canopy_gen_plummer(pos, NULL, n, 1)) return die("plummer");
    for (int64_t i = 0; i < n; i++) {
        memcpy(xyzm + 4 * i, pos + 3 * i, 3 * sizeof(float));
        xyzm[4 * i + 3] = 1.0f / (float)n;
    }
    uint64_t r = 12345;
    for (int64_t k = 0; k < ns; k++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        sample[k] = (int64_t)((r >> 33) % (uint64_t)n);
    }
    canopy_points b = canopy_points_make(pos, n, 3);
    if (canopy_gpu_mp_direct_sample(b, NULL, (float)eps, sample, ns, ref, NULL))
        return die("direct");
    float *d_b = NULL, *d_acc = NULL, *d_pot = NULL;
    if (cudaMalloc((void **)&d_b, sizeof(float) * 4 * (size_t)n) ||
        cudaMalloc((void **)&d_acc, sizeof(float) * 3 * (size_t)n) ||
        cudaMalloc((void **)&d_pot, sizeof(float) * (size_t)n) ||
        cudaMemcpy(d_b, xyzm, sizeof(float) * 4 * (size_t)n, cudaMemcpyHostToDevice))
        return die("cuda");
    gpu_mp *m = NULL;
    if (canopy_gpu_mp_create(&m)) return die("create");
    static const config cfg[] = {
        {0, 0.3f, 8, 32},  {0, 0.4f, 8, 32},  {0, 0.5f, 8, 32},  {2, 0.3f, 8, 32},
        {2, 0.4f, 8, 32},  {2, 0.45f, 8, 32}, {2, 0.5f, 8, 32},  {2, 0.55f, 8, 32},
        {2, 0.6f, 8, 32},  {2, 0.65f, 8, 32}, {2, 0.7f, 8, 32},  {2, 0.8f, 8, 32},
        {2, 0.4f, 8, 64},  {2, 0.5f, 8, 64},  {2, 0.6f, 8, 64},  {2, 0.7f, 8, 64},
        {2, 0.5f, 4, 32},  {2, 0.6f, 4, 32},  {2, 0.5f, 16, 32}, {2, 0.6f, 16, 32},
        {2, 0.5f, 16, 64}, {2, 0.6f, 16, 64},
    };
    printf("## Forces: plummer1m-like, n = %lld, eps = %g, positions on the device\n\n",
           (long long)n, eps);
    printf("%d timed runs after 1 warm-up; ms from CUDA events, median (min-max); errors on "
           "%lld random bodies vs float64 direct sum.\n\n",
           reps, (long long)ns);
    printf("| order | theta | leaf | bucket | median err | rms err | build ms | moments ms | "
           "walk ms | total ms | buckets | tests/bucket | cells/bucket | bodies/bucket |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    double *tb = malloc(sizeof(double) * (size_t)reps), *tm = malloc(sizeof(double) * (size_t)reps);
    double *tw = malloc(sizeof(double) * (size_t)reps), *tt = malloc(sizeof(double) * (size_t)reps);
    size_t n_cfg = only ? 1 : sizeof cfg / sizeof cfg[0];
    for (size_t c = 0; c < n_cfg; c++) {
        const config *k = only ? only : &cfg[c];
        gpu_mp_params p = {k->theta, k->order, (float)eps, k->leaf, k->group};
        gpu_mp_timing t;
        if (canopy_gpu_mp_forces(m, d_b, n, &p, d_acc, d_pot, NULL, &t)) return die("forces");
        for (int k = 0; k < reps; k++) {
            if (canopy_gpu_mp_forces(m, d_b, n, &p, d_acc, d_pot, NULL, &t)) return die("forces");
            tb[k] = t.build_ms, tm[k] = t.moments_ms, tw[k] = t.walk_ms, tt[k] = t.total_ms;
        }
        if (cudaMemcpy(acc, d_acc, sizeof(float) * 3 * (size_t)n, cudaMemcpyDeviceToHost))
            return die("download");
        bench_errors e = bench_force_errors(acc, ref, sample, ns);
        double med = e.median, rms = e.rms;
        bench_summary sb = bench_summarise(tb, reps), sm = bench_summarise(tm, reps);
        bench_summary sw = bench_summarise(tw, reps), st = bench_summarise(tt, reps);
        printf("| %d | %.2f | %d | %d | %.3e | %.3e | %.3f | %.3f | %.3f (%.3f-%.3f) | %.3f "
               "(%.3f-%.3f) | %lld | %.1f | %.1f | %.1f |\n",
               k->order, (double)k->theta, k->leaf, k->group, med, rms, sb.med, sm.med, sw.med,
               sw.min, sw.max, st.med, st.min, st.max, (long long)t.groups,
               (double)t.tests / (double)t.groups, (double)t.cells / (double)t.groups,
               (double)t.bodies / (double)t.groups);
        fflush(stdout);
    }
    canopy_gpu_mp_free(m);
    cudaFree(d_b);
    cudaFree(d_acc);
    cudaFree(d_pot);
    free(pos), free(acc), free(xyzm), free(sample), free(ref), free(tb), free(tm), free(tw),
        free(tt);
    return 0;
}

static int steps(int64_t n, int64_t nsteps, float theta, int leaf, int group) {
    float *pos = malloc(sizeof(float) * 3 * (size_t)n),
          *vel = malloc(sizeof(float) * 3 * (size_t)n);
    double *p64 = malloc(sizeof(double) * 3 * (size_t)n),
           *v64 = malloc(sizeof(double) * 3 * (size_t)n);
    if (!pos || !vel || !p64 || !v64) return die("out of memory");
    if (canopy_gen_plummer(pos, vel, n, 1)) return die("plummer");
    for (int64_t i = 0; i < 3 * n; i++) p64[i] = pos[i], v64[i] = vel[i];
    double dt = 1.0 / 128, eps = 0.01;
    gpu_mp_params p = {theta, 2, (float)eps, leaf, group};
    gpu_nbody *s = NULL;
    if (canopy_gpu_nbody_create(p64, v64, NULL, n, &p, &s)) return die("nbody create");
    double k0, w0, k1, w1, mom[3], ang0[3], ang1[3];
    if (canopy_gpu_nbody_energy(s, 1, &k0, &w0, mom, ang0)) return die("energy");
    double t0 = canopy_now();
    if (canopy_gpu_nbody_step(s, dt, nsteps)) return die("steps");
    double secs = canopy_now() - t0;
    if (canopy_gpu_nbody_energy(s, 1, &k1, &w1, mom, ang1)) return die("energy");
    double e0 = k0 + w0, e1 = k1 + w1;
    printf("\n## %lld leapfrog steps, Plummer n = %lld (seed 1), dt = 1/128, eps = 0.01, "
           "order 2, theta %.2f, leaf %d, bucket %d\n\n",
           (long long)nsteps, (long long)n, (double)theta, leaf,
           group         ? group
           : n >= 500000 ? 64
                         : 32);
    printf(
        "| n | steps | E0 | E end | relative energy error | |L end - L0| | seconds | steps/s |\n");
    printf("|---|---|---|---|---|---|---|---|\n");
    double dl =
        sqrt((ang1[0] - ang0[0]) * (ang1[0] - ang0[0]) + (ang1[1] - ang0[1]) * (ang1[1] - ang0[1]) +
             (ang1[2] - ang0[2]) * (ang1[2] - ang0[2]));
    printf("| %lld | %lld | %.9f | %.9f | %.3e | %.2e | %.3f | %.1f |\n", (long long)n,
           (long long)nsteps, e0, e1, fabs((e1 - e0) / e0), dl, secs, (double)nsteps / secs);
    canopy_gpu_nbody_free(s);
    free(pos), free(vel), free(p64), free(v64);
    return 0;
}

int main(int argc, char **argv) {
    int64_t n = 1000000, ns = 10000, nsteps = 1000, step_n = 100000;
    double eps = 0.05, step_theta = 0.5;
    int reps = 11, leaf = 8, group = 0, have_only = 0;
    config only = {2, 0.5f, 8, 64};
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n"))
            n = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--eps"))
            eps = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sample"))
            ns = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps"))
            nsteps = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--step-n"))
            step_n = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--step-theta"))
            step_theta = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--step-leaf"))
            leaf = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--step-bucket"))
            group = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--config"))
            have_only = sscanf(argv[i + 1], "%d,%f,%d,%d", &only.order, &only.theta, &only.leaf,
                               &only.group) == 4;
        else {
            fprintf(stderr, "bench_nbody_gpu: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    int dev = 0;
    if (cudaGetDeviceCount(&dev) != cudaSuccess || dev == 0) {
        fprintf(stderr, "bench_nbody_gpu: no GPU\n");
        return 77;
    }
    if (ns > n) ns = n;
    if (reps < 1) reps = 1;
    if (n > 0 && forces(n, eps, reps, ns, have_only ? &only : NULL)) return 1;
    if (nsteps > 0 && steps(step_n, nsteps, (float)step_theta, leaf, group)) return 1;
    return 0;
}
