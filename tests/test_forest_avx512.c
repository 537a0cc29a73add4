/* SPDX-License-Identifier: MIT */
/* The SIMD forest engines on 16 AVX-512 lanes (vpcompressd compaction) against brute
 * force (forest_isa.h); skipped on CPUs without AVX-512. */
#include "forest_isa.h"

int main(void) {
    return forest_isa_main(CANOPY_ISA_AVX512);
}
