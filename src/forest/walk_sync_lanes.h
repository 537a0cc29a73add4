/* SPDX-License-Identifier: MIT */
/* The walker's sweeps on SIMT_W lanes over rows, written once with the SIMT lane
 * primitives: included by walk_sync_avx2.c (8 lanes) and walk_sync_avx512.c (16) after
 * they define SIMT_W and CF_SWEEPS (their table's name). On linked nodes each lane
 * takes the scalar step of its row (walk_sync.c): gather the node's threshold, feature
 * offset, next and key, gather x, compare in float, next + right. Complete trees
 * gather nothing: sweep_perfect_top below. */
#include "forest/forest.h"
#include "forest/walk_sync.h"
#include "simt/lanes.h"

/* Spare lanes of the last group walk row 0; off has room for them. */
static inline __attribute__((always_inline)) void sweep_lanes(const char *base, int32_t depth,
                                                              const char *xb, size_t rs, int32_t nr,
                                                              uint32_t *off, int mode) {
    for (int32_t s = 0; s < depth; s++)
        for (int32_t r = 0; r < nr; r += SIMT_W) {
            simt_int rows = simt_iota() + r;
            rows &= rows < nr;
            simt_int o = simt_loadu(off + r);
            /* the node's gathers first, then x's, which waits for fo */
            simt_int fo = simt_gather_at(base + 4, o, 1);
            simt_float thr = (simt_float)simt_gather_at(base, o, 1);
            simt_int nx = simt_gather_at(base + 8, o, 1);
            simt_int key =
                mode == CF_SWEEP_NAN || mode == CF_SWEEP_ZERO ? simt_gather_at(base + 12, o, 1) : o;
            simt_float x = (simt_float)simt_gather_at(xb, rows * (int32_t)rs + fo, 1);
            simt_mask right = x > thr;
            if (mode == CF_SWEEP_NAN || mode == CF_SWEEP_ZERO) {
                simt_mask miss = x != x;
                if (mode == CF_SWEEP_ZERO)
                    miss |= (simt_abs_f(x) <= CF_ZERO_EPS) & ((key & CF_KEY_ZERO) == CF_KEY_ZERO);
                right = simt_blend(miss, (key & CF_KEY_DL) == 0, right);
            }
            simt_storeu(off + r, nx + (right & (int)sizeof(cf_snode)));
        }
}

/* The thresholds of W consecutive complete-tree slots from p, one per lane (cf_pnode
 * interleaves them with the feature offsets). */
static inline simt_float slot_thresholds(const cf_pnode *p) {
    simt_int a = simt_loadu(p), b = simt_loadu(p + SIMT_W / 2);
#if SIMT_W == 16
    return (simt_float)__builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                               26, 28, 30);
#else
    return (simt_float)__builtin_shufflevector(a, b, 0, 2, 4, 6, 8, 10, 12, 14);
#endif
}

/* The lanes where i == n from p (W floats), the others from x: a compare into a mask
 * register and a masked load with AVX-512 (the generic select costs two operations
 * more per node, and gcc routes simt_bits' mask through a vector). */
static inline simt_float load_where(simt_int i, int32_t n, const char *p, simt_float x) {
#if defined(SIMT_AVX512)
    __mmask16 m = _mm512_cmpeq_epi32_mask((__m512i)i, _mm512_set1_epi32(n));
    return (simt_float)_mm512_mask_loadu_ps((__m512)x, m, p);
#else
    simt_float v;
    memcpy(&v, p, sizeof v);
    return simt_blend(i == n, v, x);
#endif
}

/* Levels walked on lanes from registers: at most two vectors of thresholds per level
 * (2^k <= 2W), five for both widths; below them, the scalar sweep's eight interleaved
 * chains (the gathers they would need cost more than the scalar loads). Groups: the
 * vectors of rows each level takes at once, a node's offset and column read once for
 * all of them (eight take 16 of AVX-512's 32 registers, four AVX2's 8 of 16). */
#define CF_TOP_LEVELS 5
#define CF_TOP_GROUPS (SIMT_W == 16 ? 8 : 4)
/* The complete trees' top levels: a level of 2^k nodes reads, for W rows at once,
 * each node's column as one vector (the rows are feature-major) and keeps it in the
 * lanes whose row is at that node; the lanes' thresholds come by permutes from one or
 * two vectors of the level's nodes; NaN goes right (build_perfect mirrors default-left
 * nodes). No gather: one costs ~20 cycles on the AMD EPYC VM, where the sweep that
 * gathered every node and input measured behind the scalar one. */
static void sweep_perfect_top(const char *base, int32_t depth, const char *xb, size_t rs,
                              int32_t nr, uint32_t *off) {
    const cf_pnode *p = (const cf_pnode *)base;
    const int32_t top = depth < CF_TOP_LEVELS ? depth : CF_TOP_LEVELS;
    for (int32_t r = 0; r < nr && top > 0; r += CF_TOP_GROUPS * SIMT_W) {
        const char *xr = xb + (size_t)r * rs;
        simt_int i[CF_TOP_GROUPS];
        for (int g = 0; g < CF_TOP_GROUPS; g++) i[g] = simt_loadu(off + r + g * SIMT_W);
        for (int32_t k = 0; k < top; k++) {
            const int32_t first = (1 << k) - 1, wide = (1 << k) > SIMT_W;
            const simt_float t0 = slot_thresholds(p + first),
                             t1 = wide ? slot_thresholds(p + first + SIMT_W) : t0;
            simt_float x[CF_TOP_GROUPS];
            const char *col = xr + p[first].fofs;
            for (int g = 0; g < CF_TOP_GROUPS; g++)
                memcpy(&x[g], col + g * sizeof x[g], sizeof x[g]);
            for (int32_t n = first + 1; n < 2 * first + 1; n++) {
                col = xr + p[n].fofs;
                for (int g = 0; g < CF_TOP_GROUPS; g++)
                    x[g] = load_where(i[g], n, col + g * sizeof x[g], x[g]);
            }
            for (int g = 0; g < CF_TOP_GROUPS; g++) {
                simt_int j = i[g] - first;
                simt_float thr = simt_shfl_f(t0, j);
                if (wide) thr = simt_blend((j & SIMT_W) != 0, simt_shfl_f(t1, j), thr);
                i[g] = i[g] + i[g] + 1 + (~(x[g] <= thr) & 1);
            }
        }
        for (int g = 0; g < CF_TOP_GROUPS; g++) simt_storeu(off + r + g * SIMT_W, i[g]);
    }
    canopy_cf_sweeps_scalar[CF_SWEEP_PERFECT](base, depth - top, xb, rs, nr, off);
}

#define SWEEP_(name, mode)                                                                         \
    static void name(const char *base, int32_t depth, const char *xb, size_t rs, int32_t nr,       \
                     uint32_t *off) {                                                              \
        sweep_lanes(base, depth, xb, rs, nr, off, mode);                                           \
    }
SWEEP_(sweep_plain, CF_SWEEP_PLAIN)
SWEEP_(sweep_nan, CF_SWEEP_NAN)
SWEEP_(sweep_zero, CF_SWEEP_ZERO)
#undef SWEEP_

const cf_sweep_fn CF_SWEEPS[CF_SWEEP_MODES] = {sweep_plain, sweep_nan, sweep_zero,
                                               sweep_perfect_top};
