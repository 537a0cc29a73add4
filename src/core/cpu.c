/* SPDX-License-Identifier: MIT */
/* Run-time ISA detection, so one binary uses AVX-512 where present and still runs
 * on older CPUs. CANOPY_ISA caps the choice for cross-ISA tests. Detection is lazy and
 * done once: each cpuid instruction exits a virtual machine (~4 us), and libgcc's
 * __builtin_cpu_supports runs a constructor of ~15 of them in every process. */
#include "core/cpu_internal.h"

#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__has_include)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc >= 2.33 */
#define CANOPY_GLIBC_X86 1
#endif
#endif

unsigned canopy_cpu_features_cpuid(void) {
    unsigned a, b, c, d, f = 0, max = __get_cpuid_max(0, NULL);
    if (max < 1) return 0;
    __cpuid(1, a, b, c, d);
    if (c & bit_SSE4_2) f |= CANOPY_CPU_SSE42;
    /* AVX registers need the OS to save them (XCR0 bits 1-2), AVX-512's also the
     * mask and upper ZMM state (bits 5-7) */
    unsigned xcr0 = 0;
    if (c & bit_OSXSAVE) {
        unsigned hi;
        __asm__("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
    }
    int avx = (c & bit_AVX) && (xcr0 & 6) == 6, avx512 = avx && (xcr0 & 0xe0) == 0xe0;
    if (avx && (c & bit_FMA)) f |= CANOPY_CPU_FMA;
    if (max < 7) return f;
    __cpuid_count(7, 0, a, b, c, d);
    if (avx && (b & bit_AVX2)) f |= CANOPY_CPU_AVX2;
    if (avx512 && (b & bit_AVX512F)) f |= CANOPY_CPU_AVX512F;
    if (avx512 && (b & bit_AVX512BW)) f |= CANOPY_CPU_AVX512BW;
    if (avx512 && (b & bit_AVX512DQ)) f |= CANOPY_CPU_AVX512DQ;
    if (avx512 && (b & bit_AVX512VL)) f |= CANOPY_CPU_AVX512VL;
    return f;
}

#ifdef CANOPY_GLIBC_X86
/* CPU_FEATURE_ACTIVE(name) without its header's `1 << bit`, undefined for bit 31
 * (AVX512VL; UBSan stops there): the table has 4 words of 32 bits per cpuid leaf. */
static int glibc_active(unsigned index) {
    const struct cpuid_feature *leaf = __x86_get_cpuid_feature_leaf(index / 128);
    unsigned bit = index % 128;
    return (leaf->active_array[bit / 32] >> (bit % 32)) & 1;
}
#endif

/* glibc's dynamic loader has run cpuid already: its table costs no instruction more. */
static unsigned features_detect(void) {
#ifdef CANOPY_GLIBC_X86
    unsigned f = 0;
    if (glibc_active(x86_cpu_SSE4_2)) f |= CANOPY_CPU_SSE42;
    if (glibc_active(x86_cpu_AVX2)) f |= CANOPY_CPU_AVX2;
    if (glibc_active(x86_cpu_FMA)) f |= CANOPY_CPU_FMA;
    if (glibc_active(x86_cpu_AVX512F)) f |= CANOPY_CPU_AVX512F;
    if (glibc_active(x86_cpu_AVX512BW)) f |= CANOPY_CPU_AVX512BW;
    if (glibc_active(x86_cpu_AVX512DQ)) f |= CANOPY_CPU_AVX512DQ;
    if (glibc_active(x86_cpu_AVX512VL)) f |= CANOPY_CPU_AVX512VL;
    return f;
#else
    return canopy_cpu_features_cpuid();
#endif
}
#else
unsigned canopy_cpu_features_cpuid(void) {
    return 0;
}

static unsigned features_detect(void) {
    return 0;
}
#endif

static int features_cached = -1;

unsigned canopy_cpu_features(void) {
    if (features_cached < 0) features_cached = (int)features_detect();
    return (unsigned)features_cached;
}

static canopy_isa detect(void) {
    const unsigned avx512 = CANOPY_CPU_AVX512F | CANOPY_CPU_AVX512BW | CANOPY_CPU_AVX512DQ |
                            CANOPY_CPU_AVX512VL,
                   avx2 = CANOPY_CPU_AVX2 | CANOPY_CPU_FMA;
    unsigned f = canopy_cpu_features();
    if ((f & avx512) == avx512) return CANOPY_ISA_AVX512;
    if ((f & avx2) == avx2) return CANOPY_ISA_AVX2;
    if (f & CANOPY_CPU_SSE42) return CANOPY_ISA_SSE42;
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
