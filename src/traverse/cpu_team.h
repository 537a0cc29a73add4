/* The thread team a CPU runner hands to an engine.
 *
 * Why engines do not open their own parallel region: GCC outlines an OpenMP parallel
 * region into a separate function *before* it inlines, so a region inside an
 * always-inline engine is compiled once, with `app` loaded from memory, and every
 * descriptor call in it stays an indirect call. The runner (cpu_engines.h), which is
 * generated per application, opens the region instead; inside it `app` is the
 * address of a static const descriptor, the calls fold to direct calls and inline,
 * and a runner compiled for an ISA (target attribute) carries that ISA into the
 * outlined region.
 *
 * So every engine <v> is two functions:
 *   canopy_status canopy_cpu_<v>_plan(app, job, team)  serial, before the region:
 *       refuses descriptors it cannot run, sets team->scratch_bytes (per thread);
 *   void canopy_cpu_<v>(app, job, team, cnt [, width])  run by every thread of the
 *       team; shares the queries out with orphaned `omp for` (or team->cursor) and
 *       adds its own work to its private counters *cnt. */
#ifndef CANOPY_TRAVERSE_CPU_TEAM_H
#define CANOPY_TRAVERSE_CPU_TEAM_H

#include "traverse/descriptor.h"

#include <omp.h>

typedef struct canopy_cpu_team {
    int threads;
    size_t scratch_bytes;   /* per thread, a multiple of 64 (cache-line aligned) */
    unsigned char *scratch; /* threads * scratch_bytes, or NULL when 0 */
    int64_t cursor;         /* shared query cursor (gdr), starts at 0 */
} canopy_cpu_team;

static inline size_t canopy_cache_round(size_t bytes) {
    return (bytes + 63) / 64 * 64;
}

/* After the plan: threads and per-thread scratch. */
static inline canopy_status canopy_cpu_team_begin(canopy_cpu_team *team) {
    team->threads = canopy_threads();
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

#endif
