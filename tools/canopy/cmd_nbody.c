/* SPDX-License-Identifier: MIT */
/* canopy nbody: leapfrog time stepping with multipole tree forces, energies,
 * snapshots and checkpoint/restart (docs/nbody.md). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cli_dist.h"
#include "cli_dist_gravity.h"
#include "io/hdf5.h"
#include "gravity/gpu_multipole.h"
#include "trav_opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    OPT_BODIES = OPT_FIRST_LOCAL,
    OPT_VELOCITIES,
    OPT_MASSES,
    OPT_STEPS,
    OPT_DT,
    OPT_SOFTENING,
    OPT_ACCURACY,
    OPT_THETA,
    OPT_ORDER,
    OPT_OPENING,
    OPT_ENERGY_EVERY,
    OPT_SNAPSHOT_EVERY,
    OPT_CHECKPOINT_EVERY,
    OPT_CHECKPOINT,
    OPT_RESTART,
    OPT_DIRECT_MAX,
    OPT_SNAPSHOT_FORMAT,
    OPT_MAX_RUNG,
    OPT_ETA,
    OPT_BOX,
    OPT_EWALD_GRID,
    OPT_REBUILD,
    OPT_PERIODIC,
    OPT_PM_GRID
};

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: canopy nbody --bodies B.npy --velocities V.npy [--masses M.npy]\n"
        "       | --bodies IC.hdf5\n"
        "       --steps N --dt DT [--softening E] [--accuracy A | --theta T --order P]\n"
        "       [--opening list|body|bucket] [--tree binary|oct] [--max-rung R [--eta E] "
        "[--rebuild F]]\n"
        "       [--energy-every K]\n"
        "       [-o DIR [--snapshot-every M] [--snapshot-format npy|hdf5]] [--stats]\n"
        "       [--checkpoint-every C --checkpoint FILE] [--restart FILE]\n\n"
        "Leapfrog kick-drift-kick (G = 1) with multipole tree forces (canopy gravity\n"
        "--order/--opening/--tree/--accuracy), the tree rebuilt every step on the CPU;\n"
        "with --backend gpu (auto: from 200000 bodies when a GPU is usable) the state\n"
        "stays on the GPU and a binary radix tree is rebuilt there every step, with\n"
        "bucket opening.\n"
        "Positions and velocities are kept in float64, forces in float32.\n\n"
        "Options:\n"
        "  --bodies B         positions, (n, 3) float32 or float64; or initial conditions\n"
        "                     in a Gadget/SWIFT HDF5 snapshot (.hdf5 or .h5: PartType1\n"
        "                     Coordinates, Velocities, Masses or MassTable[1]; then no\n"
        "                     --velocities or --masses)\n"
        "  --velocities V     velocities, (n, 3)\n"
        "  --masses M         masses, (n) (default 1/n each)\n"
        "  --steps N          run until step N (counted from the start, also on restart)\n"
        "  --dt DT            time step, > 0\n"
        "  --softening E      Plummer softening, >= 0 (default 0)\n"
        "  --accuracy A       target median relative force error (default 1e-3); with\n"
        "                     --box the periodic method's table (canopy gravity\n"
        "                     --help)\n"
        "  --theta T, --order P  opening angle and multipole order (0, 2, 3 or 4; the\n"
        "                     GPU does 0 and 2) instead\n"
        "  --opening O        list (default), body or bucket (canopy gravity --help)\n"
        "  --tree T           list opening's tree: binary (default) or oct\n"
        "  --max-rung R       block time steps: each body on a rung r <= R of step\n"
        "                     DT / 2^r, the largest within eta sqrt(softening / |a|), forces\n"
        "                     only for the bodies whose step ends; rungs change at\n"
        "                     synchronised points; a step is DT (0 = one global step,\n"
        "                     default; R in [0, 30]; CPU, list opening, softening > 0)\n"
        "  --eta E            the block-step accuracy eta, > 0 (default 0.2)\n"
        "  --rebuild F        block steps, open boundaries: substeps refit one tree of all\n"
        "                     bodies (new boxes and moments, same bodies per node) and\n"
        "                     rebuild it where all are active or once the force\n"
        "                     evaluations on it reach F n; 0 = a new tree every substep\n"
        "                     (default 0.3; not kept in checkpoints)\n"
        "  --box L            periodic cube [0, L)^3, by Ewald summation or TreePM\n"
        "                     (--periodic; docs/nbody.md, \"Periodic boxes\"): bodies are\n"
        "                     wrapped into it after every drift (those more than 4 boxes\n"
        "                     out are refused); CPU, list opening, one process; potential\n"
        "                     energies from the walk.\n"
        "                     Default: an HDF5 snapshot's Header/BoxSize when > 0, else\n"
        "                     open; --box 0 is open whatever the file says (--stats\n"
        "                     names the source); HDF5 snapshots record the box run "
        "with\n" GRAV_PERIODIC_HELP(
            "       ") "  --ewald-grid N     Ewald correction table points per half side, 8..128\n"
                       "                     (default 32)\n"
                       "  --energy-every K   print energy (kinetic + potential), momentum and "
                       "angular\n"
                       "                     momentum every K steps on stdout (0 = never; default "
                       "0)\n"
                       "  --direct-max D     potential energy by float64 direct summation when n "
                       "<= D,\n"
                       "                     else from tree-walk potentials (default 20000): "
                       "along\n"
                       "                     the steps when K <= 4, else one force evaluation per\n"
                       "                     energy line\n"
                       "  --snapshot-every M write DIR/positions_SSSSSS.npy and "
                       "velocities_SSSSSS.npy\n"
                       "                     (float64, atomically) every M steps; needs -o DIR\n"
                       "  --snapshot-format F  npy (default) or hdf5: DIR/snapshot_SSSSSS.hdf5 in "
                       "the\n"
                       "                     Gadget-4/SWIFT layout (Header, PartType1; Time = step "
                       "* dt,\n"
                       "                     G = 1, no unit conversion), for the snapshots and the "
                       "final\n"
                       "                     state\n"
                       "  -o, --output DIR   folder (created if missing) for the snapshots and the "
                       "final\n"
                       "                     state: the last step's snapshot, always\n"
                       "  --checkpoint-every C  write the checkpoint every C steps and at the end\n"
                       "  --checkpoint FILE  checkpoint file, replaced atomically (never by a "
                       "partial one)\n"
                       "  --restart FILE     resume from a checkpoint (which holds the bodies, dt "
                       "and\n"
                       "                     force parameters; do not give them again)\n"
                       "  --backend B        cpu, gpu or auto (default; see above)\n"
                       "  --variant V, --schedule S, --leaf-size L, --threads T  as for canopy "
                       "gravity\n"
                       "  --stats, --stats=json  what ran (backend, opening, tree, theta, order), "
                       "the\n"
                       "                     seconds of loading, stepping, energy lines and "
                       "writing, and\n"
                       "                     the force evaluations (bodies per rung with "
                       "--max-rung)\n"
                       "  -h, --help         this help\n\n"
                       "A progress line goes to stderr when it is a terminal.\n"
                       "Under mpirun -np R (builds with MPI) the bodies are split over R ranks and "
                       "cut\n"
                       "again along the Hilbert curve every step by measured work; rank 0 reads, "
                       "prints\n"
                       "and writes the snapshots; every rank walks with list opening (the default) "
                       "or\n"
                       "body opening; --checkpoint, --restart and --max-rung run on one rank "
                       "only;\n"
                       "--backend gpu (auto: from 200000 bodies) walks on one GPU per rank, by "
                       "default\n"
                       "with the single-GPU engine (bucket opening, tree built on the device; the "
                       "other\n"
                       "ranks' pieces per body), --opening body for the CPU's octree walk on the "
                       "GPU;\n"
                       "--stats prints each rank's traffic and GPU (docs/distributed.md).\n\n"
                       "Example: canopy gen plummer --n 10000 -o b.npy --velocities v.npy &&\n"
                       "         canopy nbody --bodies b.npy --velocities v.npy --steps 128 \\\n"
                       "             --dt 0.0078125 --softening 0.01 --energy-every 16\n");
}

static int load_f64(const char *path, const char *what, int64_t cols, canopy_array *a) {
    if (canopy_array_load(path, a) || canopy_array_convert(a, CANOPY_F64))
        return cli_runtime_error("nbody");
    int ok = cols ? a->ndim == 2 && a->shape[1] == cols
                  : a->ndim == 1 || (a->ndim == 2 && a->shape[1] == 1);
    if (!ok) {
        fprintf(stderr, "canopy nbody: %s %s must be %s\n", what, path,
                cols ? "(n, 3)" : "(n) or (n, 1)");
        return CLI_ERROR;
    }
    return CLI_OK;
}

/* The snapshot folder must exist (created here) and be writable before any step. */
static int prepare_dir(const char *dir) {
    struct stat sb;
    if (stat(dir, &sb) != 0 && mkdir(dir, 0777) != 0) {
        fprintf(stderr, "canopy nbody: cannot create snapshot folder '%s': %s\n", dir,
                strerror(errno));
        return CLI_ERROR;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "canopy nbody: snapshot folder '%s' is not a writable folder\n", dir);
        return CLI_ERROR;
    }
    return CLI_OK;
}

/* Snapshots replace DIR/positions_*.npy, DIR/velocities_*.npy or DIR/snapshot_*.hdf5
 * as the run goes: none
 * of the named files (the inputs, a run restarted from an earlier snapshot, the
 * checkpoint) may be one of them. A folder that does not exist yet holds none. */
static int check_snapshot_names(const char *dir, const char *const *files, int n) {
    char *rdir = realpath(dir, NULL);
    int rc = CLI_OK;
    for (int i = 0; rdir && i < n && !rc; i++) {
        if (!files[i]) continue;
        const char *slash = strrchr(files[i], '/'), *base = slash ? slash + 1 : files[i];
        size_t len = strlen(base);
        int npy = !(strncmp(base, "positions_", 10) && strncmp(base, "velocities_", 11)) &&
                  len >= 4 && !strcmp(base + len - 4, ".npy");
        int h5 = !strncmp(base, "snapshot_", 9) && len >= 5 && !strcmp(base + len - 5, ".hdf5");
        if (!npy && !h5) continue;
        char *fdir = slash ? strndup(files[i], (size_t)(slash - files[i]) + (slash == files[i]))
                           : strdup(".");
        char *rf = fdir ? realpath(fdir, NULL) : NULL;
        if (rf && !strcmp(rf, rdir)) {
            fprintf(stderr,
                    "canopy nbody: '%s' lies in the snapshot folder '%s', where the "
                    "run's snapshots would replace it; copy it elsewhere or use another -o\n",
                    files[i], dir);
            rc = CLI_ERROR;
        }
        free(rf);
        free(fdir);
    }
    free(rdir);
    return rc;
}

/* The checkpoint's folder must accept a file: open and abandon a temporary one. */
static int probe_checkpoint(const char *path) {
    canopy_outfile o;
    if (canopy_outfile_open(&o, path)) return cli_runtime_error("nbody");
    canopy_outfile_abort(&o);
    return CLI_OK;
}

/* Where and how the snapshots go: -o DIR and --snapshot-format. */
typedef struct snap_spec {
    const char *dir;
    int hdf5;
} snap_spec;

static int write_snapshot(const snap_spec *sp, int64_t step, double dt, int64_t n,
                          const double *pos, const double *vel, const float *mass, double box) {
    char pp[4096], vp[4096];
    if (sp->hdf5) {
        snprintf(pp, sizeof pp, "%s/snapshot_%06lld.hdf5", sp->dir, (long long)step);
        if (canopy_hdf5_write_snapshot(pp, n, pos, vel, mass, (double)step * dt, box))
            return cli_runtime_error("nbody");
        return CLI_OK;
    }
    snprintf(pp, sizeof pp, "%s/positions_%06lld.npy", sp->dir, (long long)step);
    snprintf(vp, sizeof vp, "%s/velocities_%06lld.npy", sp->dir, (long long)step);
    canopy_array ab[2] = {cli_array_view((void *)pos, CANOPY_F64, n, 3),
                          cli_array_view((void *)vel, CANOPY_F64, n, 3)};
    const char *paths[2] = {pp, vp};
    return cli_write_arrays("nbody", 2, paths, ab, NULL);
}

static int snapshot(const snap_spec *sp, const canopy_nbody *s) {
    return write_snapshot(sp, canopy_nbody_steps_done(s), canopy_nbody_get_options(s)->dt,
                          canopy_nbody_n(s), canopy_nbody_positions(s), canopy_nbody_velocities(s),
                          canopy_nbody_masses(s), canopy_nbody_get_options(s)->gravity.box);
}

static void print_energy_line(const canopy_nbody_energy *e, int64_t step, double dt, double *e0) {
    if (isnan(*e0)) *e0 = e->total;
    printf("step %lld t %.9g E %.12g K %.12g W %.12g dE/E0 %.3e P %.3e %.3e %.3e "
           "L %.9e %.9e %.9e (%s potential)\n",
           (long long)step, (double)step * dt, e->total, e->kinetic, e->potential,
           *e0 != 0.0 ? (e->total - *e0) / fabs(*e0) : 0.0, e->momentum[0], e->momentum[1],
           e->momentum[2], e->angular_momentum[0], e->angular_momentum[1], e->angular_momentum[2],
           e->direct ? "direct float64" : "tree");
    fflush(stdout);
}

static int print_energy(canopy_nbody *s, int64_t direct_max, double *e0) {
    canopy_nbody_energy e;
    if (canopy_nbody_energy_get(s, direct_max, &e)) return cli_runtime_error("nbody");
    print_energy_line(&e, canopy_nbody_steps_done(s), canopy_nbody_get_options(s)->dt, e0);
    return CLI_OK;
}

/* What a run over MPI ranks needs from the command line. */
typedef struct ranks_job {
    const double *pos, *vel; /* rank 0's inputs */
    const float *mass;
    int64_t n, steps, energy_every, snap_every, direct_max;
    snap_spec snap;
    int stats;
} ranks_job;

#ifdef CANOPY_HAVE_MPI
/* The run over MPI ranks: every rank steps its domain; rank 0 prints the energy lines
 * and writes the snapshots (gathered in the input's order) and the summary. */
static int run_on_ranks(const ranks_job *j, const canopy_nbody_options *o) {
    int rank = cli_dist_rank(), ranks = cli_dist_size();
    canopy_dist_nbody *s = NULL;
    double *pos = NULL, *vel = NULL;
    int rc = CLI_OK;
    canopy_status st = cli_dist_nbody_create(j->pos, j->vel, j->mass, j->n, o, &s);
    if (!st && rank == 0 && j->snap.dir &&
        (canopy_alloc((void **)&pos, (size_t)j->n * 3, sizeof *pos) ||
         canopy_alloc((void **)&vel, (size_t)j->n * 3, sizeof *vel)))
        rc = cli_runtime_error("nbody");
    if (st) rc = rank == 0 ? cli_runtime_error("nbody") : CLI_ERROR;
    rc = cli_dist_share_rc(rc);
    double e0 = NAN, t0 = canopy_now();
    canopy_nbody_energy e;
    /* theta and order as the ranks resolved them (the table of the opening and tree) */
    canopy_nbody_options resolved = *o;
    if (s) resolved.gravity = canopy_dist_nbody_gravity(s);
    if (!rc && j->energy_every) {
        if ((st = canopy_dist_nbody_energy(s, j->direct_max, &e)))
            rc = rank == 0 ? cli_runtime_error("nbody") : CLI_ERROR;
        else if (rank == 0)
            print_energy_line(&e, 0, o->dt, &e0);
    }
    int64_t k = 0;
    while (!rc && k < j->steps) {
        st = canopy_dist_nbody_step(s, 1);
        k = canopy_dist_nbody_steps_done(s);
        if (!st && j->energy_every && k % j->energy_every == 0) {
            st = canopy_dist_nbody_energy(s, j->direct_max, &e);
            if (!st && rank == 0) print_energy_line(&e, k, o->dt, &e0);
        }
        if (!st && j->snap_every && k % j->snap_every == 0) {
            st = canopy_dist_nbody_gather(s, 0, pos, vel);
            if (!st && rank == 0)
                rc = write_snapshot(&j->snap, k, o->dt, j->n, pos, vel, j->mass, 0.0);
            rc = cli_dist_share_rc(rc);
        }
        if (st) rc = rank == 0 ? cli_runtime_error("nbody") : CLI_ERROR;
    }
    /* -o DIR always holds the final state, also without --snapshot-every */
    if (!rc && j->snap.dir && !(j->snap_every && k % j->snap_every == 0 && k > 0)) {
        if ((st = canopy_dist_nbody_gather(s, 0, pos, vel)))
            rc = rank == 0 ? cli_runtime_error("nbody") : CLI_ERROR;
        else if (rank == 0)
            rc = write_snapshot(&j->snap, k, o->dt, j->n, pos, vel, j->mass, 0.0);
        rc = cli_dist_share_rc(rc);
    }
    canopy_dist_stats ds = s ? canopy_dist_nbody_stats(s) : (canopy_dist_stats){0};
    if (!rc && j->stats) cli_dist_print_stats("nbody", &ds);
    if (!rc && rank == 0) {
        double secs = canopy_now() - t0;
        cli_summary("nbody: %lld bodies, steps 0 -> %lld, dt %g, theta %g, order %d, %s "
                    "opening, %s tree, softening %g, %d ranks, %.3g steps/s",
                    (long long)j->n, (long long)k, o->dt, (double)resolved.gravity.theta,
                    (int)resolved.gravity.order, grav_opening_name(resolved.gravity.opening),
                    grav_tree_name(resolved.gravity.tree), (double)o->gravity.softening, ranks,
                    secs > 0.0 ? (double)k / secs : 0.0);
    }
    canopy_free(pos);
    canopy_free(vel);
    canopy_dist_nbody_free(s);
    return rc;
}
#else
static int run_on_ranks(const ranks_job *j, const canopy_nbody_options *o) {
    (void)j, (void)o;
    return cli_runtime_error("nbody");
}
#endif

/* Reads positions, velocities and (optional) masses; the same n in each. An HDF5
 * snapshot as bodies holds all three (the caller refuses --velocities/--masses). */
static int load_inputs(const char *bodies, const char *vels, const char *masses, canopy_array *pa,
                       canopy_array *va, canopy_array *ma) {
    if (canopy_hdf5_path(bodies)) {
        canopy_snapshot sn;
        if (canopy_hdf5_read_snapshot(bodies, &sn)) return cli_runtime_error("nbody");
        *pa = cli_array_view(sn.pos, CANOPY_F64, sn.n, 3);
        *va = cli_array_view(sn.vel, CANOPY_F64, sn.n, 3);
        *ma = cli_array_view(sn.mass, CANOPY_F32, sn.n, 0); /* released by the caller */
        return CLI_OK;
    }
    int rc = load_f64(bodies, "bodies", 3, pa);
    if (!rc) rc = load_f64(vels, "velocities", 3, va);
    if (!rc && masses) rc = load_f64(masses, "masses", 0, ma);
    if (!rc && (va->shape[0] != pa->shape[0] || (masses && ma->shape[0] != pa->shape[0]))) {
        fprintf(stderr, "canopy nbody: bodies, velocities and masses must have the same n\n");
        rc = CLI_ERROR;
    }
    if (!rc && masses && canopy_array_convert(ma, CANOPY_F32)) rc = cli_runtime_error("nbody");
    return rc;
}

/* Block-step options as given (max_rung INT64_MIN, eta and rebuild NaN: not given). */
typedef struct block_opts {
    int64_t max_rung;
    double eta, rebuild;
} block_opts;

static canopy_nbody_options make_options(double dt, double eps, canopy_opening opening,
                                         canopy_gravity_tree tree, double theta, int64_t order,
                                         double accuracy, const block_opts *bo,
                                         const canopy_run_options *run) {
    canopy_nbody_options o = canopy_nbody_options_default();
    o.dt = dt;
    /* out of range is the library's to refuse (exit 1), like dt */
    if (bo->max_rung != INT64_MIN) o.max_rung = (int32_t)bo->max_rung;
    if (!isnan(bo->eta)) o.eta = bo->eta;
    if (!isnan(bo->rebuild)) o.rebuild = bo->rebuild;
    o.run = *run;
    o.gravity.softening = (float)eps;
    o.gravity.opening = opening;
    o.gravity.tree = tree;
    if (theta > 0.0) {
        o.gravity.theta = (float)theta;
        o.gravity.order = (int32_t)order;
    } else {
        o.gravity.accuracy = accuracy > 0.0 ? accuracy : 1e-3;
    }
    return o;
}

/* Wall-clock seconds of a single-rank run's phases, for --stats. */
typedef struct nbody_times {
    double load, step, energy, write, total;
} nbody_times;

/* --stats: phases, the work and what ran (forces are rebuilt every step, so "run" is
 * the stepping and "energy" the diagnostics' own tree walks or direct sums). */
static void print_stats(const canopy_nbody *s, int64_t first, const nbody_times *tm,
                        const char *box_from) {
    const canopy_nbody_options *o = canopy_nbody_get_options(s);
    int64_t n = canopy_nbody_n(s), steps = canopy_nbody_steps_done(s) - first;
    int gpu = canopy_gpu_mp_wanted(o->run.backend, n);
    const char *opening = gpu ? "GPU bucket" : grav_opening_name(o->gravity.opening);
    const char *tree = gpu ? "radix" : grav_tree_name(o->gravity.tree);
    double rate = tm->step > 0.0 ? (double)steps / tm->step : 0.0;
    canopy_nbody_work w;
    canopy_nbody_work_get(s, &w);
    if (cli_stats_json()) {
        cli_json *j = cli_json_begin("nbody");
        cli_json_seconds(j, "load", tm->load);
        cli_json_seconds(j, "run", tm->step);
        cli_json_seconds(j, "energy", tm->energy);
        cli_json_seconds(j, "write", tm->write);
        cli_json_count(j, "bodies", (double)n);
        cli_json_count(j, "steps", (double)steps);
        cli_json_count(j, "steps_per_second", rate);
        cli_json_count(j, "theta", (double)o->gravity.theta);
        cli_json_count(j, "order", (double)o->gravity.order);
        cli_json_choice(j, "backend", gpu ? "gpu" : "cpu");
        cli_json_choice(j, "opening", opening);
        cli_json_choice(j, "tree", tree);
        cli_json_count(j, "max_rung", (double)o->max_rung);
        cli_json_count(j, "force_evaluations", (double)w.force_evals);
        cli_json_count(j, "force_evaluations_global", (double)w.force_evals_global);
        cli_json_count(j, "tree_builds", (double)w.tree_builds);
        cli_json_count(j, "tree_refits", (double)w.tree_refits);
        cli_json_emit(j, "");
        return;
    }
    fprintf(stderr,
            "nbody stats:\n"
            "  %lld bodies, %lld steps; backend %s, %s opening, %s tree, theta %g, order %d, "
            "threads %d\n"
            "  load %.4f s, steps %.4f s (%.3g steps/s, %.3g s per step), energy %.4f s, "
            "write %.4f s, total %.4f s\n",
            (long long)n, (long long)steps, gpu ? "gpu" : "cpu", opening, tree,
            (double)o->gravity.theta, (int)o->gravity.order, canopy_threads(), tm->load, tm->step,
            rate, steps > 0 ? tm->step / (double)steps : 0.0, tm->energy, tm->write,
            tm->total + tm->load);
    if (o->gravity.box > 0.0f)
        fprintf(stderr, "  periodic box %g (%s)\n", (double)o->gravity.box, box_from);
    fprintf(stderr, "  body force evaluations %lld", (long long)w.force_evals);
    if (o->max_rung > 0) {
        fprintf(stderr,
                "; one global step at the finest rung used (%d) would make %lld: %.1f%% "
                "saved\n  bodies per rung at the last synchronised point:",
                (int)w.finest_rung, (long long)w.force_evals_global,
                w.force_evals_global
                    ? 100.0 * (1.0 - (double)w.force_evals / (double)w.force_evals_global)
                    : 0.0);
        for (int r = 0; r <= o->max_rung; r++)
            if (w.bodies_per_rung[r])
                fprintf(stderr, " %d:%lld", r, (long long)w.bodies_per_rung[r]);
        if (w.tree_builds + w.tree_refits)
            fprintf(stderr, "\n  substeps with a new tree %lld, with the kept tree refitted %lld",
                    (long long)w.tree_builds, (long long)w.tree_refits);
    }
    fprintf(stderr, "\n");
}

/* --tree here precedes TRAV_LONG_OPTIONS' generic one: getopt takes the first. */
static const struct option nbody_long_opts[] = {
    {"bodies", required_argument, NULL, OPT_BODIES},
    {"tree", required_argument, NULL, OPT_GRAVITY_TREE},
    {"velocities", required_argument, NULL, OPT_VELOCITIES},
    {"masses", required_argument, NULL, OPT_MASSES},
    {"steps", required_argument, NULL, OPT_STEPS},
    {"dt", required_argument, NULL, OPT_DT},
    {"softening", required_argument, NULL, OPT_SOFTENING},
    {"accuracy", required_argument, NULL, OPT_ACCURACY},
    {"theta", required_argument, NULL, OPT_THETA},
    {"order", required_argument, NULL, OPT_ORDER},
    {"opening", required_argument, NULL, OPT_OPENING},
    {"energy-every", required_argument, NULL, OPT_ENERGY_EVERY},
    {"direct-max", required_argument, NULL, OPT_DIRECT_MAX},
    {"snapshot-every", required_argument, NULL, OPT_SNAPSHOT_EVERY},
    {"snapshot-format", required_argument, NULL, OPT_SNAPSHOT_FORMAT},
    {"max-rung", required_argument, NULL, OPT_MAX_RUNG},
    {"eta", required_argument, NULL, OPT_ETA},
    {"rebuild", required_argument, NULL, OPT_REBUILD},
    {"box", required_argument, NULL, OPT_BOX},
    {"ewald-grid", required_argument, NULL, OPT_EWALD_GRID},
    {"periodic", required_argument, NULL, OPT_PERIODIC},
    {"pm-grid", required_argument, NULL, OPT_PM_GRID},
    {"checkpoint-every", required_argument, NULL, OPT_CHECKPOINT_EVERY},
    {"checkpoint", required_argument, NULL, OPT_CHECKPOINT},
    {"restart", required_argument, NULL, OPT_RESTART},
    {"output", required_argument, NULL, 'o'},
    TRAV_LONG_OPTIONS,
    {NULL, 0, NULL, 0}};

/* The command line, once parsed. given_physics: an option the checkpoint holds on
 * --restart; steps -1 and order -1: not given. */
typedef struct nbody_args {
    const char *bodies, *vels, *masses, *dir, *ckpt, *restart;
    double dt, eps, accuracy, theta, box;
    int64_t steps, order, energy_every, snap_every, ckpt_every, ewald_grid, pm_grid, direct_max;
    canopy_periodic_method periodic;
    int periodic_given;
    int given_physics, dt_given, tree_given, opening_given, hdf5_out, box_given;
    canopy_opening opening;
    canopy_gravity_tree gtree;
    block_opts bo;
    trav_opts to;
} nbody_args;

/* nbody_option's answer when parsing goes on; anything else is the exit code. */
enum { NBODY_GO_ON = -1 };

/* The options that set the physics, which a checkpoint holds (given_physics):
 * NBODY_GO_ON, or the exit code after a usage error. */
static int nbody_physics_option(nbody_args *a, int c) {
    switch (c) {
    case OPT_DT:
        /* dt <= 0 is bad input, reported by the library with exit 1. */
        if (cli_parse_double("nbody", "--dt", optarg, -1e30, 1e30, &a->dt)) return CLI_USAGE;
        a->dt_given = 1;
        break;
    case OPT_SOFTENING:
        if (cli_parse_double("nbody", "--softening", optarg, -1e30, 1e30, &a->eps))
            return CLI_USAGE;
        break;
    case OPT_ACCURACY:
        if (cli_parse_double("nbody", "--accuracy", optarg, 1e-6, 0.1, &a->accuracy))
            return CLI_USAGE;
        break;
    case OPT_THETA:
        if (cli_parse_double("nbody", "--theta", optarg, 1e-6, 100.0, &a->theta)) return CLI_USAGE;
        break;
    case OPT_ORDER:
        if (cli_parse_i64("nbody", "--order", optarg, 0, 4, &a->order) || a->order == 1)
            return cli_usage_error("nbody", "--order must be 0, 2, 3 or 4");
        break;
    case OPT_OPENING:
        if (grav_parse_opening("nbody", optarg, &a->opening)) return CLI_USAGE;
        a->opening_given = 1;
        break;
    case OPT_GRAVITY_TREE:
        if (grav_parse_tree("nbody", optarg, &a->gtree)) return CLI_USAGE;
        a->tree_given = 1;
        break;
    case OPT_BOX:
        if (cli_parse_double("nbody", "--box", optarg, 0.0, 1e30, &a->box)) return CLI_USAGE;
        a->box_given = 1;
        break;
    case OPT_EWALD_GRID:
        if (cli_parse_i64("nbody", "--ewald-grid", optarg, 8, 128, &a->ewald_grid))
            return CLI_USAGE;
        break;
    case OPT_PERIODIC:
        if (grav_parse_periodic("nbody", optarg, &a->periodic)) return CLI_USAGE;
        a->periodic_given = 1;
        break;
    case OPT_PM_GRID:
        if (cli_parse_i64("nbody", "--pm-grid", optarg, 18, 1024, &a->pm_grid)) return CLI_USAGE;
        if (a->pm_grid % 2) return cli_usage_error("nbody", "--pm-grid must be even");
        break;
    case OPT_MAX_RUNG:
        if (cli_parse_i64("nbody", "--max-rung", optarg, INT32_MIN, INT32_MAX, &a->bo.max_rung))
            return CLI_USAGE;
        break;
    case OPT_ETA:
        if (cli_parse_double("nbody", "--eta", optarg, -1e30, 1e30, &a->bo.eta)) return CLI_USAGE;
        break;
    case OPT_REBUILD:
        if (cli_parse_double("nbody", "--rebuild", optarg, -1e30, 1e30, &a->bo.rebuild))
            return CLI_USAGE;
        break;
    default:
        return NBODY_GO_ON;
    }
    a->given_physics = 1;
    return NBODY_GO_ON;
}

/* Option c (argument optarg) of nbody's own: NBODY_GO_ON, or the exit code after a
 * usage error. */
static int nbody_option(nbody_args *a, int c) {
    switch (c) {
    case OPT_BODIES:
        a->bodies = optarg;
        break;
    case OPT_VELOCITIES:
        a->vels = optarg;
        break;
    case OPT_MASSES:
        a->masses = optarg;
        break;
    case OPT_STEPS:
        if (cli_parse_i64("nbody", "--steps", optarg, 0, INT64_MAX / 2, &a->steps))
            return CLI_USAGE;
        break;
    case OPT_ENERGY_EVERY:
        if (cli_parse_i64("nbody", "--energy-every", optarg, 0, INT64_MAX, &a->energy_every))
            return CLI_USAGE;
        break;
    case OPT_DIRECT_MAX:
        if (cli_parse_i64("nbody", "--direct-max", optarg, 0, INT64_MAX, &a->direct_max))
            return CLI_USAGE;
        break;
    case OPT_SNAPSHOT_EVERY:
        if (cli_parse_i64("nbody", "--snapshot-every", optarg, 1, INT64_MAX, &a->snap_every))
            return CLI_USAGE;
        break;
    case OPT_SNAPSHOT_FORMAT:
        if (strcmp(optarg, "npy") && strcmp(optarg, "hdf5"))
            return cli_usage_error("nbody", "--snapshot-format must be npy or hdf5 (got '%s')",
                                   optarg);
        a->hdf5_out = !strcmp(optarg, "hdf5");
        break;
    case OPT_CHECKPOINT_EVERY:
        if (cli_parse_i64("nbody", "--checkpoint-every", optarg, 1, INT64_MAX, &a->ckpt_every))
            return CLI_USAGE;
        break;
    case OPT_CHECKPOINT:
        a->ckpt = optarg;
        break;
    case OPT_RESTART:
        a->restart = optarg;
        break;
    case 'o':
        a->dir = optarg;
        break;
    default:
        return nbody_physics_option(a, c);
    }
    return NBODY_GO_ON;
}

/* The combinations the options allow (opening and tree settled) and the files they
 * name: CLI_OK or the exit code. */
static int nbody_check(nbody_args *a) {
    if (a->steps < 0) return cli_usage_error("nbody", "--steps is required");
    if (a->restart && (a->bodies || a->vels || a->masses || a->given_physics))
        return cli_usage_error("nbody", "--restart takes the bodies, dt and force parameters from "
                                        "the checkpoint; do not give them again");
    int hdf5_in = canopy_hdf5_path(a->bodies);
    if (hdf5_in && (a->vels || a->masses))
        return cli_usage_error("nbody",
                               "the HDF5 snapshot %s holds the velocities and masses; "
                               "do not give --velocities or --masses",
                               a->bodies);
    if (!a->restart && (!a->bodies || (!a->vels && !hdf5_in)))
        return cli_usage_error("nbody", "--bodies and --velocities (or --bodies FILE.hdf5) are "
                                        "required");
    if (!a->restart && !a->dt_given) return cli_usage_error("nbody", "--dt is required");
    if (a->accuracy > 0.0 && (a->theta > 0.0 || a->order >= 0))
        return cli_usage_error("nbody", "give --accuracy or --theta/--order, not both");
    if ((a->theta > 0.0) != (a->order >= 0))
        return cli_usage_error("nbody", "--theta and --order go together");
    /* as canopy gravity: GPU ranks take the single-GPU engine (src/dist/gravity.c) */
    if (cli_dist_size() > 1 && a->to.run.backend == CANOPY_BACKEND_GPU && !a->opening_given)
        a->opening = CANOPY_OPENING_BUCKET;
    if (a->opening != CANOPY_OPENING_LIST) {
        if (a->tree_given && a->gtree != CANOPY_GRAVITY_TREE_OCT)
            return cli_usage_error("nbody", "--tree binary needs --opening list");
        a->gtree = CANOPY_GRAVITY_TREE_OCT;
    }
    if (a->snap_every && !a->dir) return cli_usage_error("nbody", "--snapshot-every needs -o DIR");
    if (a->hdf5_out && !a->dir) return cli_usage_error("nbody", "--snapshot-format needs -o DIR");
    /* an HDF5 snapshot's BoxSize is the box unless --box is given (0 there: open) */
    if (hdf5_in && !a->box_given && canopy_hdf5_read_box(a->bodies, &a->box))
        return cli_runtime_error("nbody");
    if (a->ewald_grid && a->box == 0.0) return cli_usage_error("nbody", "--ewald-grid needs --box");
    if ((a->periodic_given || a->pm_grid) && a->box == 0.0)
        return cli_usage_error("nbody",
                               "--%s needs a periodic box (--box L, or an HDF5 "
                               "snapshot's BoxSize)",
                               a->pm_grid ? "pm-grid" : "periodic");
    if (!isnan(a->bo.eta) && a->bo.max_rung == INT64_MIN)
        return cli_usage_error("nbody", "--eta needs --max-rung (block time steps)");
    if (!isnan(a->bo.rebuild) && a->bo.max_rung == INT64_MIN)
        return cli_usage_error("nbody", "--rebuild needs --max-rung (block time steps)");
    if (a->ckpt_every && !a->ckpt)
        return cli_usage_error("nbody", "--checkpoint-every needs --checkpoint FILE");
    /* The checkpoint may replace the file the run restarts from (read whole first:
     * the usual way to continue a run), never another input. */
    const char *ins[] = {a->bodies, a->vels, a->masses};
    const char *named[] = {a->bodies, a->vels, a->masses, a->restart, a->ckpt};
    if (cli_check_paths("nbody", ins, 3, &a->ckpt, 1) ||
        (a->dir && check_snapshot_names(a->dir, named, 5)))
        return CLI_ERROR;
    return CLI_OK;
}

/* Over several ranks: rank 0 reads and writes; every rank steps its domain. */
static int nbody_ranks(const nbody_args *a, int stats) {
    int rank = cli_dist_rank();
    int cpu_bucket = a->opening == CANOPY_OPENING_BUCKET && a->to.run.backend != CANOPY_BACKEND_GPU;
    if (a->restart || a->ckpt || cpu_bucket || a->bo.max_rung > 0 || a->box > 0.0) {
        if (rank == 0)
            cli_usage_error("nbody",
                            "--restart, --checkpoint, --max-rung, --box and "
                            "--opening bucket without --backend gpu are not available over "
                            "several ranks%s",
                            a->box > 0.0 && !a->box_given
                                ? " (the box is the snapshot's BoxSize: --box 0 runs open)"
                                : "");
        return CLI_USAGE;
    }
    canopy_array pa = {0}, va = {0}, ma = {0};
    int rc = rank == 0 && a->dir ? prepare_dir(a->dir) : CLI_OK;
    if (!rc && rank == 0 && a->hdf5_out && canopy_hdf5_usable()) rc = cli_runtime_error("nbody");
    if (!rc && rank == 0) rc = load_inputs(a->bodies, a->vels, a->masses, &pa, &va, &ma);
    rc = cli_dist_share_rc(rc);
    if (!rc) {
        canopy_nbody_options o = make_options(a->dt, a->eps, a->opening, a->gtree, a->theta,
                                              a->order, a->accuracy, &a->bo, &a->to.run);
        snap_spec snap = {a->dir, a->hdf5_out};
        ranks_job j = {pa.data,       va.data,
                       ma.data,       rank == 0 ? pa.shape[0] : 0,
                       a->steps,      a->energy_every,
                       a->snap_every, a->direct_max,
                       snap,          stats};
        rc = run_on_ranks(&j, &o);
    }
    canopy_array_release(&pa);
    canopy_array_release(&va);
    canopy_array_release(&ma);
    return rc;
}

/* One process's state, from the checkpoint (--restart) or from the inputs. */
static int nbody_start(const nbody_args *a, canopy_nbody **s) {
    if (a->restart)
        return canopy_nbody_restart(a->restart, &a->to.run, s) ? cli_runtime_error("nbody")
                                                               : CLI_OK;
    canopy_array pa = {0}, va = {0}, ma = {0};
    int rc = load_inputs(a->bodies, a->vels, a->masses, &pa, &va, &ma);
    if (!rc) {
        canopy_nbody_options o = make_options(a->dt, a->eps, a->opening, a->gtree, a->theta,
                                              a->order, a->accuracy, &a->bo, &a->to.run);
        o.gravity.box = (float)a->box;
        o.gravity.ewald_grid = (int32_t)a->ewald_grid;
        o.gravity.periodic = a->periodic;
        o.gravity.pm_grid = (int32_t)a->pm_grid;
        if (canopy_nbody_create(pa.data, va.data, ma.data, pa.shape[0], &o, s))
            rc = cli_runtime_error("nbody");
    }
    canopy_array_release(&pa);
    canopy_array_release(&va);
    canopy_array_release(&ma);
    return rc;
}

/* Steps from step `first` (at time t0) to a->steps, printing energies and writing
 * snapshots and checkpoints at their steps, then the final checkpoint and snapshot;
 * tm gets the phases' seconds. */
static int nbody_steps(const nbody_args *a, canopy_nbody *s, int64_t first, double t0,
                       nbody_times *tm) {
    snap_spec snap = {a->dir, a->hdf5_out};
    int tty = isatty(2), rc = CLI_OK;
    double e0 = NAN;
    if (a->energy_every) rc = print_energy(s, a->direct_max, &e0);
    while (!rc && canopy_nbody_steps_done(s) < a->steps) {
        /* up to the next step that prints or writes (the GPU state is copied back to
         * the host once per call) */
        int64_t now = canopy_nbody_steps_done(s), next = a->steps;
        int64_t every[3] = {a->energy_every, a->snap_every, a->ckpt_every};
        for (int e = 0; e < 3; e++)
            if (every[e] && (now / every[e] + 1) * every[e] < next)
                next = (now / every[e] + 1) * every[e];
        if (tty && next > now + 8) next = now + 8;
        double t = canopy_now();
        if (canopy_nbody_step(s, next - now)) {
            rc = cli_runtime_error("nbody");
            break;
        }
        tm->step += canopy_now() - t;
        int64_t k = canopy_nbody_steps_done(s);
        t = canopy_now();
        if (a->energy_every && k % a->energy_every == 0) rc = print_energy(s, a->direct_max, &e0);
        tm->energy += canopy_now() - t;
        t = canopy_now();
        if (!rc && a->snap_every && k % a->snap_every == 0) rc = snapshot(&snap, s);
        if (!rc && a->ckpt_every && k % a->ckpt_every == 0 && canopy_nbody_checkpoint(s, a->ckpt))
            rc = cli_runtime_error("nbody");
        tm->write += canopy_now() - t;
        if (tty)
            fprintf(stderr, "\rnbody: step %lld / %lld, %.2f steps/s   ", (long long)k,
                    (long long)a->steps, (double)(k - first) / (canopy_now() - t0));
    }
    if (tty) fprintf(stderr, "\n");
    double t = canopy_now();
    if (!rc && a->ckpt && canopy_nbody_checkpoint(s, a->ckpt)) rc = cli_runtime_error("nbody");
    /* -o DIR always holds the final state, also without --snapshot-every */
    int64_t last = canopy_nbody_steps_done(s);
    if (!rc && a->dir && !(a->snap_every && last % a->snap_every == 0 && last > first))
        rc = snapshot(&snap, s);
    tm->write += canopy_now() - t;
    return rc;
}

/* The summary line of a run in one process, secs after loading. */
static void nbody_summary(const canopy_nbody *s, int64_t first, double secs, const char *ckpt) {
    const canopy_nbody_options *o = canopy_nbody_get_options(s);
    char block[160] = "";
    if (o->max_rung > 0)
        snprintf(block, sizeof block, ", block steps (max rung %d, eta %g)", (int)o->max_rung,
                 o->eta);
    if (o->gravity.box > 0.0f && o->gravity.periodic == CANOPY_PERIODIC_TREEPM)
        snprintf(block + strlen(block), sizeof block - strlen(block), ", periodic box %g (TreePM)",
                 (double)o->gravity.box);
    else if (o->gravity.box > 0.0f)
        snprintf(block + strlen(block), sizeof block - strlen(block),
                 ", periodic box %g (Ewald grid %d)", (double)o->gravity.box,
                 (int)o->gravity.ewald_grid);
    cli_summary(
        "nbody: %lld bodies, steps %lld -> %lld, dt %g%s, theta %g, order %d, %s opening, "
        "%s tree, softening %g, %.3g steps/s%s%s",
        (long long)canopy_nbody_n(s), (long long)first, (long long)canopy_nbody_steps_done(s),
        o->dt, block, (double)o->gravity.theta, (int)o->gravity.order,
        canopy_gpu_mp_wanted(o->run.backend, canopy_nbody_n(s)) ? "GPU bucket"
                                                         : grav_opening_name(o->gravity.opening),
        canopy_gpu_mp_wanted(o->run.backend, canopy_nbody_n(s)) ? "radix"
                                                         : grav_tree_name(o->gravity.tree),
        (double)o->gravity.softening,
        secs > 0.0 ? (double)(canopy_nbody_steps_done(s) - first) / secs : 0.0, ckpt ? " -> " : "",
        ckpt ? ckpt : "");
}

int cmd_nbody(int argc, char **argv) {
    nbody_args a = {0};
    a.steps = a.order = -1;
    a.direct_max = 20000;
    a.opening = canopy_gravity_options_default().opening;
    a.gtree = canopy_gravity_options_default().tree;
    a.bo = (block_opts){INT64_MIN, NAN, NAN};
    trav_opts_init(&a.to);
    a.to.run.tree = CANOPY_TREE_OCT;
    a.to.tree_fixed = "nbody always uses an octree";
    cli_parser p =
        cli_parser_start("nbody", "ho:", nbody_long_opts, usage, trav_opts_handle, &a.to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        if (c == CLI_STOP) return p.rc;
        int rc = nbody_option(&a, c);
        if (rc != NBODY_GO_ON) return rc;
    }
    if (optind < argc) return cli_usage_error("nbody", "unexpected argument '%s'", argv[optind]);
    int rc = nbody_check(&a);
    if (rc != CLI_OK) return rc;
    if (cli_dist_size() > 1) return nbody_ranks(&a, p.stats);

    if (a.dir && prepare_dir(a.dir)) return CLI_ERROR;
    if (a.ckpt && probe_checkpoint(a.ckpt)) return CLI_ERROR;
    if (a.hdf5_out && canopy_hdf5_usable()) return cli_runtime_error("nbody");
    canopy_nbody *s = NULL;
    nbody_times tm = {0};
    tm.load = canopy_now();
    rc = nbody_start(&a, &s);
    if (rc != CLI_OK) return rc;
    tm.load = canopy_now() - tm.load;
    double t0 = canopy_now();
    int64_t first = canopy_nbody_steps_done(s);
    rc = nbody_steps(&a, s, first, t0, &tm);
    if (!rc && p.stats) {
        tm.total = canopy_now() - t0;
        print_stats(s, first, &tm,
                    a.restart     ? "the checkpoint"
                    : a.box_given ? "--box"
                                  : "Header/BoxSize of the snapshot");
    }
    if (!rc) nbody_summary(s, first, canopy_now() - t0, a.ckpt);
    canopy_nbody_free(s);
    return rc;
}
