/* SPDX-License-Identifier: MIT */
/* canopy_pair_traverse: resolves backend and variant of a pair walk (canopy/pair.h),
 * runs the descriptor's engine and fills the statistics. */
#include "canopy/pair.h"

#include "core/device.h"
#include "tree/tree.h"

#include <stdio.h>
#include <string.h>

static canopy_status resolve(const canopy_pair_traversal *tr, const canopy_tree *ta,
                             canopy_backend *b, canopy_variant *v, char *note, size_t len) {
    if (*b == CANOPY_BACKEND_AUTO) {
        /* the size test first: a small walk never starts CUDA */
        const char *why = "small trees or variant rec";
        int gpu = 0;
        if (ta->view.n >= CANOPY_PAIR_GPU_AUTO_MIN_POINTS && *v != CANOPY_VARIANT_REC) {
            why = !tr->gpu ? "no GPU runner" : "no usable GPU";
            gpu = tr->gpu && canopy_gpu_usable();
        }
        *b = gpu ? CANOPY_BACKEND_GPU : CANOPY_BACKEND_CPU;
        snprintf(note, len, "backend %s (%s)", canopy_backend_name(*b),
                 gpu ? "a usable GPU, large trees" : why);
    }
    if (*v == CANOPY_VARIANT_AUTO) *v = CANOPY_VARIANT_DR;
    if (*b == CANOPY_BACKEND_GPU) {
        if (!tr->gpu)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: this pair walk has no GPU runner",
                               tr->name);
        if (!canopy_gpu_usable())
            return canopy_fail(CANOPY_ERR_UNSUPPORTED, "%s: %s", tr->name, canopy_gpu_why_not());
        if (*v != CANOPY_VARIANT_DR)
            return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                               "%s: pair walks run variant dr on the GPU (got %s)", tr->name,
                               canopy_variant_name(*v));
        return CANOPY_OK;
    }
    if ((unsigned)*v >= CANOPY_VARIANT_COUNT || !tr->cpu[*v])
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "%s: pair walks run variants rec and dr on the CPU (got %s)", tr->name,
                           (unsigned)*v < CANOPY_VARIANT_COUNT ? canopy_variant_name(*v) : "?");
    return CANOPY_OK;
}

canopy_status canopy_pair_traverse(const canopy_tree *ta, const canopy_tree *tb,
                                   const canopy_pair_traversal *tr, const canopy_run_options *opt,
                                   canopy_pair_counters *cnt, canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    if (!ta || !tr || !tr->app || !tr->cpu || !cnt)
        return canopy_fail(CANOPY_ERR_INVALID, "pair traversal: missing tree, descriptor or "
                                               "counters");
    const canopy_tree *other = tb ? tb : ta;
    if (other->view.d != ta->view.d)
        return canopy_fail(CANOPY_ERR_INVALID, "%s: the trees have %d and %d dimensions", tr->name,
                           (int)ta->view.d, (int)other->view.d);
    canopy_backend b = o.backend;
    canopy_variant v = o.variant;
    char note[160] = ""; /* short enough for the counts after it in stats->note */
    canopy_status s = resolve(tr, ta, &b, &v, note, sizeof note);
    if (s) return s;
    memset(cnt, 0, sizeof *cnt);
    double t0 = canopy_now(), transfer = 0.0, schedule = 0.0, traverse;
    if (ta->view.n == 0 || other->view.n == 0) {
        traverse = 0.0; /* no pairs: nothing to walk (an empty tree has no root bounds) */
    } else if (b == CANOPY_BACKEND_GPU) {
        canopy_gpu_report rep;
        memset(&rep, 0, sizeof rep);
        s = tr->gpu(tr->ctx, &ta->view, &other->view, tb == NULL, cnt, &rep);
        transfer = rep.transfer_seconds;
        schedule = rep.schedule_seconds; /* the device frontier and its order */
        traverse = rep.traverse_seconds;
    } else {
        canopy_pair_job job = {tr->ctx, &ta->view, &other->view, tb == NULL, tr->acc_size};
        s = tr->cpu[v](&job, cnt);
        traverse = canopy_now() - t0;
    }
    if (s) return s;
    if (stats) {
        stats->transfer_seconds = transfer;
        stats->schedule_seconds = schedule;
        stats->traverse_seconds = traverse;
        stats->queries = ta->view.n;
        stats->nodes_per_query = ta->view.n ? (double)cnt->tests / (double)ta->view.n : 0.0;
        stats->variant = v;
        stats->backend = b;
        snprintf(stats->note, sizeof stats->note,
                 "%s%spair walk: %lld node pairs tested, %lld leaf pairs (%lld point pairs), "
                 "%lld tasks",
                 note, note[0] ? "; " : "", (long long)cnt->tests, (long long)cnt->leaf_pairs,
                 (long long)cnt->point_pairs, (long long)cnt->tasks);
    }
    return CANOPY_OK;
}
