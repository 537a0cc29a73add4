/* SPDX-License-Identifier: MIT */
/* canopy/pair_cpu.h — the CPU engines of pair traversals (canopy/pair.h),
 * header-only. A .c file compiled with OpenMP says
 *
 *     static const canopy_pair_app my_app = {...};
 *     CANOPY_PAIR_CPU_INSTANTIATE(my, &my_app)
 *
 * and gets `my_pair_cpu_runners`, indexed by canopy_variant (rec, dr), each a direct
 * composition of engine and descriptor (the OpenMP region is opened by the runner,
 * for the reason canopy/traverse_cpu.h gives).
 *
 * Both engines share the work out the same way: the walk is expanded breadth-first
 * from the root pair on one thread until there are many more pending node pairs
 * than threads (canopy_pair_frontier), and the threads then take those pairs one at
 * a time (OpenMP dynamic schedule), each finishing its pair's subtree of pairs with
 * its own accumulator. rec walks a pair's subtree by recursion, dr with an explicit
 * stack (autoropes, Goldfarb et al. §3, on pairs). */
#ifndef CANOPY_PAIR_CPU_H
#define CANOPY_PAIR_CPU_H

#include "canopy/pair.h"
#include "canopy/traverse_cpu.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CANOPY_PAIR_ENGINE static inline __attribute__((always_inline))

/* Pending pairs per thread the frontier aims at: enough for the dynamic schedule to
 * even out pairs whose subtrees differ in cost by orders of magnitude. */
enum { CANOPY_PAIR_TASKS_PER_THREAD = 64 };

/* A tested, not-done pair: visit it if both are leaves. */
CANOPY_PAIR_ENGINE int canopy_pair_leaf_visit(const canopy_pair_app *app,
                                              const canopy_pair_job *job, void *acc, canopy_pair p,
                                              canopy_pair_counters *cnt) {
    if (!canopy_pair_is_leaves(job, p)) return 0;
    app->visit_leaves(job->ctx, acc, job->ta, p.a, job->tb, p.b, job->sym);
    const canopy_node *ha = canopy_tv_node(job->ta, p.a), *hb = canopy_tv_node(job->tb, p.b);
    int64_t na = ha->end - ha->begin, nb = hb->end - hb->begin;
    cnt->leaf_pairs++;
    cnt->point_pairs += job->sym && p.a == p.b ? na * (na - 1) / 2 : na * nb;
    return 1;
}

/* ------------------------------------------------------------------ rec -- */

/* Not always-inline (it recurses); cloned per descriptor since `app` is constant. */
static inline void canopy_pair_rec_walk(const canopy_pair_app *app, const canopy_pair_job *job,
                                        void *acc, canopy_pair p, canopy_pair_counters *cnt) {
    if (canopy_pair_leaf_visit(app, job, acc, p, cnt)) return;
    canopy_pair kids[CANOPY_MAX_CHILDREN * CANOPY_MAX_CHILDREN];
    int32_t k = canopy_pair_children(job->ta, job->tb, job->sym, p, kids);
    for (int32_t c = 0; c < k; c++) {
        cnt->tests++;
        if (!app->test(job->ctx, acc, job->ta, kids[c].a, job->tb, kids[c].b, job->sym))
            canopy_pair_rec_walk(app, job, acc, kids[c], cnt);
    }
}

/* ------------------------------------------------------------------- dr -- */

/* Child pairs are pushed in reverse so that they pop in canonical order. */
CANOPY_PAIR_ENGINE void canopy_pair_dr_walk(const canopy_pair_app *app, const canopy_pair_job *job,
                                            void *acc, canopy_pair *stack, canopy_pair p,
                                            canopy_pair_counters *cnt) {
    int64_t sp = 0;
    stack[sp++] = p;
    while (sp > 0) {
        canopy_pair q = stack[--sp];
        if (canopy_pair_leaf_visit(app, job, acc, q, cnt)) continue;
        canopy_pair kids[CANOPY_MAX_CHILDREN * CANOPY_MAX_CHILDREN];
        int32_t k = canopy_pair_children(job->ta, job->tb, job->sym, q, kids);
        for (int32_t c = k - 1; c >= 0; c--) {
            cnt->tests++;
            if (!app->test(job->ctx, acc, job->ta, kids[c].a, job->tb, kids[c].b, job->sym))
                stack[sp++] = kids[c];
        }
    }
}

/* ------------------------------------------------------------ the runner -- */

/* Frontier on the caller's thread (accumulator 0), then the pairs in parallel, then
 * merge per accumulator (or merge_all once). use_stack: dr (else rec). */
CANOPY_PAIR_ENGINE canopy_status canopy_pair_cpu_run(const canopy_pair_app *app,
                                                     const canopy_pair_job *job, int use_stack,
                                                     canopy_pair_counters *cnt) {
    int threads = canopy_threads();
    size_t acc_bytes = canopy_cache_round(job->acc_size ? job->acc_size : 1);
    size_t stack_bytes = canopy_cache_round((size_t)canopy_pair_stack_capacity(job->ta, job->tb) *
                                            sizeof(canopy_pair));
    unsigned char *raw = NULL, *accs = NULL, *stacks = NULL;
    canopy_pair *tasks = NULL;
    int64_t nt = 0;
    /* zeroed by calloc, which for large accumulators (a 10^6-bin histogram, a
     * buffer) gets fresh zero pages and touches only those used, where a memset
     * faulted in every page; 64 bytes more to align them to a cache line */
    size_t bytes = 0;
    canopy_status s = canopy_mul_size((size_t)threads, acc_bytes, &bytes);
    if (!s && (bytes > SIZE_MAX - 64 || !(raw = (unsigned char *)calloc(bytes + 64, 1))))
        s = canopy_fail(CANOPY_ERR_NOMEM, "pair walk: out of memory for %zu bytes", bytes);
    if (!s) accs = raw + (64 - (uintptr_t)raw % 64) % 64;
    if (!s && use_stack) s = canopy_alloc((void **)&stacks, (size_t)threads, stack_bytes);
    const void **each = NULL;
    if (!s && app->merge_all) s = canopy_alloc((void **)&each, (size_t)threads, sizeof *each);
    if (!s)
        s = canopy_pair_frontier(app, job, accs, (int64_t)threads * CANOPY_PAIR_TASKS_PER_THREAD,
                                 &tasks, &nt, cnt);
    if (s) {
        free(raw);
        canopy_free(stacks);
        canopy_free((void *)each);
        return s;
    }
    int64_t tests = 0, leaves = 0, points = 0;
#pragma omp parallel num_threads(threads) reduction(+ : tests, leaves, points)
    {
        int me = omp_get_thread_num();
        void *acc = accs + (size_t)me * acc_bytes;
        canopy_pair *stack = stacks ? (canopy_pair *)(stacks + (size_t)me * stack_bytes) : NULL;
        canopy_pair_counters mine = {0, 0, 0, 0};
#pragma omp for schedule(dynamic, 1)
        for (int64_t i = 0; i < nt; i++) {
            if (use_stack)
                canopy_pair_dr_walk(app, job, acc, stack, tasks[i], &mine);
            else
                canopy_pair_rec_walk(app, job, acc, tasks[i], &mine);
        }
        tests += mine.tests;
        leaves += mine.leaf_pairs;
        points += mine.point_pairs;
    }
    cnt->tests += tests;
    cnt->leaf_pairs += leaves;
    cnt->point_pairs += points;
    for (int t = 0; t < threads; t++) {
        if (each)
            each[t] = accs + (size_t)t * acc_bytes;
        else
            app->merge(job->ctx, accs + (size_t)t * acc_bytes);
    }
    if (each) app->merge_all(job->ctx, each, threads); /* every accumulator at once */
    canopy_free((void *)each);
    canopy_free(tasks);
    free(raw);
    canopy_free(stacks);
    return CANOPY_OK;
}

/* Defines NAME_pair_cpu_runners[CANOPY_VARIANT_COUNT] (rec, dr; others NULL) for the
 * pair descriptor APP (a pointer to a static const canopy_pair_app). */
#define CANOPY_PAIR_CPU_INSTANTIATE(NAME, APP)                                                     \
    static canopy_status NAME##_pair_cpu_rec(const canopy_pair_job *job,                           \
                                             canopy_pair_counters *cnt) {                          \
        return canopy_pair_cpu_run(APP, job, 0, cnt);                                              \
    }                                                                                              \
    static canopy_status NAME##_pair_cpu_dr(const canopy_pair_job *job,                            \
                                            canopy_pair_counters *cnt) {                           \
        return canopy_pair_cpu_run(APP, job, 1, cnt);                                              \
    }                                                                                              \
    static const canopy_pair_cpu_runner NAME##_pair_cpu_runners[CANOPY_VARIANT_COUNT] = {          \
        [CANOPY_VARIANT_REC] = NAME##_pair_cpu_rec,                                                \
        [CANOPY_VARIANT_DR] = NAME##_pair_cpu_dr,                                                  \
    };

#endif
