#include "traverse/run.h"

#include "core/device.h"

#include <stdio.h>
#include <string.h>

canopy_status canopy_build_for(canopy_points ref, canopy_tree_kind kind, int32_t leaf_size,
                               const float *weights, canopy_tree **tree, canopy_stats *stats) {
    canopy_tree_options to = canopy_tree_options_default(kind);
    to.leaf_size = leaf_size;
    to.weights = weights;
    canopy_status s = canopy_tree_build(ref, &to, tree);
    if (s) return s;
    if (stats) {
        stats->build_seconds = (*tree)->build_seconds;
        stats->tree = kind;
        stats->tree_nodes = (*tree)->view.n_nodes;
        stats->tree_depth = (*tree)->view.depth;
    }
    return CANOPY_OK;
}

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

/* Smallest query count for which backend auto moves work to the GPU: below it the
 * tree upload and launch cost more than the traversal. */
enum { GPU_AUTO_MIN_QUERIES = 20000 };

/* Fixed defaults until the inspector (auto-selection) exists: the GPU when present
 * and the job is large or the variant only runs there; lockstep fsm_l on the GPU and
 * autoropes on the CPU; tree order for large query sets, where locality between
 * consecutive queries pays for the sort. */
static canopy_status resolve_auto(const canopy_traversal *tr, canopy_backend *b, canopy_variant *v,
                                  canopy_schedule *s, char *note, size_t note_len) {
    const char *bwhy = "", *vwhy = "", *swhy = "";
    int have_gpu = tr->gpu && canopy_gpu_usable();
    if (*b == CANOPY_BACKEND_AUTO) {
        if (gpu_only(*v)) {
            *b = CANOPY_BACKEND_GPU;
            bwhy = "backend gpu (the variant runs only there)";
        } else if (*v == CANOPY_VARIANT_SIMD_L || !have_gpu) {
            *b = CANOPY_BACKEND_CPU;
            bwhy = have_gpu ? "backend cpu (simd_l is a CPU variant)" : "backend cpu (no GPU)";
        } else {
            *b = tr->nq >= GPU_AUTO_MIN_QUERIES ? CANOPY_BACKEND_GPU : CANOPY_BACKEND_CPU;
            bwhy = *b == CANOPY_BACKEND_GPU ? "backend gpu (>= 20000 queries)"
                                            : "backend cpu (< 20000 queries)";
        }
    }
    if (*b == CANOPY_BACKEND_GPU && !tr->gpu)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: this build of canopy has no CUDA backend",
                           tr->name);
    if (*b == CANOPY_BACKEND_GPU && !canopy_gpu_usable())
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: no usable CUDA device", tr->name);
    if (*v == CANOPY_VARIANT_AUTO) {
        *v = *b == CANOPY_BACKEND_GPU ? CANOPY_VARIANT_FSM_L : CANOPY_VARIANT_DR;
        vwhy = *b == CANOPY_BACKEND_GPU ? "variant fsm_l (default on the GPU)"
                                        : "variant dr (default on the CPU)";
    }
    if (*s == CANOPY_SCHEDULE_AUTO) {
        *s = tr->nq >= 4096 ? CANOPY_SCHEDULE_TREE : CANOPY_SCHEDULE_NONE;
        swhy = tr->nq >= 4096 ? "schedule tree (>= 4096 queries)" : "schedule none (few queries)";
    }
    snprintf(note, note_len, "%s%s%s%s%s", bwhy, *bwhy && *vwhy ? "; " : "", vwhy,
             (*bwhy || *vwhy) && *swhy ? "; " : "", swhy);
    return CANOPY_OK;
}

canopy_status canopy_traverse_run(const canopy_traversal *tr, const canopy_tree *tree,
                                  const canopy_run_options *opt, canopy_stats *stats) {
    canopy_variant v = opt->variant;
    canopy_schedule sch = opt->schedule;
    canopy_backend b = opt->backend;
    char note[256] = "";
    canopy_status s = resolve_auto(tr, &b, &v, &sch, note, sizeof note);
    if (s) return s;
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
    double t0 = canopy_now();
    if (sch != CANOPY_SCHEDULE_NONE && tr->nq > 0) {
        s = canopy_alloc((void **)&order, (size_t)tr->nq, sizeof *order);
        if (!s) s = canopy_schedule_queries(sch, tr->queries, &tree->view, order);
        if (s) {
            canopy_free(order);
            return s;
        }
    }
    double t1 = canopy_now();
    canopy_trav_counters cnt;
    memset(&cnt, 0, sizeof cnt);
    double transfer = 0.0, traverse;
    if (b == CANOPY_BACKEND_GPU) {
        canopy_gpu_report rep;
        memset(&rep, 0, sizeof rep);
        s = tr->gpu(tr->ctx, &tree->view, order, tr->nq, v, &rep);
        cnt = rep.counters;
        transfer = rep.transfer_seconds;
        traverse = rep.traverse_seconds;
    } else {
        canopy_trav_job job = {tr->ctx, &tree->view, order, tr->nq};
        s = tr->cpu[v](&job, &cnt);
        traverse = canopy_now() - t1;
    }
    canopy_free(order);
    if (s) return s;
    if (stats) {
        stats->schedule_seconds = t1 - t0;
        stats->transfer_seconds = transfer;
        stats->traverse_seconds = traverse;
        stats->queries = tr->nq;
        stats->nodes_per_query = tr->nq ? (double)cnt.nodes / (double)tr->nq : 0.0;
        stats->work_expansion =
            cnt.group_longest ? (double)cnt.group_nodes / (double)cnt.group_longest : 0.0;
        stats->variant = v;
        stats->schedule = sch;
        stats->backend = b;
        snprintf(stats->note, sizeof stats->note, "%s", note);
    }
    return CANOPY_OK;
}
