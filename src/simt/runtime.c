/* SPDX-License-Identifier: MIT */
/* Launching SIMT kernels on the CPU: a block is a team of warps, each warp one OpenMP
 * thread running SIMT_W lanes, with a sense-reversing barrier (Wu ch. 6's mapping), or,
 * for kernels without block barriers, one thread looping over a block's warps. */
#include "simt/runtime.h"

#include "canopy.h"

#include <omp.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(CANOPY_SIMT_COUNT)
_Thread_local canopy_simt_counts canopy_simt_counts_;
#endif

typedef struct team {
    atomic_int count, sense;
    int n;
} team;

/* Spins briefly, then yields: a block's warps may outnumber the cores. */
static void team_sync(canopy_simt_warp *w) {
    team *t = w->team;
    int s = !w->sense;
    w->sense = s;
    SIMT_COUNT_(barriers, 1);
    if (atomic_fetch_add(&t->count, 1) == t->n - 1) {
        atomic_store(&t->count, 0);
        atomic_store(&t->sense, s);
    } else {
        for (int spin = 0; atomic_load(&t->sense) != s; spin++)
            if (spin > 64) sched_yield();
    }
}

/* One warp needs no partner; more warps run in turn cannot meet at a barrier. */
static void lone_sync(canopy_simt_warp *w) {
    if (w->bdim > w->lanes) {
        fprintf(stderr, "canopy simt: SIMT_SYNC in a block of several warps launched without "
                        "a team\n");
        abort();
    }
}

static void run_warp(simt_kernel_fn fn, const void *args, canopy_simt_warp *w, int width, int warp,
                     int block) {
    w->warp = warp;
    w->block = block;
    if (warp >= 0) w->lanes = w->bdim - warp * width < width ? w->bdim - warp * width : width;
    w->shared_used = 0;
    fn(w, args);
}

int canopy_simt_launch(simt_kernel_fn fn, const void *args, int width, const simt_launch_cfg *cfg) {
    if (cfg->grid <= 0 || cfg->block <= 0) return 0;
    SIMT_COUNT_(launches, 1);
    int nwarps = (cfg->block + width - 1) / width;
    int threads = cfg->threads > 0 ? cfg->threads : omp_get_max_threads();
    size_t shared = (cfg->shared + 63) & ~(size_t)63;
    atomic_int failed = 0;
    if (!cfg->team) {
#pragma omp parallel num_threads(threads)
        {
            unsigned char *sm = shared ? aligned_alloc(64, shared) : NULL;
            if (shared && !sm) atomic_store(&failed, 1);
            canopy_simt_warp w = {0,      0, cfg->block, cfg->grid, 0, sm,
                                  shared, 0, lone_sync,  NULL,      0};
            /* The kernel's own wrapper loops over the warps, so the body inlines there. */
#pragma omp for schedule(static)
            for (int b = 0; b < cfg->grid; b++)
                if (!atomic_load(&failed)) run_warp(fn, args, &w, width, -1, b);
            free(sm);
        }
        return atomic_load(&failed) ? -1 : 0;
    }
    int teams = threads / nwarps > 0 ? threads / nwarps : 1;
    if (teams > cfg->grid) teams = cfg->grid;
    team *ts = calloc((size_t)teams, sizeof *ts);
    unsigned char *sm = shared ? aligned_alloc(64, shared * (size_t)teams) : NULL;
    if (!ts || (shared && !sm)) {
        free(ts);
        free(sm);
        return -1;
    }
    for (int i = 0; i < teams; i++) ts[i].n = nwarps;
#pragma omp parallel num_threads(teams *nwarps)
    {
        int got = omp_get_num_threads(), me = omp_get_thread_num();
        if (got != teams * nwarps) {
            /* A block's warps must all run at once; fewer threads would deadlock. */
#pragma omp single
            fprintf(stderr, "canopy simt: a team of %d threads was asked for, %d came\n",
                    teams * nwarps, got);
            atomic_store(&failed, 1);
        } else {
            int k = me % nwarps, tm = me / nwarps;
            canopy_simt_warp w = {
                0,      0, cfg->block, cfg->grid, 0, sm ? sm + shared * (size_t)tm : NULL,
                shared, 0, team_sync,  &ts[tm],   0};
            for (int b = tm; b < cfg->grid; b += teams) {
                run_warp(fn, args, &w, width, k, b);
                team_sync(&w); /* the block's shared memory is reused by the next */
            }
        }
    }
    free(ts);
    free(sm);
    return atomic_load(&failed) ? -1 : 0;
}

const simt_impl *canopy_simt_impl_for(int width) {
    canopy_isa isa = canopy_cpu_isa();
    if ((width == 16 || width == 0) && isa >= CANOPY_ISA_AVX512) return &canopy_simt_impl_avx512;
    if (width == 16) return NULL;
    return isa >= CANOPY_ISA_AVX2 ? &canopy_simt_impl_avx2 : &canopy_simt_impl_generic;
}
