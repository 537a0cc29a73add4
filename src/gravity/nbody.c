/* SPDX-License-Identifier: MIT */
/* canopy_nbody: leapfrog kick-drift-kick over canopy_gravity_multipole (one global step,
 * or block time steps: rungs of dt / 2^r, forces for the bodies whose step ends),
 * energies, and checkpoints (format in docs/nbody.md). The state is float64; each force
 * evaluation converts positions to float32, rebuilds the tree (block steps: or refits
 * the kept one) and walks it. With
 * the GPU backend the state lives on the device (gravity/gpu_multipole.h) and the host
 * copies of positions and velocities are refreshed after every canopy_nbody_step. */
#include "gravity/ewald.h"
#include "gravity/gravity_lists.h"
#include "canopy.h"
#include "core/coincident.h"
#include "core/device.h"
#include "io/io.h"
#include "gravity/gpu_multipole.h"
#include "gravity/stepper.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct canopy_nbody {
    int64_t n, step;
    canopy_nbody_options opt;
    double *pos, *vel; /* (n, 3) */
    float *mass;       /* (n) */
    float *pos32;      /* positions as the tree sees them */
    float *acc, *pot;  /* forces at the current positions; potentials (pot_valid) */
    /* Potentials along the steps (global CPU steps) only while energies are asked for
     * often (canopy_nbody_potentials_along); else an energy request evaluates them. */
    int pot_along, pot_valid;
    int64_t energy_step; /* the last energy request's step, -1 before any */
    gpu_nbody *gpu;    /* the device-resident state, or NULL on the CPU */
    unsigned char *rung, *active; /* block steps: each body's rung, this substep's sinks */
    gl_tree *tree;                /* block steps, open boundaries: the tree substeps refit */
    int64_t since_build;          /* force evaluations on refits of tree since it was built */
    canopy_nbody_work work;
};

canopy_nbody_options canopy_nbody_options_default(void) {
    canopy_nbody_options o;
    o.dt = 0.0;
    o.gravity = canopy_gravity_options_default();
    o.run = canopy_run_options_default();
    o.max_rung = 0;
    o.eta = 0.2;
    o.rebuild = CANOPY_NBODY_REBUILD_DEFAULT;
    return o;
}

/* Periodic box: positions back into [0, box) after a drift (the state, not only the
 * tree's copy, so snapshots and checkpoints hold bodies inside the box). */
static void wrap_positions(canopy_nbody *s) {
    double box = s->opt.gravity.box;
    if (!(box > 0.0)) return;
    for (int64_t i = 0; i < 3 * s->n; i++) {
        double x = s->pos[i] - box * floor(s->pos[i] / box);
        s->pos[i] = x >= box || x < 0.0 ? 0.0 : x;
    }
}

/* All bodies' forces (into acc) and, pot not NULL, potentials at pos32. */
static canopy_status evaluate_all(canopy_nbody *s, float *acc, float *pot) {
    canopy_status st = canopy_gravity_multipole(canopy_points_make(s->pos32, s->n, 3), s->mass,
                                                &s->opt.gravity, &s->opt.run, acc, pot, NULL);
    s->pot_valid = !st && pot;
    return st;
}

static canopy_status forces(canopy_nbody *s) {
    wrap_positions(s);
    for (int64_t i = 0; i < 3 * s->n; i++) s->pos32[i] = (float)s->pos[i];
    return evaluate_all(s, s->acc, s->pot_along ? s->pot : NULL);
}

/* The potentials at the current positions, by an evaluation of their own (its forces
 * equal the step's bits for global steps, and are dropped: block steps' inactive bodies
 * keep the accelerations of their own last substep). */
static canopy_status potentials_now(canopy_nbody *s) {
    float *scratch = NULL;
    canopy_status st = canopy_alloc((void **)&scratch, (size_t)(3 * s->n + 1), sizeof *scratch);
    if (!st) st = evaluate_all(s, scratch, s->pot);
    canopy_free(scratch);
    return st;
}

/* gravity's rule (canopy gravity): without softening, two bodies at one position pull
 * each other infinitely hard, so the run is refused up front, in expected O(n), rather
 * than stepped into NaN or an energy of -inf. Forces see positions rounded to float. */
static canopy_status refuse_coincident(const double *pos, int64_t n) {
    float *x = NULL;
    canopy_status st = canopy_alloc((void **)&x, (size_t)(3 * n + 1), sizeof *x);
    if (st) return st;
    for (int64_t i = 0; i < 3 * n; i++) x[i] = (float)pos[i];
    int64_t a, b;
    int found = canopy_points_find_coincident(canopy_points_make(x, n, 3), &a, &b);
    if (found < 0)
        st = canopy_fail(CANOPY_ERR_NOMEM, "out of memory checking bodies for coincidence");
    else if (found)
        st = canopy_fail(CANOPY_ERR_INVALID,
                         "nbody: bodies %lld and %lld are at the same position (%g, %g, %g); "
                         "with softening 0 their force is infinite: give a softening > 0",
                         (long long)a, (long long)b, (double)x[3 * b], (double)x[3 * b + 1],
                         (double)x[3 * b + 2]);
    canopy_free(x);
    return st;
}

canopy_status canopy_nbody_check_state(const double *pos, const double *vel, const float *mass,
                                       int64_t n, const canopy_nbody_options *o) {
    if (!(o->dt > 0.0) || !isfinite(o->dt))
        return canopy_fail(CANOPY_ERR_INVALID, "nbody: dt must be finite and > 0 (got %g)", o->dt);
    if (!(o->gravity.softening >= 0.0f) || !isfinite(o->gravity.softening))
        return canopy_fail(CANOPY_ERR_INVALID, "nbody: softening must be finite and >= 0 (got %g)",
                           (double)o->gravity.softening);
    double box = o->gravity.box;
    if (!(box >= 0.0) || !isfinite(box))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "nbody: box must be finite and > 0 (0: open boundaries; got %g)", box);
    for (int64_t i = 0; i < 3 * n; i++) {
        if (box > 0.0 && isfinite(pos[i]) && !(pos[i] >= -4.0 * box && pos[i] < 5.0 * box))
            return canopy_fail(CANOPY_ERR_INVALID,
                               "nbody: body %lld is at %g on axis %d, more than 4 boxes outside "
                               "the periodic box [0, %g) (wrong units?)",
                               (long long)(i / 3), pos[i], (int)(i % 3), box);
        if (!isfinite(pos[i]) || fabs(pos[i]) > 1e30)
            return canopy_fail(CANOPY_ERR_INVALID, "nbody: position of body %lld is %g",
                               (long long)(i / 3), pos[i]);
        if (!isfinite(vel[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "nbody: velocity of body %lld is %g",
                               (long long)(i / 3), vel[i]);
    }
    for (int64_t i = 0; mass && i < n; i++)
        if (!(mass[i] >= 0.0f) || !isfinite(mass[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "nbody: mass of body %lld is %g", (long long)i,
                               (double)mass[i]);
    if (o->max_rung < 0 || o->max_rung > CANOPY_NBODY_MAX_RUNG)
        return canopy_fail(CANOPY_ERR_INVALID, "nbody: max rung must be in [0, %d] (got %d)",
                           CANOPY_NBODY_MAX_RUNG, (int)o->max_rung);
    if (o->max_rung > 0 && (!(o->eta > 0.0) || !isfinite(o->eta)))
        return canopy_fail(CANOPY_ERR_INVALID, "nbody: eta must be finite and > 0 (got %g)",
                           o->eta);
    if (!(o->rebuild >= 0.0) || !isfinite(o->rebuild))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "nbody: rebuild must be finite and >= 0 (0: a tree per substep; got %g)",
                           o->rebuild);
    if (o->max_rung > 0 && o->gravity.softening == 0.0f)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "nbody: block time steps choose dt_i = eta sqrt(softening / |a_i|): "
                           "give a softening > 0");
    return o->gravity.softening == 0.0f ? refuse_coincident(pos, n) : CANOPY_OK;
}

void canopy_nbody_kick_drift(double *pos, double *vel, const float *acc, int64_t n, double h,
                             double dt) {
    for (int64_t i = 0; i < 3 * n; i++) {
        vel[i] += h * acc[i];
        pos[i] += dt * vel[i];
    }
}

void canopy_nbody_kick(double *vel, const float *acc, int64_t n, double h) {
    for (int64_t i = 0; i < 3 * n; i++) vel[i] += h * acc[i];
}

static canopy_status check_input(const double *pos, const double *vel, const float *mass, int64_t n,
                                 const canopy_nbody_options *o) {
    if (n < 1) return canopy_fail(CANOPY_ERR_INVALID, "nbody: no bodies");
    if (n >= INT32_MAX) return canopy_fail(CANOPY_ERR_INVALID, "nbody: too many bodies");
    return canopy_nbody_check_state(pos, vel, mass, n, o);
}

/* canopy_gravity_multipole's list opening configuration. */
static gl_config list_config(const canopy_nbody *s) {
    gl_config cfg = {s->opt.gravity.tree == CANOPY_GRAVITY_TREE_BINARY, 0, 0,
                     s->opt.run.leaf_size > 0 ? s->opt.run.leaf_size : GL_DEFAULT_BUCKET,
                     GL_DEFAULT_GROUP};
    if (s->opt.gravity.box > 0.0f && s->opt.gravity.periodic == CANOPY_PERIODIC_TREEPM)
        cfg.group = GL_TREEPM_GROUP;
    return cfg;
}

/* Block steps, open boundaries: a fresh tree of all bodies at pos32. */
static canopy_status build_tree(canopy_nbody *s) {
    canopy_gl_tree_free(s->tree);
    s->tree = NULL;
    s->since_build = 0;
    gl_config cfg = list_config(s);
    return canopy_gl_tree_build(canopy_points_make(s->pos32, s->n, 3), s->mass,
                                s->opt.gravity.theta, s->opt.gravity.order, &cfg, &s->tree);
}

canopy_status canopy_nbody_create(const double *pos, const double *vel, const float *mass,
                                  int64_t n, const canopy_nbody_options *opt, canopy_nbody **out) {
    *out = NULL;
    canopy_nbody_options o = opt ? *opt : canopy_nbody_options_default();
    canopy_status st = check_input(pos, vel, mass, n, &o);
    if (st) return st;
    /* auto would take the GPU for large n, where block steps and boxes are not built */
    if ((o.max_rung > 0 || o.gravity.box != 0.0f) && o.run.backend == CANOPY_BACKEND_AUTO)
        o.run.backend = CANOPY_BACKEND_CPU;
    if (o.gravity.box != 0.0f && o.run.backend == CANOPY_BACKEND_GPU)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "nbody: periodic boxes are not built for the GPU backend; use "
                           "--backend cpu");
    if (o.gravity.box > 0.0f && o.gravity.ewald_grid == 0)
        o.gravity.ewald_grid = EWALD_GRID_DEFAULT;
    if ((st = canopy_gravity_resolve_periodic(&o.gravity))) return st;
    int on_gpu = canopy_gpu_mp_wanted(o.run.backend, n);
    if (o.gravity.accuracy != 0.0 &&
        (st = on_gpu ? canopy_gpu_mp_choose(o.gravity.accuracy, &o.gravity.theta, &o.gravity.order,
                                            NULL)
                     : canopy_gravity_choose_for_n(&o.gravity, o.gravity.accuracy, n,
                                                   &o.gravity.theta, &o.gravity.order, NULL)))
        return st;
    o.gravity.accuracy = 0.0; /* resolved: a checkpoint stores the theta and order used */
    canopy_nbody *s = NULL;
    if ((st = canopy_calloc((void **)&s, 1, sizeof *s))) return st;
    s->n = n;
    s->energy_step = -1;
    s->opt = o;
    size_t n3 = (size_t)n * 3;
    if ((st = canopy_alloc((void **)&s->pos, n3, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->vel, n3, sizeof(double))) ||
        (st = canopy_alloc((void **)&s->mass, (size_t)n, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->pos32, n3, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->acc, n3, sizeof(float))) ||
        (st = canopy_alloc((void **)&s->pot, (size_t)n, sizeof(float)))) {
        canopy_nbody_free(s);
        return st;
    }
    memcpy(s->pos, pos, n3 * sizeof(double));
    memcpy(s->vel, vel, n3 * sizeof(double));
    for (int64_t i = 0; i < n; i++) s->mass[i] = mass ? mass[i] : 1.0f / (float)n;
    if (o.max_rung > 0 && (on_gpu || o.gravity.opening != CANOPY_OPENING_LIST)) {
        canopy_nbody_free(s);
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "nbody: block time steps run on the CPU with list opening only "
                           "(not built for %s)",
                           on_gpu ? "the GPU backend" : "body or bucket opening");
    }
    if (o.max_rung > 0 && ((st = canopy_calloc((void **)&s->rung, (size_t)n, 1)) ||
                           (st = canopy_calloc((void **)&s->active, (size_t)n, 1)))) {
        canopy_nbody_free(s);
        return st;
    }
    s->work.bodies_per_rung[0] = n;
    if (on_gpu) {
        gpu_mp_params gp = {o.gravity.theta, o.gravity.order, o.gravity.softening, o.run.leaf_size,
                            0};
        st = o.gravity.order > 2
                 ? canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "nbody: the GPU walk expands to order 2 at most (got order %d); "
                               "use --backend cpu for orders 3 and 4",
                               (int)o.gravity.order)
             : canopy_gpu_usable()
                 ? canopy_gpu_nbody_create(pos, vel, s->mass, n, &gp, &s->gpu)
                 : canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "nbody: backend gpu, but no usable GPU (or no CUDA in this build)");
    } else {
        st = forces(s);
        /* the tree of the synchronised positions, as a step's last substep leaves it */
        if (!st && s->rung && o.gravity.box == 0.0f) st = build_tree(s);
    }
    if (st) {
        canopy_nbody_free(s);
        return st;
    }
    *out = s;
    return CANOPY_OK;
}

/* ------------------------------------------------------- block time steps -- */

/* The largest step dt / 2^r (r <= max_rung) within eta sqrt(softening / |a_i|). */
static int rung_for(const canopy_nbody *s, int64_t i) {
    const float *a = s->acc + 3 * i;
    double a2 = (double)a[0] * a[0] + (double)a[1] * a[1] + (double)a[2] * a[2];
    if (!(a2 > 0.0)) return 0;
    double want = s->opt.eta * sqrt((double)s->opt.gravity.softening / sqrt(a2));
    double step = s->opt.dt;
    int r = 0;
    while (r < s->opt.max_rung && step > want) step *= 0.5, r++;
    return r;
}

/* Forces on the na active bodies, from a tree of all bodies at their current positions;
 * the same engine and configuration as canopy_gravity_multipole's list opening. Open
 * boundaries keep the tree between substeps and refit it (a substep of few active
 * bodies then costs O(n) cheap passes, not a build); it is rebuilt where all bodies are
 * active (the end of each step dt, so a restart sees the same trees) and once the
 * evaluations on its refits would pass opt.rebuild n, as the drift since its build
 * loosens it. */
static canopy_status active_forces(canopy_nbody *s, int64_t na) {
    wrap_positions(s);
    for (int64_t i = 0; i < 3 * s->n; i++) s->pos32[i] = (float)s->pos[i];
    const canopy_gravity_options *g = &s->opt.gravity;
    float eps2 = g->softening * g->softening;
    s->pot_valid = 0; /* block steps' energies evaluate their own potentials */
    if (g->box == 0.0f) {
        canopy_status st;
        if (!s->tree || na == s->n || (double)(s->since_build + na) > s->opt.rebuild * (double)s->n)
            st = build_tree(s), s->work.tree_builds++;
        else if (!(st = canopy_gl_tree_refit(s->tree, canopy_points_make(s->pos32, s->n, 3))))
            s->since_build += na, s->work.tree_refits++;
        return st ? st : canopy_gl_tree_forces_active(s->tree, s->active, eps2, s->acc, NULL, NULL);
    }
    gl_config cfg = list_config(s);
    gl_periodic per = g->periodic == CANOPY_PERIODIC_TREEPM
                          ? canopy_gravity_treepm_split(g, s->n)
                          : (gl_periodic){g->box, g->ewald_grid, 0, 0.0, 0.0};
    return canopy_gl_gravity_periodic(canopy_points_make(s->pos32, s->n, 3), s->mass, g->theta,
                                      g->order, eps2, &cfg, &per, s->active, s->acc, NULL, NULL);
}

static void kick_one(canopy_nbody *s, int64_t i, double h) {
    for (int j = 0; j < 3; j++) s->vel[3 * i + j] += h * s->acc[3 * i + j];
}

/* One step dt as 2^R substeps of h = dt / 2^R (KDK per rung, as Gadget and ChaNGa):
 * every body starts synchronised and takes its rung from its acceleration; a body of
 * rung r kicks half its step L_r h = 2^(R-r) h, all bodies drift together to the next
 * tick where some step ends, the bodies whose step ends there get forces and close with
 * the second half kick, then open their next step. A body may move to a finer rung at
 * the end of any of its steps, to a coarser one only where that rung's steps end too. */
static canopy_status block_step(canopy_nbody *s) {
    const int R = s->opt.max_rung;
    const int64_t nsub = (int64_t)1 << R, n = s->n;
    const double h = s->opt.dt / (double)nsub;
    int64_t count[CANOPY_NBODY_MAX_RUNG + 1] = {0};
    int finest = 0;
    for (int64_t i = 0; i < n; i++) {
        int r = rung_for(s, i);
        s->rung[i] = (unsigned char)r;
        count[r]++;
        finest = r > finest ? r : finest;
        kick_one(s, i, 0.5 * (double)(nsub >> r) * h);
    }
    memcpy(s->work.bodies_per_rung, count, sizeof count);
    int64_t t = 0;
    while (t < nsub) {
        int64_t next = nsub;
        for (int r = 0; r <= R; r++) {
            int64_t len = nsub >> r, end = (t / len + 1) * len;
            if (count[r] && end < next) next = end;
        }
        double dtd = (double)(next - t) * h;
        for (int64_t i = 0; i < 3 * n; i++) s->pos[i] += dtd * s->vel[i];
        t = next;
        int64_t na = 0;
        for (int64_t i = 0; i < n; i++) {
            s->active[i] = t % (nsub >> s->rung[i]) == 0;
            na += s->active[i];
        }
        canopy_status st = active_forces(s, na);
        if (st) return st;
        s->work.force_evals += na;
        /* the coarsest rung whose steps also end at t */
        int coarsest = 0;
        while (t % (nsub >> coarsest)) coarsest++;
        for (int64_t i = 0; i < n; i++) {
            if (!s->active[i]) continue;
            int r = s->rung[i];
            kick_one(s, i, 0.5 * (double)(nsub >> r) * h);
            if (t == nsub) continue; /* the next step dt starts synchronised */
            int q = rung_for(s, i);
            q = q < coarsest ? coarsest : q;
            count[r]--, count[q]++;
            s->rung[i] = (unsigned char)q;
            finest = q > finest ? q : finest;
            kick_one(s, i, 0.5 * (double)(nsub >> q) * h);
        }
    }
    s->work.force_evals_global += n << finest;
    if (finest > s->work.finest_rung) s->work.finest_rung = finest;
    return CANOPY_OK;
}

void canopy_nbody_work_get(const canopy_nbody *s, canopy_nbody_work *w) {
    *w = s->work;
}

canopy_status canopy_nbody_step(canopy_nbody *s, int64_t steps) {
    double h = 0.5 * s->opt.dt, dt = s->opt.dt;
    if (s->opt.max_rung > 0) {
        for (int64_t k = 0; k < steps; k++) {
            canopy_status st = block_step(s);
            if (st) return st;
            s->step++;
        }
        return CANOPY_OK;
    }
    if (s->gpu) {
        canopy_status st = canopy_gpu_nbody_step(s->gpu, dt, steps);
        if (!st) st = canopy_gpu_nbody_download(s->gpu, s->pos, s->vel);
        if (!st) s->step += steps;
        if (!st) s->work.force_evals += steps * s->n, s->work.force_evals_global += steps * s->n;
        return st;
    }
    for (int64_t k = 0; k < steps; k++) {
        canopy_nbody_kick_drift(s->pos, s->vel, s->acc, s->n, h, dt);
        canopy_status st = forces(s);
        if (st) return st;
        canopy_nbody_kick(s->vel, s->acc, s->n, h);
        s->step++;
        s->work.force_evals += s->n;
        s->work.force_evals_global += s->n;
    }
    return CANOPY_OK;
}

int64_t canopy_nbody_n(const canopy_nbody *s) {
    return s->n;
}
int64_t canopy_nbody_steps_done(const canopy_nbody *s) {
    return s->step;
}
const double *canopy_nbody_positions(const canopy_nbody *s) {
    return s->pos;
}
const double *canopy_nbody_velocities(const canopy_nbody *s) {
    return s->vel;
}
const float *canopy_nbody_masses(const canopy_nbody *s) {
    return s->mass;
}
const canopy_nbody_options *canopy_nbody_get_options(const canopy_nbody *s) {
    return &s->opt;
}

canopy_status canopy_nbody_energy_get(canopy_nbody *s, int64_t direct_max, canopy_nbody_energy *e) {
    memset(e, 0, sizeof *e);
    if (s->gpu) {
        e->direct = s->n <= direct_max;
        canopy_status st = canopy_gpu_nbody_energy(s->gpu, e->direct, &e->kinetic, &e->potential,
                                                   e->momentum, e->angular_momentum);
        e->total = e->kinetic + e->potential;
        return st;
    }
    double kin = 0.0, pot = 0.0, e2 = (double)s->opt.gravity.softening * s->opt.gravity.softening;
    for (int64_t i = 0; i < s->n; i++) {
        const double *x = s->pos + 3 * i, *v = s->vel + 3 * i;
        double m = s->mass[i];
        kin += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int j = 0; j < 3; j++) e->momentum[j] += m * v[j];
        e->angular_momentum[0] += m * (x[1] * v[2] - x[2] * v[1]);
        e->angular_momentum[1] += m * (x[2] * v[0] - x[0] * v[2]);
        e->angular_momentum[2] += m * (x[0] * v[1] - x[1] * v[0]);
    }
    e->direct = s->n <= direct_max && s->opt.gravity.box == 0.0f; /* open boundaries only */
    if (e->direct) {
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : pot) num_threads(canopy_threads())
        for (int64_t i = 0; i < s->n; i++) {
            const double *x = s->pos + 3 * i;
            double p = 0.0;
            for (int64_t j = i + 1; j < s->n; j++) {
                const double *y = s->pos + 3 * j;
                double dx = y[0] - x[0], dy = y[1] - x[1], dz = y[2] - x[2];
                p -= (double)s->mass[j] / sqrt(dx * dx + dy * dy + dz * dz + e2);
            }
            pot += (double)s->mass[i] * p;
        }
    } else {
        canopy_status st = s->pot_valid ? CANOPY_OK : potentials_now(s);
        if (st) return st;
        for (int64_t i = 0; i < s->n; i++) pot += 0.5 * (double)s->mass[i] * s->pot[i];
    }
    s->pot_along = !e->direct && s->opt.max_rung == 0 &&
                   canopy_nbody_potentials_along(s->energy_step, s->step);
    s->energy_step = s->step;
    e->kinetic = kin;
    e->potential = pot;
    e->total = kin + pot;
    return CANOPY_OK;
}

/* ------------------------------------------------------------ checkpoints -- */

static const char ckpt_magic[8] = {'C', 'A', 'N', 'O', 'P', 'Y', 'N', 'B'};
/* Version 2 appends the block-step parameters, version 3 the periodic box, version 4
 * its method and TreePM grid (in version 3's reserved words: a version 3 box ran with
 * Ewald summation); versions 1 to 3 are still read. */
enum { CKPT_VERSION = 4, CKPT_V1_BYTES = 72, CKPT_V2_BYTES = 88 };

typedef struct ckpt_header {
    char magic[8];
    uint32_t version, header_bytes;
    int64_t n, step;
    double dt, theta, softening;
    int32_t order, opening, leaf_size, tree;
    double eta;
    int32_t max_rung, pm_grid;
    double box;
    int32_t ewald_grid, periodic;
} ckpt_header;
_Static_assert(sizeof(ckpt_header) == CKPT_V2_BYTES + 16, "checkpoint header layout");

/* FNV-1a, 64 bit: enough to catch truncation and bit rot, not tampering. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t len) {
    const unsigned char *b = p;
    for (size_t i = 0; i < len; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}
#define FNV_START 0xcbf29ce484222325ull

canopy_status canopy_nbody_checkpoint(const canopy_nbody *s, const char *path) {
    ckpt_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, ckpt_magic, 8);
    h.version = CKPT_VERSION;
    h.header_bytes = sizeof h;
    h.n = s->n;
    h.step = s->step;
    h.dt = s->opt.dt;
    h.theta = s->opt.gravity.theta;
    h.softening = s->opt.gravity.softening;
    h.order = s->opt.gravity.order;
    h.opening = (int32_t)s->opt.gravity.opening;
    h.leaf_size = s->opt.run.leaf_size;
    h.tree = (int32_t)s->opt.gravity.tree;
    h.eta = s->opt.eta;
    h.max_rung = s->opt.max_rung;
    h.box = s->opt.gravity.box;
    h.ewald_grid = s->opt.gravity.ewald_grid;
    h.periodic = (int32_t)s->opt.gravity.periodic;
    h.pm_grid = s->opt.gravity.pm_grid;
    size_t n3 = (size_t)s->n * 3;
    uint64_t sum = fnv1a(FNV_START, &h, sizeof h);
    sum = fnv1a(sum, s->pos, n3 * sizeof(double));
    sum = fnv1a(sum, s->vel, n3 * sizeof(double));
    sum = fnv1a(sum, s->mass, (size_t)s->n * sizeof(float));
    canopy_outfile o;
    canopy_status st = canopy_outfile_open(&o, path);
    if (st) return st;
    if ((st = canopy_io_write(&o, &h, sizeof h)) ||
        (st = canopy_io_write(&o, s->pos, n3 * sizeof(double))) ||
        (st = canopy_io_write(&o, s->vel, n3 * sizeof(double))) ||
        (st = canopy_io_write(&o, s->mass, (size_t)s->n * sizeof(float))) ||
        (st = canopy_io_write(&o, &sum, sizeof sum))) {
        canopy_outfile_abort(&o);
        return st;
    }
    return canopy_outfile_commit(&o);
}

canopy_status canopy_nbody_restart(const char *path, const canopy_run_options *opt,
                                   canopy_nbody **out) {
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    canopy_status st = canopy_io_read_all(path, &buf, &len);
    if (st) return st;
    ckpt_header h;
    memset(&h, 0, sizeof h);
    if (len < CKPT_V1_BYTES + sizeof(uint64_t)) {
        free(buf);
        return canopy_fail(CANOPY_ERR_FORMAT, "checkpoint '%s' is truncated (%zu bytes)", path,
                           len);
    }
    memcpy(&h, buf, CKPT_V1_BYTES);
    size_t hb = h.version == 1 ? CKPT_V1_BYTES : h.version == 2 ? CKPT_V2_BYTES : sizeof h;
    if (memcmp(h.magic, ckpt_magic, 8) || h.version < 1 || h.version > CKPT_VERSION ||
        h.header_bytes != hb || len < hb + sizeof(uint64_t)) {
        free(buf);
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "'%s' is not a canopy nbody checkpoint (version 1 to %d) file", path,
                           CKPT_VERSION);
    }
    memcpy(&h, buf, hb);
    size_t want = 0;
    if (h.n > 0 && h.n < INT32_MAX)
        want = hb + (size_t)h.n * (6 * sizeof(double) + sizeof(float)) + sizeof(uint64_t);
    if (len != want) {
        free(buf);
        return canopy_fail(CANOPY_ERR_FORMAT,
                           "checkpoint '%s' is truncated or corrupt (%zu bytes for n = %lld)", path,
                           len, (long long)h.n);
    }
    uint64_t sum;
    memcpy(&sum, buf + len - sizeof sum, sizeof sum);
    if (fnv1a(FNV_START, buf, len - sizeof sum) != sum) {
        free(buf);
        return canopy_fail(CANOPY_ERR_FORMAT, "checkpoint '%s' is corrupt (checksum mismatch)",
                           path);
    }
    /* The checksum catches damage, not a made-up header: a step the run counts from
     * must be one it could have reached (the CLI's --steps bound). */
    if (h.step < 0 || h.step > INT64_MAX / 2) {
        free(buf);
        return canopy_fail(CANOPY_ERR_FORMAT, "checkpoint '%s': step %lld out of range [0, %lld]",
                           path, (long long)h.step, (long long)(INT64_MAX / 2));
    }
    size_t n3 = (size_t)h.n * 3;
    double *pos = NULL, *vel = NULL;
    float *mass = NULL;
    if (!(st = canopy_alloc((void **)&pos, n3, sizeof *pos)) &&
        !(st = canopy_alloc((void **)&vel, n3, sizeof *vel)) &&
        !(st = canopy_alloc((void **)&mass, (size_t)h.n, sizeof *mass))) {
        const char *p = buf + hb;
        memcpy(pos, p, n3 * sizeof *pos);
        memcpy(vel, p + n3 * sizeof *pos, n3 * sizeof *vel);
        memcpy(mass, p + 2 * n3 * sizeof *pos, (size_t)h.n * sizeof *mass);
        canopy_nbody_options o = canopy_nbody_options_default();
        if (opt) o.run = *opt;
        o.run.leaf_size = h.leaf_size;
        o.dt = h.dt;
        o.gravity.theta = (float)h.theta;
        o.gravity.softening = (float)h.softening;
        o.gravity.order = h.order;
        o.gravity.opening = (canopy_opening)h.opening;
        o.gravity.tree = (canopy_gravity_tree)h.tree;
        if (h.version > 1) o.eta = h.eta, o.max_rung = h.max_rung;
        if (h.version > 2) o.gravity.box = (float)h.box, o.gravity.ewald_grid = h.ewald_grid;
        o.gravity.periodic =
            h.version > 3 ? (canopy_periodic_method)h.periodic : CANOPY_PERIODIC_EWALD;
        if (h.version > 3) o.gravity.pm_grid = h.pm_grid;
        st = canopy_nbody_create(pos, vel, mass, h.n, &o, out);
        if (!st) (*out)->step = h.step;
    }
    free(buf);
    canopy_free(pos);
    canopy_free(vel);
    canopy_free(mass);
    return st;
}

void canopy_nbody_free(canopy_nbody *s) {
    if (!s) return;
    canopy_gpu_nbody_free(s->gpu);
    canopy_free(s->pos);
    canopy_free(s->vel);
    canopy_free(s->mass);
    canopy_free(s->pos32);
    canopy_free(s->acc);
    canopy_free(s->pot);
    canopy_free(s->rung);
    canopy_free(s->active);
    canopy_gl_tree_free(s->tree);
    canopy_free(s);
}
