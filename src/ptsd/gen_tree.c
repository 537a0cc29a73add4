/* SPDX-License-Identifier: MIT */
/* Random trees for the bottom-up benchmarks (Wu ch. 4's Random-1 and Random-2),
 * generated level by level and numbered breadth-first, so parent[i] < i. Node i
 * draws whether it has children and how many from stream i of the seed alone, so
 * the draws of a level run in parallel and match for any thread count; the size
 * cap is then applied in breadth-first order: nodes get their children until the
 * next family would pass max_nodes, and no later node gets any. */
#include "ptsd/ptsd.h"

#include <string.h>

canopy_status canopy_gen_ptree(int32_t depth, int32_t fan_min, int32_t fan_max, double p_children,
                               int64_t max_nodes, uint64_t seed, canopy_ptree *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_gen_ptree: out is NULL");
    memset(out, 0, sizeof *out);
    if (depth < 1 || fan_min < 1 || fan_max < fan_min ||
        !(p_children >= 0.0 && p_children <= 1.0) || max_nodes < 1)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "random tree: need depth >= 1, 1 <= fan_min <= fan_max, p in [0, 1] "
                           "and max_nodes >= 1 (got %d, %d, %d, %g, %lld)",
                           (int)depth, (int)fan_min, (int)fan_max, p_children,
                           (long long)max_nodes);
    int64_t cap = 1024, n = 1;
    int64_t *parent = NULL, *fan = NULL;
    canopy_status s = canopy_alloc((void **)&parent, (size_t)cap, sizeof *parent);
    if (s != CANOPY_OK) return s;
    parent[0] = -1;
    int64_t lo = 0, hi = 1; /* the current level's nodes */
    bool full = false;
    for (int32_t level = 0; level + 1 < depth && lo < hi && !full && s == CANOPY_OK; level++) {
        s = canopy_alloc((void **)&fan, (size_t)(hi - lo), sizeof *fan);
        if (s != CANOPY_OK) break;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
        for (int64_t v = lo; v < hi; v++) {
            canopy_rng r = canopy_rng_make(seed, (uint64_t)v);
            bool has = v == 0 || canopy_rng_uniform(&r) < p_children;
            fan[v - lo] =
                has ? fan_min + (int64_t)canopy_rng_below(&r, (uint64_t)(fan_max - fan_min) + 1)
                    : 0;
        }
        int64_t next_hi = hi;
        for (int64_t v = lo; v < hi && s == CANOPY_OK; v++) {
            if (fan[v - lo] == 0) continue;
            if (next_hi + fan[v - lo] > max_nodes) {
                full = true;
                break;
            }
            while (next_hi + fan[v - lo] > cap) {
                int64_t *bigger;
                s = canopy_alloc((void **)&bigger, (size_t)cap * 2, sizeof *bigger);
                if (s != CANOPY_OK) break;
                memcpy(bigger, parent, (size_t)n * sizeof *parent);
                canopy_free(parent);
                parent = bigger;
                cap *= 2;
            }
            for (int64_t k = 0; s == CANOPY_OK && k < fan[v - lo]; k++) parent[n++] = v;
            next_hi = n;
        }
        canopy_free(fan);
        fan = NULL;
        lo = hi;
        hi = next_hi;
    }
    if (s == CANOPY_OK) s = canopy_ptree_from_parents(parent, n, out);
    canopy_free(parent);
    return s;
}

canopy_status canopy_ptree_gen(const char *name, uint64_t seed, canopy_ptree *out) {
    if (!out) return canopy_fail(CANOPY_ERR_INVALID, "canopy_ptree_gen: out is NULL");
    memset(out, 0, sizeof *out);
    if (name && !strcmp(name, "random1"))
        return canopy_gen_ptree(14, 4, 8, 0.5, 8000000, seed, out);
    if (name && !strcmp(name, "random2"))
        return canopy_gen_ptree(10, 32, 64, 0.125, 8000000, seed, out);
    return canopy_fail(CANOPY_ERR_INVALID, "unknown tree generator '%s' (random1, random2)",
                       name ? name : "(null)");
}
