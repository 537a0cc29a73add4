/* gdr: greedy autoropes (Wu ch. 4, Fig. 4.4a). DR's two nested loops (queries, then
 * the stack) are merged into one: a thread pops one node per iteration and, the
 * moment its stack empties, finishes its query and fetches the next one from a
 * shared cursor over the query order. On a GPU this keeps warp lanes busy; on a CPU
 * it is a fine-grained dynamic load balance with no per-query scheduling call. */
#ifndef CANOPY_TRAVERSE_CPU_GDR_H
#define CANOPY_TRAVERSE_CPU_GDR_H

#include "traverse/cpu_dr.h"

/* Queries a thread claims per visit to the shared cursor: one atomic per chunk
 * instead of one per query. */
enum { CANOPY_GDR_CHUNK = 16 };

CANOPY_ENGINE canopy_status canopy_cpu_gdr_plan(const canopy_app *app, const canopy_trav_job *job,
                                                canopy_cpu_team *team) {
    return canopy_cpu_dr_plan(app, job, team);
}

/* The next query of this thread's chunk, claiming a new chunk when it is used up;
 * 0 when all queries are taken. */
CANOPY_ENGINE int canopy_gdr_fetch(const canopy_trav_job *job, canopy_cpu_team *team, int64_t *next,
                                   int64_t *end, int64_t *q) {
    if (*next == *end) {
        int64_t first;
#pragma omp atomic capture
        {
            first = team->cursor;
            team->cursor += CANOPY_GDR_CHUNK;
        }
        if (first >= job->nq) return 0;
        *next = first;
        *end = job->nq - first < CANOPY_GDR_CHUNK ? job->nq : first + CANOPY_GDR_CHUNK;
    }
    *q = job->order ? job->order[*next] : *next;
    ++*next;
    return 1;
}

CANOPY_ENGINE void canopy_cpu_gdr(const canopy_app *app, const canopy_trav_job *job,
                                  canopy_cpu_team *team, canopy_trav_counters *cnt) {
    const canopy_tree_view *t = job->tree;
    int32_t *stack = (int32_t *)canopy_cpu_team_scratch(team);
    _Alignas(64) unsigned char state[CANOPY_MAX_STATE];
    int64_t nodes = 0;
    int64_t next = 0, end = 0; /* this thread's claimed, not yet started queries */
    int64_t q;
    if (!canopy_gdr_fetch(job, team, &next, &end, &q)) return;
    app->init(job->ctx, state, q);
    int32_t sp = 0;
    stack[sp++] = 0;
    for (;;) {
        int32_t node = stack[--sp];
        nodes++;
        if (!app->truncate(job->ctx, state, t, node)) {
            const canopy_node *h = canopy_tv_node(t, node);
            if (h->child < 0)
                app->visit_leaf(job->ctx, state, t, node);
            else
                sp = canopy_push_children(stack, sp, h,
                                          app->guided && app->order(job->ctx, state, t, node));
        }
        if (sp == 0) {
            app->finish(job->ctx, state, q);
            if (!canopy_gdr_fetch(job, team, &next, &end, &q)) break;
            app->init(job->ctx, state, q);
            stack[sp++] = 0;
        }
    }
    cnt->nodes += nodes;
}

#endif
