/* SPDX-License-Identifier: MIT */
/* The level-synchronous walker's sweeps (walk_sync.c): the scalar ones there, the SIMD
 * ones written once on SIMT lanes (walk_sync_lanes.h) and compiled per width. */
#ifndef CANOPY_FOREST_WALK_SYNC_H
#define CANOPY_FOREST_WALK_SYNC_H

#include <stddef.h>
#include <stdint.h>

/* The step rules, from cheapest: linked nodes with no NaN in the block and no
 * zero-as-missing node; NaN possible (it fails x > t, so only default-right needs the
 * NaN test); LightGBM's zero-as-missing; and the plain rule on a complete bf tree. */
enum { CF_SWEEP_PLAIN, CF_SWEEP_NAN, CF_SWEEP_ZERO, CF_SWEEP_PERFECT, CF_SWEEP_MODES };

/* Walks rows [0, nr) of a block `depth` levels from the offsets in off (byte offsets
 * of 16-byte linked nodes, or slots of a complete tree); row r's values start at
 * xb + r * rs. The SIMD sweeps need off to have room for nr rounded up to 16; on
 * complete trees (rs = 4: a feature-major block of CF_SYNC_ROWS rows per column) for
 * CF_SYNC_ROWS offsets, starting at the root, and CF_PERFECT_PAD readable slots after
 * the tree's last. */
typedef void (*cf_sweep_fn)(const char *base, int32_t depth, const char *xb, size_t rs, int32_t nr,
                            uint32_t *off);

/* One table per lane width, indexed by CF_SWEEP_*: scalar (eight rows interleaved),
 * 8 lanes (AVX2), 16 lanes (AVX-512). */
extern const cf_sweep_fn canopy_cf_sweeps_scalar[CF_SWEEP_MODES],
    canopy_cf_sweeps_avx2[CF_SWEEP_MODES], canopy_cf_sweeps_avx512[CF_SWEEP_MODES];

#endif
