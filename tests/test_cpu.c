/* SPDX-License-Identifier: MIT */
/* Threads for a given work (canopy_threads_for), and CPU-feature detection:
 * canopy_cpu_features (glibc's table, or cpuid) and its cpuid path must both report
 * exactly what the compiler's __builtin_cpu_supports does, for every feature a kernel
 * is picked by, and canopy_cpu_isa must follow from them (capped by CANOPY_ISA). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "check.h"
#include "core/cpu_internal.h"

#include <stdlib.h>

/* canopy_threads_for: one thread per 30,000 node visits, from 1 to canopy_threads();
 * all of them for unknown work (<= 0). */
static void test_threads_for(void) {
    canopy_set_threads(6);
    CHECK(canopy_threads_for(0.0) == 6);
    CHECK(canopy_threads_for(-1.0) == 6);
    CHECK(canopy_threads_for(1.0) == 1);
    CHECK(canopy_threads_for(29999.0) == 1);
    CHECK(canopy_threads_for(75000.0) == 2);
    CHECK(canopy_threads_for(1.5e5) == 5);
    CHECK(canopy_threads_for(1.8e5) == 6);
    CHECK(canopy_threads_for(1e12) == 6);
    int last = 1;
    for (double w = 1.0; w < 1e7; w *= 1.7) {
        int t = canopy_threads_for(w);
        CHECK_MSG(t >= last && t >= 1 && t <= 6, "work %g: %d threads after %d", w, t, last);
        last = t;
    }
    canopy_set_threads(0);
}

#if defined(__x86_64__) || defined(__i386__)
static unsigned builtin_features(void) {
    unsigned f = 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) f |= CANOPY_CPU_SSE42;
    if (__builtin_cpu_supports("avx2")) f |= CANOPY_CPU_AVX2;
    if (__builtin_cpu_supports("fma")) f |= CANOPY_CPU_FMA;
    if (__builtin_cpu_supports("avx512f")) f |= CANOPY_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw")) f |= CANOPY_CPU_AVX512BW;
    if (__builtin_cpu_supports("avx512dq")) f |= CANOPY_CPU_AVX512DQ;
    if (__builtin_cpu_supports("avx512vl")) f |= CANOPY_CPU_AVX512VL;
    return f;
}

int main(void) {
    test_threads_for();
    unsigned want = builtin_features(), got = canopy_cpu_features(),
             by_cpuid = canopy_cpu_features_cpuid();
    printf("features: builtin 0x%x, canopy 0x%x, cpuid 0x%x\n", want, got, by_cpuid);
    CHECK_MSG(got == want, "canopy_cpu_features 0x%x, __builtin_cpu_supports 0x%x", got, want);
    CHECK_MSG(by_cpuid == want, "cpuid path 0x%x, __builtin_cpu_supports 0x%x", by_cpuid, want);
    CHECK(canopy_cpu_features() == got); /* cached */

    const unsigned avx512 = CANOPY_CPU_AVX512F | CANOPY_CPU_AVX512BW | CANOPY_CPU_AVX512DQ |
                            CANOPY_CPU_AVX512VL,
                   avx2 = CANOPY_CPU_AVX2 | CANOPY_CPU_FMA;
    canopy_isa natural = (want & avx512) == avx512 ? CANOPY_ISA_AVX512
                         : (want & avx2) == avx2   ? CANOPY_ISA_AVX2
                         : want & CANOPY_CPU_SSE42 ? CANOPY_ISA_SSE42
                                                   : CANOPY_ISA_SCALAR;
    unsetenv("CANOPY_ISA");
    canopy_cpu_isa_override(-1);
    CHECK_MSG(canopy_cpu_isa() == natural, "isa %s, want %s", canopy_isa_name(canopy_cpu_isa()),
              canopy_isa_name(natural));
    /* a cap lowers the ISA, never raises it */
    for (int cap = CANOPY_ISA_SCALAR; cap <= CANOPY_ISA_AVX512; cap++) {
        setenv("CANOPY_ISA", canopy_isa_name((canopy_isa)cap), 1);
        canopy_cpu_isa_override(-1);
        canopy_isa want_isa = cap < (int)natural ? (canopy_isa)cap : natural;
        CHECK_MSG(canopy_cpu_isa() == want_isa, "CANOPY_ISA=%s: isa %s, want %s",
                  canopy_isa_name((canopy_isa)cap), canopy_isa_name(canopy_cpu_isa()),
                  canopy_isa_name(want_isa));
    }
    unsetenv("CANOPY_ISA");
    canopy_cpu_isa_override(-1);
    return check_finish();
}
#else
int main(void) {
    test_threads_for();
    CHECK(canopy_cpu_features() == 0);
    CHECK(canopy_cpu_features_cpuid() == 0);
    return check_finish();
}
#endif
