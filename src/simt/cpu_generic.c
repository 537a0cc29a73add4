/* SPDX-License-Identifier: MIT */
/* The SIMT layer on 8 lanes of portable C (vector extensions, no ISA flags): the
 * fallback for CPUs without AVX2. */
#define SIMT_W 8
#define SIMT_TABLE canopy_simt_impl_generic
#define SIMT_ISA_NAME "generic"
#include "simt/isa_body.h"
