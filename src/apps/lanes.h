/* SPDX-License-Identifier: MIT */
/* The descriptors of the applications with vector hooks: shared by each application's
 * file (its runners) and the per-width files that compile its simd_l (lanes_body.h). */
#ifndef CANOPY_APPS_LANES_H
#define CANOPY_APPS_LANES_H

#include "gravity/gravity.h"
#include "apps/knn/knn.h"
#include "apps/radius/radius.h"

static const canopy_app radius_app = {
    "radius", sizeof(radius_state), 0, 1, radius_init, radius_truncate, radius_visit_leaf,
    NULL,     radius_finish,        1,
};
static const canopy_app knn_app = {
    "knn",          sizeof(knn_state), 1,          1, knn_init, knn_truncate,
    knn_visit_leaf, knn_order_perm,    knn_finish, 1,
};
static const canopy_app gravity_app = {
    "gravity", sizeof(gravity_state), 0, 1, gravity_init, gravity_truncate, gravity_visit_leaf,
    NULL,      gravity_finish,        1,
};

#endif
