/* SPDX-License-Identifier: MIT */
/* Internal CPU-feature controls, for tests that compare ISAs in one process. */
#ifndef CANOPY_CORE_CPU_INTERNAL_H
#define CANOPY_CORE_CPU_INTERNAL_H

#include "canopy.h"

/* Makes canopy_cpu_isa() return `isa` (a canopy_isa) from now on, capped at what it
 * would return by itself, so code for an ISA the CPU lacks never runs; a negative
 * value restores the default. Not thread-safe: call it between parallel runs. */
void canopy_cpu_isa_override(int isa);

/* CPU features the kernels are picked by, each only where the OS also saves its
 * registers (as __builtin_cpu_supports reports them). */
enum {
    CANOPY_CPU_SSE42 = 1 << 0,
    CANOPY_CPU_AVX2 = 1 << 1,
    CANOPY_CPU_FMA = 1 << 2,
    CANOPY_CPU_AVX512F = 1 << 3,
    CANOPY_CPU_AVX512BW = 1 << 4,
    CANOPY_CPU_AVX512DQ = 1 << 5,
    CANOPY_CPU_AVX512VL = 1 << 6
};

/* The features of this CPU (a CANOPY_CPU_* mask), detected on the first call: from
 * glibc's table where it has one (no cpuid), else by cpuid. Not capped by CANOPY_ISA. */
unsigned canopy_cpu_features(void);

/* The same features by cpuid and xgetbv (what canopy_cpu_features uses without glibc's
 * table; tests compare the two). 0 on other architectures. */
unsigned canopy_cpu_features_cpuid(void);

#endif
