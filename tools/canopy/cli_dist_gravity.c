// SPDX-License-Identifier: MIT
/* Rank 0 <-> ranks for canopy gravity and canopy nbody under mpirun: rank 0's
 * bodies cut into equal contiguous slices (global index = rank 0's row), results
 * gathered back in that order. */
#include "cli_dist_gravity.h"
#include "trav_opts.h"

#include <stdio.h>
#include <string.h>

#ifdef CANOPY_HAVE_MPI
#include "dist/comm.h"

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

typedef struct body4 {
    float x[3], m;
} body4;

canopy_status cli_dist_gravity_forces(canopy_points b, const float *mass,
                                      const canopy_gravity_options *g,
                                      const canopy_run_options *run, float *acc,
                                      canopy_dist_stats *stats) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD);
    body4 *rows = NULL, *mine = NULL;
    float *x = NULL, *m = NULL, *a = NULL, *all = NULL;
    int64_t n = rank == 0 ? b.n : 0, n_mine = 0, got = 0;
    int has_mass = rank == 0 && mass != NULL;
    MPI_Bcast(&has_mass, 1, MPI_INT, 0, MPI_COMM_WORLD);
    canopy_status s = canopy_alloc((void **)&rows, (size_t)n + 1, sizeof *rows);
    for (int64_t i = 0; !s && i < n; i++) {
        memcpy(rows[i].x, canopy_point(b, i), sizeof rows[i].x);
        rows[i].m = has_mass ? mass[i] : 0.0f;
    }
    if (!(s = canopy_dist_agree(MPI_COMM_WORLD, s)))
        s = scatter_rows(rows, n, sizeof *rows, (void **)&mine, &n_mine);
    if (!s) s = canopy_alloc((void **)&x, (size_t)n_mine * 3 + 1, sizeof *x);
    if (!s) s = canopy_alloc((void **)&m, (size_t)n_mine + 1, sizeof *m);
    if (!s) s = canopy_alloc((void **)&a, (size_t)n_mine * 3 + 1, sizeof *a);
    if (!(s = canopy_dist_agree(MPI_COMM_WORLD, s))) {
        for (int64_t i = 0; i < n_mine; i++) {
            memcpy(x + 3 * i, mine[i].x, sizeof mine[i].x);
            m[i] = mine[i].m;
        }
        s = canopy_dist_gravity(MPI_COMM_WORLD, canopy_points_make(x, n_mine, 3),
                                has_mass ? m : NULL, g, run, a, NULL, stats);
    }
    if (!s)
        s = canopy_dist_gatherv(MPI_COMM_WORLD, 0, a, n_mine, 3 * sizeof(float), (void **)&all,
                                NULL, &got);
    if (!s && rank == 0 && got > 0) memcpy(acc, all, (size_t)got * 3 * sizeof(float));
    canopy_free(rows);
    canopy_free(mine);
    canopy_free(x);
    canopy_free(m);
    canopy_free(a);
    canopy_free(all);
    return s;
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
                "%.3f s, remote walk %.3f s), communication %.3f s, total %.3f s\n",
                cmd, (long long)r, size, where, grav_opening_name((canopy_opening)all[r].opening),
                grav_tree_name((canopy_gravity_tree)all[r].tree), (long long)all[r].bytes_sent,
                (long long)all[r].messages, (long long)all[r].bytes_received,
                (long long)all[r].interactions, all[r].local_seconds, all[r].build_seconds,
                all[r].local_walk_seconds, all[r].remote_walk_seconds, all[r].comm_seconds,
                all[r].total_seconds);
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
canopy_status cli_dist_gravity_forces(canopy_points b, const float *mass,
                                      const canopy_gravity_options *g,
                                      const canopy_run_options *run, float *acc,
                                      canopy_dist_stats *stats) {
    (void)b, (void)mass, (void)g, (void)run, (void)acc, (void)stats;
    return no_mpi();
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
