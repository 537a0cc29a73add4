/* SPDX-License-Identifier: MIT */
/* kd-tree split rule: tight bounding box as geometry; split on the widest
 * dimension at the median (Goldfarb's and scipy's choice), so depth is log2(n/leaf). */
#include "tree/select.h"
#include "tree/tree.h"

#include <float.h>

static void bounding_box(canopy_points pts, const int64_t *perm, int64_t begin, int64_t end,
                         float *lo, float *hi) {
    int32_t d = pts.d;
    for (int32_t j = 0; j < d; j++) {
        lo[j] = begin < end ? FLT_MAX : 0.0f;
        hi[j] = begin < end ? -FLT_MAX : 0.0f;
    }
    for (int64_t i = begin; i < end; i++) {
        const float *x = canopy_point(pts, perm[i]);
        for (int32_t j = 0; j < d; j++) {
            if (x[j] < lo[j]) lo[j] = x[j];
            if (x[j] > hi[j]) hi[j] = x[j];
        }
    }
}

static int kd_split(const void *ctx, canopy_points pts, int64_t *perm, int64_t begin, int64_t end,
                    int32_t depth, int may_split, float *geom, int64_t *child_begin) {
    (void)ctx;
    (void)depth;
    int32_t d = pts.d;
    float *lo = geom, *hi = geom + d;
    bounding_box(pts, perm, begin, end, lo, hi);
    geom[2 * d] = -1.0f; /* leaf: no split dimension */
    if (!may_split) return 0;
    int32_t dim = 0;
    for (int32_t j = 1; j < d; j++)
        if (hi[j] - lo[j] > hi[dim] - lo[dim]) dim = j;
    geom[2 * d] = (float)dim;
    return canopy_split_at_median(pts, perm, begin, end, dim, child_begin);
}

canopy_status canopy_tree_spec_kd(int32_t d, canopy_tree_spec *spec) {
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "kd tree: dimension %d < 1", (int)d);
    spec->kind = CANOPY_TREE_KD;
    spec->geom_stride = 2 * d + 1;
    spec->max_children = 2;
    spec->split = kd_split;
    spec->ctx = NULL;
    return CANOPY_OK;
}
