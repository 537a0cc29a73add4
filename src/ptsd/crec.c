/* SPDX-License-Identifier: MIT */
/* Consolidated recursion on the CPU (Wu ch. 4, Fig. 4.6b): instead of one call per
 * node, one "launch" per level. Going down, all threads take the nodes of the
 * current level from one buffer and append their children to it (the buffer ends
 * up holding the tree breadth-first, one segment per level); coming back up, each
 * level's nodes fold their finished children in parallel. A node folds its own
 * children in order, so results equal rec's exactly. */
#include "ptsd/ptsd.h"

canopy_status canopy_ptsd_run_crec(const canopy_ptree *t, const ptsd_agg *a) {
    int64_t *buf = NULL, *level_start = NULL, *count = NULL;
    canopy_status s = canopy_alloc((void **)&buf, (size_t)t->n, sizeof *buf);
    if (s == CANOPY_OK)
        s = canopy_alloc((void **)&level_start, (size_t)t->depth + 1, sizeof *level_start);
    if (s == CANOPY_OK) s = canopy_alloc((void **)&count, (size_t)t->n + 1, sizeof *count);
    if (s != CANOPY_OK) goto done;
    buf[0] = t->root;
    level_start[0] = 0;
    level_start[1] = 1;
    int32_t levels = 1;
    const int nt = canopy_threads();
    /* Down: the children of segment [lo, hi) become segment [hi, hi + their count). */
    while (level_start[levels] > level_start[levels - 1]) {
        int64_t lo = level_start[levels - 1], hi = level_start[levels];
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = lo; i < hi; i++)
            count[i - lo] = t->child_ptr[buf[i] + 1] - t->child_ptr[buf[i]];
        int64_t at = hi;
        for (int64_t i = 0; i < hi - lo; i++) {
            int64_t c = count[i];
            count[i] = at;
            at += c;
        }
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
        for (int64_t i = lo; i < hi; i++) {
            int64_t v = buf[i], w = count[i - lo];
            for (int64_t k = t->child_ptr[v]; k < t->child_ptr[v + 1]; k++) buf[w++] = t->child[k];
        }
        level_start[++levels] = at;
    }
    /* Up: the last segment is empty; fold levels from the deepest to the root. */
    for (int32_t l = levels - 2; l >= 0; l--) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
        for (int64_t i = level_start[l]; i < level_start[l + 1]; i++) {
            int64_t v = buf[i];
            a->init(a->ctx, v);
            for (int64_t k = t->child_ptr[v]; k < t->child_ptr[v + 1]; k++)
                a->fold(a->ctx, v, t->child[k]);
        }
    }
done:
    canopy_free(buf);
    canopy_free(level_start);
    canopy_free(count);
    return s;
}
