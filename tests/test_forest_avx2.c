/* SPDX-License-Identifier: MIT */
/* The SIMD forest engines on 8 AVX2 lanes against brute force (forest_isa.h). */
#include "forest_isa.h"

int main(void) {
    return forest_isa_main(CANOPY_ISA_AVX2);
}
