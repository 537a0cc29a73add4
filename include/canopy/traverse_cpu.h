/* SPDX-License-Identifier: MIT */
/* canopy/traverse_cpu.h — the CPU engines, header-only, for descriptors written
 * against canopy/traverse.h. A .c file (compiled with OpenMP) says
 *
 *     static const canopy_app my_app = {...};
 *     CANOPY_CPU_INSTANTIATE(my, &my_app)
 *
 * once and gets `my_cpu_runners`, a table of one runner per CPU variant (rec, dr,
 * sr, gdr, simd_l), each a direct (inlined) composition of engine and descriptor;
 * canopy_traverse() picks one. A new variant is one engine here plus one line in
 * CANOPY_CPU_INSTANTIATE.
 *
 * Why engines do not open their own parallel region: GCC outlines an OpenMP parallel
 * region into a separate function *before* it inlines, so a region inside an
 * always-inline engine is compiled once, with `app` loaded from memory, and every
 * descriptor call in it stays an indirect call. The runner, generated per
 * descriptor, opens the region instead; inside it `app` is the address of a static
 * const descriptor, the calls fold to direct calls and inline, and a runner compiled
 * for an ISA (target attribute) carries that ISA into the outlined region.
 *
 * So every engine <v> is two functions:
 *   canopy_status canopy_cpu_<v>_plan(app, job, team)  serial, before the region:
 *       refuses descriptors it cannot run, sets team->scratch_bytes (per thread);
 *   void canopy_cpu_<v>(app, job, team, cnt [, width])  run by every thread of the
 *       team; shares the queries out with orphaned `omp for` (or team->cursor) and
 *       adds its own work to its private counters *cnt. */
#ifndef CANOPY_TRAVERSE_CPU_H
#define CANOPY_TRAVERSE_CPU_H

#include "canopy/traverse.h"

#include <omp.h>

#define CANOPY_ENGINE static inline __attribute__((always_inline))

/* ------------------------------------------------------------- the team -- */

typedef struct canopy_cpu_team {
    int threads;
    size_t scratch_bytes;   /* per thread, a multiple of 64 (cache-line aligned) */
    unsigned char *scratch; /* threads * scratch_bytes, or NULL when 0 */
    int64_t cursor;         /* shared query cursor (gdr), starts at 0 */
} canopy_cpu_team;

static inline size_t canopy_cache_round(size_t bytes) {
    return (bytes + 63) / 64 * 64;
}

/* A job's node visits: its own estimate, else a guided descent and back per query. */
static inline double canopy_trav_job_work(const canopy_trav_job *job) {
    return job->work > 0.0 ? job->work : (double)job->nq * 2.0 * (double)job->tree->depth;
}

/* After the plan: threads (as many as the job's work pays for) and per-thread scratch. */
static inline canopy_status canopy_cpu_team_begin(canopy_cpu_team *team,
                                                  const canopy_trav_job *job) {
    team->threads = canopy_threads_for(canopy_trav_job_work(job));
    team->cursor = 0;
    team->scratch = NULL;
    if (!team->scratch_bytes) return CANOPY_OK;
    return canopy_alloc((void **)&team->scratch, (size_t)team->threads, team->scratch_bytes);
}

static inline void canopy_cpu_team_end(canopy_cpu_team *team) {
    canopy_free(team->scratch);
}

/* This thread's scratch (inside the region). */
static inline void *canopy_cpu_team_scratch(const canopy_cpu_team *team) {
    return team->scratch + team->scratch_bytes * (size_t)omp_get_thread_num();
}

/* The order chosen for this query at internal node h: perm[0..nchild). */
CANOPY_ENGINE void canopy_cpu_order(const canopy_app *app, const void *ctx, const void *state,
                                    const canopy_tree_view *t, int32_t node, const canopy_node *h,
                                    int32_t *perm) {
    if (app->guided)
        app->order(ctx, state, t, node, perm);
    else
        canopy_order_flip(perm, h->nchild, 0);
}

/* ------------------------------------------------------------------ rec -- */
/* rec: plain recursion, the baseline of every paper. One query per thread; the call
 * stack holds the traversal state. */

/* Not always-inline (it recurses); GCC clones it per descriptor because `app` is a
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
    int32_t perm[CANOPY_MAX_CHILDREN];
    canopy_cpu_order(app, ctx, state, t, node, h, perm);
    for (int32_t c = 0; c < h->nchild; c++)
        visited += canopy_rec_visit(app, ctx, state, t, h->child + perm[c]);
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

/* ------------------------------------------------------------------- dr -- */
/* dr: autoropes (Goldfarb et al. §3). The recursion becomes a loop over an explicit
 * per-thread stack; children are pushed in reverse of the order they would be
 * called, so they pop in call order, and each node is visited once. */

/* Pushes the children of internal node h so that they pop in the order perm. */
CANOPY_ENGINE int32_t canopy_push_children(int32_t *stack, int32_t sp, const canopy_node *h,
                                           const int32_t *perm) {
    for (int32_t c = h->nchild - 1; c >= 0; c--) stack[sp++] = h->child + perm[c];
    return sp;
}

/* Walks one query with the given stack; returns the nodes tested. */
CANOPY_ENGINE int64_t canopy_dr_walk(const canopy_app *app, const void *ctx, void *state,
                                     const canopy_tree_view *t, int32_t *stack) {
    int64_t visited = 0;
    int32_t sp = 0;
    int32_t perm[CANOPY_MAX_CHILDREN];
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
        canopy_cpu_order(app, ctx, state, t, node, h, perm);
        sp = canopy_push_children(stack, sp, h, perm);
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

/* ------------------------------------------------------------------- sr -- */
/* sr: static ropes (Wu ch. 4, Fig. 4.3c). The tree carries, per node, the node a
 * traversal goes to when it skips that node's subtree (the right sibling, or the
 * parent's rope for a rightmost child; -1 past the end). The walk is then stackless:
 * skip or leaf -> follow the rope, otherwise descend to the first child. The order
 * is fixed by the tree, so only unguided traversals can use it. */

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

/* ------------------------------------------------------------------ gdr -- */
/* gdr: greedy autoropes (Wu ch. 4, Fig. 4.4a). DR's two nested loops (queries, then
 * the stack) are merged into one: a thread pops one node per iteration and, the
 * moment its stack empties, finishes its query and fetches the next one from a
 * shared cursor over the query order. On a GPU this keeps warp lanes busy; on a CPU
 * it is a fine-grained dynamic load balance with no per-query scheduling call. */

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
    int32_t perm[CANOPY_MAX_CHILDREN];
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
            if (h->child < 0) {
                app->visit_leaf(job->ctx, state, t, node);
            } else {
                canopy_cpu_order(app, job->ctx, state, t, node, h, perm);
                sp = canopy_push_children(stack, sp, h, perm);
            }
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

/* --------------------------------------------------------------- simd_l -- */
/* simd_l: lockstep over SIMD packets of queries (Goldfarb et al. §4; Wu ch. 6 maps
 * a warp onto vector lanes). A packet of `width` consecutive queries of the order
 * shares one stack of (node, lane mask) entries and so walks the *union* of its
 * members' traversals: at a popped node the lanes in the mask run truncate, lanes
 * that skip drop out, a leaf is visited by every surviving lane, and the children of
 * an internal node are pushed with the surviving mask if it is not empty. Guided
 * descriptors whose orders are equivalent take the packet's order (canopy/traverse.h:
 * the child most surviving lanes want first, ties to the smaller index, with the
 * permutation of the lowest lane that wants it); others are refused.
 *
 * With vector hooks (canopy_lane_app, `lanes` non-NULL) each of truncate, visit_leaf
 * and order is one call for the whole mask (the vote a ballot); without them the
 * scalar hooks run once per set bit, counted in lane_calls so that --stats shows
 * which path ran. The per-lane runner is instantiated once per ISA (target
 * attributes) so that its fixed-width lane loops are compiled for each; a vector one
 * once per lane width, in that width's own file (CANOPY_SIMD_L_LANES).
 *
 * Counters: nodes = truncate tests over all lanes; group_nodes = entries the packets
 * popped (the union walk); group_longest = per packet, the most nodes at which one
 * lane was active (was in the popped mask). For an unguided descriptor a lane is
 * active exactly at the nodes its own dr traversal tests, so that is the longest
 * member traversal; for a guided one it is that lane's work under the packet's
 * orders, which may differ from its own dr length. */

/* Lanes of a packet: 16 with AVX-512, else 8 (one 256-bit vector of 32-bit lanes). */
enum { CANOPY_SIMD_L_MAX_WIDTH = 16 };

typedef struct canopy_lane_entry {
    int32_t node;
    uint32_t mask; /* lanes still traversing this subtree */
} canopy_lane_entry;

/* Per-lane path: lane states each start on a cache line. */
static inline size_t canopy_simd_l_state_stride(const canopy_app *app) {
    return canopy_cache_round(app->state_size);
}

static inline size_t canopy_simd_l_stack_bytes(const canopy_trav_job *job) {
    return canopy_cache_round((size_t)canopy_tree_stack_capacity(job->tree) *
                              sizeof(canopy_lane_entry));
}

/* Scratch per thread: the stack, then (vector hooks) the packet's lane state. */
CANOPY_ENGINE canopy_status canopy_cpu_simd_l_plan_lanes(const canopy_app *app,
                                                         const canopy_lane_app *lanes,
                                                         const canopy_trav_job *job,
                                                         canopy_cpu_team *team) {
    canopy_status s = canopy_variant_check(app, CANOPY_VARIANT_SIMD_L);
    if (s) return s;
    team->scratch_bytes = canopy_simd_l_stack_bytes(job);
    if (lanes) team->scratch_bytes += canopy_cache_round(lanes->packet_size(job->ctx, job->tree));
    return CANOPY_OK;
}

CANOPY_ENGINE canopy_status canopy_cpu_simd_l_plan(const canopy_app *app,
                                                   const canopy_trav_job *job,
                                                   canopy_cpu_team *team) {
    return canopy_cpu_simd_l_plan_lanes(app, NULL, job, team);
}

/* The packet's order at internal node h for the lanes `live` (canopy/traverse.h). */
CANOPY_ENGINE void canopy_simd_l_vote(const canopy_app *app, const void *ctx,
                                      const unsigned char *states, size_t stride,
                                      const canopy_tree_view *t, int32_t node, const canopy_node *h,
                                      uint32_t live, int32_t *perm) {
    int32_t lane_perm[CANOPY_MAX_CHILDREN];
    uint32_t wants[CANOPY_MAX_CHILDREN] = {0}; /* lanes that want child c first */
    for (uint32_t m = live; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        app->order(ctx, states + (size_t)l * stride, t, node, lane_perm);
        wants[lane_perm[0]] |= 1u << l;
    }
    int32_t best = 0;
    for (int32_t c = 1; c < h->nchild; c++)
        if (__builtin_popcount(wants[c]) > __builtin_popcount(wants[best])) best = c;
    app->order(ctx, states + (size_t)__builtin_ctz(wants[best]) * stride, t, node, perm);
}

/* The lanes of `mask` that go on below node; per lane or as one vector call. */
CANOPY_ENGINE uint32_t canopy_simd_l_truncate(const canopy_app *app, const canopy_lane_app *lanes,
                                              const void *ctx, unsigned char *states, size_t stride,
                                              const canopy_tree_view *t, int32_t node,
                                              uint32_t mask, int64_t *calls) {
    if (lanes) return lanes->truncate(ctx, states, t, node, mask);
    uint32_t live = 0;
    for (uint32_t m = mask; m; m &= m - 1) {
        int l = __builtin_ctz(m);
        if (!app->truncate(ctx, states + (size_t)l * stride, t, node)) live |= 1u << l;
    }
    *calls += __builtin_popcount(mask);
    return live;
}

CANOPY_ENGINE void canopy_simd_l_visit(const canopy_app *app, const canopy_lane_app *lanes,
                                       const void *ctx, unsigned char *states, size_t stride,
                                       const canopy_tree_view *t, int32_t node, uint32_t live,
                                       int64_t *calls) {
    if (lanes) {
        lanes->visit_leaf(ctx, states, t, node, live);
        return;
    }
    for (uint32_t m = live; m; m &= m - 1)
        app->visit_leaf(ctx, states + (size_t)__builtin_ctz(m) * stride, t, node);
    *calls += __builtin_popcount(live);
}

/* Runs one packet of `nl` queries (nl <= width), order[base, base + nl). `states`:
 * per-lane states (stride apart) or, with vector hooks, the packet's lane state. */
CANOPY_ENGINE void canopy_simd_l_packet(const canopy_app *app, const canopy_lane_app *lanes,
                                        const canopy_trav_job *job, canopy_lane_entry *stack,
                                        unsigned char *states, int64_t base, int nl, int width,
                                        canopy_trav_counters *cnt) {
    const canopy_tree_view *t = job->tree;
    const void *ctx = job->ctx;
    const size_t stride = canopy_simd_l_state_stride(app);
    int32_t active[CANOPY_SIMD_L_MAX_WIDTH] = {0};
    int64_t q[CANOPY_SIMD_L_MAX_WIDTH];
    int32_t perm[CANOPY_MAX_CHILDREN];
    int64_t calls = 0;
    const uint32_t all = (uint32_t)((1u << nl) - 1);
    for (int l = 0; l < nl; l++) q[l] = job->order ? job->order[base + l] : base + l;
    if (lanes)
        lanes->init(ctx, states, t, q, all);
    else
        for (int l = 0; l < nl; l++) app->init(ctx, states + (size_t)l * stride, q[l]);
    int64_t popped = 0;
    int32_t sp = 0;
    stack[sp++] = (canopy_lane_entry){0, all};
    while (sp > 0) {
        canopy_lane_entry e = stack[--sp];
        popped++;
        /* A fixed-width lane loop: the vectorisable part of the bookkeeping. */
        for (int l = 0; l < width; l++) active[l] += (int32_t)((e.mask >> l) & 1u);
        uint32_t live =
            canopy_simd_l_truncate(app, lanes, ctx, states, stride, t, e.node, e.mask, &calls);
        if (!live) continue;
        const canopy_node *h = canopy_tv_node(t, e.node);
        if (h->child < 0) {
            canopy_simd_l_visit(app, lanes, ctx, states, stride, t, e.node, live, &calls);
            continue;
        }
        if (!app->guided) {
            canopy_order_flip(perm, h->nchild, 0);
        } else if (lanes) {
            lanes->order(ctx, states, t, e.node, live, perm);
        } else {
            canopy_simd_l_vote(app, ctx, states, stride, t, e.node, h, live, perm);
            calls += __builtin_popcount(live) + 1;
        }
        for (int32_t c = h->nchild - 1; c >= 0; c--)
            stack[sp++] = (canopy_lane_entry){h->child + perm[c], live};
    }
    int64_t tests = 0;
    int32_t longest = 0;
    for (int l = 0; l < width; l++) {
        tests += active[l];
        longest = active[l] > longest ? active[l] : longest;
    }
    if (lanes)
        lanes->finish(ctx, states, q, all);
    else
        for (int l = 0; l < nl; l++) app->finish(ctx, states + (size_t)l * stride, q[l]);
    cnt->nodes += tests;
    cnt->group_nodes += popped;
    cnt->group_longest += longest;
    cnt->groups++;
    cnt->lane_calls += calls;
}

/* `width` is a constant of each ISA's runner (8 or 16); lanes NULL: per-lane hooks. */
CANOPY_ENGINE void canopy_cpu_simd_l_lanes(const canopy_app *app, const canopy_lane_app *lanes,
                                           const canopy_trav_job *job, canopy_cpu_team *team,
                                           canopy_trav_counters *cnt, int width) {
    unsigned char *scratch = (unsigned char *)canopy_cpu_team_scratch(team);
    canopy_lane_entry *stack = (canopy_lane_entry *)scratch;
    _Alignas(64) unsigned char own[CANOPY_SIMD_L_MAX_WIDTH * CANOPY_MAX_STATE];
    unsigned char *states = lanes ? scratch + canopy_simd_l_stack_bytes(job) : own;
    int64_t packets = (job->nq + width - 1) / width;
#pragma omp for schedule(dynamic, 4)
    for (int64_t p = 0; p < packets; p++) {
        int64_t base = p * width;
        int nl = job->nq - base < width ? (int)(job->nq - base) : width;
        canopy_simd_l_packet(app, lanes, job, stack, states, base, nl, width, cnt);
    }
}

CANOPY_ENGINE void canopy_cpu_simd_l(const canopy_app *app, const canopy_trav_job *job,
                                     canopy_cpu_team *team, canopy_trav_counters *cnt, int width) {
    canopy_cpu_simd_l_lanes(app, NULL, job, team, cnt, width);
}
/* -------------------------------------------------------- instantiation -- */

/* The body of a runner: plan, team, one call of ENGINE_CALL per thread (it sees
 * `team` and its private counters `mine`), counters summed into *cnt. */
#define CANOPY_CPU_RUNNER_BODY(APP, PLAN, ENGINE_CALL)                                             \
    canopy_cpu_team team = {0, 0, NULL, 0};                                                        \
    canopy_status s = PLAN(APP, job, &team);                                                       \
    if (!s) s = canopy_cpu_team_begin(&team, job);                                                 \
    if (s) return s;                                                                               \
    int64_t s_n = 0, s_gn = 0, s_gl = 0, s_g = 0, s_c = 0;                                         \
    int s_t = 0;                                                                                   \
    _Pragma("omp parallel num_threads(team.threads) reduction(+ : s_n, s_gn, s_gl, s_g, s_c)") {   \
        canopy_trav_counters mine = {0};                                                           \
        if (omp_get_thread_num() == 0) s_t = omp_get_num_threads(); /* shared: one writer */       \
        ENGINE_CALL;                                                                               \
        s_n += mine.nodes;                                                                         \
        s_gn += mine.group_nodes;                                                                  \
        s_gl += mine.group_longest;                                                                \
        s_g += mine.groups;                                                                        \
        s_c += mine.lane_calls;                                                                    \
    }                                                                                              \
    canopy_cpu_team_end(&team);                                                                    \
    cnt->nodes += s_n;                                                                             \
    cnt->group_nodes += s_gn;                                                                      \
    cnt->group_longest += s_gl;                                                                    \
    cnt->groups += s_g;                                                                            \
    cnt->lane_calls += s_c;                                                                        \
    if (s_t > cnt->threads) cnt->threads = s_t;                                                    \
    return CANOPY_OK;

#define CANOPY_CPU_RUNNER(NAME, APP, VARIANT, ENGINE)                                              \
    static canopy_status NAME##_cpu_##VARIANT(const canopy_trav_job *job,                          \
                                              canopy_trav_counters *cnt) {                         \
        CANOPY_CPU_RUNNER_BODY(APP, ENGINE##_plan, ENGINE(APP, job, &team, &mine))                 \
    }

#if defined(__x86_64__) || defined(__i386__)
#define CANOPY_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define CANOPY_TARGET_AVX2 __attribute__((target("avx2,fma")))
#else /* canopy_cpu_isa() never picks them elsewhere */
#define CANOPY_TARGET_AVX512
#define CANOPY_TARGET_AVX2
#endif

/* An engine with SIMD packets (ENGINE takes the packet width last): one runner per
 * ISA, each compiled with that ISA's target attribute (the descriptor, compiled for
 * the default target, inlines into each since its ISA is a subset), chosen at run
 * time by canopy_cpu_isa(). */
#define CANOPY_CPU_RUNNER_ISA1(NAME, APP, VARIANT, ENGINE, ISA, TARGET, WIDTH)                     \
    TARGET static canopy_status NAME##_cpu_##VARIANT##_##ISA(const canopy_trav_job *job,           \
                                                             canopy_trav_counters *cnt) {          \
        CANOPY_CPU_RUNNER_BODY(APP, ENGINE##_plan, ENGINE(APP, job, &team, &mine, WIDTH))          \
    }

#define CANOPY_CPU_RUNNER_ISA(NAME, APP, VARIANT, ENGINE)                                          \
    CANOPY_CPU_RUNNER_ISA1(NAME, APP, VARIANT, ENGINE, avx512, CANOPY_TARGET_AVX512, 16)           \
    CANOPY_CPU_RUNNER_ISA1(NAME, APP, VARIANT, ENGINE, avx2, CANOPY_TARGET_AVX2, 8)                \
    CANOPY_CPU_RUNNER_ISA1(NAME, APP, VARIANT, ENGINE, generic, , 8)                               \
    static canopy_status NAME##_cpu_##VARIANT(const canopy_trav_job *job,                          \
                                              canopy_trav_counters *cnt) {                         \
        switch (canopy_cpu_isa()) {                                                                \
        case CANOPY_ISA_AVX512:                                                                    \
            return NAME##_cpu_##VARIANT##_avx512(job, cnt);                                        \
        case CANOPY_ISA_AVX2:                                                                      \
            return NAME##_cpu_##VARIANT##_avx2(job, cnt);                                          \
        default:                                                                                   \
            return NAME##_cpu_##VARIANT##_generic(job, cnt);                                       \
        }                                                                                          \
    }

/* Defines NAME_cpu_runners[CANOPY_VARIANT_COUNT] for descriptor APP (a pointer to a
 * static const canopy_app); GPU-only variants are NULL. */
#define CANOPY_CPU_INSTANTIATE(NAME, APP)                                                          \
    CANOPY_CPU_RUNNER_ISA(NAME, APP, simd_l, canopy_cpu_simd_l)                                    \
    CANOPY_CPU_INSTANTIATE_WITH(NAME, APP, NAME##_cpu_simd_l)

#define CANOPY_CPU_INSTANTIATE_WITH(NAME, APP, SIMD_L)                                             \
    CANOPY_CPU_RUNNER(NAME, APP, rec, canopy_cpu_rec)                                              \
    CANOPY_CPU_RUNNER(NAME, APP, dr, canopy_cpu_dr)                                                \
    CANOPY_CPU_RUNNER(NAME, APP, sr, canopy_cpu_sr)                                                \
    CANOPY_CPU_RUNNER(NAME, APP, gdr, canopy_cpu_gdr)                                              \
    static const canopy_cpu_runner NAME##_cpu_runners[CANOPY_VARIANT_COUNT] = {                    \
        [CANOPY_VARIANT_REC] = NAME##_cpu_rec, [CANOPY_VARIANT_DR] = NAME##_cpu_dr,                \
        [CANOPY_VARIANT_SR] = NAME##_cpu_sr,   [CANOPY_VARIANT_GDR] = NAME##_cpu_gdr,              \
        [CANOPY_VARIANT_SIMD_L] = SIMD_L,                                                          \
    };

/* Vector hooks. In each lane width's translation unit (compiled with that ISA's flags,
 * SIMT_W and CANOPY_LANES_ISA = avx512, avx2 or generic defined, canopy/simt.h
 * included; gcc lowers generic vectors before it inlines into a wider-target caller,
 * so a target attribute would not do):
 *     CANOPY_SIMD_L_LANES(my, &my_app, &my_lanes)
 * defines the runner canopy_simd_l_my_<isa>; the descriptor's own file then says
 *     CANOPY_CPU_INSTANTIATE_LANES(my, &my_app)
 * instead of CANOPY_CPU_INSTANTIATE, and sets my_app.lane_hooks = 1. */
#define CANOPY_SIMD_L_LANES(NAME, APP, LANES)                                                      \
    CANOPY_SIMD_L_LANES1(NAME, APP, LANES, CANOPY_LANES_ISA)
#define CANOPY_SIMD_L_LANES1(NAME, APP, LANES, ISA) CANOPY_SIMD_L_LANES2(NAME, APP, LANES, ISA)
#define CANOPY_SIMD_L_LANES2(NAME, APP, LANES, ISA)                                                \
    static canopy_status NAME##_simd_l_plan_##ISA(                                                 \
        const canopy_app *app, const canopy_trav_job *job, canopy_cpu_team *team) {                \
        return canopy_cpu_simd_l_plan_lanes(app, LANES, job, team);                                \
    }                                                                                              \
    canopy_status canopy_simd_l_##NAME##_##ISA(const canopy_trav_job *job,                         \
                                               canopy_trav_counters *cnt);                         \
    canopy_status canopy_simd_l_##NAME##_##ISA(const canopy_trav_job *job,                         \
                                               canopy_trav_counters *cnt) {                        \
        CANOPY_CPU_RUNNER_BODY(APP, NAME##_simd_l_plan_##ISA,                                      \
                               canopy_cpu_simd_l_lanes(APP, LANES, job, &team, &mine, SIMT_W))     \
    }

#define CANOPY_CPU_INSTANTIATE_LANES(NAME, APP)                                                    \
    canopy_status canopy_simd_l_##NAME##_avx512(const canopy_trav_job *job,                        \
                                                canopy_trav_counters *cnt);                        \
    canopy_status canopy_simd_l_##NAME##_avx2(const canopy_trav_job *job,                          \
                                              canopy_trav_counters *cnt);                          \
    canopy_status canopy_simd_l_##NAME##_generic(const canopy_trav_job *job,                       \
                                                 canopy_trav_counters *cnt);                       \
    static canopy_status NAME##_cpu_simd_l(const canopy_trav_job *job,                             \
                                           canopy_trav_counters *cnt) {                            \
        switch (canopy_cpu_isa()) {                                                                \
        case CANOPY_ISA_AVX512:                                                                    \
            return canopy_simd_l_##NAME##_avx512(job, cnt);                                        \
        case CANOPY_ISA_AVX2:                                                                      \
            return canopy_simd_l_##NAME##_avx2(job, cnt);                                          \
        default:                                                                                   \
            return canopy_simd_l_##NAME##_generic(job, cnt);                                       \
        }                                                                                          \
    }                                                                                              \
    CANOPY_CPU_INSTANTIATE_WITH(NAME, APP, NAME##_cpu_simd_l)

#endif
