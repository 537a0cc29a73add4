/* simd_l: lockstep over SIMD packets of queries (Goldfarb et al. §4; Wu ch. 6 maps
 * a warp onto vector lanes). A packet of `width` consecutive queries of the order
 * shares one stack of (node, lane mask) entries and so walks the *union* of its
 * members' traversals: at a popped node every lane in the mask runs truncate, lanes
 * that skip drop out, a leaf is visited by every surviving lane, and the children of
 * an internal node are pushed with the surviving mask if it is not empty. Guided
 * descriptors whose orders are semantically equivalent take the order most
 * surviving lanes vote for (ties: canonical order); others are refused.
 *
 * Counters: nodes = truncate calls over all lanes; group_nodes = entries the packets
 * popped (the union walk); group_longest = per packet, the most nodes at which one
 * lane was active (was in the popped mask). For an unguided descriptor a lane is
 * active exactly at the nodes its own dr traversal tests, so that is the longest
 * member traversal; for a guided one it is that lane's work under the packet's
 * majority orders, which may differ from its own dr length.
 *
 * The truncate/visit calls go through the scalar descriptor, one set bit at a time;
 * the runner instantiates this engine once per ISA (cpu_engines.h) so that the
 * fixed-width lane loops are compiled for, and may be vectorised on, each. */
#ifndef CANOPY_TRAVERSE_CPU_SIMD_L_H
#define CANOPY_TRAVERSE_CPU_SIMD_L_H

#include "traverse/cpu_team.h"
#include "traverse/run.h"

/* Lanes of a packet: 16 with AVX-512, else 8 (one 256-bit vector of 32-bit lanes). */
enum { CANOPY_SIMD_L_MAX_WIDTH = 16 };

typedef struct canopy_lane_entry {
    int32_t node;
    uint32_t mask; /* lanes still traversing this subtree */
} canopy_lane_entry;

/* Lane states each start on a cache line. */
static inline size_t canopy_simd_l_state_stride(const canopy_app *app) {
    return canopy_cache_round(app->state_size);
}

CANOPY_ENGINE canopy_status canopy_cpu_simd_l_plan(const canopy_app *app,
                                                   const canopy_trav_job *job,
                                                   canopy_cpu_team *team) {
    canopy_status s = canopy_variant_check(app, CANOPY_VARIANT_SIMD_L);
    if (s) return s;
    team->scratch_bytes = canopy_cache_round((size_t)canopy_tree_stack_capacity(job->tree) *
                                             sizeof(canopy_lane_entry));
    return CANOPY_OK;
}

/* Runs one packet of `lanes` queries (lanes <= width), order[base, base + lanes). */
CANOPY_ENGINE void canopy_simd_l_packet(const canopy_app *app, const canopy_trav_job *job,
                                        canopy_lane_entry *stack, unsigned char *states,
                                        int64_t base, int lanes, int width,
                                        canopy_trav_counters *cnt) {
    const canopy_tree_view *t = job->tree;
    const void *ctx = job->ctx;
    const size_t stride = canopy_simd_l_state_stride(app);
    int32_t active[CANOPY_SIMD_L_MAX_WIDTH] = {0};
    for (int l = 0; l < lanes; l++) {
        int64_t i = base + l;
        app->init(ctx, states + (size_t)l * stride, job->order ? job->order[i] : i);
    }
    int64_t popped = 0;
    int32_t sp = 0;
    stack[sp++] = (canopy_lane_entry){0, (uint32_t)((1u << lanes) - 1)};
    while (sp > 0) {
        canopy_lane_entry e = stack[--sp];
        popped++;
        /* A fixed-width lane loop: the vectorisable part of the bookkeeping. */
        for (int l = 0; l < width; l++) active[l] += (int32_t)((e.mask >> l) & 1u);
        uint32_t live = 0;
        for (uint32_t m = e.mask; m; m &= m - 1) {
            int l = __builtin_ctz(m);
            if (!app->truncate(ctx, states + (size_t)l * stride, t, e.node)) live |= 1u << l;
        }
        if (!live) continue;
        const canopy_node *h = canopy_tv_node(t, e.node);
        if (h->child < 0) {
            for (uint32_t m = live; m; m &= m - 1) {
                int l = __builtin_ctz(m);
                app->visit_leaf(ctx, states + (size_t)l * stride, t, e.node);
            }
            continue;
        }
        int reversed = 0;
        if (app->guided) {
            uint32_t votes = 0;
            for (uint32_t m = live; m; m &= m - 1) {
                int l = __builtin_ctz(m);
                if (app->order(ctx, states + (size_t)l * stride, t, e.node)) votes |= 1u << l;
            }
            reversed = 2 * __builtin_popcount(votes) > __builtin_popcount(live);
        }
        for (int32_t c = 0; c < h->nchild; c++) {
            int32_t child = reversed ? h->child + c : h->child + h->nchild - 1 - c;
            stack[sp++] = (canopy_lane_entry){child, live};
        }
    }
    int64_t tests = 0;
    int32_t longest = 0;
    for (int l = 0; l < width; l++) {
        tests += active[l];
        longest = active[l] > longest ? active[l] : longest;
    }
    for (int l = 0; l < lanes; l++) {
        int64_t i = base + l;
        app->finish(ctx, states + (size_t)l * stride, job->order ? job->order[i] : i);
    }
    cnt->nodes += tests;
    cnt->group_nodes += popped;
    cnt->group_longest += longest;
    cnt->groups++;
}

/* `width` is a constant of each ISA's runner (8 or 16). */
CANOPY_ENGINE void canopy_cpu_simd_l(const canopy_app *app, const canopy_trav_job *job,
                                     canopy_cpu_team *team, canopy_trav_counters *cnt, int width) {
    canopy_lane_entry *stack = (canopy_lane_entry *)canopy_cpu_team_scratch(team);
    _Alignas(64) unsigned char states[CANOPY_SIMD_L_MAX_WIDTH * CANOPY_MAX_STATE];
    int64_t packets = (job->nq + width - 1) / width;
#pragma omp for schedule(dynamic, 4)
    for (int64_t p = 0; p < packets; p++) {
        int64_t base = p * width;
        int lanes = job->nq - base < width ? (int)(job->nq - base) : width;
        canopy_simd_l_packet(app, job, stack, states, base, lanes, width, cnt);
    }
}

#endif
