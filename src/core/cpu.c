/* SPDX-License-Identifier: MIT */
/* Run-time ISA detection, so one binary uses AVX-512 where present and still runs
 * on older CPUs. CANOPY_ISA caps the choice for cross-ISA tests. */
#include "core/cpu_internal.h"

#include <stdlib.h>
#include <string.h>

static canopy_isa detect(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return CANOPY_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CANOPY_ISA_AVX2;
    if (__builtin_cpu_supports("sse4.2")) return CANOPY_ISA_SSE42;
#endif
    return CANOPY_ISA_SCALAR;
}

const char *canopy_isa_name(canopy_isa isa) {
    switch (isa) {
    case CANOPY_ISA_SCALAR:
        return "scalar";
    case CANOPY_ISA_SSE42:
        return "sse4.2";
    case CANOPY_ISA_AVX2:
        return "avx2";
    case CANOPY_ISA_AVX512:
        return "avx512";
    }
    return "unknown";
}

/* The ISA canopy_cpu_isa returns without an override: detection capped by CANOPY_ISA. */
static canopy_isa natural_isa(void) {
    canopy_isa isa = detect();
    const char *cap = getenv("CANOPY_ISA");
    if (cap && *cap) {
        for (int i = CANOPY_ISA_SCALAR; i <= CANOPY_ISA_AVX512; i++)
            if (strcmp(cap, canopy_isa_name((canopy_isa)i)) == 0 && i < (int)isa)
                isa = (canopy_isa)i;
    }
    return isa;
}

static int cached = -1;

canopy_isa canopy_cpu_isa(void) {
    if (cached < 0) cached = (int)natural_isa();
    return (canopy_isa)cached;
}

void canopy_cpu_isa_override(int isa) {
    int natural = (int)natural_isa();
    cached = isa < 0 || isa > natural ? natural : isa;
}
