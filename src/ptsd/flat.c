/* SPDX-License-Identifier: MIT */
/* Wu's FLAT: no recursion at all. Every contributing node walks its parent chain to
 * the root and updates each ancestor atomically, O(nodes x depth) work with no
 * ordering between nodes. Floating-point sums therefore come out in an arbitrary
 * order and agree with rec only to rounding. */
#include "ptsd/ptsd.h"

canopy_status canopy_ptsd_run_flat(const canopy_ptree *t, const ptsd_agg *a) {
#pragma omp parallel num_threads(canopy_threads())
    {
#pragma omp for schedule(static)
        for (int64_t v = 0; v < t->n; v++) a->init(a->ctx, v);
#pragma omp for schedule(dynamic, 1024)
        for (int64_t v = 0; v < t->n; v++) {
            if (!a->walks(a->ctx, t, v)) continue;
            int64_t dist = 1;
            for (int64_t p = t->parent[v]; p >= 0; p = t->parent[p], dist++)
                a->up(a->ctx, v, p, dist);
        }
    }
    return CANOPY_OK;
}
