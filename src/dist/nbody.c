/* SPDX-License-Identifier: MIT */
/* canopy_dist_nbody: leapfrog kick-drift-kick over ranks. After every drift the
 * bodies are cut again along the Hilbert curve by the interactions each needed in the
 * previous force evaluation (canopy_dist_decompose with that work) and moved with
 * their state; forces come from dist_domain_forces; energies and momenta are summed
 * over ranks. Global index = position in the caller's slices concatenated in rank
 * order; it travels with each body. One GPU rank with bucket opening has no cut to make
 * and no body to move: its state stays on the device between steps (gpu_nbody). */
#include "dist/gpu_bind.h"
#include "dist/gravity.h"
#include "gravity/gpu_multipole.h"
#include "gravity/stepper.h"

#include <math.h>
#include <string.h>

struct canopy_dist_nbody {
    MPI_Comm comm;
    int64_t n, n_all, step;
    canopy_nbody_options opt;
    int use_gpu;              /* the walks on the rank's GPU (dist_gravity_backend) */
    double *pos, *vel, *work; /* (n, 3), (n, 3), (n) */
    float *mass, *pos32, *acc, *pot;
    int64_t *gid;
    /* potentials only while energies are asked for often, as canopy_nbody does */
    int pot_along, pot_valid;
    int64_t energy_step; /* the last energy request's step, -1 before any */
    canopy_dist_stats stats;
    /* one rank, bucket opening, on its GPU: the state on the device, stepped by the
     * single-GPU stepper's kernels (pos and vel on the host are brought back on demand) */
    gpu_nbody *dev;
};

/* One body's state on the move between ranks. */
typedef struct body_row {
    double x[3], v[3], work;
    int64_t gid;
    float m, pad;
} body_row;

static void free_arrays(canopy_dist_nbody *s) {
    canopy_free(s->pos);
    canopy_free(s->vel);
    canopy_free(s->work);
    canopy_free(s->mass);
    canopy_free(s->pos32);
    canopy_free(s->acc);
    canopy_free(s->pot);
    canopy_free(s->gid);
    s->pos = s->vel = s->work = NULL;
    s->mass = s->pos32 = s->acc = s->pot = NULL;
    s->gid = NULL;
}

static canopy_status alloc_arrays(canopy_dist_nbody *s, int64_t n) {
    size_t n1 = (size_t)n + 1, n3 = 3 * (size_t)n + 1;
    canopy_status st;
    if ((st = canopy_alloc((void **)&s->pos, n3, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->vel, n3, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->work, n1, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->mass, n1, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->pos32, n3, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->acc, n3, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->pot, n1, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->gid, n1, sizeof(int64_t))))
        free_arrays(s);
    s->n = st ? 0 : n;
    return st;
}

/* Moves every body to its curve domain, weighted by last step's work (all zero at
 * the start: equal counts). */
static canopy_status redistribute(canopy_dist_nbody *s) {
    int64_t n = s->n, n_new = 0;
    double t_start = canopy_now();
    for (int64_t i = 0; i < 3 * n; i++) s->pos32[i] = (float)s->pos[i];
    int32_t *dest = NULL;
    body_row *rows = NULL, *got = NULL;
    canopy_status st = canopy_alloc((void **)&dest, (size_t)n + 1, sizeof *dest);
    if (!st) st = canopy_alloc((void **)&rows, (size_t)n + 1, sizeof *rows);
    if ((st = canopy_dist_agree(s->comm, st))) goto done;
    double t0 = canopy_now();
    st = canopy_dist_decompose(s->comm, canopy_points_make(s->pos32, n, 3), s->work,
                               CANOPY_CURVE_HILBERT, dest);
    s->stats.cut_seconds += canopy_now() - t0;
    if (st) goto done;
    for (int64_t i = 0; i < n; i++) {
        memcpy(rows[i].x, s->pos + 3 * i, sizeof rows[i].x);
        memcpy(rows[i].v, s->vel + 3 * i, sizeof rows[i].v);
        rows[i].work = s->work[i];
        rows[i].gid = s->gid[i];
        rows[i].m = s->mass[i];
        rows[i].pad = 0.0f;
    }
    st = canopy_dist_exchange(s->comm, rows, n, sizeof *rows, dest, (void **)&got, &n_new,
                              &s->stats);
    if (st) goto done;
    free_arrays(s);
    st = canopy_dist_agree(s->comm, alloc_arrays(s, n_new));
    if (st) goto done;
    for (int64_t i = 0; i < n_new; i++) {
        memcpy(s->pos + 3 * i, got[i].x, sizeof got[i].x);
        memcpy(s->vel + 3 * i, got[i].v, sizeof got[i].v);
        s->work[i] = got[i].work;
        s->gid[i] = got[i].gid;
        s->mass[i] = got[i].m;
    }
done:
    s->stats.total_seconds += canopy_now() - t_start;
    canopy_free(dest);
    canopy_free(rows);
    canopy_free(got);
    return st;
}

static canopy_status forces(canopy_dist_nbody *s) {
    for (int64_t i = 0; i < 3 * s->n; i++) s->pos32[i] = (float)s->pos[i];
    float *pot = s->pot_along ? s->pot : NULL;
    canopy_status st = dist_domain_forces(s->comm, canopy_points_make(s->pos32, s->n, 3), s->mass,
                                          s->gid, &s->opt.gravity, s->opt.run.leaf_size, s->use_gpu,
                                          s->acc, pot, s->work, &s->stats);
    s->pot_valid = !st && pot;
    return st;
}

/* The potentials at the current positions by an evaluation of their own (collective;
 * its forces, the step's bits, are dropped; the work and statistics are the step's). */
static canopy_status potentials_now(canopy_dist_nbody *s) {
    float *scratch = NULL;
    canopy_status st = canopy_alloc((void **)&scratch, 3 * (size_t)s->n + 1, sizeof *scratch);
    if (!(st = canopy_dist_agree(s->comm, st)))
        st = dist_domain_forces(s->comm, canopy_points_make(s->pos32, s->n, 3), s->mass, s->gid,
                                &s->opt.gravity, s->opt.run.leaf_size, s->use_gpu, scratch, s->pot,
                                NULL, NULL);
    s->pot_valid = !st;
    canopy_free(scratch);
    return st;
}

/* One GPU rank: the bodies uploaded once, their first forces by the single-GPU engine
 * (canopy_gpu_nbody_create). */
static canopy_status device_create(canopy_dist_nbody *s, const double *pos, const double *vel) {
    const canopy_gravity_options *g = &s->opt.gravity;
    gpu_mp_params p = {g->theta, g->order, g->softening, s->opt.run.leaf_size, 0};
    double t0 = canopy_now();
    canopy_status st = canopy_gpu_nbody_create(pos, vel, s->mass, s->n, &p, &s->dev);
    s->stats.device = dist_gpu_bound().device;
    s->stats.opening = CANOPY_OPENING_BUCKET;
    s->stats.tree = CANOPY_GRAVITY_TREE_BINARY;
    s->stats.local_seconds += canopy_now() - t0;
    s->stats.total_seconds += canopy_now() - t0;
    return st;
}

canopy_status canopy_dist_nbody_create(MPI_Comm comm, const double *pos, const double *vel,
                                       const float *mass, int64_t n,
                                       const canopy_nbody_options *opt, canopy_dist_nbody **out) {
    *out = NULL;
    canopy_nbody_options o = opt ? *opt : canopy_nbody_options_default();
    canopy_status st = n < 0 ? canopy_fail(CANOPY_ERR_INVALID, "nbody: %lld bodies", (long long)n)
                             : canopy_nbody_check_state(pos, vel, mass, n, &o);
    if (!st && o.max_rung > 0)
        st = canopy_fail(CANOPY_ERR_UNSUPPORTED,
                         "nbody: block time steps (max_rung %d) do not run over ranks yet; "
                         "use one process",
                         (int)o.max_rung);
    if (!st) st = dist_gravity_resolve(&o.gravity, &o.run);
    if ((st = canopy_dist_agree(comm, st))) return st;
    int64_t first, n_all;
    dist_offsets(comm, n, &first, &n_all);
    if (n_all < 1) return canopy_fail(CANOPY_ERR_INVALID, "nbody: no bodies on any rank");
    if (n_all >= INT32_MAX) return canopy_fail(CANOPY_ERR_INVALID, "nbody: too many bodies");
    int use_gpu = 0;
    if ((st = dist_gravity_backend(comm, o.run.backend, &o.gravity, n_all, &use_gpu))) return st;
    canopy_dist_nbody *s = NULL;
    st = canopy_calloc((void **)&s, 1, sizeof *s);
    if (!st) {
        s->comm = comm;
        s->opt = o;
        s->use_gpu = use_gpu;
        s->n_all = n_all;
        s->energy_step = -1;
        st = alloc_arrays(s, n);
    }
    if ((st = canopy_dist_agree(comm, st))) {
        canopy_dist_nbody_free(s);
        return st;
    }
    if (n > 0) { /* a rank without bodies may pass NULL */
        memcpy(s->pos, pos, 3 * (size_t)n * sizeof(double));
        memcpy(s->vel, vel, 3 * (size_t)n * sizeof(double));
    }
    for (int64_t i = 0; i < n; i++) {
        s->mass[i] = mass ? mass[i] : (float)(1.0 / (double)n_all);
        s->gid[i] = first + i;
        s->work[i] = 0.0;
    }
    if (use_gpu && o.gravity.opening == CANOPY_OPENING_BUCKET && canopy_dist_size(comm) == 1) {
        st = device_create(s, pos, vel);
    } else {
        st = redistribute(s);
        if (!st) st = forces(s);
    }
    if (st) {
        canopy_dist_nbody_free(s);
        return st;
    }
    *out = s;
    return CANOPY_OK;
}

canopy_status canopy_dist_nbody_step(canopy_dist_nbody *s, int64_t steps) {
    double h = 0.5 * s->opt.dt, dt = s->opt.dt;
    if (s->dev) {
        double t0 = canopy_now();
        canopy_status st = canopy_gpu_nbody_step(s->dev, dt, steps);
        s->stats.local_seconds += canopy_now() - t0;
        s->stats.total_seconds += canopy_now() - t0;
        if (!st) s->step += steps;
        return st;
    }
    for (int64_t k = 0; k < steps; k++) {
        canopy_nbody_kick_drift(s->pos, s->vel, s->acc, s->n, h, dt);
        canopy_status st = redistribute(s);
        if (!st) st = forces(s);
        if (st) return st;
        canopy_nbody_kick(s->vel, s->acc, s->n, h);
        s->step++;
    }
    return CANOPY_OK;
}

canopy_status canopy_dist_nbody_energy(canopy_dist_nbody *s, int64_t direct_max,
                                       canopy_nbody_energy *e) {
    memset(e, 0, sizeof *e);
    double loc[8] = {0}, sum[8];
    for (int64_t i = 0; i < s->n; i++) {
        const double *x = s->pos + 3 * i, *v = s->vel + 3 * i;
        double m = s->mass[i];
        loc[0] += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int j = 0; j < 3; j++) loc[2 + j] += m * v[j];
        loc[5] += m * (x[1] * v[2] - x[2] * v[1]);
        loc[6] += m * (x[2] * v[0] - x[0] * v[2]);
        loc[7] += m * (x[0] * v[1] - x[1] * v[0]);
    }
    e->direct = s->n_all <= direct_max;
    canopy_status st = CANOPY_OK;
    if (s->dev) {
        st = canopy_gpu_nbody_energy(s->dev, e->direct, &e->kinetic, &e->potential, e->momentum,
                                     e->angular_momentum);
        e->total = e->kinetic + e->potential;
        return st;
    }
    if (e->direct) {
        /* Small runs: every rank sees all bodies and sums its own rows in float64. */
        typedef struct pm {
            double x[3], m;
            int64_t gid;
        } pm;
        pm *mine = NULL, *all = NULL;
        int64_t n_got = 0;
        st = canopy_alloc((void **)&mine, (size_t)s->n + 1, sizeof *mine);
        if ((st = canopy_dist_agree(s->comm, st))) return st;
        for (int64_t i = 0; i < s->n; i++) {
            memcpy(mine[i].x, s->pos + 3 * i, sizeof mine[i].x);
            mine[i].m = s->mass[i];
            mine[i].gid = s->gid[i];
        }
        st = canopy_dist_allgatherv(s->comm, mine, s->n, sizeof *mine, (void **)&all, NULL, &n_got);
        double e2 = (double)s->opt.gravity.softening * s->opt.gravity.softening, pot = 0.0;
        for (int64_t i = 0; !st && i < s->n; i++) {
            const double *x = s->pos + 3 * i;
            double p = 0.0;
            for (int64_t j = 0; j < n_got; j++) {
                if (all[j].gid == s->gid[i]) continue;
                double dx = all[j].x[0] - x[0], dy = all[j].x[1] - x[1], dz = all[j].x[2] - x[2];
                p -= all[j].m / sqrt(dx * dx + dy * dy + dz * dz + e2);
            }
            pot += 0.5 * (double)s->mass[i] * p; /* each pair is seen from both ends */
        }
        loc[1] = pot;
        canopy_free(mine);
        canopy_free(all);
    } else {
        if (!s->pot_valid) st = potentials_now(s);
        for (int64_t i = 0; !st && i < s->n; i++) loc[1] += 0.5 * (double)s->mass[i] * s->pot[i];
    }
    s->pot_along = !e->direct && canopy_nbody_potentials_along(s->energy_step, s->step);
    s->energy_step = s->step;
    if ((st = canopy_dist_agree(s->comm, st))) return st;
    MPI_Allreduce(loc, sum, 8, MPI_DOUBLE, MPI_SUM, s->comm);
    e->kinetic = sum[0];
    e->potential = sum[1];
    e->total = sum[0] + sum[1];
    for (int j = 0; j < 3; j++) {
        e->momentum[j] = sum[2 + j];
        e->angular_momentum[j] = sum[5 + j];
    }
    return CANOPY_OK;
}

canopy_status canopy_dist_nbody_gather(const canopy_dist_nbody *s, int root, double *pos,
                                       double *vel) {
    typedef struct xv {
        int64_t gid;
        double x[3], v[3];
    } xv;
    xv *mine = NULL, *all = NULL;
    int64_t n_got = 0;
    /* the state on the device: brought back (the host arrays are its copy) */
    canopy_status st = s->dev ? canopy_gpu_nbody_download(s->dev, s->pos, s->vel) : CANOPY_OK;
    if (!st) st = canopy_alloc((void **)&mine, (size_t)s->n + 1, sizeof *mine);
    if ((st = canopy_dist_agree(s->comm, st))) return st;
    for (int64_t i = 0; i < s->n; i++) {
        mine[i].gid = s->gid[i];
        memcpy(mine[i].x, s->pos + 3 * i, sizeof mine[i].x);
        memcpy(mine[i].v, s->vel + 3 * i, sizeof mine[i].v);
    }
    st = canopy_dist_gatherv(s->comm, root, mine, s->n, sizeof *mine, (void **)&all, NULL, &n_got);
    if (!st && canopy_dist_rank(s->comm) == root)
        for (int64_t k = 0; k < n_got; k++) {
            if (pos) memcpy(pos + 3 * all[k].gid, all[k].x, sizeof all[k].x);
            if (vel) memcpy(vel + 3 * all[k].gid, all[k].v, sizeof all[k].v);
        }
    canopy_free(mine);
    canopy_free(all);
    return st;
}

int64_t canopy_dist_nbody_n(const canopy_dist_nbody *s) {
    return s->n_all;
}
int64_t canopy_dist_nbody_n_local(const canopy_dist_nbody *s) {
    return s->n;
}
int64_t canopy_dist_nbody_steps_done(const canopy_dist_nbody *s) {
    return s->step;
}
canopy_gravity_options canopy_dist_nbody_gravity(const canopy_dist_nbody *s) {
    return s->opt.gravity;
}
canopy_dist_stats canopy_dist_nbody_stats(const canopy_dist_nbody *s) {
    return s->stats;
}

void canopy_dist_nbody_free(canopy_dist_nbody *s) {
    if (!s) return;
    canopy_gpu_nbody_free(s->dev);
    free_arrays(s);
    canopy_free(s);
}
