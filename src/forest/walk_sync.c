/* SPDX-License-Identifier: MIT */
/* The walker of the linked layouts (engines scalar and simd): level-synchronous. A
 * block of rows walks one tree together, one level per sweep, for as many sweeps
 * as the tree is deep. Leaves are copied as self-loops (threshold +inf, missing
 * goes left, next = the leaf itself), so a finished row steps in place: no loop
 * exit per row, no mispredicted branch, and the rows of a sweep are independent
 * chains of loads that the core overlaps. The price is wasted steps for rows whose
 * path is shorter than the tree's depth.
 *
 * Nodes are 16 bytes {threshold, feature byte offset, next byte offset, key} in the
 * layout's node order, so a step is: load the node, load x at the offset, compare
 * in float, next + 16 * right; no multiply, no sign extension. A row block without
 * NaN (checked once per block) uses the plain compare x > threshold, which is the
 * model's rule for every non-missing value. The simd engine runs the same sweep on
 * lanes over rows (walk_sync_lanes.h, written once on the SIMT lane primitives; AVX2:
 * 8 rows, AVX-512: 16), chosen at run time: with gathers on linked nodes, and on
 * complete trees from registers for the top levels and in the scalar chains below. */
#include "forest/forest.h"
#include "forest/walk_sync.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The complete copy of the bf trees, unless padding the shallow leaves down to each
 * tree's depth would take more than CF_PERFECT_SLACK x the linked nodes' slots
 * (deep, sparse trees: the random forests of Ren's workload).
 * Missing values: every sweep takes a NaN to the right child (the compare is false
 * or unordered). A default-left node is therefore stored mirrored: its children
 * swapped and its test turned into -x > prev(-t), i.e. x <= t, on the negated
 * column, so NaN reaches the original left child; plain values go where they went. */
static canopy_status build_perfect(cf_layout *L) {
    int64_t slots = 0, steps = 0;
    int32_t deepest = 0;
    for (int32_t t = 0; t < L->n_trees; t++) {
        if (L->tree_depth[t] > 24) return CANOPY_OK;
        slots += ((int64_t)2 << L->tree_depth[t]) - 1;
        steps += L->tree_depth[t];
        if (L->tree_depth[t] > deepest) deepest = L->tree_depth[t];
    }
    /* the feature-major copy costs a row's features, the trees walk `steps` per row,
     * and each task holds a copy of CF_PERFECT_FEATURES x CF_SYNC_ROWS floats at most
     * (2 MB); the SIMD sweeps gather with signed 32-bit byte offsets */
    if (L->n_features > steps || L->n_features > CF_PERFECT_FEATURES ||
        (2 * (int64_t)L->n_features + 1) * 4 * CF_SYNC_ROWS > INT32_MAX ||
        slots > CF_PERFECT_SLACK * (L->n_lnodes > 0 ? L->n_lnodes : 1) ||
        ((int64_t)2 << deepest) * (int64_t)sizeof(cf_pnode) > INT32_MAX)
        return CANOPY_OK;
    size_t ns = (size_t)(slots > 0 ? slots : 1), nt = (size_t)(L->n_trees > 0 ? L->n_trees : 1);
    L->perf_nodes = calloc(ns + CF_PERFECT_PAD, sizeof *L->perf_nodes);
    L->perf_leaf = malloc(ns * sizeof *L->perf_leaf);
    L->perf_val = malloc(ns * sizeof *L->perf_val);
    L->perf_first = malloc(nt * sizeof *L->perf_first);
    int32_t *src = malloc(((size_t)2 << deepest) * sizeof *src); /* slot -> linked node */
    if (!L->perf_nodes || !L->perf_leaf || !L->perf_val || !L->perf_first || !src) {
        free(src);
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for the complete bf trees");
    }
    int64_t b = 0;
    const uint32_t col = 4u * CF_SYNC_ROWS, zero = (uint32_t)(2 * L->n_features) * col;
    L->perf_nan = 1;
    for (int32_t t = 0; t < L->n_trees; t++) {
        int64_t inner = ((int64_t)1 << L->tree_depth[t]) - 1, all = 2 * inner + 1;
        L->perf_first[t] = b;
        src[0] = L->root[t];
        for (int64_t i = 0; i < all; i++) {
            cf_lnode nd = L->nodes[src[i]];
            cf_pnode *p = &L->perf_nodes[b + i];
            L->perf_leaf[b + i] = -1;
            L->perf_val[b + i] = 0;
            if (i >= inner) { /* depth D: a leaf, D being the tree's depth */
                if (nd.key >= 0) {
                    free(src);
                    return canopy_fail(CANOPY_ERR_INTERNAL, "tree %d is deeper than %d", t,
                                       L->tree_depth[t]);
                }
                int32_t leaf = ~nd.key;
                L->perf_leaf[b + i] = leaf;
                L->perf_val[b + i] = L->leaf_out[leaf] >= 0 ? L->values[L->leaf_off[leaf]] : 0;
                *p = (cf_pnode){INFINITY, zero};
            } else if (nd.key < 0) { /* a shallow leaf walks left (0 < inf) down to depth D */
                *p = (cf_pnode){INFINITY, zero};
                src[2 * i + 1] = src[2 * i + 2] = src[i];
            } else if (nd.key & CF_KEY_DL) {
                uint32_t j = (uint32_t)(nd.key & CF_KEY_FEATURE);
                *p = (cf_pnode){nextafterf(-nd.thr, -INFINITY),
                                (uint32_t)L->n_features * col + j * col};
                /* -x > prev(-t) equals x <= t for finite t only */
                if (!isfinite(nd.thr)) L->perf_nan = 0;
                L->perf_mirror = 1;
                src[2 * i + 1] = nd.child + 1;
                src[2 * i + 2] = nd.child;
            } else {
                *p = (cf_pnode){nd.thr, (uint32_t)(nd.key & CF_KEY_FEATURE) * col};
                src[2 * i + 1] = nd.child;
                src[2 * i + 2] = nd.child + 1;
            }
        }
        b += all;
    }
    free(src);
    L->bytes +=
        (size_t)slots * (sizeof *L->perf_nodes + sizeof *L->perf_leaf + sizeof *L->perf_val);
    return CANOPY_OK;
}

canopy_status canopy_cf_build_sync(const canopy_forest *f, cf_layout *L) {
    int64_t n = L->n_lnodes;
    size_t nn = (size_t)(n > 0 ? n : 1), nt = (size_t)(L->n_trees > 0 ? L->n_trees : 1);
    if ((uint64_t)n * sizeof(cf_snode) > UINT32_MAX)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED, "the walker addresses at most 2^28 nodes");
    L->sync_nodes = malloc(nn * sizeof *L->sync_nodes);
    L->sync_leaf = malloc(nn * sizeof *L->sync_leaf);
    L->sync_val = malloc(nn * sizeof *L->sync_val);
    L->tree_depth = malloc(nt * sizeof *L->tree_depth);
    L->sync_out = malloc(nt * sizeof *L->sync_out);
    if (!L->sync_nodes || !L->sync_leaf || !L->sync_val || !L->tree_depth || !L->sync_out)
        return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for the forest walker");
    L->sync_zero = 0;
    L->n_features = f->n_features;
    for (int64_t i = 0; i < n; i++) {
        cf_lnode nd = L->nodes[i];
        cf_snode *s = &L->sync_nodes[i];
        if (nd.key < 0) {
            int32_t leaf = ~nd.key;
            L->sync_leaf[i] = leaf;
            /* scalar leaves: the value itself, one load instead of three */
            L->sync_val[i] = L->leaf_out[leaf] >= 0 ? L->values[L->leaf_off[leaf]] : 0;
            *s = (cf_snode){INFINITY, 0, (uint32_t)(i * sizeof *s), CF_KEY_DL};
        } else {
            L->sync_leaf[i] = -1;
            L->sync_val[i] = 0;
            *s = (cf_snode){nd.thr, (uint32_t)(nd.key & CF_KEY_FEATURE) * 4u,
                            (uint32_t)((int64_t)nd.child * (int64_t)sizeof *s), nd.key};
            L->sync_zero |= (nd.key & CF_KEY_ZERO) != 0;
        }
    }
    for (int32_t t = 0; t < L->n_trees; t++) {
        /* a forest without features has only single-leaf trees: nothing to read */
        L->tree_depth[t] = f->n_features > 0 ? canopy_cf_tree_depth(f, t) : 0;
        L->sync_out[t] = f->trees[t].output;
    }
    L->bytes += (size_t)n * (sizeof *L->sync_nodes + sizeof *L->sync_leaf + sizeof *L->sync_val);
    return L->kind == CANOPY_FOREST_LAYOUT_BF ? build_perfect(L) : CANOPY_OK;
}

/* The step rules (walk_sync.h); step_nan writes the NaN test as arithmetic because
 * default directions vary node by node. */

static inline size_t step_plain(const char *base, size_t off, const char *x) {
    const cf_snode *nd = (const cf_snode *)(base + off);
    float v;
    memcpy(&v, x + nd->fofs, sizeof v);
    return nd->next + ((uint32_t)(v > nd->thr) << 4);
}

static inline size_t step_nan(const char *base, size_t off, const char *x) {
    const cf_snode *nd = (const cf_snode *)(base + off);
    float v;
    memcpy(&v, x + nd->fofs, sizeof v);
    uint32_t right = (uint32_t)(v > nd->thr) | ((uint32_t)(v != v) & ~((uint32_t)nd->key >> 30));
    return nd->next + ((right & 1u) << 4);
}

static inline size_t step_zero(const char *base, size_t off, const char *x) {
    const cf_snode *nd = (const cf_snode *)(base + off);
    float v;
    memcpy(&v, x + nd->fofs, sizeof v);
    return nd->next + ((uint32_t)cf_go_right(v, nd->thr, nd->key) << 4);
}

/* deepest complete tree whose lower levels and leaves canopy_cf_walk_sync prefetches (8 KB of
 * nodes) */
#define CF_PREFETCH_DEPTH 10

/* The plain rule on a complete bf tree (cf_pnode, 8 bytes), in slot numbers: the
 * child is computed, not loaded, as 2i + 1 + (t < x), which x86 compilers turn into
 * lea + adc on the compare's carry; NaN goes right (unordered sets the carry), which
 * build_perfect's mirrored default-left nodes rely on. */
static inline size_t step_perfect(const char *base, size_t i, const char *x) {
    /* keeps each row's slot in a general register: otherwise the compiler packs the
     * eight rows' arithmetic into one vector and pays shuffles on every load */
    __asm__("" : "+r"(i));
    const cf_pnode *nd = (const cf_pnode *)base + i;
#if defined(__x86_64__) && defined(__SSE__)
    /* comiss x, t sets the carry to t < x: lea + adc, no setcc / movzx */
    float t = nd->thr;
    __asm__("lea 1(%[i],%[i]), %[i]\n\t"
            "comiss %[x], %[t]\n\t"
            "adc $0, %[i]"
            : [i] "+&r"(i)
            : [x] "m"(*(const float *)(x + nd->fofs)), [t] "x"(t)
            : "cc");
    return i;
#else
    float v;
    memcpy(&v, x + nd->fofs, sizeof v);
    return 2 * i + 1 + !(v <= nd->thr);
#endif
}

/* Eight rows in registers, interleaved: eight independent chains per level. */
#define SWEEP_SCALAR(name, step, RS)                                                               \
    static void name(const char *base, int32_t depth, const char *xb, size_t rs, int32_t nr,       \
                     uint32_t *off) {                                                              \
        (void)rs;                                                                                  \
        int32_t r = 0;                                                                             \
        for (; r + 8 <= nr; r += 8) {                                                              \
            const char *x = xb + (size_t)r * (RS);                                                 \
            size_t o0 = off[r], o1 = off[r + 1], o2 = off[r + 2], o3 = off[r + 3];                 \
            size_t o4 = off[r + 4], o5 = off[r + 5], o6 = off[r + 6], o7 = off[r + 7];             \
            for (int32_t s = 0; s < depth; s++) {                                                  \
                o0 = step(base, o0, x);                                                            \
                o1 = step(base, o1, x + (RS));                                                     \
                o2 = step(base, o2, x + 2 * (RS));                                                 \
                o3 = step(base, o3, x + 3 * (RS));                                                 \
                o4 = step(base, o4, x + 4 * (RS));                                                 \
                o5 = step(base, o5, x + 5 * (RS));                                                 \
                o6 = step(base, o6, x + 6 * (RS));                                                 \
                o7 = step(base, o7, x + 7 * (RS));                                                 \
            }                                                                                      \
            off[r] = (uint32_t)o0, off[r + 1] = (uint32_t)o1, off[r + 2] = (uint32_t)o2;           \
            off[r + 3] = (uint32_t)o3, off[r + 4] = (uint32_t)o4, off[r + 5] = (uint32_t)o5;       \
            off[r + 6] = (uint32_t)o6, off[r + 7] = (uint32_t)o7;                                  \
        }                                                                                          \
        for (; r < nr; r++)                                                                        \
            for (int32_t s = 0; s < depth; s++)                                                    \
                off[r] = (uint32_t)step(base, off[r], xb + (size_t)r * (RS));                      \
    }
SWEEP_SCALAR(sweep_plain, step_plain, rs)
SWEEP_SCALAR(sweep_nan, step_nan, rs)
SWEEP_SCALAR(sweep_zero, step_zero, rs)
/* feature-major rows: row r's value is 4 r bytes into its feature's line, so the
 * eight rows share one pointer with constant displacements (no register spills) */
SWEEP_SCALAR(sweep_perfect, step_perfect, 4)

const cf_sweep_fn canopy_cf_sweeps_scalar[CF_SWEEP_MODES] = {sweep_plain, sweep_nan, sweep_zero,
                                                             sweep_perfect};

void canopy_cf_walk_sync(const cf_layout *L, canopy_isa isa, const float *X, int64_t stride,
                         int64_t r0, int64_t r1, int32_t t0, int32_t t1, double *acc) {
    const cf_sweep_fn *sweeps = canopy_cf_sweeps_scalar;
    if (isa >= CANOPY_ISA_AVX512)
        sweeps = canopy_cf_sweeps_avx512;
    else if (isa >= CANOPY_ISA_AVX2)
        sweeps = canopy_cf_sweeps_avx2;
    const char *base = (const char *)L->sync_nodes;
    const int32_t K = L->n_outputs;
    const size_t rs = (size_t)stride * sizeof(float);
    uint32_t off[CF_SYNC_ROWS];
    /* the complete trees read a feature-major copy of each row block: the rows at one
     * node read one feature, now a few adjacent lines instead of a line per row (no
     * memory: the linked nodes, which need no copy) */
    int64_t F = L->n_features;
    size_t tn = (size_t)(2 * F + 1) * CF_SYNC_ROWS;
    /* zeroed: the SIMD sweep's spare lanes of a short block read rows past nr */
    float *T = L->perf_nodes ? calloc(tn, sizeof *T) : NULL;
    for (int64_t rb = r0; rb < r1; rb += CF_SYNC_ROWS) {
        int32_t nr = (int32_t)(r1 - rb < CF_SYNC_ROWS ? r1 - rb : CF_SYNC_ROWS);
        const float *Xb = X + rb * stride;
        double *ab = acc + (rb - r0) * K;
        int mode = CF_SWEEP_PLAIN;
        if (L->sync_zero)
            mode = CF_SWEEP_ZERO;
        else if (T && L->perf_nan)
            mode = CF_SWEEP_PERFECT; /* NaN or not: no need to look */
        else
            for (int32_t r = 0; r < nr && mode == CF_SWEEP_PLAIN; r++)
                for (int64_t j = 0; j < L->n_features; j++)
                    if (Xb[r * stride + j] != Xb[r * stride + j]) mode = CF_SWEEP_NAN;
        /* complete trees for the plain rule; the others keep the linked nodes */
        const char *xs = (const char *)Xb;
        size_t xrs = rs;
        if ((mode == CF_SWEEP_PLAIN || mode == CF_SWEEP_PERFECT) && T) {
            mode = CF_SWEEP_PERFECT;
            for (int32_t r = 0; r < nr; r++)
                for (int64_t j = 0; j < F; j++) T[j * CF_SYNC_ROWS + r] = Xb[r * stride + j];
            /* the negated columns only where some node reads them */
            for (int32_t r = 0; r < nr && L->perf_mirror; r++)
                for (int64_t j = 0; j < F; j++) T[(F + j) * CF_SYNC_ROWS + r] = -Xb[r * stride + j];
            xs = (const char *)T;
            xrs = sizeof *T;
        }
        for (int32_t t = t0; t < t1; t++) {
            const char *tb = base;
            const int32_t *leaf = L->sync_leaf;
            const double *val = L->sync_val;
            uint32_t root = (uint32_t)L->root[t] * (uint32_t)sizeof(cf_snode),
                     size = sizeof(cf_snode);
            if (mode == CF_SWEEP_PERFECT) {
                tb = (const char *)(L->perf_nodes + L->perf_first[t]);
                leaf = L->perf_leaf + L->perf_first[t];
                val = L->perf_val + L->perf_first[t];
                root = 0;
                size = 1;
            }
            for (int32_t r = 0; r < CF_SYNC_ROWS; r++) off[r] = root;
            /* a small tree's lower nodes and leaf values are fetched (from L2, in a
             * tree block) while the top levels are walked: ~8 % on one core */
            if (mode == CF_SWEEP_PERFECT && L->tree_depth[t] <= CF_PREFETCH_DEPTH) {
                int64_t bottom = ((int64_t)1 << L->tree_depth[t]) - 1;
                for (int64_t i = 31; i < bottom; i += 8)
                    __builtin_prefetch((const cf_pnode *)tb + i);
                for (int64_t i = bottom; i <= 2 * bottom; i += 8) __builtin_prefetch(val + i);
            }
            sweeps[mode](tb, L->tree_depth[t], xs, xrs, nr, off);
            int32_t o = L->sync_out[t];
            /* size is 1 or sizeof(cf_snode): a constant divisor each, not a div per row */
            if (o >= 0 && size == 1)
                for (int32_t r = 0; r < nr; r++) ab[(int64_t)r * K + o] += val[off[r]];
            else if (o >= 0)
                for (int32_t r = 0; r < nr; r++)
                    ab[(int64_t)r * K + o] += val[off[r] / sizeof(cf_snode)];
            else
                for (int32_t r = 0; r < nr; r++)
                    cf_add_leaf(L, leaf[off[r] / size], ab + (int64_t)r * K);
        }
    }
    free(T);
}
