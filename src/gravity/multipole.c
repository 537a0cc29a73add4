/* SPDX-License-Identifier: MIT */
/* canopy_gravity_multipole: octree moments computed bottom-up after the build, the
 * body and bucket descriptors of gravity/multipole.h, the accuracy table, and the
 * float64 direct-summation sample reference. */
#include "gravity/multipole.h"

#include "apps/common.h"
#include "gravity/ewald.h"
#include "gravity/gravity.h"
#include "gravity/gravity_lists.h"
#include "gravity/pm.h"
#include "canopy/traverse_cpu.h"
#include "core/device.h"
#include "gravity/gpu_multipole.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const canopy_app mp_body_app = {
    "gravity", sizeof(mp_body_state), 0, 1, mp_body_init, mp_body_truncate, mp_body_visit_leaf,
    NULL,      mp_body_finish,        0,
};
CANOPY_CPU_INSTANTIATE(mp_body, &mp_body_app)
_Static_assert(sizeof(mp_body_state) <= CANOPY_MAX_STATE, "mp_body_state too large");

static const canopy_app mp_bucket_app = {
    "gravity",
    sizeof(mp_bucket_state),
    0,
    1,
    mp_bucket_init,
    mp_bucket_truncate,
    mp_bucket_visit_leaf,
    NULL,
    mp_bucket_finish,
    0,
};
CANOPY_CPU_INSTANTIATE(mp_bucket, &mp_bucket_app)
_Static_assert(sizeof(mp_bucket_state) <= CANOPY_MAX_STATE, "mp_bucket_state too large");

/* Calibration (canopy-bench-nbody --calibrate --n 20000; docs/nbody.md): median
 * relative acceleration error against float64 direct summation on 1000 evenly spaced
 * bodies of a 20k-body Plummer sphere (seed 1, eps 0.01), body opening, leaf size 8,
 * and the single-thread CPU time per body (ns) that ranks the choices. The order 0
 * rows come first in every table. */
typedef struct mp_calib {
    int32_t order;
    float theta;
    double err;
    double ns_per_body;
} mp_calib;
static const mp_calib calib_body[] = {
#include "gravity/multipole_calib.inc"
};
/* The list engine's own tables (canopy-bench-nbody --calibrate-list TREE --n 100000:
 * 100k bodies, default bucket and group sizes; more exact than body opening at equal
 * theta, so it gets larger thetas for the same accuracy). */
static const mp_calib calib_list_oct[] = {
#include "gravity/multipole_calib_list_oct.inc"
};
static const mp_calib calib_list_binary[] = {
#include "gravity/multipole_calib_list_binary.inc"
};
/* Periodic boxes (canopy-bench-nbody --calibrate-periodic: the binary list engine on
 * uniform bodies in the unit box against the float64 Ewald sum): there periodic forces
 * cancel, so the open table's choice gives 4-10x its error; it needs order 4, which
 * keeps a uniform cell's hexadecapole. */
static const mp_calib calib_list_periodic[] = {
#include "gravity/multipole_calib_list_periodic.inc"
};
/* The same rows at 1M bodies: a uniform box's error grows with n at a fixed opening
 * (~n^(1/3): a cell at a given angle holds more bodies, whose uniform part the order
 * truncates), so the two give each row a power law in n. */
static const mp_calib calib_list_periodic_1m[] = {
#include "gravity/multipole_calib_list_periodic_1m.inc"
};
/* TreePM (canopy-bench-nbody --calibrate-periodic --treepm): order 2 rows, each the
 * larger of a uniform and a clustered set's errors; the mesh's own error bounds them
 * from below. At 200k and 1M bodies, as the Ewald tables: the clustered set's error
 * grows with n (its clusters' cells hold more bodies). */
static const mp_calib calib_list_treepm[] = {
#include "gravity/multipole_calib_list_treepm.inc"
};
static const mp_calib calib_list_treepm_1m[] = {
#include "gravity/multipole_calib_list_treepm_1m.inc"
};
_Static_assert(sizeof calib_list_periodic == sizeof calib_list_periodic_1m &&
                   sizeof calib_list_treepm == sizeof calib_list_treepm_1m,
               "the periodic tables pair row by row");
/* The body counts the two periodic tables were measured at, and the least exponent of
 * the law above 1M (row 0.59 of order 4: 6.1e-4 at 1M, 8.3e-4 at 2M, 1.18e-3 at 4M,
 * ~n^0.5, where its two points give n^0.18). */
#define MP_N_CALIB 200000.0
#define MP_N_BIG 1000000.0
#define MP_P_BEYOND 0.5
typedef struct mp_table {
    const mp_calib *row;
    int n;
    const mp_calib *big; /* the rows at MP_N_BIG bodies, or NULL: the error ignores n */
} mp_table;
#define MP_TABLE(t) ((mp_table){t, (int)(sizeof t / sizeof t[0]), NULL})

/* Row i's error at n bodies (n <= 0: the table's own n): the power law through the
 * two measurements, its exponent kept >= 0 (a lower error at 1M is noise); flat below
 * the table's n, where the law falls faster than the errors measured at 20k-100k; above
 * 1M, from the larger of the two errors with an exponent >= MP_P_BEYOND, as two points
 * 5x apart in n misjudge the slope of some rows (bench/results/nbody.md). */
static double row_error(mp_table t, int i, int64_t n) {
    double e0 = t.row[i].err;
    if (!t.big || (double)n <= MP_N_CALIB) return e0;
    double e1 = t.big[i].err, p = log(e1 / e0) / log(MP_N_BIG / MP_N_CALIB);
    if ((double)n <= MP_N_BIG) return p > 0.0 ? e0 * pow((double)n / MP_N_CALIB, p) : e0;
    return fmax(e0, e1) * pow((double)n / MP_N_BIG, fmax(p, MP_P_BEYOND));
}

/* The method of g's box: auto is Ewald summation (TreePM only on request: its error
 * does not grow with n, but it costs more; docs/nbody.md). */
static canopy_periodic_method periodic_method(const canopy_gravity_options *g) {
    return g->periodic == CANOPY_PERIODIC_TREEPM ? CANOPY_PERIODIC_TREEPM : CANOPY_PERIODIC_EWALD;
}

/* The table measured with this opening (bucket opening uses the body table: it is at
 * least as exact); a periodic box has its own (measured on the binary tree, the
 * octree's errors at its choices are tests/test_ewald.c's). */
static mp_table table_for(const canopy_gravity_options *g) {
    if (g && g->opening == CANOPY_OPENING_LIST && g->box > 0.0f &&
        periodic_method(g) == CANOPY_PERIODIC_TREEPM)
        return (mp_table){calib_list_treepm, MP_TABLE(calib_list_treepm).n, calib_list_treepm_1m};
    if (g && g->opening == CANOPY_OPENING_LIST && g->box > 0.0f)
        return (mp_table){calib_list_periodic, MP_TABLE(calib_list_periodic).n,
                          calib_list_periodic_1m};
    if (g && g->opening == CANOPY_OPENING_LIST)
        return g->tree == CANOPY_GRAVITY_TREE_OCT ? MP_TABLE(calib_list_oct)
                                                  : MP_TABLE(calib_list_binary);
    return MP_TABLE(calib_body);
}

canopy_gravity_options canopy_gravity_options_default(void) {
    canopy_gravity_options g = {
        0.5f, 2, CANOPY_OPENING_LIST,  0.0f, 0.0, CANOPY_GRAVITY_TREE_BINARY,
        0.0f, 0, CANOPY_PERIODIC_AUTO, 0};
    return g;
}

/* The cheapest row (by the single-thread cost measured at the table's n) whose error at
 * n is <= accuracy. The costs rank the rows independently of n, so as n grows the rows
 * that qualify only drop out: the choice never gets cheaper. */
static canopy_status choose(mp_table t, double accuracy, int64_t n, float *theta, int32_t *order,
                            double *expected) {
    if (!(accuracy >= 1e-6 && accuracy <= 0.1))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: accuracy must be in [1e-6, 0.1] (got %g)",
                           accuracy);
    int best = -1;
    double lowest = INFINITY, best_err = NAN;
    for (int i = 0; i < t.n; i++) {
        if (t.big && (t.big[i].order != t.row[i].order || t.big[i].theta != t.row[i].theta))
            return canopy_fail(CANOPY_ERR_INTERNAL, "gravity: the periodic tables' rows differ");
        double e = row_error(t, i, n);
        lowest = e < lowest ? e : lowest;
        if (e <= accuracy && (best < 0 || t.row[i].ns_per_body < t.row[best].ns_per_body))
            best = i, best_err = e;
    }
    if (best < 0)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: accuracy %g is below the calibrated range (best %g%s); give "
                           "--theta and --order instead",
                           accuracy, lowest, t.big && n > 0 ? " at this n" : "");
    *theta = t.row[best].theta;
    *order = t.row[best].order;
    if (expected) *expected = best_err;
    return CANOPY_OK;
}

canopy_status canopy_gravity_choose(double accuracy, float *theta, int32_t *order,
                                    double *expected) {
    return choose(MP_TABLE(calib_body), accuracy, 0, theta, order, expected);
}

canopy_status canopy_gravity_choose_for(const canopy_gravity_options *g, double accuracy,
                                        float *theta, int32_t *order, double *expected) {
    return choose(table_for(g), accuracy, 0, theta, order, expected);
}

canopy_status canopy_gravity_choose_for_n(const canopy_gravity_options *g, double accuracy,
                                          int64_t n, float *theta, int32_t *order,
                                          double *expected) {
    return choose(table_for(g), accuracy, n, theta, order, expected);
}

/* Log-log interpolation along theta among the table's rows of this order (their errors
 * at n), the end slopes extrapolating. */
static double expected_error(mp_table t, float theta, int32_t order, int64_t n) {
    int32_t o = order;
    int prev = -1, next = -1, first = -1, second = -1, last = -1, before_last = -1;
    const mp_calib *c = t.row;
    for (int i = 0; i < t.n; i++) {
        if (c[i].order != o) continue;
        if (first < 0)
            first = i;
        else if (second < 0)
            second = i;
        before_last = last;
        last = i;
        if (c[i].theta <= theta) prev = i;
        if (c[i].theta >= theta && next < 0) next = i;
    }
    if (first < 0) return NAN;
    if (second < 0) return row_error(t, first, n);
    int a = prev, b = next;
    if (a < 0) a = first, b = second;
    if (b < 0) a = before_last, b = last;
    if (a == b) return row_error(t, a, n);
    double la = log(c[a].theta), lb = log(c[b].theta);
    double ea = log(row_error(t, a, n)), eb = log(row_error(t, b, n));
    return exp(ea + (eb - ea) * (log(theta) - la) / (lb - la));
}

double canopy_gravity_expected_error(float theta, int32_t order) {
    return expected_error(MP_TABLE(calib_body), theta, order, 0);
}

double canopy_gravity_expected_error_for(const canopy_gravity_options *g) {
    return expected_error(table_for(g), g->theta, g->order, 0);
}

double canopy_gravity_expected_error_for_n(const canopy_gravity_options *g, int64_t n) {
    return expected_error(table_for(g), g->theta, g->order, n);
}

/* Packed moments about each cell's (float) centre of mass. Leaves sum their bodies
 * in parallel; internal cells then shift their children's monomial sums (the dipole
 * about the float com included) in reverse node order (children follow their parent
 * in the node array, so this is a post-order). */
canopy_status canopy_mp_moments(const canopy_tree_view *t, int32_t order, float *out) {
    int32_t nn = t->n_nodes, nm = mp_mono_count(order), np = mp_pack_count(order);
    double *mom = NULL;
    canopy_status s = canopy_alloc((void **)&mom, (size_t)nn * (size_t)nm + 1, sizeof *mom);
    if (s) return s;
    int bad = 0;
#pragma omp parallel for schedule(dynamic, 256) num_threads(canopy_threads()) reduction(| : bad)
    for (int32_t v = 0; v < nn; v++) {
        const canopy_node *h = canopy_tv_node(t, v);
        if (h->child >= 0) {
            bad |= h->child <= v;
            continue;
        }
        const float *g = canopy_tv_geom(t, v);
        double *m = mom + (int64_t)nm * v;
        memset(m, 0, (size_t)nm * sizeof *m);
        for (int32_t i = h->begin; i < h->end; i++) {
            const float *p = canopy_tv_point(t, i);
            canopy_mp_mono_add_body(m, order, t->weights[i], (double)p[0] - g[0],
                                    (double)p[1] - g[1], (double)p[2] - g[2]);
        }
    }
    if (bad) {
        canopy_free(mom);
        return canopy_fail(CANOPY_ERR_INTERNAL, "gravity: a node's children precede it");
    }
    for (int32_t v = nn - 1; v >= 0; v--) {
        const canopy_node *h = canopy_tv_node(t, v);
        double *m = mom + (int64_t)nm * v;
        if (h->child >= 0) {
            const float *g = canopy_tv_geom(t, v);
            memset(m, 0, (size_t)nm * sizeof *m);
            for (int32_t c = h->child; c < h->child + h->nchild; c++) {
                const float *gc = canopy_tv_geom(t, c);
                canopy_mp_mono_add_shifted(m, order, mom + (int64_t)nm * c, (double)gc[0] - g[0],
                                           (double)gc[1] - g[1], (double)gc[2] - g[2]);
            }
        }
        canopy_mp_mono_pack(m, order, out + (int64_t)v * np, 1);
    }
    canopy_free(mom);
    return CANOPY_OK;
}

canopy_status canopy_mp_quadrupoles(const canopy_tree_view *t, float *quad) {
    return canopy_mp_moments(t, 2, quad);
}

static canopy_status run_walk(const canopy_tree *tree, const canopy_tree_view *tv, mp_ctx *ctx,
                              canopy_opening opening, canopy_points bodies,
                              const canopy_run_options *o, canopy_stats *stats) {
    if (opening == CANOPY_OPENING_BODY) {
        canopy_traversal tr = {"gravity", &mp_body_app, mp_body_cpu_runners, NULL, ctx, bodies,
                               bodies.n,  NULL};
        return canopy_traverse(tree, &tr, o, stats);
    }
    int32_t nl = 0, *leaves = NULL;
    float *centre = NULL;
    canopy_status s = canopy_alloc((void **)&leaves, (size_t)tv->n_nodes, sizeof *leaves);
    if (!s) s = canopy_alloc((void **)&centre, (size_t)tv->n_nodes * 3, sizeof *centre);
    if (!s) s = canopy_alloc((void **)&ctx->tacc, (size_t)tv->n * 3 + 1, sizeof(float));
    if (!s && ctx->pot) s = canopy_alloc((void **)&ctx->tpot, (size_t)tv->n + 1, sizeof(float));
    if (!s) {
        for (int32_t v = 0; v < tv->n_nodes; v++) {
            const canopy_node *h = canopy_tv_node(tv, v);
            if (h->child >= 0 || h->end == h->begin) continue;
            memcpy(centre + 3 * (int64_t)nl, canopy_tv_geom(tv, v), 3 * sizeof(float));
            leaves[nl++] = v;
        }
        ctx->leaves = leaves;
        canopy_traversal tr = {"gravity",
                               &mp_bucket_app,
                               mp_bucket_cpu_runners,
                               NULL,
                               ctx,
                               canopy_points_make(centre, nl, 3),
                               nl,
                               NULL};
        s = canopy_traverse(tree, &tr, o, stats);
    }
    canopy_free(leaves);
    canopy_free(centre);
    canopy_free(ctx->tacc);
    canopy_free(ctx->tpot);
    ctx->tacc = ctx->tpot = NULL;
    return s;
}

/* TreePM's split (gravity/pm.h; Gadget's ASMTH and RCUT): the split scale PM_RS mesh
 * cells, the cut PM_CUT split scales. 18 cells keep the cut within half a box. */
enum { PM_GRID_MIN = 18, PM_GRID_MAX = 512 };
static const double PM_RS = 1.5, PM_CUT = 5.5;

/* A periodic box's method resolved (auto: Ewald), TreePM without FFTW refused. */
canopy_status canopy_gravity_resolve_periodic(canopy_gravity_options *g) {
    if (g->periodic != CANOPY_PERIODIC_AUTO && g->periodic != CANOPY_PERIODIC_EWALD &&
        g->periodic != CANOPY_PERIODIC_TREEPM)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: periodic method must be auto, ewald or "
                                               "treepm");
    if (g->pm_grid != 0 && (g->pm_grid < PM_GRID_MIN || g->pm_grid > 1024 || g->pm_grid % 2))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: the TreePM grid must be even, %d..1024 (0: from n; got %d)",
                           PM_GRID_MIN, (int)g->pm_grid);
    if (!(g->box > 0.0f)) return CANOPY_OK;
    if (g->periodic == CANOPY_PERIODIC_TREEPM && !canopy_pm_available()) return canopy_pm_require();
    g->periodic = periodic_method(g);
    return CANOPY_OK;
}

static int smooth_size(int32_t g) {
    for (int32_t r = g; r > 1;) {
        if (r % 2 == 0)
            r /= 2;
        else if (r % 3 == 0)
            r /= 3;
        else if (r % 5 == 0)
            r /= 5;
        else
            return 0;
    }
    return 1;
}

/* The mesh side by default: the first size of factors 2, 3 and 5 from 2 n^(1/3) cells
 * (a split scale of 0.75 mean spacings), up to 100k bodies, and from 2 (n / 100k)^-0.08
 * n^(1/3) above, where the mesh's error at a fixed split in spacings grows (uniform
 * bodies, median error 4.6e-4 at 100k, 5.0e-4 at 400k, 7.1e-4 at 1M with 2 n^(1/3);
 * bench/results/nbody.md, "TreePM"). A finer mesh shortens the walk's cut but the
 * mesh's error grows as the split scale falls below the spacing. */
gl_periodic canopy_gravity_treepm_split(const canopy_gravity_options *g, int64_t n) {
    int32_t grid = g->pm_grid;
    if (grid == 0) {
        double nb = (double)(n > 1 ? n : 1), per_body = nb > 1e5 ? 2.0 * pow(nb / 1e5, -0.08) : 2.0;
        grid = (int32_t)ceil(per_body * cbrt(nb));
        grid = grid < PM_GRID_MIN ? PM_GRID_MIN : grid > PM_GRID_MAX ? PM_GRID_MAX : grid;
        while (grid % 2 || !smooth_size(grid)) grid++;
    }
    gl_periodic per = {g->box, g->ewald_grid, grid, PM_RS / grid, PM_CUT};
    return per;
}

/* A periodic box's options: box finite and >= 0, grid in range (0: the default), and
 * what the periodic walk is not built for refused rather than run open. */
static canopy_status gravity_check_box(canopy_gravity_options *g, canopy_backend backend) {
    if (!(g->box >= 0.0f) || !isfinite(g->box))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: box must be finite and > 0 (0: open boundaries; got %g)",
                           (double)g->box);
    if (g->box == 0.0f) return CANOPY_OK;
    if (g->ewald_grid == 0) g->ewald_grid = EWALD_GRID_DEFAULT;
    if (g->ewald_grid < EWALD_GRID_MIN || g->ewald_grid > EWALD_GRID_MAX)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: Ewald grid must be in [%d, %d] (got %d)",
                           EWALD_GRID_MIN, EWALD_GRID_MAX, (int)g->ewald_grid);
    if (g->opening != CANOPY_OPENING_LIST)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "gravity: periodic boxes are built for the list opening only (not %s)",
                           g->opening == CANOPY_OPENING_BODY ? "body" : "bucket");
    if (g->periodic == CANOPY_PERIODIC_TREEPM && g->order != 0 && g->order != 2)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: TreePM's cells are of order 0 or 2 (got %d; --periodic "
                           "ewald takes 3 and 4)",
                           (int)g->order);
    if (backend == CANOPY_BACKEND_GPU)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "gravity: periodic boxes are not built for the GPU backend; use "
                           "--backend cpu");
    return CANOPY_OK;
}

/* Bodies of a periodic box: within 4 boxes of [0, box) (they are wrapped in); farther
 * out is more likely a unit error than a body that crossed the box 4 times. */
static canopy_status gravity_check_in_box(canopy_points b, float box) {
    for (int64_t i = 0; i < b.n; i++) {
        const float *p = canopy_point(b, i);
        for (int k = 0; k < 3; k++)
            if (!(p[k] >= -4.0f * box && p[k] < 5.0f * box))
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "gravity: body %lld is at %g on axis %d, more than 4 boxes "
                                   "outside the periodic box [0, %g) (wrong units?)",
                                   (long long)i, (double)p[k], k, (double)box);
    }
    return CANOPY_OK;
}

/* The options' checks both entry points share (theta and order resolved from a target
 * accuracy by the CPU table, read at n bodies). */
static canopy_status check_options(canopy_gravity_options *g, const canopy_run_options *o,
                                   int64_t n) {
    canopy_status s = canopy_gravity_resolve_periodic(g);
    if (s) return s;
    if (g->accuracy != 0.0 &&
        (s = canopy_gravity_choose_for_n(g, g->accuracy, n, &g->theta, &g->order, NULL)))
        return s;
    if (!(g->theta > 0.0f) || !isfinite(g->theta))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: theta must be > 0 (got %g)",
                           (double)g->theta);
    if (g->order != 0 && (g->order < 2 || g->order > MP_ORDER_MAX))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity: order must be 0, 2, 3 or 4 (got %d; the dipole about the "
                           "centre of mass vanishes)",
                           (int)g->order);
    if (g->opening != CANOPY_OPENING_BODY && g->opening != CANOPY_OPENING_BUCKET &&
        g->opening != CANOPY_OPENING_LIST)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: opening must be body, bucket or list");
    if (g->tree != CANOPY_GRAVITY_TREE_OCT && g->tree != CANOPY_GRAVITY_TREE_BINARY)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: tree must be oct or binary");
    if (o->tree != CANOPY_TREE_KD && o->tree != CANOPY_TREE_OCT)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: only the oct tree is supported");
    return gravity_check_box(g, o->backend);
}

/* What the GPU walk needs beyond check_options: order <= 2, a usable GPU, theta and
 * order from the GPU's own table for a target accuracy. */
static canopy_status gpu_options(const canopy_gravity_options *gopt, canopy_gravity_options *g) {
    if (g->box != 0.0f)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "gravity: periodic boxes are not built for the GPU walk; use the CPU");
    if (g->order > 2)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "gravity: the GPU walk expands to order 2 at most (got order %d); "
                           "use --backend cpu for orders 3 and 4",
                           (int)g->order);
    if (!canopy_gpu_usable())
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "gravity: backend gpu, but no usable GPU (or no CUDA in this build)");
    if (gopt && gopt->accuracy != 0.0)
        return canopy_gpu_mp_choose(gopt->accuracy, &g->theta, &g->order, NULL);
    return CANOPY_OK;
}

canopy_status canopy_gravity_multipole_device(canopy_points d_bodies, const float *d_mass,
                                              const canopy_gravity_options *gopt,
                                              const canopy_run_options *opt, float *d_acc,
                                              float *d_pot, void *stream, canopy_stats *stats) {
    canopy_gravity_options g = gopt ? *gopt : canopy_gravity_options_default();
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    if (d_bodies.n < 0 || d_bodies.d != 3 || d_bodies.stride < 3 ||
        (d_bodies.n > 0 && (!d_bodies.data || !d_acc)))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity (device): bad bodies (n=%lld, d=%d, stride=%lld; 3 "
                           "coordinates, device pointers to bodies and accelerations)",
                           (long long)d_bodies.n, (int)d_bodies.d, (long long)d_bodies.stride);
    if (!(g.softening >= 0.0f) || !isfinite(g.softening))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: softening must be finite and >= 0");
    if (o.backend == CANOPY_BACKEND_CPU)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "gravity (device): device pointers need backend gpu or auto");
    canopy_status s = check_options(&g, &o, d_bodies.n);
    if (s || (s = gpu_options(gopt, &g))) return s;
    if (stats) memset(stats, 0, sizeof *stats);
    return canopy_gravity_multipole_gpu(d_bodies, d_mass, &g, o.leaf_size, d_acc, d_pot, 1, stream,
                                        stats);
}

/* A leaf the octree could not split (coincident bodies) is summed directly by each of
 * its bodies under body and bucket opening, O(m^2): above this many bodies that is
 * refused (list opening treats such a leaf as one point). */
enum { MP_CROWDED_LEAF = 4096 };

static canopy_status refuse_crowded_leaf(const canopy_tree_view *tv, int32_t leaf_size) {
    for (int32_t v = 0; v < tv->n_nodes; v++) {
        const canopy_node *h = canopy_tv_node(tv, v);
        if (h->child < 0 && h->end - h->begin > MP_CROWDED_LEAF && h->end - h->begin > leaf_size)
            return canopy_fail(CANOPY_ERR_INVALID,
                               "gravity: %d bodies in a leaf the octree cannot split (coincident "
                               "bodies); body and bucket opening would sum them directly in "
                               "O(m^2): use list opening",
                               (int)(h->end - h->begin));
    }
    return CANOPY_OK;
}

canopy_status canopy_gravity_multipole(canopy_points bodies, const float *mass,
                                       const canopy_gravity_options *gopt,
                                       const canopy_run_options *opt, float *acc, float *pot,
                                       canopy_stats *stats) {
    canopy_gravity_options g = gopt ? *gopt : canopy_gravity_options_default();
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    canopy_status s = canopy_gravity_check_bodies(bodies, mass, g.softening);
    if (s || (s = check_options(&g, &o, bodies.n))) return s;
    if (g.box > 0.0f && (s = gravity_check_in_box(bodies, g.box))) return s;
    if (g.box > 0.0f) o.backend = CANOPY_BACKEND_CPU; /* auto: the periodic walk is the CPU's */
    /* The GPU walk (gravity/gpu_multipole.cu) always opens by bucket; auto takes it for
     * large sets only, where it wins by far and results need not match the CPU's bits. */
    if (canopy_gpu_mp_wanted(o.backend, bodies.n)) {
        if ((s = gpu_options(gopt, &g))) return s;
        if (stats) memset(stats, 0, sizeof *stats);
        return canopy_gravity_multipole_gpu(bodies, mass, &g, o.leaf_size, acc, pot, 0, NULL,
                                            stats);
    }
    o.tree = CANOPY_TREE_OCT;
    o.backend = CANOPY_BACKEND_CPU;
    if (stats) memset(stats, 0, sizeof *stats);
    if (bodies.n == 0) return CANOPY_OK;

    float *equal = NULL, *quad = NULL;
    if (!mass) {
        if ((s = canopy_alloc((void **)&equal, (size_t)bodies.n, sizeof(float)))) return s;
        for (int64_t i = 0; i < bodies.n; i++) equal[i] = 1.0f / (float)bodies.n;
        mass = equal;
    }
    if (g.opening == CANOPY_OPENING_LIST) {
        gl_config cfg = {g.tree == CANOPY_GRAVITY_TREE_BINARY, 0, 0,
                         o.leaf_size > 0 ? o.leaf_size : GL_DEFAULT_BUCKET, GL_DEFAULT_GROUP};
        if (g.box > 0.0f && g.periodic == CANOPY_PERIODIC_TREEPM) cfg.group = GL_TREEPM_GROUP;
        gl_counts c;
        gl_periodic per = g.periodic == CANOPY_PERIODIC_TREEPM
                              ? canopy_gravity_treepm_split(&g, bodies.n)
                              : (gl_periodic){g.box, g.ewald_grid, 0, 0.0, 0.0};
        s = canopy_gl_gravity_periodic(bodies, mass, g.theta, g.order, g.softening * g.softening,
                                       &cfg, g.box > 0.0f ? &per : NULL, NULL, acc, pot, &c);
        if (!s && stats) {
            stats->build_seconds = c.build_seconds;
            stats->traverse_seconds = c.walk_seconds;
            stats->queries = c.walks;
            stats->nodes_per_query = c.walks ? (double)c.tests / (double)c.walks : 0.0;
            stats->tree_nodes = c.nodes;
            stats->tree_depth = c.depth;
            stats->backend = CANOPY_BACKEND_CPU;
            /* The binary tree is a kd-tree split at the longest side's midpoint. */
            stats->tree = cfg.binary ? CANOPY_TREE_KD : CANOPY_TREE_OCT;
            snprintf(
                stats->note, sizeof stats->note,
                "list engine: %s tree, leaf buckets of %d, sink groups of <= %d bodies; "
                "%.0f body-body and %.0f body-cell interactions per body%s",
                cfg.binary ? "binary (longest-side midpoint)" : "oct", (int)cfg.bucket,
                (int)cfg.group, (double)c.pp / (double)bodies.n, (double)c.pc / (double)bodies.n,
                g.box <= 0.0f                          ? ""
                : g.periodic == CANOPY_PERIODIC_TREEPM ? "; periodic box, TreePM"
                                                       : "; periodic box with Ewald corrections");
        }
        canopy_free(equal);
        return s;
    }
    canopy_tree *tree = NULL;
    s = canopy_app_build(bodies, o.tree, o.leaf_size, mass, &tree, stats);
    const canopy_tree_view *tv = s ? NULL : canopy_tree_get_view(tree);
    if (!s) s = refuse_crowded_leaf(tv, o.leaf_size);
    if (!s && g.order >= 2) {
        double t0 = canopy_now();
        s = canopy_alloc((void **)&quad, (size_t)tv->n_nodes * (size_t)mp_pack_count(g.order),
                         sizeof *quad);
        if (!s) s = canopy_mp_moments(tv, g.order, quad);
        if (stats) stats->build_seconds += canopy_now() - t0;
    }
    if (!s) {
        mp_ctx ctx = {bodies, quad, g.order, NULL, tv, 1.0f / g.theta, g.softening * g.softening,
                      acc,    pot,  NULL,    NULL};
        s = run_walk(tree, tv, &ctx, g.opening, bodies, &o, stats);
    }
    canopy_tree_free(tree);
    canopy_free(quad);
    canopy_free(equal);
    return s;
}

canopy_status canopy_gravity_direct_sample(canopy_points bodies, const float *mass, float eps,
                                           const int64_t *sample, int64_t ns, double *acc,
                                           double *pot) {
    canopy_status s = canopy_gravity_check_bodies(bodies, mass, eps);
    if (s) return s;
    for (int64_t k = 0; k < ns; k++)
        if (sample[k] < 0 || sample[k] >= bodies.n)
            return canopy_fail(CANOPY_ERR_INVALID, "gravity: sample index %lld out of range",
                               (long long)sample[k]);
    double e2 = (double)eps * eps, m_equal = bodies.n ? 1.0 / (double)bodies.n : 0.0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(canopy_threads())
    for (int64_t k = 0; k < ns; k++) {
        int64_t i = sample[k];
        const float *q = canopy_point(bodies, i);
        double a[3] = {0, 0, 0}, phi = 0.0;
        for (int64_t j = 0; j < bodies.n; j++) {
            if (j == i) continue;
            const float *p = canopy_point(bodies, j);
            double dx = (double)p[0] - q[0], dy = (double)p[1] - q[1], dz = (double)p[2] - q[2];
            double r2 = dx * dx + dy * dy + dz * dz + e2, r = sqrt(r2);
            double m = mass ? mass[j] : m_equal, f = m / (r2 * r);
            a[0] += f * dx;
            a[1] += f * dy;
            a[2] += f * dz;
            phi -= m / r;
        }
        for (int j = 0; j < 3; j++) acc[3 * k + j] = a[j];
        if (pot) pot[k] = phi;
    }
    return CANOPY_OK;
}
