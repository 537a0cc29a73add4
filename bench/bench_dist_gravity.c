/* SPDX-License-Identifier: MIT */
/* Distributed gravity under mpirun (bench/results/distributed.md): a Plummer sphere
 * (same seed on every rank, each rank starting with its block), moved to Hilbert
 * domains, then the force evaluation of canopy_dist_gravity's core repeated:
 *   per rank: bodies, LET bytes sent and received (the exchange alone, without the
 *   decomposition), interactions (expansions + body terms), local and communication
 *   seconds (median of --reps); then the same after the domains are cut again by the
 *   interactions each body needed (as canopy_dist_nbody does every step): bodies,
 *   interactions, local + communication seconds, and its split into build (tree,
 *   moments, exports), local walk, remote walk (on the GPU: the kernels' own times,
 *   which overlap the build) and communication, and the GPU the rank ran on;
 *   job: the whole canopy_dist_gravity call (decomposition, forces, return), median
 *   and min-max of --reps, and the median relative error of its accelerations against
 *   float64 direct summation on 1000 bodies;
 *   --nbody S: then S leapfrog steps of canopy_dist_nbody (dt 1/128) from the same
 *   bodies: seconds per step and the relative energy error after S steps.
 * The last line, "result: key value ...", is for bench/run_dist_2gpu.sh. With
 * CANOPY_DIST_NCCL=1 the pieces go GPU to GPU by NCCL (said in the output).
 * --backend gpu runs the walks on one GPU per rank (local rank % visible devices); a
 * warm-up evaluation then comes first (module load, CUDA context, buffers).
 * usage: mpirun -np R canopy-bench-dist-gravity [--n N] [--reps K] [--theta T]
 *        [--order P] [--eps E] [--backend cpu|gpu|auto] [--nbody S]
 *        [--opening body|list|bucket] [--tree binary|oct] (list: the single-process list
 *        engine under the LET, CPU ranks only; its one walk's time is the local walk's;
 *        bucket: GPU ranks only, the single-GPU engine for the local forces, its build,
 *        moments and walk the device's times) */
#include "dist/gravity.h"
#include "gravity/force_error.h"

#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rank_row {
    int64_t n, sent, received, interactions;
    double local, comm;
    int64_t n_bal, interactions_bal;      /* after the cut by measured work */
    double seconds_bal;                   /* local + communication, median */
    double build, lwalk, rwalk, comm_bal; /* its split, medians */
    double tree, moments;                 /* of build: octree, quadrupoles + boxes */
    int64_t device;                       /* -1: CPU */
    int64_t nccl;                         /* the pieces went by NCCL */
} rank_row;

/* Medians of a force evaluation's times over the repeats. */
typedef struct eval_times {
    double local, comm, both, build, lwalk, rwalk, tree, moments;
} eval_times;

/* Rows of a body on its way to a domain. */
typedef struct row {
    float x[3], m;
    int64_t gid;
} row;

/* Moves the n bodies to the domains canopy_dist_decompose gives for their work w
 * (NULL: equal counts); *rows is replaced. */
static void place(row **rows, int64_t *n, const double *w) {
    int32_t *dest = malloc((size_t)(*n + 1) * sizeof *dest);
    float *x = malloc((size_t)(*n + 1) * 3 * sizeof *x);
    for (int64_t i = 0; i < *n; i++) memcpy(x + 3 * i, (*rows)[i].x, sizeof(*rows)[i].x);
    row *got = NULL;
    int64_t ng = 0;
    if (canopy_dist_decompose(MPI_COMM_WORLD, canopy_points_make(x, *n, 3), w, CANOPY_CURVE_HILBERT,
                              dest) ||
        canopy_dist_exchange(MPI_COMM_WORLD, *rows, *n, sizeof **rows, dest, (void **)&got, &ng,
                             NULL))
        canopy_dist_abort(MPI_COMM_WORLD, "decomposition: %s", canopy_last_error());
    free(dest);
    free(x);
    canopy_free(*rows);
    *rows = got;
    *n = ng;
}

/* reps force evaluations of this rank's domain (after `warm` untimed ones): medians
 * of the times; work receives each body's interactions. */
static void evaluate(const row *rows, int64_t n, const canopy_gravity_options *g, int use_gpu,
                     int warm, int reps, double *work, eval_times *et, canopy_dist_stats *last) {
    float *x = malloc((size_t)(n + 1) * 3 * sizeof *x), *m = malloc((size_t)(n + 1) * sizeof *m);
    float *acc = malloc((size_t)(n + 1) * 3 * sizeof *acc);
    int64_t *gid = malloc((size_t)(n + 1) * sizeof *gid);
    double *t[8];
    for (int k = 0; k < 8; k++) t[k] = malloc((size_t)reps * sizeof(double));
    for (int64_t i = 0; i < n; i++) {
        memcpy(x + 3 * i, rows[i].x, sizeof rows[i].x);
        m[i] = rows[i].m;
        gid[i] = rows[i].gid;
    }
    for (int r = -warm; r < reps; r++) {
        memset(last, 0, sizeof *last);
        MPI_Barrier(MPI_COMM_WORLD);
        if (dist_domain_forces(MPI_COMM_WORLD, canopy_points_make(x, n, 3), m, gid, g, 0, use_gpu,
                               acc, NULL, work, last))
            canopy_dist_abort(MPI_COMM_WORLD, "forces: %s", canopy_last_error());
        if (r < 0) continue;
        t[0][r] = last->local_seconds;
        t[1][r] = last->comm_seconds;
        t[2][r] = last->local_seconds + last->comm_seconds;
        t[3][r] = last->build_seconds;
        t[4][r] = last->local_walk_seconds;
        t[5][r] = last->remote_walk_seconds;
        t[6][r] = last->tree_seconds;
        t[7][r] = last->moments_seconds;
    }
    double *dst[8] = {&et->local, &et->comm,  &et->both, &et->build,
                      &et->lwalk, &et->rwalk, &et->tree, &et->moments};
    for (int k = 0; k < 8; k++) {
        *dst[k] = bench_summarise(t[k], reps).med;
        free(t[k]);
    }
    free(x);
    free(m);
    free(acc);
    free(gid);
}

/* Median relative error of the accelerations of all n bodies (gathered on rank 0,
 * global order) against float64 direct summation on 1000 of them; 0 on other ranks. */
static double sample_error(const float *pos, int64_t n, const float *acc_local, int64_t nl) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    int *counts = malloc((size_t)size * sizeof *counts), *displs = malloc((size_t)size * 4);
    int mine = (int)(3 * nl);
    MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0, off = 0; rank == 0 && r < size; r++) {
        displs[r] = off;
        off += counts[r];
    }
    float *acc = rank == 0 ? malloc((size_t)n * 3 * sizeof *acc) : NULL;
    MPI_Gatherv(acc_local, mine, MPI_FLOAT, acc, counts, displs, MPI_FLOAT, 0, MPI_COMM_WORLD);
    double med = 0.0;
    if (rank == 0) {
        enum { NS = 1000 };
        int64_t ns = n < NS ? n : NS, *sample = malloc((size_t)ns * sizeof *sample);
        double *ref = malloc((size_t)ns * 3 * sizeof *ref), *rel = malloc((size_t)ns * 8);
        float *mass = malloc((size_t)n * sizeof *mass);
        for (int64_t i = 0; i < n; i++) mass[i] = (float)(1.0 / (double)n);
        for (int64_t k = 0; k < ns; k++) sample[k] = k * (n / ns);
        if (canopy_gravity_direct_sample(canopy_points_make(pos, n, 3), mass, 0.01f, sample, ns,
                                         ref, NULL))
            canopy_dist_abort(MPI_COMM_WORLD, "direct sample: %s", canopy_last_error());
        canopy_nbody_relative_errors(acc, ref, sample, ns, rel);
        med = rel[ns / 2];
        free(sample);
        free(ref);
        free(rel);
        free(mass);
    }
    free(acc);
    free(counts);
    free(displs);
    return med;
}

/* steps leapfrog steps of canopy_dist_nbody from the bodies (velocities vel): seconds
 * per step (slowest rank) and |E(end) - E(0)| / |E(0)| (tree potentials). */
static void nbody_run(const float *pos, const float *vel, int64_t lo, int64_t nl,
                      const canopy_gravity_options *g, canopy_backend backend, int steps,
                      double *per_step, double *de) {
    double *p = malloc((size_t)(nl + 1) * 3 * sizeof *p), *v = malloc((size_t)(nl + 1) * 3 * 8);
    for (int64_t i = 0; i < 3 * nl; i++) {
        p[i] = pos[3 * lo + i];
        v[i] = vel[3 * lo + i];
    }
    canopy_nbody_options o = canopy_nbody_options_default();
    o.gravity = *g;
    o.dt = 1.0 / 128;
    o.run.backend = backend;
    canopy_dist_nbody *s = NULL;
    canopy_nbody_energy e0, e1;
    if (canopy_dist_nbody_create(MPI_COMM_WORLD, p, v, NULL, nl, &o, &s) ||
        canopy_dist_nbody_energy(s, 0, &e0))
        canopy_dist_abort(MPI_COMM_WORLD, "nbody: %s", canopy_last_error());
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (canopy_dist_nbody_step(s, steps))
        canopy_dist_abort(MPI_COMM_WORLD, "nbody: %s", canopy_last_error());
    double t = MPI_Wtime() - t0;
    MPI_Allreduce(&t, per_step, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *per_step /= steps;
    if (canopy_dist_nbody_energy(s, 0, &e1))
        canopy_dist_abort(MPI_COMM_WORLD, "nbody: %s", canopy_last_error());
    *de = fabs((e1.total - e0.total) / e0.total);
    canopy_dist_nbody_free(s);
    free(p);
    free(v);
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    canopy_dist_set_fatal_handler(MPI_COMM_WORLD);
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    int64_t n = 200000;
    int reps = 3, steps = 0;
    canopy_backend backend = CANOPY_BACKEND_CPU;
    canopy_gravity_options g = canopy_gravity_options_default();
    g.opening = CANOPY_OPENING_BODY; /* the distributed walk's */
    g.theta = 0.5f;
    g.order = 2;
    g.softening = 0.01f;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--n"))
            n = atoll(argv[i + 1]);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--theta"))
            g.theta = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--order"))
            g.order = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--eps"))
            g.softening = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--opening") && !strcmp(argv[i + 1], "bucket"))
            g.opening = CANOPY_OPENING_BUCKET;
        else if (!strcmp(argv[i], "--opening") &&
                 (!strcmp(argv[i + 1], "list") || !strcmp(argv[i + 1], "body")))
            g.opening = strcmp(argv[i + 1], "list") ? CANOPY_OPENING_BODY : CANOPY_OPENING_LIST;
        else if (!strcmp(argv[i], "--tree") &&
                 (!strcmp(argv[i + 1], "binary") || !strcmp(argv[i + 1], "oct")))
            g.tree =
                strcmp(argv[i + 1], "oct") ? CANOPY_GRAVITY_TREE_BINARY : CANOPY_GRAVITY_TREE_OCT;
        else if (!strcmp(argv[i], "--nbody"))
            steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--backend")) {
            if (canopy_backend_parse(argv[i + 1], &backend))
                canopy_dist_abort(MPI_COMM_WORLD, "--backend: %s", canopy_last_error());
        } else
            canopy_dist_abort(MPI_COMM_WORLD, "unknown option %s", argv[i]);
    }
    if (n < 1 || reps < 1 || steps < 0)
        canopy_dist_abort(MPI_COMM_WORLD, "need --n >= 1, --reps >= 1 and --nbody >= 0");
    int use_gpu = 0;
    if (dist_gravity_backend(MPI_COMM_WORLD, backend, &g, n, &use_gpu))
        canopy_dist_abort(MPI_COMM_WORLD, "%s", canopy_last_error());
    float *pos = malloc((size_t)n * 3 * sizeof *pos), *vel = malloc((size_t)n * 3 * sizeof *vel);
    if (!pos || !vel || canopy_gen_plummer(pos, vel, n, 1))
        canopy_dist_abort(MPI_COMM_WORLD, "cannot make the bodies");
    int64_t lo = n * rank / size, hi = n * (rank + 1) / size, nl = hi - lo;
    canopy_points mine = canopy_points_make(pos + 3 * lo, nl, 3);

    /* The Hilbert domains, as canopy_dist_gravity makes them (equal counts). */
    row *rows = NULL; /* canopy_alloc'd: place() hands it to canopy_free */
    if (canopy_alloc((void **)&rows, (size_t)nl + 1, sizeof *rows))
        canopy_dist_abort(MPI_COMM_WORLD, "out of memory");
    for (int64_t i = 0; i < nl; i++) {
        memcpy(rows[i].x, pos + 3 * (lo + i), sizeof rows[i].x);
        rows[i].m = (float)(1.0 / (double)n);
        rows[i].gid = lo + i;
    }
    int64_t nd = nl;
    place(&rows, &nd, NULL);
    rank_row me;
    memset(&me, 0, sizeof me);
    me.n = nd;
    double *work = malloc((size_t)(nd + 1) * sizeof *work);
    canopy_dist_stats st;
    eval_times et;
    evaluate(rows, nd, &g, use_gpu, use_gpu, reps, work, &et, &st);
    me.local = et.local;
    me.comm = et.comm;
    me.sent = st.bytes_sent;
    me.received = st.bytes_received;
    me.interactions = st.interactions;
    me.device = st.device;
    /* Cut again by the interactions each body needed, and evaluate again. */
    place(&rows, &nd, work);
    free(work);
    work = malloc((size_t)(nd + 1) * sizeof *work);
    me.n_bal = nd;
    evaluate(rows, nd, &g, use_gpu, 0, reps, work, &et, &st);
    me.seconds_bal = et.both;
    me.build = et.build;
    me.lwalk = et.lwalk;
    me.rwalk = et.rwalk;
    me.comm_bal = et.comm;
    me.tree = et.tree;
    me.moments = et.moments;
    me.interactions_bal = st.interactions;
    me.nccl = st.nccl;

    double *t_job = malloc((size_t)reps * sizeof(double));
    float *acc2 = malloc((size_t)(nl + 1) * 3 * sizeof *acc2);
    canopy_run_options ro = canopy_run_options_default();
    ro.backend = backend;
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (canopy_dist_gravity(MPI_COMM_WORLD, mine, NULL, &g, &ro, acc2, NULL, NULL))
            canopy_dist_abort(MPI_COMM_WORLD, "canopy_dist_gravity: %s", canopy_last_error());
        double t = MPI_Wtime() - t0, worst = 0.0;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t_job[r] = worst;
    }
    bench_summary job = bench_summarise(t_job, reps);
    double err = sample_error(pos, n, acc2, nl), per_step = 0.0, de = 0.0;
    if (steps > 0) nbody_run(pos, vel, lo, nl, &g, backend, steps, &per_step, &de);

    rank_row *all = rank == 0 ? malloc((size_t)size * sizeof *all) : NULL;
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int64_t tot_int = 0, tot_bytes = 0;
        double slow = 0.0, slow_bal = 0.0, mx[6] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
        printf("# n %lld, theta %g, order %d, eps %g, ranks %d, threads/rank %d, reps %d, "
               "backend %s\n",
               (long long)n, (double)g.theta, (int)g.order, (double)g.softening, size,
               canopy_threads(), reps, use_gpu ? "gpu" : "cpu");
        printf("| rank | GPU | bodies | LET bytes sent | LET bytes received | interactions | "
               "local s | comm s | balanced: bodies | interactions | local + comm s | build s | "
               "of which octree s | moments s | local walk s | remote walk s | comm s |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int r = 0; r < size; r++) {
            const rank_row *w = all + r;
            char dev[24] = "cpu";
            if (w->device >= 0) snprintf(dev, sizeof dev, "%lld", (long long)w->device);
            printf("| %d | %s | %lld | %lld | %lld | %lld | %.3f | %.3f | %lld | %lld | %.3f | "
                   "%.3f | %.3f | %.3f | %.3f | %.3f | %.3f |\n",
                   r, dev, (long long)w->n, (long long)w->sent, (long long)w->received,
                   (long long)w->interactions, w->local, w->comm, (long long)w->n_bal,
                   (long long)w->interactions_bal, w->seconds_bal, w->build, w->tree, w->moments,
                   w->lwalk, w->rwalk, w->comm_bal);
            tot_int += w->interactions;
            tot_bytes += w->sent;
            slow = w->local + w->comm > slow ? w->local + w->comm : slow;
            slow_bal = w->seconds_bal > slow_bal ? w->seconds_bal : slow_bal;
            const double v[6] = {w->build, w->lwalk, w->rwalk, w->comm_bal, w->tree, w->moments};
            for (int k = 0; k < 6; k++) mx[k] = v[k] > mx[k] ? v[k] : mx[k];
        }
        printf("force evaluation, slowest rank: equal counts %.3f s, balanced by measured work "
               "%.3f s\n",
               slow, slow_bal);
        printf("total: LET bytes %lld (%.1f per body), interactions %lld (%.1f per body); "
               "canopy_dist_gravity %.3f s median (%.3f-%.3f); median error vs direct %.3g\n",
               (long long)tot_bytes, (double)tot_bytes / (double)n, (long long)tot_int,
               (double)tot_int / (double)n, job.med, job.min, job.max, err);
        if (steps > 0)
            printf("n-body: %d steps, %.4g s per step, |dE/E| %.3g\n", steps, per_step, de);
        printf("transport of the pieces: %s\n", all[0].nccl ? "NCCL, GPU to GPU" : "MPI, host");
        printf(
            "result: ranks %d n %lld gpu %d nccl %d equal %.4f balanced %.4f build %.4f lwalk %.4f "
            "rwalk %.4f comm %.4f job %.4f jobmin %.4f jobmax %.4f err %.4g bytes %lld "
            "steps %d step %.4f de %.4g tree %.4f moments %.4f\n",
            size, (long long)n, use_gpu, (int)all[0].nccl, slow, slow_bal, mx[0], mx[1], mx[2],
            mx[3], job.med, job.min, job.max, err, (long long)tot_bytes, steps, per_step, de, mx[4],
            mx[5]);
    }
    free(all);
    free(pos);
    free(vel);
    canopy_free(rows);
    free(acc2);
    free(work);
    free(t_job);
    MPI_Finalize();
    return 0;
}
