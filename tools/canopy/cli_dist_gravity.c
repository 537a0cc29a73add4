// SPDX-License-Identifier: MIT
/* canopy gravity and canopy nbody under mpirun. gravity: every rank reads its block of
 * rows of a .npy input and writes its block of the output in place (cli_dist_io.c, as
 * knn does). nbody: rank 0's bodies cut into equal contiguous slices (global index =
 * rank 0's row), results gathered back in that order. */
#include "cli_dist_gravity.h"
#include "cli_dist.h"
#include "trav_opts.h"

#include <stdio.h>
#include <string.h>

#ifdef CANOPY_HAVE_MPI
#include "core/coincident.h"
#include "dist/comm.h"

#include <math.h>

int cli_dist_share_rc(int rc) {
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* Equal contiguous slices of rank 0's n rows (n broadcast from rank 0). */
static canopy_status scatter_rows(const void *rows, int64_t n, size_t row_bytes, void **mine,
                                  int64_t *n_mine) {
    int size = canopy_dist_size(MPI_COMM_WORLD);
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    int64_t *counts = NULL;
    canopy_status s = canopy_alloc((void **)&counts, (size_t)size, sizeof *counts);
    if ((s = canopy_dist_agree(MPI_COMM_WORLD, s))) return s;
    for (int r = 0; r < size; r++) counts[r] = n * (r + 1) / size - n * r / size;
    s = canopy_dist_scatterv(MPI_COMM_WORLD, 0, rows, counts, row_bytes, mine, n_mine);
    canopy_free(counts);
    return s;
}

/* Position (-0.0 as 0.0, which compare equal) and row of a body sent for the
 * coincidence check; 24 bytes, so a run of them is points of stride 6 floats. */
typedef struct body_at {
    float x[3], pad;
    int64_t row;
} body_at;

static int position_rank(const float *x, int size) {
    uint64_t h = 0x9e3779b97f4a7c15u;
    for (int j = 0; j < 3; j++) {
        uint32_t bits;
        memcpy(&bits, &x[j], sizeof bits);
        h = (h ^ bits) * 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return (int)(h % (uint64_t)size);
}

/* Without softening two bodies at one position pull each other infinitely hard. Each
 * body goes to the rank its position hashes to, so equal positions meet on one rank,
 * which looks for a pair in expected O(n) as one process does. Collective. */
static canopy_status check_distinct(const char *path, const cli_dist_points *p) {
    int size = cli_dist_size();
    int64_t n = p->count, got = 0;
    body_at *rec = NULL, *all = NULL;
    int32_t *dest = NULL;
    canopy_status s = canopy_alloc((void **)&rec, (size_t)n + 1, sizeof *rec);
    if (!s) s = canopy_alloc((void **)&dest, (size_t)n + 1, sizeof *dest);
    for (int64_t i = 0; !s && i < n; i++) {
        for (int j = 0; j < 3; j++) rec[i].x[j] = p->data[i * p->d + j] + 0.0f;
        rec[i].pad = 0.0f;
        rec[i].row = p->first + i;
        dest[i] = position_rank(rec[i].x, size);
    }
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    if (!s)
        s = canopy_dist_exchange(MPI_COMM_WORLD, rec, n, sizeof *rec, dest, (void **)&all, &got,
                                 NULL);
    int64_t a = 0, b = 0;
    int found = 0;
    if (!s && got > 1) {
        canopy_points pts = {&all[0].x[0], got, 3, (int64_t)(sizeof *all / sizeof(float))};
        found = canopy_points_find_coincident(pts, &a, &b);
        if (found < 0) s = canopy_fail(CANOPY_ERR_NOMEM, "out of memory");
    }
    if (found > 0) {
        const body_at *u = all[a].row < all[b].row ? &all[a] : &all[b];
        const body_at *v = u == &all[a] ? &all[b] : &all[a];
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "%s: bodies %lld and %lld are at the same position (%g, %g, %g); with "
                        "softening 0 their force is infinite. Give --softening EPS > 0.",
                        path, (long long)u->row, (long long)v->row, u->x[0], u->x[1], u->x[2]);
    }
    canopy_free(rec);
    canopy_free(dest);
    canopy_free(all);
    return canopy_dist_agree(MPI_COMM_WORLD, s);
}

/* A non-finite acceleration is refused rather than written (rows of the whole file). */
static canopy_status check_finite(const char *path, const float *acc, int64_t n, int64_t first,
                                  double eps) {
    for (int64_t i = 0; i < 3 * n; i++)
        if (!isfinite(acc[i]))
            return canopy_fail(CANOPY_ERR_INVALID,
                               "%s: body %lld has a non-finite acceleration (softening %g); give "
                               "--softening EPS > 0",
                               path, (long long)(first + i / 3), eps);
    return CANOPY_OK;
}

/* This rank's bodies as the library takes them: positions of stride d, the masses of
 * a fourth column copied out (NULL: equal masses). */
static canopy_status body_masses(const cli_dist_points *p, float **mass) {
    *mass = NULL;
    if (p->d != 4) return CANOPY_OK;
    canopy_status s = canopy_alloc((void **)mass, (size_t)p->count + 1, sizeof **mass);
    for (int64_t i = 0; !s && i < p->count; i++) (*mass)[i] = p->data[4 * i + 3];
    return s;
}

int cli_dist_gravity(const cli_dist_gravity_job *job, cli_dist_gravity_result *res) {
    const char *cmd = "gravity";
    int rank = cli_dist_rank(), size = cli_dist_size();
    memset(res, 0, sizeof *res);
    double t0 = canopy_now();
    const char *ins[] = {job->bodies}, *outs[] = {job->out};
    int rc = CLI_OK;
    if (rank == 0) {
        rc = cli_check_paths(cmd, ins, 1, outs, 1);
        if (rc == CLI_OK) rc = cli_check_array_outputs(cmd, 1, outs);
    }
    if ((rc = cli_dist_agree_rc(cmd, rc)) != CLI_OK) return rc;
    cli_dist_points p;
    if (cli_dist_read_points(cmd, job->bodies, &p)) return CLI_ERROR;
    double t_load = canopy_now() - t0, t_write = 0.0;
    res->n = p.n;

    float *mass = NULL, *acc = NULL;
    canopy_status s = CANOPY_OK;
    if (p.d != 3 && p.d != 4)
        s = canopy_fail(CANOPY_ERR_INVALID, "%s has %d columns; expected 3 (x y z) or 4 (x y z m)",
                        job->bodies, (int)p.d);
    if (!s) s = body_masses(&p, &mass);
    if (!s) s = canopy_alloc((void **)&acc, (size_t)(3 * p.count + 1), sizeof *acc);
    s = canopy_dist_agree(MPI_COMM_WORLD, s);
    if (!s && job->g->softening == 0.0f) s = check_distinct(job->bodies, &p);
    canopy_dist_stats dst;
    memset(&dst, 0, sizeof dst);
    if (!s) {
        canopy_points b = {p.data, p.count, 3, p.d};
        s = canopy_dist_gravity(MPI_COMM_WORLD, b, mass, job->g, job->run, acc, NULL, &dst);
    }
    if (!s) s = check_finite(job->bodies, acc, p.count, p.first, job->g->softening);
    rc = cli_dist_agree(cmd, s);
    if (rc == CLI_OK) {
        canopy_array rows = cli_array_view(acc, CANOPY_F32, p.count, 3);
        rc = cli_dist_write(cmd, 1, outs, &rows, p.first, p.n, &t_write);
    }
    if (rc == CLI_OK && job->stats) {
        double t[2] = {t_load, t_write};
        MPI_Allreduce(MPI_IN_PLACE, t, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (rank == 0)
            fprintf(stderr, "gravity: %d ranks, load %.3f s, write %.3f s (slowest rank)\n", size,
                    t[0], t[1]);
        cli_dist_print_stats(cmd, &dst);
    }
    if (rc == CLI_OK && job->gather_acc) {
        int64_t got = 0;
        rc = cli_dist_agree(cmd,
                            canopy_dist_gatherv(MPI_COMM_WORLD, 0, acc, p.count, 3 * sizeof *acc,
                                                (void **)&res->acc, NULL, &got));
    }
    cli_dist_points_release(&p);
    canopy_free(mass);
    canopy_free(acc);
    return rc;
}

typedef struct body7 {
    double x[3], v[3];
    float m, pad;
} body7;

canopy_status cli_dist_nbody_create(const double *pos, const double *vel, const float *mass,
                                    int64_t n, const canopy_nbody_options *opt,
                                    canopy_dist_nbody **out) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD);
    *out = NULL;
    if (rank != 0) n = 0;
    int has_mass = rank == 0 && mass != NULL;
    MPI_Bcast(&has_mass, 1, MPI_INT, 0, MPI_COMM_WORLD);
    body7 *rows = NULL, *mine = NULL;
    double *x = NULL, *v = NULL;
    float *m = NULL;
    int64_t n_mine = 0;
    canopy_status s = canopy_alloc((void **)&rows, (size_t)n + 1, sizeof *rows);
    for (int64_t i = 0; !s && i < n; i++) {
        memcpy(rows[i].x, pos + 3 * i, sizeof rows[i].x);
        memcpy(rows[i].v, vel + 3 * i, sizeof rows[i].v);
        rows[i].m = has_mass ? mass[i] : 0.0f;
        rows[i].pad = 0.0f;
    }
    if (!(s = canopy_dist_agree(MPI_COMM_WORLD, s)))
        s = scatter_rows(rows, n, sizeof *rows, (void **)&mine, &n_mine);
    if (!s) s = canopy_alloc((void **)&x, (size_t)n_mine * 3 + 1, sizeof *x);
    if (!s) s = canopy_alloc((void **)&v, (size_t)n_mine * 3 + 1, sizeof *v);
    if (!s) s = canopy_alloc((void **)&m, (size_t)n_mine + 1, sizeof *m);
    if (!(s = canopy_dist_agree(MPI_COMM_WORLD, s))) {
        for (int64_t i = 0; i < n_mine; i++) {
            memcpy(x + 3 * i, mine[i].x, sizeof mine[i].x);
            memcpy(v + 3 * i, mine[i].v, sizeof mine[i].v);
            m[i] = mine[i].m;
        }
        s = canopy_dist_nbody_create(MPI_COMM_WORLD, x, v, has_mass ? m : NULL, n_mine, opt, out);
    }
    canopy_free(rows);
    canopy_free(mine);
    canopy_free(x);
    canopy_free(v);
    canopy_free(m);
    return s;
}

void cli_dist_print_stats(const char *cmd, const canopy_dist_stats *st) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    canopy_dist_stats *all = NULL;
    int64_t got = 0;
    if (canopy_dist_gatherv(MPI_COMM_WORLD, 0, st, 1, sizeof *st, (void **)&all, NULL, &got))
        return;
    for (int64_t r = 0; rank == 0 && r < got; r++) {
        char where[32] = "CPU"; /* one GPU per rank: local rank % visible devices */
        if (all[r].device >= 0) snprintf(where, sizeof where, "GPU %d", (int)all[r].device);
        fprintf(stderr,
                "  %s rank %lld/%d (%s, %s opening, %s tree): sent %lld bytes in %lld messages, "
                "received %lld bytes; %lld interactions; local %.3f s (build %.3f s, local walk "
                "%.3f s, remote walk %.3f s), communication %.3f s, total %.3f s (%.3f s "
                "outside the walk's phases: the curve cut %.3f s, the rest moving the bodies "
                "and back)\n",
                cmd, (long long)r, size, where, grav_opening_name((canopy_opening)all[r].opening),
                grav_tree_name((canopy_gravity_tree)all[r].tree), (long long)all[r].bytes_sent,
                (long long)all[r].messages, (long long)all[r].bytes_received,
                (long long)all[r].interactions, all[r].local_seconds, all[r].build_seconds,
                all[r].local_walk_seconds, all[r].remote_walk_seconds, all[r].comm_seconds,
                all[r].total_seconds,
                all[r].total_seconds - all[r].local_seconds - all[r].comm_seconds,
                all[r].cut_seconds);
    }
    canopy_free(all);
}

#else

static canopy_status no_mpi(void) {
    return canopy_fail(CANOPY_ERR_UNSUPPORTED, "this build has no MPI layer (CANOPY_MPI)");
}
int cli_dist_share_rc(int rc) {
    return rc;
}
int cli_dist_gravity(const cli_dist_gravity_job *job, cli_dist_gravity_result *res) {
    (void)job;
    memset(res, 0, sizeof *res);
    return 1; /* unreachable: without MPI there is one rank */
}
canopy_status cli_dist_nbody_create(const double *pos, const double *vel, const float *mass,
                                    int64_t n, const canopy_nbody_options *opt,
                                    canopy_dist_nbody **out) {
    (void)pos, (void)vel, (void)mass, (void)n, (void)opt;
    *out = NULL;
    return no_mpi();
}
void cli_dist_print_stats(const char *cmd, const canopy_dist_stats *st) {
    (void)cmd, (void)st;
}
#endif
