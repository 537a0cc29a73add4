/* SPDX-License-Identifier: MIT */
/* The SIMT layer on 16 AVX-512 lanes (this file is compiled with AVX-512 flags and only
 * called when canopy_cpu_isa() finds AVX-512). */
#define SIMT_W 16
#define SIMT_TABLE canopy_simt_impl_avx512
#define SIMT_ISA_NAME "avx512"
#include "simt/isa_body.h"
