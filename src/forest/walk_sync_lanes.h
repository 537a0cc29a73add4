/* SPDX-License-Identifier: MIT */
/* The walker's sweeps on SIMT_W lanes over rows, written once with the SIMT lane
 * primitives: included by walk_sync_avx2.c (8 lanes) and walk_sync_avx512.c (16) after
 * they define SIMT_W and CF_SWEEPS (their table's name). Each lane takes the scalar
 * step of its row (walk_sync.c): gather the node's threshold and feature offset (and,
 * on linked nodes, next and key), gather x, compare in float, next + right. */
#include "forest/forest.h"
#include "forest/walk_sync.h"
#include "simt/lanes.h"

/* Spare lanes of the last group walk row 0; off has room for them. */
static inline __attribute__((always_inline)) void sweep_lanes(const char *base, int32_t depth,
                                                              const char *xb, size_t rs, int32_t nr,
                                                              uint32_t *off, int mode) {
    /* complete trees count slots of 8 bytes, linked nodes bytes */
    const int perfect = mode == CF_SWEEP_PERFECT, scale = perfect ? (int)sizeof(cf_pnode) : 1;
    for (int32_t s = 0; s < depth; s++)
        for (int32_t r = 0; r < nr; r += SIMT_W) {
            simt_int rows = simt_iota() + r;
            rows &= rows < nr;
            simt_int o = simt_loadu(off + r);
            /* the node's gathers first, then x's, which waits for fo */
            simt_int fo = simt_gather_at(base + 4, o, scale);
            simt_float thr = (simt_float)simt_gather_at(base, o, scale);
            simt_int nx = perfect ? o + o + 1 : simt_gather_at(base + 8, o, 1);
            simt_int key =
                mode == CF_SWEEP_NAN || mode == CF_SWEEP_ZERO ? simt_gather_at(base + 12, o, 1) : o;
            simt_float x = (simt_float)simt_gather_at(xb, rows * (int32_t)rs + fo, 1);
            /* the complete trees send NaN right (build_perfect mirrors default-left) */
            simt_mask right = perfect ? ~(x <= thr) : x > thr;
            if (mode == CF_SWEEP_NAN || mode == CF_SWEEP_ZERO) {
                simt_mask miss = x != x;
                if (mode == CF_SWEEP_ZERO)
                    miss |= (simt_abs_f(x) <= CF_ZERO_EPS) & ((key & CF_KEY_ZERO) == CF_KEY_ZERO);
                right = simt_blend(miss, (key & CF_KEY_DL) == 0, right);
            }
            simt_storeu(off + r, nx + (right & (perfect ? 1 : (int)sizeof(cf_snode))));
        }
}

#define SWEEP_(name, mode)                                                                         \
    static void name(const char *base, int32_t depth, const char *xb, size_t rs, int32_t nr,       \
                     uint32_t *off) {                                                              \
        sweep_lanes(base, depth, xb, rs, nr, off, mode);                                           \
    }
SWEEP_(sweep_plain, CF_SWEEP_PLAIN)
SWEEP_(sweep_nan, CF_SWEEP_NAN)
SWEEP_(sweep_zero, CF_SWEEP_ZERO)
SWEEP_(sweep_perfect, CF_SWEEP_PERFECT)
#undef SWEEP_

const cf_sweep_fn CF_SWEEPS[CF_SWEEP_MODES] = {sweep_plain, sweep_nan, sweep_zero, sweep_perfect};
