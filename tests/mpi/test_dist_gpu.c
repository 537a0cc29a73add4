// SPDX-License-Identifier: MIT
/* One GPU per rank (dist/gpu_bind.h, gravity/let_gpu.cu) under mpirun -np 1, 2, 4: each
 * rank bound to GPU local_rank % devices; canopy_dist_gravity with backend gpu equal
 * to backend cpu on the same bodies (work the same cells: accelerations within 1e-5
 * relative, most rows bit-identical), Plummer and two far cubes, with masses, a rank
 * without bodies; a short canopy_dist_nbody run on the GPUs tracking the CPU one;
 * canopy_dist_knn with backend gpu giving rows identical to backend cpu; the pieces
 * sent GPU to GPU by NCCL (CANOPY_DIST_NCCL=1) where NCCL loads, with the same forces,
 * and the MPI fallback where it does not; bucket opening (each rank's tree built, its
 * moments and its walk on the device by the single-GPU engine) against the host-built
 * path: forces within its error bound against float64 direct summation, on one rank the
 * single-GPU engine's own forces, and an n-body run whose state stays on the device on
 * one rank (bit for bit canopy_nbody's on the GPU) and tracks the CPU run on several.
 * Exits 77 (on every rank) when some rank sees no GPU. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "core/device.h"
#include "dist/gpu_bind.h"
#include "gravity/force_error.h"
#include "gravity/gpu_multipole.h"
#include "gravity/let_gpu.h"
#include "mpi_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* n bodies on every rank (the global arrays): a Plummer sphere or two unit cubes 10
 * apart, and random masses around 1 / n. */
static void make_bodies(int64_t n, int two_cubes, uint64_t seed, float **pos, float **mass) {
    float *p = malloc((size_t)(n + 1) * 3 * sizeof *p), *m = malloc((size_t)(n + 1) * sizeof *m);
    CHECK_OK(canopy_gen_plummer(p, NULL, n, seed));
    canopy_rng g = canopy_rng_make(seed, 3);
    for (int64_t i = 0; two_cubes && i < 3 * n; i++)
        p[i] = (float)canopy_rng_uniform(&g) + (i >= 3 * (n / 2) ? 10.0f : 0.0f);
    for (int64_t i = 0; i < n; i++) m[i] = (float)((0.5 + canopy_rng_uniform(&g)) / n);
    *pos = p;
    *mass = m;
}

/* Accelerations of n bodies (this rank's block of the global arrays) on cpu and gpu. */
static void check_gravity(int64_t n, int two_cubes, int with_mass, int empty_rank, int nccl,
                          uint64_t seed) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    float *pos = NULL, *mass = NULL;
    make_bodies(n, two_cubes, seed, &pos, &mass);
    int64_t lo, hi;
    mpi_check_block(n, &lo, &hi);
    if (empty_rank && size > 1) { /* the last rank passes no bodies */
        int64_t r1 = size - 1;
        lo = rank < r1 ? n * rank / r1 : n;
        hi = rank < r1 ? n * (rank + 1) / r1 : n;
    }
    int64_t nl = hi - lo;
    canopy_points mine = canopy_points_make(pos + 3 * lo, nl, 3);
    const float *m = with_mass ? mass + lo : NULL;
    canopy_gravity_options go = canopy_gravity_options_default();
    go.opening = CANOPY_OPENING_BODY;
    go.theta = 0.5f;
    go.order = 2;
    go.softening = 0.01f;
    canopy_run_options cpu = canopy_run_options_default(), gpu = cpu;
    cpu.backend = CANOPY_BACKEND_CPU;
    gpu.backend = CANOPY_BACKEND_GPU;
    float *ac = malloc((size_t)(nl + 1) * 3 * 4), *ag = malloc((size_t)(nl + 1) * 3 * 4);
    float *pc = malloc((size_t)(nl + 1) * 4), *pg = malloc((size_t)(nl + 1) * 4);
    canopy_dist_stats sc, sg;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, mine, m, &go, &cpu, ac, pc, &sc));
    if (nccl) setenv("CANOPY_DIST_NCCL", "1", 1);
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, mine, m, &go, &gpu, ag, pg, &sg));
    unsetenv("CANOPY_DIST_NCCL");
    if (nccl) { /* NCCL where every rank can load it and has a GPU of its own, else MPI
                 * (said on stderr) */
        dist_gpu_binding bb = dist_gpu_bound();
        int have = canopy_gpu_nccl_load() == CANOPY_OK && bb.local_size <= bb.n_devices, all = 0;
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        CHECK_MSG(sg.nccl == all, "rank %d: pieces by NCCL %d, NCCL usable on all ranks %d", rank,
                  (int)sg.nccl, all);
        if (rank == 0) printf("NCCL %s\n", all ? "used" : "not usable here: MPI used");
    }
    dist_gpu_binding b = dist_gpu_bound();
    CHECK_MSG(sg.device == b.local_rank % b.n_devices && sc.device == -1,
              "rank %d (local %d of %d, %d GPUs): device %d, cpu run's %d", rank, b.local_rank,
              b.local_size, b.n_devices, (int)sg.device, (int)sc.device);
    CHECK_MSG(sc.interactions == sg.interactions, "rank %d: %lld interactions on cpu, %lld on gpu",
              rank, (long long)sc.interactions, (long long)sg.interactions);
    int64_t bad = 0, exact = 0;
    for (int64_t i = 0; i < nl; i++) {
        double norm = 0.0, e = 0.0;
        for (int j = 0; j < 3; j++) {
            norm += (double)ac[3 * i + j] * ac[3 * i + j];
            e += fabs((double)ac[3 * i + j] - ag[3 * i + j]);
        }
        bad += e > 1e-5 * sqrt(norm) || fabs((double)pc[i] - pg[i]) > 1e-5 * fabs((double)pc[i]);
        exact += memcmp(ac + 3 * i, ag + 3 * i, 12) == 0 && pc[i] == pg[i];
    }
    CHECK_MSG(bad == 0, "rank %d: %lld of %lld bodies' gpu forces differ from the cpu's (n %lld)",
              rank, (long long)bad, (long long)nl, (long long)n);
    int64_t tot[2] = {exact, nl}, sum[2];
    MPI_Allreduce(tot, sum, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("gravity n %lld%s%s%s: %lld of %lld rows bit-identical on gpu and cpu\n",
               (long long)n, two_cubes ? ", two cubes" : "", with_mass ? ", masses" : "",
               nccl ? ", NCCL asked for" : "", (long long)sum[0], (long long)sum[1]);
    free(pos);
    free(mass);
    free(ac);
    free(ag);
    free(pc);
    free(pg);
}

/* Median relative error of this rank's accelerations acc (bodies lo.. of the global
 * pos, mass) against float64 direct summation over all n. */
static double block_error(const float *pos, const float *mass, int64_t n, int64_t lo, int64_t nl,
                          float eps, const float *acc) {
    int64_t *sample = calloc((size_t)nl + 1, sizeof *sample);
    double *ref = malloc((size_t)(nl + 1) * 3 * sizeof *ref), *rel = malloc((size_t)(nl + 1) * 8);
    for (int64_t i = 0; i < nl; i++) sample[i] = lo + i;
    CHECK_OK(canopy_gravity_direct_sample(canopy_points_make(pos, n, 3), mass, eps, sample, nl, ref,
                                          NULL));
    /* acc holds the block's rows only: sample indices relative to it */
    for (int64_t i = 0; i < nl; i++) sample[i] = i;
    canopy_nbody_relative_errors(acc, ref, sample, nl, rel);
    double med = nl > 0 ? rel[nl / 2] : 0.0;
    free(sample);
    free(ref);
    free(rel);
    return med;
}

/* Bucket opening on GPU ranks (the device build) against body opening built on the host:
 * each rank's median error against direct summation within max(2x the host-built's,
 * the GPU table's calibrated error); on one rank the single-GPU engine's forces. */
static void check_device_build(int64_t n, int two_cubes, uint64_t seed) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    float *pos = NULL, *mass = NULL;
    make_bodies(n, two_cubes, seed, &pos, &mass);
    int64_t lo, hi;
    mpi_check_block(n, &lo, &hi);
    int64_t nl = hi - lo;
    canopy_points mine = canopy_points_make(pos + 3 * lo, nl, 3);
    canopy_gravity_options go = canopy_gravity_options_default();
    go.theta = 0.5f;
    go.order = 2;
    go.softening = 0.01f;
    canopy_run_options ro = canopy_run_options_default();
    ro.backend = CANOPY_BACKEND_GPU;
    float *ab = malloc((size_t)(nl + 1) * 3 * 4), *ad = malloc((size_t)(nl + 1) * 3 * 4);
    canopy_dist_stats sb, sd;
    go.opening = CANOPY_OPENING_BODY;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, mine, mass + lo, &go, &ro, ab, NULL, &sb));
    go.opening = CANOPY_OPENING_BUCKET;
    CHECK_OK(canopy_dist_gravity(MPI_COMM_WORLD, mine, mass + lo, &go, &ro, ad, NULL, &sd));
    CHECK_MSG(sd.opening == CANOPY_OPENING_BUCKET && sd.tree == CANOPY_GRAVITY_TREE_BINARY &&
                  sb.opening == CANOPY_OPENING_BODY && sd.device >= 0,
              "rank %d: opening %d tree %d device %d (bucket), opening %d (body)", rank,
              (int)sd.opening, (int)sd.tree, (int)sd.device, (int)sb.opening);
    CHECK_MSG(sd.interactions > 0 || nl == 0, "rank %d: no interactions counted", rank);
    double eb = block_error(pos, mass, n, lo, nl, go.softening, ab);
    double ed = block_error(pos, mass, n, lo, nl, go.softening, ad);
    double bound = fmax(2.0 * eb, canopy_gpu_mp_expected_error(go.theta, go.order));
    CHECK_MSG(ed <= bound, "rank %d: device-built median error %.3g, host-built %.3g (bound %.3g)",
              rank, ed, eb, bound);
    if (size == 1) { /* one rank: the single-GPU engine, no pieces */
        float *as = malloc((size_t)(n + 1) * 3 * 4);
        CHECK_OK(canopy_gravity_multipole(mine, mass, &go, &ro, as, NULL, NULL));
        int64_t off = 0;
        for (int64_t i = 0; i < n; i++) {
            double norm = 0.0, e = 0.0;
            for (int j = 0; j < 3; j++) {
                norm += (double)as[3 * i + j] * as[3 * i + j];
                e += fabs((double)as[3 * i + j] - ad[3 * i + j]);
            }
            off += e > 1e-5 * sqrt(norm);
        }
        /* the curve placement may reorder bodies with equal Morton keys: a few rows */
        CHECK_MSG(off <= n / 1000,
                  "one rank: %lld of %lld rows differ from canopy_gravity_multipole"
                  " on the GPU",
                  (long long)off, (long long)n);
        CHECK_MSG(sd.bytes_sent == 0 && sd.messages == 0, "one rank sent %lld bytes",
                  (long long)sd.bytes_sent);
        free(as);
    }
    if (rank == 0)
        printf("device build n %lld%s: median error %.3g (bucket, device) vs %.3g (body, host) on "
               "rank 0\n",
               (long long)n, two_cubes ? ", two cubes" : "", ed, eb);
    free(pos);
    free(mass);
    free(ab);
    free(ad);
}

/* A short n-body run on the GPUs against the same run on the CPUs. */
static void check_nbody(canopy_opening opening, uint64_t seed) {
    enum { N = 3000, STEPS = 10 };
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    int bucket = opening == CANOPY_OPENING_BUCKET;
    float *pf = malloc(3 * N * sizeof *pf), *vf = malloc(3 * N * sizeof *vf);
    double *pos = malloc(3 * N * sizeof *pos), *vel = malloc(3 * N * sizeof *vel);
    CHECK_OK(canopy_gen_plummer(pf, vf, N, seed));
    for (int i = 0; i < 3 * N; i++) pos[i] = pf[i], vel[i] = vf[i];
    canopy_nbody_options o = canopy_nbody_options_default();
    o.gravity.opening = CANOPY_OPENING_BODY;
    o.dt = 1.0 / 64;
    o.gravity.softening = 0.05f;
    o.gravity.theta = 0.5f;
    o.gravity.order = 2;
    int64_t lo, hi;
    mpi_check_block(N, &lo, &hi);
    double *end[2] = {rank == 0 ? malloc(3 * N * sizeof(double)) : NULL,
                      rank == 0 ? malloc(3 * N * sizeof(double)) : NULL};
    double de[2] = {0.0, 0.0};
    for (int k = 0; k < 2; k++) {
        o.run.backend = k ? CANOPY_BACKEND_GPU : CANOPY_BACKEND_CPU;
        o.gravity.opening = k ? opening : CANOPY_OPENING_BODY; /* bucket: GPU ranks only */
        canopy_dist_nbody *d = NULL;
        CHECK_OK(canopy_dist_nbody_create(MPI_COMM_WORLD, pos + 3 * lo, vel + 3 * lo, NULL, hi - lo,
                                          &o, &d));
        if (!d) return;
        canopy_nbody_energy e0, e;
        CHECK_OK(canopy_dist_nbody_energy(d, N, &e0));
        CHECK_OK(canopy_dist_nbody_step(d, STEPS));
        CHECK_OK(canopy_dist_nbody_energy(d, N, &e));
        de[k] = fabs((e.total - e0.total) / e0.total);
        CHECK_OK(canopy_dist_nbody_gather(d, 0, end[k], NULL));
        canopy_dist_stats st = canopy_dist_nbody_stats(d);
        CHECK_MSG(k == 0 || st.device >= 0, "rank %d: the GPU run reports device %d", rank,
                  (int)st.device);
        canopy_dist_nbody_free(d);
    }
    if (rank == 0) {
        /* body opening: the CPU's sums; bucket: another tree, within its force error */
        double dmax = 0.0, tol = bucket ? 1e-3 : 1e-4;
        for (int i = 0; i < 3 * N; i++) dmax = fmax(dmax, fabs(end[0][i] - end[1][i]));
        CHECK_MSG(dmax < tol, "gpu positions differ from the cpu run's by %.3g", dmax);
        CHECK_MSG(de[1] <= (bucket ? 3.0 : 2.0) * de[0] + (bucket ? 1e-6 : 1e-7),
                  "|dE/E| gpu %.3g, cpu %.3g", de[1], de[0]);
        printf("nbody%s: %d steps, |dE/E| gpu %.3g cpu %.3g, max position difference %.3g\n",
               bucket ? " (bucket, device build)" : "", STEPS, de[1], de[0], dmax);
    }
    if (bucket && size == 1) { /* the state on the device: canopy_nbody's GPU run, bit for bit */
        canopy_nbody *one = NULL;
        CHECK_OK(canopy_nbody_create(pos, vel, NULL, N, &o, &one));
        if (one) {
            CHECK_OK(canopy_nbody_step(one, STEPS));
            CHECK_MSG(memcmp(canopy_nbody_positions(one), end[1], 3 * N * sizeof(double)) == 0,
                      "one GPU rank's n-body run differs from canopy_nbody's on the GPU");
            canopy_nbody_free(one);
        }
    }
    free(end[0]);
    free(end[1]);
    free(pf);
    free(vf);
    free(pos);
    free(vel);
}

/* canopy_dist_knn with backend gpu: the rows of backend cpu, exactly. */
static void check_knn(uint64_t seed) {
    enum { NR = 20000, NQ = 5000, K = 8 };
    float *ref = malloc(3 * NR * sizeof *ref), *qry = malloc(3 * NQ * sizeof *qry);
    canopy_rng g = canopy_rng_make(seed, 7);
    for (int i = 0; i < 3 * NR; i++) ref[i] = (float)canopy_rng_uniform(&g);
    for (int i = 0; i < 3 * NQ; i++) qry[i] = (float)canopy_rng_uniform(&g);
    for (int i = 0; i < 3 * 50; i++) ref[3 * NR - 1 - i] = ref[i]; /* duplicates */
    int64_t rl, rh, ql, qh;
    mpi_check_block(NR, &rl, &rh);
    mpi_check_block(NQ, &ql, &qh);
    int64_t nq = qh - ql;
    int64_t *ic = malloc((size_t)(nq * K + 1) * 8), *ig = malloc((size_t)(nq * K + 1) * 8);
    float *dc = malloc((size_t)(nq * K + 1) * 4), *dg = malloc((size_t)(nq * K + 1) * 4);
    canopy_run_options cpu = canopy_run_options_default(), gpu = cpu;
    cpu.backend = CANOPY_BACKEND_CPU;
    gpu.backend = CANOPY_BACKEND_GPU;
    canopy_dist_stats st;
    canopy_points r = canopy_points_make(ref + 3 * rl, rh - rl, 3);
    canopy_points q = canopy_points_make(qry + 3 * ql, nq, 3);
    CHECK_OK(canopy_dist_knn(MPI_COMM_WORLD, r, NULL, q, K, &cpu, ic, dc, NULL));
    CHECK_OK(canopy_dist_knn(MPI_COMM_WORLD, r, NULL, q, K, &gpu, ig, dg, &st));
    CHECK_MSG(st.device >= 0, "knn on the GPU reports device %d", (int)st.device);
    int64_t diff = 0;
    for (int64_t i = 0; i < nq * K; i++) diff += ic[i] != ig[i] || dc[i] != dg[i];
    CHECK_MSG(diff == 0, "rank %d: %lld of %lld knn entries differ between gpu and cpu",
              canopy_dist_rank(MPI_COMM_WORLD), (long long)diff, (long long)(nq * K));
    free(ref);
    free(qry);
    free(ic);
    free(ig);
    free(dc);
    free(dg);
}

int main(int argc, char **argv) {
    mpi_check_init(&argc, &argv);
    int mine = canopy_gpu_usable(), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all) {
        int rc = canopy_dist_rank(MPI_COMM_WORLD) == 0 ? check_skip(canopy_gpu_why_not()) : 77;
        MPI_Finalize();
        return rc;
    }
    uint64_t seed = mpi_check_seed();
    check_gravity(5000, 0, 0, 0, 0, seed);
    check_gravity(20000, 0, 1, 0, 0, seed + 1);
    check_gravity(8000, 1, 1, 0, 0, seed + 2);
    check_gravity(3000, 0, 1, 1, 0, seed + 3);
    check_gravity(1, 0, 0, 0, 0, seed + 4);
    check_gravity(20000, 0, 1, 0, 1, seed + 8);
    check_nbody(CANOPY_OPENING_BODY, seed + 5);
    check_device_build(20000, 0, seed + 9);
    check_device_build(8000, 1, seed + 10);
    check_nbody(CANOPY_OPENING_BUCKET, seed + 11);
    check_knn(seed + 6);
    return mpi_check_finish();
}
