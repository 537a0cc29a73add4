/* SPDX-License-Identifier: MIT */
#include "traverse/run.h"

#include "core/device.h"
#include "traverse/inspect.h"
#include "tree/tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

canopy_status canopy_variant_check(const canopy_app *app, canopy_variant v) {
    if (v == CANOPY_VARIANT_SR && app->guided)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: variant sr (static ropes) needs an unguided traversal; %s "
                           "chooses its child order per query (use dr, gdr or rec)",
                           app->name, app->name);
    if (v == CANOPY_VARIANT_SIMD_L && app->guided && !app->orders_equivalent)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: variant simd_l: lockstep needs semantically equivalent orders; "
                           "%s's child order per query changes its result (use dr, gdr or rec)",
                           app->name, app->name);
    return CANOPY_OK;
}

static int gpu_only(canopy_variant v) {
    return v == CANOPY_VARIANT_DR_L || v == CANOPY_VARIANT_SR_L || v == CANOPY_VARIANT_FSM_L;
}

/* Below SCHEDULE_MIN_QUERIES only simd_l sorts: its packets pay for a Morton sort from
 * LANES_MIN_QUERIES on (bench/results/edges.md, small calls). */
enum { SCHEDULE_MIN_QUERIES = 4096, LANES_MIN_QUERIES = 128 };

/* Auto's thresholds, calibrated on the suite of bench/run_scheduling.sh (H100 and its
 * 16-core host; bench/results/scheduling.md): a sample coherence at or above
 * COHERENT means the caller's order is already as good as a sorted one; unguided GPU
 * work (queries x nodes per query) at or above HYBRID_MIN_WORK pays for lockstep on
 * the hybrid schedule (rand1m3 9e8, plummer1m 3e9), below it the unsorted ropes
 * kernel wins (rand7 radius 2.3e8); on the CPU, sorting pays for traversals of at
 * least CPU_SORT_MIN_NODES nodes (rand7: 200-1200 yes, clust2: 30-70 no). */
#define COHERENT 0.5
#define HYBRID_MIN_WORK 5e8
#define CPU_SORT_MIN_NODES 150.0

static int is_lockstep(canopy_variant v) {
    return v == CANOPY_VARIANT_SIMD_L || gpu_only(v);
}

static void add_note(char *note, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_note(char *note, size_t len, const char *fmt, ...) {
    size_t used = strlen(note);
    if (used + 3 >= len) return;
    if (used) {
        strcpy(note + used, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note + used, len - used, fmt, ap);
    va_end(ap);
}

/* Resolves the auto choices. The backend follows the job size; variant and schedule
 * follow a sample of the queries when either is auto (docs/variants.md):
 *   GPU, guided: gdr unsorted, no sample (sorting does not pay for itself there), or
 *     dr where the runner has its own kernel for it (kNN's kd walk: 1.5-3x gdr, H100);
 *   GPU, unguided: dr_l when the sampled work is large, in the caller's order when
 *     that is coherent, else on the hybrid schedule; when work is small sr unsorted,
 *     or dr where the runner has its own kernel (radius's kd walk: 1.8x sr, H100);
 *   CPU: simd_l for descriptors with vector hooks (lane_hooks) when there are enough
 *     queries to sort, else dr for guided, sr for unguided traversals; simd_l on fewer
 *     than SCHEDULE_MIN_QUERIES runs on Morton order unsampled; otherwise, when the
 *     caller's order is incoherent and traversals are long or run simd_l, tree order
 *     for long traversals, Morton order for short ones.
 * A variant given explicitly keeps auto's schedule consistent with it: lockstep
 * needs a coherent order, the GPU's non-lockstep kernels run unsorted. */
static canopy_status resolve_auto(const canopy_traversal *tr, const canopy_tree *tree,
                                  canopy_backend *b, canopy_variant *v, canopy_schedule *s,
                                  double *job_work, char *note, size_t note_len) {
    if (*b == CANOPY_BACKEND_AUTO) {
        /* the GPU is probed last: a run that lands on the CPU never loads CUDA */
        if (gpu_only(*v)) {
            *b = CANOPY_BACKEND_GPU;
            add_note(note, note_len, "backend gpu (the variant runs only there)");
        } else if (*v == CANOPY_VARIANT_SIMD_L || !tr->gpu) {
            *b = CANOPY_BACKEND_CPU;
            add_note(note, note_len, "%s",
                     tr->gpu ? "backend cpu (simd_l is a CPU variant)"
                             : "backend cpu (no GPU runner)");
        } else if (tr->nq < CANOPY_GPU_AUTO_MIN_QUERIES) {
            *b = CANOPY_BACKEND_CPU;
            add_note(note, note_len, "backend cpu (< %d queries)", CANOPY_GPU_AUTO_MIN_QUERIES);
        } else if (!canopy_gpu_usable()) {
            *b = CANOPY_BACKEND_CPU;
            add_note(note, note_len, "backend cpu (no GPU)");
        } else {
            *b = CANOPY_BACKEND_GPU;
            add_note(note, note_len, "backend gpu (>= %d queries)", CANOPY_GPU_AUTO_MIN_QUERIES);
        }
    }
    if (*b == CANOPY_BACKEND_GPU && !tr->gpu)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: this traversal has no GPU runner",
                           tr->name);
    if (*b == CANOPY_BACKEND_GPU && !canopy_gpu_usable())
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: %s", tr->name, canopy_gpu_why_not());
    if (*v != CANOPY_VARIANT_AUTO && *s != CANOPY_SCHEDULE_AUTO) return CANOPY_OK;
    int gpu = *b == CANOPY_BACKEND_GPU, guided = tr->app->guided;
    /* the GPU runner's own dr kernel for this tree (kNN's and radius's kd walk) */
    int own_dr =
        gpu && tr->gpu_own_kernel && tr->gpu_own_kernel(tr->ctx, &tree->view, CANOPY_VARIANT_DR);
    if (gpu && guided && (*v == CANOPY_VARIANT_AUTO || !is_lockstep(*v))) {
        /* the choice does not depend on the queries: skip the sample's cost */
        if (*v == CANOPY_VARIANT_AUTO) *v = own_dr ? CANOPY_VARIANT_DR : CANOPY_VARIANT_GDR;
        if (*s == CANOPY_SCHEDULE_AUTO) *s = CANOPY_SCHEDULE_NONE;
        add_note(note, note_len,
                 "variant %s, schedule %s (guided traversal on the GPU: %s, unsorted)",
                 canopy_variant_name(*v), canopy_schedule_name(*s),
                 own_dr ? "the runner's own kernel" : "non-lockstep");
        return CANOPY_OK;
    }

    canopy_sample smp;
    memset(&smp, 0, sizeof smp);
    double t0 = canopy_now();
    canopy_status st = canopy_inspect_work(tr->app, tr->ctx, &tree->view, tr->nq, &smp);
    if (st) return st;
    double work = (double)tr->nq * smp.nodes_per_query;
    *job_work = work;
    /* whether sorting can pay: GPU lockstep on large work, CPU on long traversals */
    int big = gpu ? work >= HYBRID_MIN_WORK : smp.nodes_per_query >= CPU_SORT_MIN_NODES;
    /* simd_l with vector hooks, on queries it may sort, beat dr and sr on one core on
     * every workload of bench/results/simt.md, short traversals included */
    int lanes =
        !gpu && tr->app->lane_hooks && tr->nq >= LANES_MIN_QUERIES && *s != CANOPY_SCHEDULE_NONE;
    if (*v == CANOPY_VARIANT_AUTO) {
        *v = gpu     ? (big      ? CANOPY_VARIANT_DR_L
                        : own_dr ? CANOPY_VARIANT_DR
                                 : CANOPY_VARIANT_SR)
             : lanes ? CANOPY_VARIANT_SIMD_L
                     : (guided ? CANOPY_VARIANT_DR : CANOPY_VARIANT_SR);
        add_note(note, note_len, "variant %s%s", canopy_variant_name(*v),
                 lanes ? " (vector hooks; its packets need a coherent order)" : "");
    }
    /* CPU lockstep needs alike queries in a packet whatever the traversal length */
    int sortable = *v == CANOPY_VARIANT_SIMD_L
                       ? tr->nq >= LANES_MIN_QUERIES
                       : tr->nq >= SCHEDULE_MIN_QUERIES && (gpu ? is_lockstep(*v) : big);
    /* the coherence sample walks 512 queries: on fewer than SCHEDULE_MIN_QUERIES it costs
     * more than the Morton sort it might save */
    int few = tr->nq < SCHEDULE_MIN_QUERIES;
    if (*s == CANOPY_SCHEDULE_AUTO && sortable && !few &&
        (st = canopy_inspect_coherence(tr->app, tr->ctx, &tree->view, tr->nq, &smp)))
        return st;
    int coherent = smp.windows > 0 && smp.coherence >= COHERENT;
    if (*s == CANOPY_SCHEDULE_AUTO) {
        const char *why;
        if (!sortable) {
            *s = CANOPY_SCHEDULE_NONE;
            why = tr->nq < SCHEDULE_MIN_QUERIES ? "few queries"
                  : gpu ? "a non-lockstep GPU kernel: sorting costs more than it saves"
                        : "short traversals: sorting costs more than it saves";
        } else if (few) {
            *s = CANOPY_SCHEDULE_MORTON;
            why = "lockstep on few queries: sorted without sampling the caller's order";
        } else if (coherent) {
            *s = CANOPY_SCHEDULE_NONE;
            why = "the caller's order is coherent";
        } else {
            /* the tree order walks every query to a leaf, dependent loads that cost as much
             * as a short traversal: Morton keys sort those (city2 NN on one core: 285 ms
             * tree sort, 40 ms Morton, same traversal; rand7 kNN: tree order 10 % faster) */
            *s = gpu ? CANOPY_SCHEDULE_HYBRID : big ? CANOPY_SCHEDULE_TREE : CANOPY_SCHEDULE_MORTON;
            why = gpu ? "lockstep on an incoherent order: profile and sort on the device"
                  : *v == CANOPY_VARIANT_SIMD_L
                      ? "lockstep on an incoherent order: a packet's lanes walk alike once sorted"
                      : "incoherent order: neighbouring queries share cache lines once sorted";
        }
        add_note(note, note_len, "schedule %s (%s)", canopy_schedule_name(*s), why);
    }
    add_note(note, note_len,
             "sample: %lld queries walked, %.1f nodes/query, work %.3g node tests (%s >= %.3g)",
             (long long)smp.queries, smp.nodes_per_query, work,
             gpu ? "GPU lockstep + hybrid when work" : "CPU sorts when nodes/query",
             gpu ? HYBRID_MIN_WORK : CPU_SORT_MIN_NODES);
    if (smp.windows)
        add_note(note, note_len, "coherence %.2f over %lld windows of 32 (sorted >= %.2f)",
                 smp.coherence, (long long)smp.windows, COHERENT);
    add_note(note, note_len, "auto took %.2f ms", (canopy_now() - t0) * 1e3);
    return CANOPY_OK;
}

/* Orders the queries on the host (every schedule but a GPU hybrid one). */
static canopy_status host_schedule(const canopy_traversal *tr, const canopy_tree *tree,
                                   canopy_schedule sch, int32_t profile_depth, int64_t **order,
                                   canopy_profile_info *info) {
    *order = NULL;
    if (sch == CANOPY_SCHEDULE_NONE || tr->nq == 0) return CANOPY_OK;
    canopy_status s = canopy_alloc((void **)order, (size_t)tr->nq, sizeof **order);
    if (s) return s;
    if (sch == CANOPY_SCHEDULE_HYBRID)
        s = canopy_schedule_hybrid(tr->app, tr->ctx, &tree->view, profile_depth, tr->nq, *order,
                                   info);
    else
        s = canopy_schedule_queries(sch, tr->queries, &tree->view, *order);
    if (s) {
        canopy_free(*order);
        *order = NULL;
    }
    return s;
}

const canopy_tree_view *canopy_tree_get_view(const canopy_tree *t) {
    return t ? &t->view : NULL;
}

/* A user's traversal comes through the public API: say what is wrong with it. */
static canopy_status check_traversal(const canopy_tree *tree, const canopy_traversal *tr,
                                     canopy_schedule sch) {
    if (!tree || !tr || !tr->app || !tr->cpu)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "traverse: tree, traversal, its descriptor and its CPU runners are "
                           "required");
    const canopy_app *a = tr->app;
    const char *name = tr->name ? tr->name : "traverse";
    if (!a->init || !a->truncate || !a->visit_leaf || !a->finish || (a->guided && !a->order))
        return canopy_fail(
            CANOPY_ERR_INVALID,
            "%s: the descriptor lacks init, truncate, visit_leaf, finish or (guided) "
            "order",
            name);
    if (a->state_size > CANOPY_MAX_STATE)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: state of %zu bytes exceeds CANOPY_MAX_STATE (%d)", name,
                           a->state_size, (int)CANOPY_MAX_STATE);
    if (tr->nq < 0) return canopy_fail(CANOPY_ERR_INVALID, "%s: negative query count", name);
    int spatial = sch == CANOPY_SCHEDULE_MORTON || sch == CANOPY_SCHEDULE_HILBERT ||
                  sch == CANOPY_SCHEDULE_TREE;
    if (tr->queries.data && tr->queries.n != tr->nq)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: %lld query positions for %lld queries", name,
                           (long long)tr->queries.n, (long long)tr->nq);
    if (spatial && tr->nq > 0 && !tr->queries.data)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: schedule %s needs the query positions (traversal.queries)", name,
                           canopy_schedule_name(sch));
    if (spatial && tr->queries.data && tr->queries.d != tree->view.d)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: query positions have %d dimensions but the tree has %d", name,
                           (int)tr->queries.d, (int)tree->view.d);
    return CANOPY_OK;
}

canopy_status canopy_traverse(const canopy_tree *tree, const canopy_traversal *tr,
                              const canopy_run_options *opts, canopy_stats *stats) {
    canopy_run_options o = opts ? *opts : canopy_run_options_default();
    const canopy_run_options *opt = &o;
    canopy_variant v = opt->variant;
    canopy_schedule sch = opt->schedule;
    canopy_backend b = opt->backend;
    canopy_status s = check_traversal(tree, tr, sch);
    if (s) return s;
    char note[sizeof stats->note] = "";
    double t0 = canopy_now();
    double work = 0.0; /* the sample's estimate, when auto takes one */
    if ((s = resolve_auto(tr, tree, &b, &v, &sch, &work, note, sizeof note))) return s;
    if ((s = check_traversal(tree, tr, sch))) return s;
    if ((unsigned)v >= CANOPY_VARIANT_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: unknown variant %d", tr->name, (int)v);
    if (b == CANOPY_BACKEND_CPU && !tr->cpu[v])
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: variant %s runs only on the GPU (use --backend gpu)", tr->name,
                           canopy_variant_name(v));
    if (b == CANOPY_BACKEND_GPU && v == CANOPY_VARIANT_SIMD_L)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: variant simd_l runs only on the CPU (on the GPU use dr_l, sr_l "
                           "or fsm_l)",
                           tr->name);
    if ((s = canopy_variant_check(tr->app, v))) return s;

    int64_t *order = NULL;
    canopy_profile_info prof;
    memset(&prof, 0, sizeof prof);
    canopy_profile_plan plan;
    memset(&plan, 0, sizeof plan);
    int device_hybrid = b == CANOPY_BACKEND_GPU && sch == CANOPY_SCHEDULE_HYBRID;
    if (device_hybrid) {
        s = canopy_profile_plan_make(&tree->view, tr->app->guided, opt->profile_depth, &plan);
        prof.depth = plan.depth;
        prof.n_cols = plan.n_cols;
    } else {
        s = host_schedule(tr, tree, sch, opt->profile_depth, &order, &prof);
    }
    if (s) return s;
    double t1 = canopy_now();
    canopy_trav_counters cnt;
    memset(&cnt, 0, sizeof cnt);
    double transfer = 0.0, traverse, device_schedule = 0.0;
    if (b == CANOPY_BACKEND_GPU) {
        canopy_gpu_report rep;
        memset(&rep, 0, sizeof rep);
        rep.device_tree = tree->device;
        s = tr->gpu(tr->ctx, &tree->view, order, tr->nq, v, device_hybrid ? &plan : NULL, &rep);
        canopy_profile_plan_free(&plan);
        cnt = rep.counters;
        transfer = rep.transfer_seconds;
        if (stats) {
            stats->tree_upload_bytes = rep.tree_upload_bytes;
            stats->tree_upload_seconds = rep.tree_upload_seconds;
            stats->device_tree_reused = rep.device_tree != NULL;
        }
        traverse = rep.traverse_seconds;
        device_schedule = rep.schedule_seconds;
    } else {
        canopy_trav_job job = {tr->ctx, &tree->view, order, tr->nq, work};
        s = tr->cpu[v](&job, &cnt);
        traverse = canopy_now() - t1;
    }
    canopy_free(order);
    if (s) return s;
    if (stats) {
        stats->schedule_seconds = t1 - t0 + device_schedule; /* auto's sample included */
        stats->transfer_seconds = transfer;
        stats->traverse_seconds = traverse;
        stats->queries = tr->nq;
        stats->nodes_per_query = tr->nq ? (double)cnt.nodes / (double)tr->nq : 0.0;
        stats->work_expansion =
            cnt.group_longest ? (double)cnt.group_nodes / (double)cnt.group_longest : 0.0;
        stats->nodes_per_group = cnt.groups ? (double)cnt.group_nodes / (double)cnt.groups : 0.0;
        stats->lane_calls = cnt.lane_calls;
        stats->threads = cnt.threads;
        stats->profile_depth = prof.depth;
        stats->profile_leaves = prof.n_cols;
        stats->variant = v;
        stats->schedule = sch;
        stats->backend = b;
        snprintf(stats->note, sizeof stats->note, "%s", note);
    }
    return CANOPY_OK;
}
