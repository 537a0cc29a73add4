/* SPDX-License-Identifier: MIT */
/* Internal CPU-feature controls, for tests that compare ISAs in one process. */
#ifndef CANOPY_CORE_CPU_INTERNAL_H
#define CANOPY_CORE_CPU_INTERNAL_H

#include "canopy.h"

/* Makes canopy_cpu_isa() return `isa` (a canopy_isa) from now on, capped at what it
 * would return by itself, so code for an ISA the CPU lacks never runs; a negative
 * value restores the default. Not thread-safe: call it between parallel runs. */
void canopy_cpu_isa_override(int isa);

#endif
