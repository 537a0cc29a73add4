/* SPDX-License-Identifier: MIT */
/* The SIMT layer on 8 AVX2 lanes (compiled with AVX2 flags; called only on AVX2 CPUs). */
#define SIMT_W 8
#define SIMT_TABLE canopy_simt_impl_avx2
#define SIMT_ISA_NAME "avx2"
#include "simt/isa_body.h"
