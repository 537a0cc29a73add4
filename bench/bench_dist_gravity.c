/* SPDX-License-Identifier: MIT */
/* Distributed gravity under mpirun (bench/results/distributed.md): a Plummer sphere
 * (same seed on every rank, each rank starting with its block), moved to Hilbert
 * domains, then the force evaluation of canopy_dist_gravity's core repeated:
 *   per rank: bodies, LET bytes sent and received (the exchange alone, without the
 *   decomposition), interactions (expansions + body terms), local and communication
 *   seconds (median of --reps); then the same after the domains are cut again by the
 *   interactions each body needed (as canopy_dist_nbody does every step): bodies,
 *   interactions, local + communication seconds;
 *   job: the whole canopy_dist_gravity call (decomposition, forces, return), median
 *   and min-max of --reps.
 * usage: mpirun -np R canopy-bench-dist-gravity [--n N] [--reps K] [--theta T]
 *        [--order P] [--eps E] */
#include "dist/gravity.h"

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rank_row {
    int64_t n, sent, received, interactions;
    double local, comm;
    int64_t n_bal, interactions_bal; /* after the cut by measured work */
    double seconds_bal;              /* local + communication, median */
} rank_row;

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

/* reps force evaluations of this rank's domain: medians of local and communication
 * seconds and of their sum; work receives each body's interactions. */
static void evaluate(const row *rows, int64_t n, const canopy_gravity_options *g, int reps,
                     double *work, double *local, double *comm, double *both,
                     canopy_dist_stats *last) {
    float *x = malloc((size_t)(n + 1) * 3 * sizeof *x), *m = malloc((size_t)(n + 1) * sizeof *m);
    float *acc = malloc((size_t)(n + 1) * 3 * sizeof *acc);
    int64_t *gid = malloc((size_t)(n + 1) * sizeof *gid);
    double *tl = malloc((size_t)reps * sizeof *tl), *tc = malloc((size_t)reps * sizeof *tc);
    double *tb = malloc((size_t)reps * sizeof *tb);
    for (int64_t i = 0; i < n; i++) {
        memcpy(x + 3 * i, rows[i].x, sizeof rows[i].x);
        m[i] = rows[i].m;
        gid[i] = rows[i].gid;
    }
    for (int r = 0; r < reps; r++) {
        memset(last, 0, sizeof *last);
        MPI_Barrier(MPI_COMM_WORLD);
        if (dist_domain_forces(MPI_COMM_WORLD, canopy_points_make(x, n, 3), m, gid, g, 0, 0, acc,
                               NULL, work, last))
            canopy_dist_abort(MPI_COMM_WORLD, "forces: %s", canopy_last_error());
        tl[r] = last->local_seconds;
        tc[r] = last->comm_seconds;
        tb[r] = last->local_seconds + last->comm_seconds;
    }
    *local = bench_summarise(tl, reps).med;
    *comm = bench_summarise(tc, reps).med;
    *both = bench_summarise(tb, reps).med;
    free(x);
    free(m);
    free(acc);
    free(gid);
    free(tl);
    free(tc);
    free(tb);
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    canopy_dist_set_fatal_handler(MPI_COMM_WORLD);
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    int64_t n = 200000;
    int reps = 3;
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
        else
            canopy_dist_abort(MPI_COMM_WORLD, "unknown option %s", argv[i]);
    }
    if (n < 1 || reps < 1) canopy_dist_abort(MPI_COMM_WORLD, "need --n >= 1 and --reps >= 1");
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
    double *work = malloc((size_t)(nd + 1) * sizeof *work), both = 0.0;
    canopy_dist_stats st;
    evaluate(rows, nd, &g, reps, work, &me.local, &me.comm, &both, &st);
    me.sent = st.bytes_sent;
    me.received = st.bytes_received;
    me.interactions = st.interactions;
    /* Cut again by the interactions each body needed, and evaluate again. */
    place(&rows, &nd, work);
    free(work);
    work = malloc((size_t)(nd + 1) * sizeof *work);
    me.n_bal = nd;
    double l2, c2;
    evaluate(rows, nd, &g, reps, work, &l2, &c2, &me.seconds_bal, &st);
    me.interactions_bal = st.interactions;

    double *t_job = malloc((size_t)reps * sizeof(double));
    float *acc2 = malloc((size_t)(nl + 1) * 3 * sizeof *acc2);
    for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (canopy_dist_gravity(MPI_COMM_WORLD, mine, NULL, &g, NULL, acc2, NULL, NULL))
            canopy_dist_abort(MPI_COMM_WORLD, "canopy_dist_gravity: %s", canopy_last_error());
        double t = MPI_Wtime() - t0, worst = 0.0;
        MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t_job[r] = worst;
    }
    bench_summary job = bench_summarise(t_job, reps);

    rank_row *all = rank == 0 ? malloc((size_t)size * sizeof *all) : NULL;
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        int64_t tot_int = 0, tot_bytes = 0;
        double slow = 0.0, slow_bal = 0.0;
        printf("# n %lld, theta %g, order %d, eps %g, ranks %d, threads/rank %d, reps %d\n",
               (long long)n, (double)g.theta, (int)g.order, (double)g.softening, size,
               canopy_threads(), reps);
        printf("| rank | bodies | LET bytes sent | LET bytes received | interactions | local s | "
               "comm s | balanced: bodies | interactions | local + comm s |\n"
               "|---|---|---|---|---|---|---|---|---|---|\n");
        for (int r = 0; r < size; r++) {
            printf("| %d | %lld | %lld | %lld | %lld | %.3f | %.3f | %lld | %lld | %.3f |\n", r,
                   (long long)all[r].n, (long long)all[r].sent, (long long)all[r].received,
                   (long long)all[r].interactions, all[r].local, all[r].comm,
                   (long long)all[r].n_bal, (long long)all[r].interactions_bal, all[r].seconds_bal);
            tot_int += all[r].interactions;
            tot_bytes += all[r].sent;
            slow = all[r].local + all[r].comm > slow ? all[r].local + all[r].comm : slow;
            slow_bal = all[r].seconds_bal > slow_bal ? all[r].seconds_bal : slow_bal;
        }
        printf("force evaluation, slowest rank: equal counts %.3f s, balanced by measured work "
               "%.3f s\n",
               slow, slow_bal);
        printf("total: LET bytes %lld (%.1f per body), interactions %lld (%.1f per body); "
               "canopy_dist_gravity %.3f s median (%.3f-%.3f)\n",
               (long long)tot_bytes, (double)tot_bytes / (double)n, (long long)tot_int,
               (double)tot_int / (double)n, job.med, job.min, job.max);
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
