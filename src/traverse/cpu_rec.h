/* rec: plain recursion, the baseline of every paper. One query per thread; the call
 * stack holds the traversal state. */
#ifndef CANOPY_TRAVERSE_CPU_REC_H
#define CANOPY_TRAVERSE_CPU_REC_H

#include "traverse/cpu_team.h"

/* Not always-inline (it recurses); GCC clones it per application because `app` is a
 * compile-time constant at every call site. */
static inline int64_t canopy_rec_visit(const canopy_app *app, const void *ctx, void *state,
                                       const canopy_tree_view *t, int32_t node) {
    if (app->truncate(ctx, state, t, node)) return 1;
    const canopy_node *h = canopy_tv_node(t, node);
    if (h->child < 0) {
        app->visit_leaf(ctx, state, t, node);
        return 1;
    }
    int64_t visited = 1;
    int reversed = app->guided && app->order(ctx, state, t, node);
    for (int32_t c = 0; c < h->nchild; c++) {
        int32_t child = h->child + (reversed ? h->nchild - 1 - c : c);
        visited += canopy_rec_visit(app, ctx, state, t, child);
    }
    return visited;
}

CANOPY_ENGINE canopy_status canopy_cpu_rec_plan(const canopy_app *app, const canopy_trav_job *job,
                                                canopy_cpu_team *team) {
    (void)app;
    (void)job;
    team->scratch_bytes = 0;
    return CANOPY_OK;
}

CANOPY_ENGINE void canopy_cpu_rec(const canopy_app *app, const canopy_trav_job *job,
                                  canopy_cpu_team *team, canopy_trav_counters *cnt) {
    (void)team;
    int64_t nodes = 0;
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < job->nq; i++) {
        _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
        int64_t q = job->order ? job->order[i] : i;
        app->init(job->ctx, state, q);
        nodes += canopy_rec_visit(app, job->ctx, state, job->tree, 0);
        app->finish(job->ctx, state, q);
    }
    cnt->nodes += nodes;
}

#endif
