/* SPDX-License-Identifier: MIT */
/* The bottom-up aggregations: subtree heights, descendant counts and Barnes-Hut
 * style mass and centre of mass. Each is a ptsd_agg; strategies do the rest. */
#include "ptsd/ptsd.h"
#include "core/device.h"
#include "ptsd/gpu.h"

#include <math.h>

/* ------------------------------------------------------------------ heights -- */

static void height_init(void *ctx, int64_t v) {
    ((int64_t *)ctx)[v] = 0;
}

static void height_fold(void *ctx, int64_t p, int64_t c) {
    int64_t *h = ctx;
    if (h[c] + 1 > h[p]) h[p] = h[c] + 1;
}

static void height_up(void *ctx, int64_t v, int64_t anc, int64_t dist) {
    (void)v;
    int64_t *h = ctx, cur = __atomic_load_n(&h[anc], __ATOMIC_RELAXED);
    while (dist > cur && !__atomic_compare_exchange_n(&h[anc], &cur, dist, true, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED)) {
    }
}

static bool leaf_walks(void *ctx, const canopy_ptree *t, int64_t v) {
    (void)ctx;
    return ptsd_is_leaf(t, v);
}

/* -------------------------------------------------------------- descendants -- */

static void desc_fold(void *ctx, int64_t p, int64_t c) {
    int64_t *d = ctx;
    d[p] += d[c] + 1;
}

static void desc_up(void *ctx, int64_t v, int64_t anc, int64_t dist) {
    (void)v;
    (void)dist;
    __atomic_fetch_add(&((int64_t *)ctx)[anc], 1, __ATOMIC_RELAXED);
}

static bool nonroot_walks(void *ctx, const canopy_ptree *t, int64_t v) {
    (void)ctx;
    return t->parent[v] >= 0;
}

/* --------------------------------------------------------------------- mass -- */

/* out[v] holds (mass, mass*x, mass*y, mass*z) sums while aggregating; the centre
 * is divided out at the end. */
typedef struct mass_ctx {
    const canopy_ptree *t;
    const double *mass, *pos;
    double *out;
} mass_ctx;

static void mass_init(void *vctx, int64_t v) {
    mass_ctx *c = vctx;
    double *o = c->out + 4 * v;
    if (ptsd_is_leaf(c->t, v)) {
        double m = c->mass[v];
        o[0] = m;
        for (int j = 0; j < 3; j++) o[1 + j] = m * c->pos[3 * v + j];
    } else {
        o[0] = o[1] = o[2] = o[3] = 0.0;
    }
}

static void mass_fold(void *vctx, int64_t p, int64_t ch) {
    mass_ctx *c = vctx;
    for (int j = 0; j < 4; j++) c->out[4 * p + j] += c->out[4 * ch + j];
}

static void mass_up(void *vctx, int64_t v, int64_t anc, int64_t dist) {
    (void)dist;
    mass_ctx *c = vctx;
    double m = c->mass[v];
    double add[4] = {m, m * c->pos[3 * v], m * c->pos[3 * v + 1], m * c->pos[3 * v + 2]};
    for (int j = 0; j < 4; j++) {
#pragma omp atomic
        c->out[4 * anc + j] += add[j];
    }
}

/* Leaves carry the mass: finite and >= 0, at finite positions. */
static canopy_status check_bodies(const canopy_ptree *t, const double *mass, const double *pos) {
    if (!mass || !pos)
        return canopy_fail(CANOPY_ERR_INVALID, "tree mass: NULL masses or positions");
    for (int64_t v = 0; v < t->n; v++) {
        if (!ptsd_is_leaf(t, v)) continue;
        if (!(isfinite(mass[v]) && mass[v] >= 0.0))
            return canopy_fail(CANOPY_ERR_INVALID,
                               "tree mass: leaf %lld has mass %g (must be "
                               "finite and >= 0)",
                               (long long)v, mass[v]);
        for (int j = 0; j < 3; j++)
            if (!isfinite(pos[3 * v + j]))
                return canopy_fail(CANOPY_ERR_INVALID,
                                   "tree mass: leaf %lld has a non-finite position", (long long)v);
    }
    return CANOPY_OK;
}

/* ------------------------------------------------------------------- entry -- */

static const char *const app_names[] = {"tree heights", "tree descendants", "tree mass"};

canopy_status canopy_ptsd_run(const canopy_ptree *t, canopy_ptsd_app app, const double *mass,
                              const double *pos, canopy_ptsd_strategy s, void *out,
                              canopy_ptsd_stats *stats) {
    canopy_ptsd_stats local = {0};
    if ((unsigned)app > CANOPY_PTSD_MASS)
        return canopy_fail(CANOPY_ERR_INVALID, "tree: unknown aggregation %d", (int)app);
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "%s: output is NULL", app_names[app]);
    if (!t || t->n < 1 || !t->parent || !t->child_ptr || !t->child)
        return canopy_fail(CANOPY_ERR_INVALID, "tree: not initialised");
    if ((unsigned)s >= CANOPY_PTSD_STRATEGY_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "tree: unknown strategy %d", (int)s);
    canopy_status st = app == CANOPY_PTSD_MASS ? check_bodies(t, mass, pos) : CANOPY_OK;
    if (st != CANOPY_OK) return st;
    double t0 = canopy_now();
    if (s >= CANOPY_PTSD_GPU_REC) {
        st = canopy_gpu_usable()
                 ? canopy_ptsd_gpu_run(t, app, mass, pos, s, out, &local)
                 : canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "tree: strategy '%s' needs a GPU, and %s (use rec, flat, crec or "
                               "hier)",
                               canopy_ptsd_strategy_name(s), canopy_gpu_why_not());
    } else {
        mass_ctx ctx = {t, mass, pos, out};
        ptsd_agg a = {out, height_init, height_fold, height_up, leaf_walks};
        if (app == CANOPY_PTSD_DESCENDANTS)
            a = (ptsd_agg){out, height_init, desc_fold, desc_up, nonroot_walks};
        else if (app == CANOPY_PTSD_MASS)
            a = (ptsd_agg){&ctx, mass_init, mass_fold, mass_up, leaf_walks};
        st = canopy_ptsd_run_strategy(t, s, &a, NULL);
    }
    if (st != CANOPY_OK) return st;
    if (app == CANOPY_PTSD_MASS) {
        double *o = out;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
        for (int64_t v = 0; v < t->n; v++)
            for (int j = 1; j < 4; j++)
                o[4 * v + j] = o[4 * v] > 0.0 ? o[4 * v + j] / o[4 * v] : 0.0;
    }
    local.seconds = canopy_now() - t0;
    if (stats) *stats = local;
    return CANOPY_OK;
}

static canopy_status run_timed(const canopy_ptree *t, canopy_ptsd_app app, const double *mass,
                               const double *pos, canopy_ptsd_strategy s, void *out,
                               double *seconds) {
    canopy_ptsd_stats st;
    canopy_status r = canopy_ptsd_run(t, app, mass, pos, s, out, &st);
    if (r == CANOPY_OK && seconds) *seconds = st.seconds;
    return r;
}

canopy_status canopy_ptsd_heights(const canopy_ptree *t, canopy_ptsd_strategy s, int64_t *height,
                                  double *seconds) {
    return run_timed(t, CANOPY_PTSD_HEIGHTS, NULL, NULL, s, height, seconds);
}

canopy_status canopy_ptsd_descendants(const canopy_ptree *t, canopy_ptsd_strategy s, int64_t *desc,
                                      double *seconds) {
    return run_timed(t, CANOPY_PTSD_DESCENDANTS, NULL, NULL, s, desc, seconds);
}

canopy_status canopy_ptsd_mass(const canopy_ptree *t, const double *mass, const double *pos,
                               canopy_ptsd_strategy s, double *out, double *seconds) {
    return run_timed(t, CANOPY_PTSD_MASS, mass, pos, s, out, seconds);
}
