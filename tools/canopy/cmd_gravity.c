/* SPDX-License-Identifier: MIT */
/* canopy gravity: Barnes-Hut accelerations over an octree. */
#include "cli_dist.h"
#include "cli_dist_gravity.h"
#include "core/coincident.h"
#include "gravity/force_error.h"
#include "gravity/gpu_multipole.h"
#include "io/hdf5.h"
#include "trav_opts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_BODIES = OPT_FIRST_LOCAL,
    OPT_THETA,
    OPT_SOFTENING,
    OPT_ORDER,
    OPT_OPENING,
    OPT_ACCURACY,
    OPT_BOX,
    OPT_EWALD_GRID,
    OPT_PERIODIC,
    OPT_PM_GRID
};

static void usage(FILE *f) {
    fprintf(
        f,
        "usage: canopy gravity --bodies B.npy [--theta 0.5] [--softening EPS]\n"
        "       [--order 0|2|3|4] [--opening list|body|bucket] [--tree binary|oct]\n"
        "       [--accuracy A] [--box L [--periodic M] [--pm-grid N] [--ewald-grid N]]\n"
        "       -o ACC.npy [--variant V] [--schedule S] [--backend B] [--threads T]\n"
        "       [--leaf-size L] [--stats]\n\n"
        "Gravitational acceleration (G = 1) of every body from all the others by a\n"
        "Barnes-Hut tree code, by default the one canopy nbody uses (list opening\n"
        "on the binary tree, theta and order for a median error of 1e-3: the\n"
        "fastest at equal error, docs/nbody.md); Plummer softening\n"
        "a = m d / (|d|^2 + eps^2)^(3/2).\n\n"
        "B is (n, 3) positions with equal masses 1/n, or (n, 4) with the mass last,\n"
        "or a Gadget/SWIFT HDF5 snapshot (.hdf5 or .h5: PartType1 Coordinates and\n"
        "Masses or MassTable; docs/nbody.md, \"HDF5 snapshots\").\n"
        "Output: ACC float32 (n, 3), written atomically. Without softening, two\n"
        "bodies at one position have an infinite force: that is an error (exit 1).\n\n"
        "Options:\n"
        "  --bodies B       bodies file (required)\n"
        "  --theta X        opening angle, > 0 (smaller is more exact; default from\n"
        "                   --accuracy, or 0.5 with --order or --variant/--schedule)\n"
        "  --softening E    Plummer softening length, >= 0 (default 0)\n"
        "  --order P        multipole order: 0 monopole (default with --theta), 2\n"
        "                   quadrupole, 3 octupole, 4 hexadecapole (moments about the\n"
        "                   centre of mass, kept apart from the hot records; the GPU\n"
        "                   does 0 and 2)\n"
        "  --opening O      list (default: groups of <= 256 bodies walk the tree once\n"
        "                   into interaction lists, then a vectorised force kernel),\n"
        "                   body (each body tests each cell) or bucket (a leaf\n"
        "                   bucket's bodies walk together: Liu's bucket-to-node\n"
        "                   test)\n"
        "  --tree T         list opening's tree: binary (default; ChaNGa's, split at\n"
        "                   the midpoint of the longest side) or oct; body and bucket\n"
        "                   opening use the octree\n"
        "  --accuracy A     target median relative force error in [1e-6, 0.1]: theta\n"
        "                   and order from a calibrated table (docs/nbody.md; default\n"
        "                   1e-3 unless --theta or --order is given); with --box the\n"
        "                   periodic method's table read at the number of bodies,\n"
        "                   whose error grows with it (Ewald at 1e-3: theta 0.66 up\n"
        "                   to 300k, 0.62 at 1M)\n"
        "  The multipole code runs on the CPU, or on the GPU with --backend gpu (auto:\n"
        "  from 200000 bodies when a GPU is usable), where the tree is a binary radix\n"
        "  tree built on the device and the opening is always Liu's bucket-to-node test\n"
        "  (docs/nbody.md, \"GPU\"). --variant or --schedule without --order, --opening,\n"
        "  --tree and --accuracy run the monopole Barnes-Hut traversal instead (body\n"
        "  opening on an octree, theta 0.5 by default; CPU or GPU). --stats also prints\n"
        "  the expected error and the one measured on <= 1000 evenly spaced bodies\n"
        "  against float64 direct summation.\n"
        "  --box L          periodic cube [0, L)^3 (docs/nbody.md, \"Periodic boxes\"):\n"
        "                   all images and a neutralising background, by TreePM or\n"
        "                   Ewald summation (--periodic); bodies within 4 boxes are\n"
        "                   wrapped in, farther ones refused; CPU, list opening, one\n"
        "                   process. Default: an HDF5 snapshot's Header/BoxSize when\n"
        "                   > 0, else open; --box 0 is open whatever the file says\n"
        "                   (--stats names the source)\n" GRAV_PERIODIC_HELP(
            "     ") "  --ewald-grid N   Ewald correction table points per half side, 8..128\n"
                     "                   (default 32)\n"
                     "  -o, --output F   output file (required)\n"
                     "  Under mpirun -np R (builds with MPI) the bodies are split over R ranks "
                     "along\n"
                     "  the Hilbert curve and the multipole walk runs distributed with the same\n"
                     "  options (list or body opening). Each rank reads its own rows of a .npy\n"
                     "  input and writes its own rows of a .npy output in place (rank 0 reads and\n"
                     "  writes other formats). --backend gpu walks on one GPU per rank, by "
                     "default\n"
                     "  with the single-GPU engine (bucket opening, tree built on the device; the\n"
                     "  other ranks' pieces per body), --opening body for the CPU's octree walk;\n"
                     "  --stats prints each rank's traffic and phases, and its error check reads\n"
                     "  the bodies whole on rank 0 (docs/distributed.md).\n" TRAV_HELP
                     "\nExample: canopy gen plummer --n 100000 -o b.npy &&\n"
                     "         canopy gravity --bodies b.npy --softening 0.05 -o acc.npy "
                     "--stats\n");
}

/* Without softening, two bodies at one position pull each other infinitely hard: the
 * run is refused before any force is computed (expected O(n), a hash of the rows). */
static int check_distinct(const char *path, canopy_points b) {
    canopy_points xyz = b;
    xyz.d = 3; /* a mass column does not make two bodies distinct */
    int64_t i, j;
    int found = canopy_points_find_coincident(xyz, &i, &j);
    if (found < 0) return cli_runtime_error("gravity");
    if (!found) return 0;
    const float *p = canopy_point(b, i);
    fprintf(stderr,
            "canopy gravity: %s: bodies %lld and %lld are at the same position (%g, %g, %g); "
            "with softening 0 their force is infinite. Give --softening EPS > 0.\n",
            path, (long long)i, (long long)j, p[0], p[1], p[2]);
    return CLI_ERROR;
}

/* A non-finite acceleration is refused rather than written. */
static int check_finite(const char *path, const float *acc, int64_t n, double eps) {
    for (int64_t i = 0; i < 3 * n; i++)
        if (!isfinite(acc[i])) {
            fprintf(stderr,
                    "canopy gravity: %s: body %lld has a non-finite acceleration (softening %g); "
                    "give --softening EPS > 0\n",
                    path, (long long)(i / 3), eps);
            return CLI_ERROR;
        }
    return 0;
}

/* --stats: the calibrated error for (theta, order) and the error measured on at most
 * 1000 evenly spaced bodies against float64 direct summation. */
static int print_error_stats(canopy_points b, const float *mass, const canopy_gravity_options *g,
                             const float *acc, int gpu) {
    int64_t ns = b.n < 1000 ? b.n : 1000;
    if (ns == 0) return CLI_OK;
    int64_t *sample = NULL;
    double *ref = NULL, *rel = NULL;
    if (canopy_alloc((void **)&sample, (size_t)ns, sizeof *sample) ||
        canopy_alloc((void **)&ref, (size_t)ns * 3, sizeof *ref) ||
        canopy_alloc((void **)&rel, (size_t)ns, sizeof *rel)) {
        canopy_free(sample);
        canopy_free(ref);
        return cli_runtime_error("gravity");
    }
    for (int64_t k = 0; k < ns; k++) sample[k] = k * (b.n / ns);
    int rc = CLI_OK;
    canopy_status s =
        g->box > 0.0f ? canopy_gravity_ewald_direct_sample(b, mass, g->softening, g->box, sample,
                                                           ns, ref, NULL)
                      : canopy_gravity_direct_sample(b, mass, g->softening, sample, ns, ref, NULL);
    if (s) {
        rc = cli_runtime_error("gravity");
    } else {
        double rms = canopy_nbody_relative_errors(acc, ref, sample, ns, rel);
        fprintf(stderr,
                "  error: expected median %.2e (calibrated%s, theta %g, order %d); measured on "
                "%lld bodies vs float64 %s: median %.2e, rms %.2e, max %.2e\n",
                gpu ? canopy_gpu_mp_expected_error(g->theta, g->order)
                    : canopy_gravity_expected_error_for_n(g, b.n),
                gpu ? " for the GPU" : "", (double)g->theta, (int)g->order, (long long)ns,
                g->box > 0.0f ? "Ewald summation" : "direct", rel[ns / 2], rms, rel[ns - 1]);
    }
    canopy_free(sample);
    canopy_free(ref);
    canopy_free(rel);
    return rc;
}

/* --tree here precedes TRAV_LONG_OPTIONS' generic one: getopt takes the first. */
static const struct option gravity_long_opts[] = {
    {"bodies", required_argument, NULL, OPT_BODIES},
    {"tree", required_argument, NULL, OPT_GRAVITY_TREE},
    {"theta", required_argument, NULL, OPT_THETA},
    {"softening", required_argument, NULL, OPT_SOFTENING},
    {"order", required_argument, NULL, OPT_ORDER},
    {"opening", required_argument, NULL, OPT_OPENING},
    {"accuracy", required_argument, NULL, OPT_ACCURACY},
    {"box", required_argument, NULL, OPT_BOX},
    {"ewald-grid", required_argument, NULL, OPT_EWALD_GRID},
    {"periodic", required_argument, NULL, OPT_PERIODIC},
    {"pm-grid", required_argument, NULL, OPT_PM_GRID},
    {"output", required_argument, NULL, 'o'},
    TRAV_LONG_OPTIONS,
    {NULL, 0, NULL, 0}};

/* The command line, once parsed; *_given says the option was given. */
typedef struct gravity_args {
    const char *bodies, *out;
    double theta, eps, accuracy, box;
    int64_t order, ewald_grid, pm_grid;
    int multipole, theta_given, opening_given, order_given, tree_given, box_given, periodic_given;
    canopy_gravity_options g;
    trav_opts to;
} gravity_args;

/* gravity_option's answer when parsing goes on; anything else is the exit code. */
enum { GRAVITY_GO_ON = -1 };

/* Option c (argument optarg) of gravity's own: GRAVITY_GO_ON, or the exit code after a
 * usage error. */
static int gravity_option(gravity_args *a, int c) {
    switch (c) {
    case OPT_BODIES:
        a->bodies = optarg;
        break;
    case OPT_THETA:
        if (cli_parse_double("gravity", "--theta", optarg, 1e-6, 100.0, &a->theta))
            return CLI_USAGE;
        a->theta_given = 1;
        break;
    case OPT_ORDER:
        if (cli_parse_i64("gravity", "--order", optarg, 0, 4, &a->order)) return CLI_USAGE;
        if (a->order == 1)
            return cli_usage_error("gravity", "--order must be 0, 2, 3 or 4 (the dipole "
                                              "about the centre of mass is zero)");
        a->multipole = a->order_given = 1;
        break;
    case OPT_OPENING:
        if (grav_parse_opening("gravity", optarg, &a->g.opening)) return CLI_USAGE;
        a->multipole = a->opening_given = 1;
        break;
    case OPT_GRAVITY_TREE:
        if (grav_parse_tree("gravity", optarg, &a->g.tree)) return CLI_USAGE;
        a->multipole = a->tree_given = 1;
        break;
    case OPT_ACCURACY:
        if (cli_parse_double("gravity", "--accuracy", optarg, 1e-6, 0.1, &a->accuracy))
            return CLI_USAGE;
        a->multipole = 1;
        break;
    case OPT_SOFTENING:
        if (cli_parse_double("gravity", "--softening", optarg, 0.0, 1e30, &a->eps))
            return CLI_USAGE;
        break;
    case OPT_BOX:
        if (cli_parse_double("gravity", "--box", optarg, 0.0, 1e30, &a->box)) return CLI_USAGE;
        a->box_given = 1;
        break;
    case OPT_EWALD_GRID:
        if (cli_parse_i64("gravity", "--ewald-grid", optarg, 8, 128, &a->ewald_grid))
            return CLI_USAGE;
        break;
    case OPT_PERIODIC:
        if (grav_parse_periodic("gravity", optarg, &a->g.periodic)) return CLI_USAGE;
        a->periodic_given = 1;
        break;
    case OPT_PM_GRID:
        if (cli_parse_i64("gravity", "--pm-grid", optarg, 18, 1024, &a->pm_grid)) return CLI_USAGE;
        if (a->pm_grid % 2) return cli_usage_error("gravity", "--pm-grid must be even");
        break;
    case 'o':
        a->out = optarg;
        break;
    }
    return GRAVITY_GO_ON;
}

/* The combinations the options allow, then a->g filled from them (theta and order
 * chosen for --accuracy): CLI_OK or the exit code of a usage error. */
static int gravity_check(gravity_args *a) {
    canopy_gravity_options *g = &a->g;
    if (!a->bodies) return cli_usage_error("gravity", "--bodies is required");
    if (!a->out) return cli_usage_error("gravity", "-o is required");
    if (a->accuracy > 0.0 && (a->theta_given || a->order_given))
        return cli_usage_error("gravity", "--accuracy chooses theta and order; give either it "
                                          "or --theta/--order");
    /* The multipole code (list opening, binary tree: the fastest at equal error,
     * bench/results/nbody.md) runs unless only the traversal's own options are given. */
    int traversal =
        a->to.run.variant != CANOPY_VARIANT_AUTO || a->to.run.schedule != CANOPY_SCHEDULE_AUTO;
    if (!traversal) a->multipole = 1;
    if (a->ewald_grid && a->box == 0.0)
        return cli_usage_error("gravity", "--ewald-grid needs --box");
    if ((a->periodic_given || a->pm_grid) && a->box == 0.0)
        return cli_usage_error("gravity",
                               "--%s needs a periodic box (--box L, or an HDF5 "
                               "snapshot's BoxSize)",
                               a->pm_grid ? "pm-grid" : "periodic");
    if (a->box > 0.0 && traversal)
        return cli_usage_error("gravity", "--box runs the multipole list walk: drop --variant "
                                          "and --schedule");
    if (a->box > 0.0 && cli_dist_size() > 1) {
        if (cli_dist_rank() == 0)
            cli_usage_error("gravity", "%s is not built across ranks; run one process%s",
                            a->box_given ? "--box" : "a periodic box (the snapshot's BoxSize)",
                            a->box_given ? "" : " or give --box 0 for open boundaries");
        return CLI_USAGE;
    }
    /* nbody's default accuracy when neither it nor theta/order is given */
    if (a->multipole && !a->theta_given && !a->order_given && a->accuracy == 0.0)
        a->accuracy = 1e-3;
    /* the monopole walk is per body; GPU ranks take the single-GPU engine's bucket
     * opening (src/dist/gravity.c) */
    if (!a->multipole)
        g->opening = CANOPY_OPENING_BODY;
    else if (cli_dist_size() > 1 && a->to.run.backend == CANOPY_BACKEND_GPU && !a->opening_given)
        g->opening = CANOPY_OPENING_BUCKET;
    if (g->opening != CANOPY_OPENING_LIST) {
        if (a->tree_given && g->tree != CANOPY_GRAVITY_TREE_OCT)
            return cli_usage_error("gravity", "--tree binary needs --opening list");
        g->tree = CANOPY_GRAVITY_TREE_OCT;
    }
    g->theta = (float)a->theta;
    g->order = (int32_t)a->order;
    g->softening = (float)a->eps;
    g->box = (float)a->box;
    g->ewald_grid = (int32_t)a->ewald_grid;
    g->pm_grid = (int32_t)a->pm_grid;
    if (a->accuracy > 0.0 &&
        canopy_gravity_choose_for(g, a->accuracy, &g->theta, &g->order, NULL) != CANOPY_OK)
        return cli_usage_error("gravity", "%s", canopy_last_error());
    /* Over several ranks only the walks that distribute are available. */
    if (cli_dist_size() > 1 && g->opening == CANOPY_OPENING_BUCKET &&
        a->to.run.backend != CANOPY_BACKEND_GPU) {
        if (cli_dist_rank() == 0)
            cli_usage_error("gravity", "over several ranks --opening bucket is the GPU ranks' "
                                       "engine (--backend gpu); CPU ranks take list or body");
        return CLI_USAGE;
    }
    return CLI_OK;
}

/* The bodies of one run and what it computed; mass and acc are owned. */
typedef struct gravity_run {
    canopy_array ba;
    canopy_points b;
    float *mass, *acc;
    canopy_stats st;
    canopy_dist_stats dst;
    double t_load, t_write;
} gravity_run;

/* The bodies of an HDF5 snapshot as (n, 4) float32 rows x y z m (the layout of a
 * bodies file with masses). */
static int load_snapshot(const char *path, gravity_run *r) {
    canopy_snapshot sn;
    if (canopy_hdf5_read_snapshot(path, &sn)) return cli_runtime_error("gravity");
    float *xm = NULL;
    int rc = canopy_alloc((void **)&xm, (size_t)sn.n * 4, sizeof *xm) ? cli_runtime_error("gravity")
                                                                      : CLI_OK;
    for (int64_t i = 0; !rc && i < sn.n; i++) {
        for (int k = 0; k < 3; k++) xm[4 * i + k] = (float)sn.pos[3 * i + k];
        xm[4 * i + 3] = sn.mass[i];
    }
    if (!rc) {
        r->ba = cli_array_view(xm, CANOPY_F32, sn.n, 4);
        r->b = canopy_points_make(xm, sn.n, 4);
    }
    canopy_snapshot_release(&sn);
    return rc;
}

/* The box an HDF5 snapshot sets when --box is not given: Header/BoxSize (0: open). Every
 * rank reads it, so all agree on the walk. */
static int snapshot_box(gravity_args *a) {
    if (a->box_given || !a->bodies || !canopy_hdf5_path(a->bodies)) return CLI_OK;
    if (canopy_hdf5_read_box(a->bodies, &a->box)) return cli_runtime_error("gravity");
    return CLI_OK;
}

/* Checks the paths and reads the bodies (an HDF5 snapshot or an array file);
 * allocates the results. */
static int gravity_load(const gravity_args *a, gravity_run *r) {
    const char *ins[] = {a->bodies}, *outs[] = {a->out};
    double t0 = canopy_now();
    int rc = cli_check_paths("gravity", ins, 1, outs, 1) ? CLI_ERROR : CLI_OK;
    if (rc == CLI_OK && canopy_hdf5_path(a->bodies))
        rc = load_snapshot(a->bodies, r);
    else if (rc == CLI_OK && cli_load_points("gravity", a->bodies, &r->ba, &r->b))
        rc = CLI_ERROR;
    if (rc != CLI_OK) return rc;
    r->t_load = canopy_now() - t0;
    if (r->b.d != 3 && r->b.d != 4) {
        fprintf(stderr, "canopy gravity: %s has %d columns; expected 3 (x y z) or 4 (x y z m)\n",
                a->bodies, (int)r->b.d);
        return CLI_ERROR;
    }
    if (a->eps == 0.0 && check_distinct(a->bodies, r->b)) return CLI_ERROR;
    if (canopy_alloc((void **)&r->acc, (size_t)(3 * r->b.n + 1), sizeof *r->acc) ||
        (r->b.d == 4 && canopy_alloc((void **)&r->mass, (size_t)(r->b.n + 1), sizeof *r->mass)))
        return cli_runtime_error("gravity");
    return CLI_OK;
}

/* The forces, by the multipole code or by the monopole traversal; for --accuracy, a->g's
 * theta and order are chosen again now that n is known: the GPU's own table when the GPU
 * walks, else the CPU's read at n (a periodic box's error grows with n). */
static int gravity_compute(gravity_args *a, int stats, gravity_run *r) {
    canopy_points *b = &r->b;
    int on_gpu = a->multipole && a->box == 0.0 && canopy_gpu_mp_wanted(a->to.run.backend, b->n);
    if (a->accuracy > 0.0 &&
        (on_gpu ? canopy_gpu_mp_choose(a->accuracy, &a->g.theta, &a->g.order, NULL)
                : canopy_gravity_choose_for_n(&a->g, a->accuracy, b->n, &a->g.theta, &a->g.order,
                                              NULL)) != CANOPY_OK)
        return cli_usage_error("gravity", "%s", canopy_last_error());
    if (b->d == 4)
        for (int64_t i = 0; i < b->n; i++) r->mass[i] = canopy_point(*b, i)[3];
    b->d = 3; /* positions are the first three columns; stride keeps the mass out */
    memset(&r->st, 0, sizeof r->st);
    canopy_status s = a->multipole ? canopy_gravity_multipole(*b, r->mass, &a->g, &a->to.run,
                                                              r->acc, NULL, &r->st)
                                   : canopy_gravity(*b, r->mass, (float)a->theta, (float)a->eps,
                                                    &a->to.run, r->acc, stats ? &r->st : NULL);
    if (s) return cli_runtime_error("gravity");
    return check_finite(a->bodies, r->acc, b->n, a->eps);
}

/* The one summary line; ranks > 1 name the walk the ranks ran (on the CPU). */
static void gravity_summary(const gravity_args *a, int64_t n, int gpu, int ranks) {
    const canopy_gravity_options *g = &a->g;
    cli_summary("gravity: %lld bodies, theta = %g, order %d, %s opening, %s tree, softening "
                "= %g%s, %d rank%s -> %s",
                (long long)n, (double)g->theta, (int)(a->multipole ? g->order : 0),
                gpu            ? "GPU bucket"
                : a->multipole ? grav_opening_name(g->opening)
                               : "body",
                gpu            ? "radix"
                : a->multipole ? grav_tree_name(g->tree)
                               : "oct",
                a->eps, a->box > 0.0 ? ", periodic box" : "", ranks, ranks > 1 ? "s" : "", a->out);
}

/* The output: the accelerations, the summary line and --stats. */
static int gravity_report(const gravity_args *a, int stats, gravity_run *r) {
    canopy_array acc = cli_array_view(r->acc, CANOPY_F32, r->b.n, 3);
    int rc = cli_write_arrays("gravity", 1, &a->out, &acc, &r->t_write);
    if (rc != CLI_OK) return rc;
    int gpu = a->multipole && r->st.backend == CANOPY_BACKEND_GPU;
    gravity_summary(a, r->b.n, gpu, 1);
    if (!stats) return CLI_OK;
    trav_print_stats("gravity", &r->st, r->t_load, r->t_write);
    if (stats == CLI_STATS_TEXT && a->box > 0.0)
        fprintf(stderr, "  periodic box %g (%s)\n", a->box,
                a->box_given ? "--box" : "Header/BoxSize of the snapshot");
    /* The measured error is a text line; the JSON schema has no field for it. */
    if (stats == CLI_STATS_TEXT) return print_error_stats(r->b, r->mass, &a->g, r->acc, gpu);
    return CLI_OK;
}

/* Under mpirun: every rank reads, computes and writes its own rows; rank 0 reports.
 * The --stats error check reads the bodies whole on rank 0 (untimed, as the check
 * itself is serial). */
static int gravity_ranks(gravity_args *a, int stats) {
    cli_dist_gravity_job job = {a->bodies,  a->out, &a->g,
                                &a->to.run, stats,  stats == CLI_STATS_TEXT};
    cli_dist_gravity_result res;
    int rc = cli_dist_gravity(&job, &res);
    if (rc != CLI_OK) return rc;
    if (cli_dist_rank() == 0) {
        gravity_summary(a, res.n, 0, cli_dist_size());
        gravity_run r = {0};
        if (job.gather_acc) {
            if (cli_load_points("gravity", a->bodies, &r.ba, &r.b) ||
                (r.b.d == 4 && canopy_alloc((void **)&r.mass, (size_t)r.b.n + 1, sizeof *r.mass)))
                rc = CLI_ERROR;
            for (int64_t i = 0; rc == CLI_OK && r.b.d == 4 && i < r.b.n; i++)
                r.mass[i] = canopy_point(r.b, i)[3];
            r.b.d = 3;
            if (rc == CLI_OK) rc = print_error_stats(r.b, r.mass, &a->g, res.acc, 0);
        }
        canopy_free(r.mass);
        canopy_array_release(&r.ba);
    }
    canopy_free(res.acc);
    return cli_dist_share_rc(rc);
}

int cmd_gravity(int argc, char **argv) {
    gravity_args a = {0};
    a.theta = 0.5;
    a.g = canopy_gravity_options_default();
    trav_opts_init(&a.to);
    a.to.run.tree = CANOPY_TREE_OCT;
    a.to.tree_fixed = "gravity always uses an octree";
    cli_parser p =
        cli_parser_start("gravity", "ho:", gravity_long_opts, usage, trav_opts_handle, &a.to);
    int c;
    while ((c = cli_next_option(&p, argc, argv)) != -1) {
        if (c == CLI_STOP) return p.rc;
        int rc = gravity_option(&a, c);
        if (rc != GRAVITY_GO_ON) return rc;
    }
    if (optind < argc) return cli_usage_error("gravity", "unexpected argument '%s'", argv[optind]);
    int rc = snapshot_box(&a);
    if (rc == CLI_OK) rc = gravity_check(&a);
    if (rc != CLI_OK) return rc;
    if (cli_dist_size() > 1 && canopy_hdf5_path(a.bodies))
        return cli_usage_error("gravity", "%s: HDF5 bodies are read by one process only; under "
                                          "mpirun give them as .npy (each rank reads its rows)",
                               a.bodies);
    if (cli_dist_size() > 1) return gravity_ranks(&a, p.stats);
    gravity_run r = {0};
    rc = gravity_load(&a, &r);
    if (rc == CLI_OK) rc = gravity_compute(&a, p.stats, &r);
    if (rc == CLI_OK) rc = gravity_report(&a, p.stats, &r);
    canopy_free(r.mass);
    canopy_free(r.acc);
    canopy_array_release(&r.ba);
    return rc;
}
