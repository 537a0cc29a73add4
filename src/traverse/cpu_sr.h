/* sr: static ropes (Wu ch. 4, Fig. 4.3c). The tree carries, per node, the node a
 * traversal goes to when it skips that node's subtree (the right sibling, or the
 * parent's rope for a rightmost child; -1 past the end). The walk is then stackless:
 * skip or leaf -> follow the rope, otherwise descend to the first child. The order
 * is fixed by the tree, so only unguided traversals can use it. */
#ifndef CANOPY_TRAVERSE_CPU_SR_H
#define CANOPY_TRAVERSE_CPU_SR_H

#include "traverse/cpu_team.h"
#include "traverse/run.h"

/* Walks one query; returns the nodes tested. */
CANOPY_ENGINE int64_t canopy_sr_walk(const canopy_app *app, const void *ctx, void *state,
                                     const canopy_tree_view *t) {
    const int32_t *rope = t->rope;
    int64_t visited = 0;
    int32_t node = 0;
    while (node != -1) {
        visited++;
        if (app->truncate(ctx, state, t, node)) {
            node = rope[node];
            continue;
        }
        const canopy_node *h = canopy_tv_node(t, node);
        if (h->child < 0) {
            app->visit_leaf(ctx, state, t, node);
            node = rope[node];
        } else {
            node = h->child;
        }
    }
    return visited;
}

CANOPY_ENGINE canopy_status canopy_cpu_sr_plan(const canopy_app *app, const canopy_trav_job *job,
                                               canopy_cpu_team *team) {
    canopy_status s = canopy_variant_check(app, CANOPY_VARIANT_SR);
    if (s) return s;
    if (!job->tree->rope)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: variant sr needs a tree with static ropes",
                           app->name);
    team->scratch_bytes = 0;
    return CANOPY_OK;
}

CANOPY_ENGINE void canopy_cpu_sr(const canopy_app *app, const canopy_trav_job *job,
                                 canopy_cpu_team *team, canopy_trav_counters *cnt) {
    (void)team;
    int64_t nodes = 0;
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < job->nq; i++) {
        _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
        int64_t q = job->order ? job->order[i] : i;
        app->init(job->ctx, state, q);
        nodes += canopy_sr_walk(app, job->ctx, state, job->tree);
        app->finish(job->ctx, state, q);
    }
    cnt->nodes += nodes;
}

#endif
