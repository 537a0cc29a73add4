/* SPDX-License-Identifier: MIT */
/* canopy_gravity: the bh descriptor run by the generic engines over an octree, and
 * the float64 direct-summation reference. */
#include "gravity/gravity.h"

#include "apps/common.h"
#include "apps/lanes.h"
#include "canopy/traverse_cpu.h"
#include "apps/index_entries.h"

#include <math.h>
#include <string.h>

CANOPY_CPU_INSTANTIATE_LANES(gravity, &gravity_app)
_Static_assert(sizeof(gravity_state) <= CANOPY_MAX_STATE, "gravity_state exceeds CANOPY_MAX_STATE");

canopy_status canopy_gravity_check_bodies(canopy_points b, const float *mass, float eps) {
    canopy_status s = canopy_points_check(b, "gravity bodies");
    if (s) return s;
    if (b.d != 3)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: bodies must have 3 coordinates (got %d)",
                           (int)b.d);
    if (!(eps >= 0.0f) || !isfinite(eps))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: softening must be finite and >= 0");
    for (int64_t i = 0; mass && i < b.n; i++)
        if (!(mass[i] >= 0.0f) || !isfinite(mass[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "gravity: mass of body %lld is %g", (long long)i,
                               (double)mass[i]);
    return CANOPY_OK;
}

canopy_status canopy_gravity(canopy_points bodies, const float *mass, float theta, float eps,
                             const canopy_run_options *opt, float *acc, canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    canopy_status s = canopy_gravity_check_bodies(bodies, mass, eps);
    if (s) return s;
    if (!(theta > 0.0f) || !isfinite(theta))
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: theta must be > 0 (got %g)",
                           (double)theta);
    if (o.tree != CANOPY_TREE_KD && o.tree != CANOPY_TREE_OCT)
        return canopy_fail(CANOPY_ERR_INVALID, "gravity: only the oct tree is supported");
    o.tree = CANOPY_TREE_OCT; /* kd is the generic default; gravity always uses an octree */

    float *equal = NULL;
    if (!mass) {
        if ((s = canopy_alloc((void **)&equal, (size_t)(bodies.n + 1), sizeof(float)))) return s;
        for (int64_t i = 0; i < bodies.n; i++) equal[i] = 1.0f / (float)bodies.n;
        mass = equal;
    }
    canopy_tree *tree = NULL;
    if (stats) memset(stats, 0, sizeof *stats);
    s = canopy_app_build(bodies, o.tree, o.leaf_size, mass, &tree, stats);
    if (!s) s = canopy_gravity_on_tree(tree, bodies, theta, eps, &o, acc, stats);
    canopy_tree_free(tree);
    canopy_free(equal);
    return s;
}

canopy_status canopy_gravity_on_tree(const canopy_tree *tree, canopy_points bodies, float theta,
                                     float eps, const canopy_run_options *o, float *acc,
                                     canopy_stats *stats) {
    gravity_ctx ctx = {bodies, 1.0f / theta, eps * eps, acc};
    canopy_traversal tr = {
        "gravity", &gravity_app, gravity_cpu_runners, CANOPY_GPU_RUNNER(gravity), &ctx, bodies,
        bodies.n,  NULL};
    return canopy_traverse(tree, &tr, o, stats);
}

canopy_status canopy_gravity_direct(canopy_points bodies, const float *mass, float eps,
                                    double *acc) {
    canopy_status s = canopy_gravity_check_bodies(bodies, mass, eps);
    if (s) return s;
    double e2 = (double)eps * eps, m_equal = bodies.n ? 1.0 / (double)bodies.n : 0.0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(canopy_threads())
    for (int64_t i = 0; i < bodies.n; i++) {
        const float *q = canopy_point(bodies, i);
        double a[3] = {0, 0, 0};
        for (int64_t j = 0; j < bodies.n; j++) {
            if (j == i) continue;
            const float *p = canopy_point(bodies, j);
            double dx = (double)p[0] - q[0], dy = (double)p[1] - q[1], dz = (double)p[2] - q[2];
            double r2 = dx * dx + dy * dy + dz * dz + e2;
            double f = (mass ? mass[j] : m_equal) / (r2 * sqrt(r2));
            a[0] += f * dx;
            a[1] += f * dy;
            a[2] += f * dz;
        }
        acc[3 * i + 0] = a[0];
        acc[3 * i + 1] = a[1];
        acc[3 * i + 2] = a[2];
    }
    return CANOPY_OK;
}
