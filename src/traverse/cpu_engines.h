/* Instantiates every CPU engine for one application: an application's .c file says
 * CANOPY_CPU_INSTANTIATE(name, &app) once and gets a table of runners, one per
 * variant, each a direct (inlined) composition of engine and descriptor. A new
 * variant is one header plus one line here. The runner opens the parallel region
 * and the engine runs inside it (cpu_team.h says why). */
#ifndef CANOPY_TRAVERSE_CPU_ENGINES_H
#define CANOPY_TRAVERSE_CPU_ENGINES_H

#include "traverse/cpu_dr.h"
#include "traverse/cpu_gdr.h"
#include "traverse/cpu_rec.h"
#include "traverse/cpu_simd_l.h"
#include "traverse/cpu_sr.h"
#include "traverse/run.h"

/* The body of a runner: plan, team, one call of ENGINE_CALL per thread (it sees
 * `team` and its private counters `mine`), counters summed into *cnt. */
#define CANOPY_CPU_RUNNER_BODY(APP, PLAN, ENGINE_CALL)                                             \
    canopy_cpu_team team = {0, 0, NULL, 0};                                                        \
    canopy_status s = PLAN(APP, job, &team);                                                       \
    if (!s) s = canopy_cpu_team_begin(&team);                                                      \
    if (s) return s;                                                                               \
    int64_t sum_n = 0, sum_gn = 0, sum_gl = 0, sum_g = 0;                                          \
    _Pragma(                                                                                       \
        "omp parallel num_threads(team.threads) reduction(+ : sum_n, sum_gn, sum_gl, sum_g)") {    \
        canopy_trav_counters mine = {0, 0, 0, 0};                                                  \
        ENGINE_CALL;                                                                               \
        sum_n += mine.nodes;                                                                       \
        sum_gn += mine.group_nodes;                                                                \
        sum_gl += mine.group_longest;                                                              \
        sum_g += mine.groups;                                                                      \
    }                                                                                              \
    canopy_cpu_team_end(&team);                                                                    \
    cnt->nodes += sum_n;                                                                           \
    cnt->group_nodes += sum_gn;                                                                    \
    cnt->group_longest += sum_gl;                                                                  \
    cnt->groups += sum_g;                                                                          \
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

#define CANOPY_CPU_INSTANTIATE(NAME, APP)                                                          \
    CANOPY_CPU_RUNNER(NAME, APP, rec, canopy_cpu_rec)                                              \
    CANOPY_CPU_RUNNER(NAME, APP, dr, canopy_cpu_dr)                                                \
    CANOPY_CPU_RUNNER(NAME, APP, sr, canopy_cpu_sr)                                                \
    CANOPY_CPU_RUNNER(NAME, APP, gdr, canopy_cpu_gdr)                                              \
    CANOPY_CPU_RUNNER_ISA(NAME, APP, simd_l, canopy_cpu_simd_l)                                    \
    static const canopy_cpu_runner NAME##_cpu_runners[CANOPY_VARIANT_COUNT] = {                    \
        [CANOPY_VARIANT_REC] = NAME##_cpu_rec,       [CANOPY_VARIANT_DR] = NAME##_cpu_dr,          \
        [CANOPY_VARIANT_SR] = NAME##_cpu_sr,         [CANOPY_VARIANT_GDR] = NAME##_cpu_gdr,        \
        [CANOPY_VARIANT_SIMD_L] = NAME##_cpu_simd_l,                                               \
    };

#endif
