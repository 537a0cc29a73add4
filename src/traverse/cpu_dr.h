/* dr: autoropes (Goldfarb et al. §3). The recursion becomes a loop over an explicit
 * per-thread stack; children are pushed in reverse of the order they would be
 * called, so they pop in call order, and each node is visited once. */
#ifndef CANOPY_TRAVERSE_CPU_DR_H
#define CANOPY_TRAVERSE_CPU_DR_H

#include "traverse/cpu_team.h"

/* Pushes the children of internal node h so that they pop in the order chosen for
 * the query (reversed = 1: last child first). */
CANOPY_ENGINE int32_t canopy_push_children(int32_t *stack, int32_t sp, const canopy_node *h,
                                           int reversed) {
    if (reversed) {
        for (int32_t c = 0; c < h->nchild; c++) stack[sp++] = h->child + c;
    } else {
        for (int32_t c = h->nchild - 1; c >= 0; c--) stack[sp++] = h->child + c;
    }
    return sp;
}

/* Walks one query with the given stack; returns the nodes tested. */
CANOPY_ENGINE int64_t canopy_dr_walk(const canopy_app *app, const void *ctx, void *state,
                                     const canopy_tree_view *t, int32_t *stack) {
    int64_t visited = 0;
    int32_t sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        int32_t node = stack[--sp];
        visited++;
        if (app->truncate(ctx, state, t, node)) continue;
        const canopy_node *h = canopy_tv_node(t, node);
        if (h->child < 0) {
            app->visit_leaf(ctx, state, t, node);
            continue;
        }
        sp = canopy_push_children(stack, sp, h, app->guided && app->order(ctx, state, t, node));
    }
    return visited;
}

/* One stack per thread, each on its own cache lines, reused for all its queries. */
CANOPY_ENGINE canopy_status canopy_cpu_dr_plan(const canopy_app *app, const canopy_trav_job *job,
                                               canopy_cpu_team *team) {
    (void)app;
    team->scratch_bytes =
        canopy_cache_round((size_t)canopy_tree_stack_capacity(job->tree) * sizeof(int32_t));
    return CANOPY_OK;
}

CANOPY_ENGINE void canopy_cpu_dr(const canopy_app *app, const canopy_trav_job *job,
                                 canopy_cpu_team *team, canopy_trav_counters *cnt) {
    int32_t *stack = (int32_t *)canopy_cpu_team_scratch(team);
    int64_t nodes = 0;
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < job->nq; i++) {
        _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
        int64_t q = job->order ? job->order[i] : i;
        app->init(job->ctx, state, q);
        nodes += canopy_dr_walk(app, job->ctx, state, job->tree, stack);
        app->finish(job->ctx, state, q);
    }
    cnt->nodes += nodes;
}

#endif
