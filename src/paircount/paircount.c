/* SPDX-License-Identifier: MIT */
/* canopy_paircount: binned pair counts DD(r), written only against the public
 * headers (canopy.h, canopy/traverse*.h, canopy/pair*.h) as a proof that they
 * suffice.
 *
 * Variant auto on kd trees (the default): a pair walk (canopy/pair.h) over kd trees
 * of data1 and data2 (one tree against itself for auto-correlation), the descriptor
 * of pair_count.h: node pairs pruned or counted whole, leaf pairs by the vectorised
 * kernel of pair_leaf.h, one histogram per thread, all bins in one walk.
 *
 * An explicit variant (or another tree kind): the single-tree walk, a tree over
 * data2, one query per point of data1. A node whose
 * distance bounds from the query fall inside one bin adds all its points (or their
 * weight sum, from prefix sums in tree order) at once; a node outside the bins is
 * skipped. A query's histogram lives in its state, which is small
 * (CANOPY_MAX_STATE), so the bins are counted in passes of PASS_BINS, each pass
 * pruning to its own shell of radii; finish adds the query's histogram to the
 * result with atomics. Periodic boxes use minimum-image distances and kd boxes. The
 * descriptor is paircount.h; paircount_gpu.cu runs it on the GPU.
 *
 * canopy_paircount_device (device pointers) builds the kd trees on the GPU
 * (tree/gpu_build.h; core/device.h checks the pointers), copies them to the host for
 * the walk's host side, and walks the device copies in place: the same pair walk. */
#include "paircount/paircount.h"

#include "canopy/pair_cpu.h"
#include "canopy/traverse_cpu.h"
#include "core/device.h"
#include "paircount/pair_count.h"
#include "tree/gpu_build.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

_Static_assert(sizeof(pc_state) <= CANOPY_MAX_STATE, "pc_state exceeds CANOPY_MAX_STATE");

static const canopy_app pc_app = {"paircount", sizeof(pc_state), 0,    1,         pc_init,
                                  pc_truncate, pc_visit_leaf,    NULL, pc_finish, 0};
CANOPY_CPU_INSTANTIATE(pc, &pc_app)

void canopy_pcp_leaf_avx512(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                            const canopy_tree_view *tb, int32_t b, int sym);
void canopy_pcp_leaf_avx2(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                          const canopy_tree_view *tb, int32_t b, int sym);
void canopy_pcp_leaf_generic(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                             const canopy_tree_view *tb, int32_t b, int sym);

static inline void pcp_visit_leaves(const void *vctx, void *acc, const canopy_tree_view *ta,
                                    int32_t a, const canopy_tree_view *tb, int32_t b, int sym) {
    const pcp_ctx *c = (const pcp_ctx *)vctx;
    c->leaf(c, (double *)acc, ta, a, tb, b, sym);
}

/* Where the CPU walk's merge puts the counts: c->counts, or with a sink a block at a
 * time through buf (10^6 bins need no array of 8 MB: canopy_paircount_blocks). */
typedef struct pcp_out {
    canopy_paircount_sink sink;
    void *user;
    double *buf;          /* PCP_OUT_BLOCK bins, with a sink */
    canopy_status status; /* the sink's */
    int merged;           /* pcp_merge_all ran */
} pcp_out;

/* Bins merged at a time: 64 KB of doubles (in cache). */
enum { PCP_OUT_BLOCK = 8192 };
_Static_assert(PCP_OUT_BLOCK % PCP_SMALL_BLOCK == 0, "a merge block holds whole flag blocks");

/* Adds (first: writes) accumulator h's bins b0..b0+m-1 into o[0..m). */
static void merge_block(const pcp_ctx *c, const double *h, int first, int32_t b0, int32_t m,
                        double *o) {
    const int64_t nbins = c->nbins;
    const int32_t end = b0 + m;
    o -= b0;
    if (c->small) {
        const uint8_t *small = (const uint8_t *)(h + nbins), *used = small + c->small * nbins;
        for (int32_t s0 = b0; s0 < end; s0 += PCP_SMALL_BLOCK) {
            const int32_t s1 = end - s0 < PCP_SMALL_BLOCK ? end : s0 + PCP_SMALL_BLOCK;
            if (first && used[s0 / PCP_SMALL_BLOCK])
                for (int32_t b = s0; b < s1; b++) o[b] = h[b] + c->mult * small[b];
            else if (first)
                for (int32_t b = s0; b < s1; b++) o[b] = c->mult * small[b];
            else if (used[s0 / PCP_SMALL_BLOCK])
                for (int32_t b = s0; b < s1; b++) o[b] += h[b] + c->mult * small[b];
            else
                for (int32_t b = s0; b < s1; b++) o[b] += c->mult * small[b];
        }
        for (int32_t k = 1; k < c->small; k++) /* few bins: the copies */
            for (int32_t b = b0; b < end; b++) o[b] += c->mult * small[k * nbins + b];
        return;
    }
    for (int32_t b = b0; first && b < end; b++) o[b] = h[b];
    for (int32_t k = first; k < c->copies; k++)
        for (int32_t b = b0; b < end; b++) o[b] += h[k * nbins + b];
}

/* Every thread's histogram summed a block at a time, written over the counts (no pass
 * zeroing 8 MB first) or handed to the sink; no accumulator: zeros. The order of the
 * additions per bin is that of one merge per thread. */
static void pcp_merge_all(const void *vctx, const void *const *accs, int n) {
    const pcp_ctx *c = (const pcp_ctx *)vctx;
    pcp_out *out = c->out;
    out->merged = 1;
    for (int32_t b0 = 0; b0 < c->nbins && !out->status; b0 += PCP_OUT_BLOCK) {
        const int32_t m = c->nbins - b0 < PCP_OUT_BLOCK ? c->nbins - b0 : PCP_OUT_BLOCK;
        double *o = out->sink ? out->buf : c->counts + b0;
        if (n == 0) memset(o, 0, sizeof *o * (size_t)m);
        for (int t = 0; t < n; t++) merge_block(c, (const double *)accs[t], t == 0, b0, m, o);
        if (out->sink) out->status = out->sink(out->user, b0, m, o);
    }
}

static const canopy_pair_app pcp_app = {"paircount", pcp_test, pcp_visit_leaves, NULL,
                                        pcp_merge_all};
CANOPY_PAIR_CPU_INSTANTIATE(pcp, &pcp_app)

canopy_paircount_options canopy_paircount_options_default(void) {
    canopy_paircount_options o = {0.0, 1.0, 10, 0, 0.0};
    return o;
}

static canopy_status flat_edges(int32_t b) {
    return canopy_fail(CANOPY_ERR_INVALID,
                       "paircount: bins %d and %d have the same float32 squared edge; use "
                       "fewer or wider bins",
                       (int)b - 1, (int)b);
}

static canopy_status check_edges(const canopy_paircount_options *po) {
    if (!po || !(po->nbins >= 1 && po->nbins <= 1000000))
        return canopy_fail(CANOPY_ERR_INVALID, "paircount: nbins must be in [1, 1e6]");
    if (!(po->rmin >= 0.0) || !(po->rmax > po->rmin) || !isfinite(po->rmax))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "paircount: need 0 <= rmin < rmax, both finite (got %g, %g)", po->rmin,
                           po->rmax);
    if (po->log_bins && !(po->rmin > 0.0))
        return canopy_fail(CANOPY_ERR_INVALID, "paircount: log bins need rmin > 0");
    if (!(po->boxsize >= 0.0) || !isfinite(po->boxsize))
        return canopy_fail(CANOPY_ERR_INVALID, "paircount: boxsize must be finite and >= 0");
    if (po->boxsize > 0.0 && po->rmax > 0.5 * po->boxsize)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "paircount: rmax (%g) must be at most half the periodic box (%g)",
                           po->rmax, po->boxsize);
    return CANOPY_OK;
}

canopy_status canopy_paircount_edges(const canopy_paircount_options *po, double *edges) {
    canopy_status s = check_edges(po);
    if (s) return s;
    pcp_edges *g = NULL;
    if ((s = canopy_alloc((void **)&g, 1, sizeof *g))) return s;
    pcp_edges_init(g, po->rmin, po->rmax, po->nbins, po->log_bins);
    for (int32_t b = 0; b <= po->nbins; b++) edges[b] = pcp_edge(g, b);
    canopy_free(g);
    return CANOPY_OK;
}

/* That the squared edges e2[0..n) increase strictly, so every distance has one bin. */
static canopy_status rising_edges(const float *e2, int32_t n) {
    int flat = 0; /* the test without an exit vectorises */
    for (int32_t k = 1; k < n; k++) flat |= !(e2[k] > e2[k - 1]);
    for (int32_t k = 1; flat && k < n; k++)
        if (!(e2[k] > e2[k - 1])) return flat_edges(k);
    return CANOPY_OK;
}

/* The options' checks and, with e2, the squared float edges, checked (rising_edges) and
 * padded with PCP_E2_PAD +inf (the caller frees *e2; filled a run of 1024 at a time, the
 * double edges not as an array: 8 MB more at 10^6). e2 NULL: the options only, for the
 * pair walk, which makes the table only where it has no bins by formula (walk_trees). */
static canopy_status squared_edges(const canopy_paircount_options *po, float **e2) {
    canopy_status s = check_edges(po);
    if (s || !e2) return s;
    float *all = NULL;
    pcp_edges *g = NULL;
    s = canopy_alloc_large((void **)&all, (size_t)po->nbins + 1 + PCP_E2_PAD, sizeof *all);
    if (!s) s = canopy_alloc((void **)&g, 1, sizeof *g);
    if (!s) {
        pcp_edges_init(g, po->rmin, po->rmax, po->nbins, po->log_bins);
        pcp_edges2_fill(g, 0, po->nbins + 1, all);
        s = rising_edges(all, po->nbins + 1);
    }
    canopy_free(g);
    for (int32_t k = 1; !s && k <= PCP_E2_PAD; k++) all[po->nbins + k] = INFINITY;
    if (s) canopy_free(all);
    *e2 = s ? NULL : all;
    return s;
}

/* Whether a coordinate lies outside [0, box), on all threads (2M points: 9 ms on one);
   the caller then finds the first for its message. */
static int any_outside(const canopy_points *p, float box) {
    int bad = 0;
#pragma omp parallel for schedule(static) reduction(| : bad)
    for (int64_t i = 0; i < p->n; i++)
        for (int32_t j = 0; j < p->d; j++) {
            float x = canopy_point(*p, i)[j];
            bad |= !(x >= 0.0f && x < box);
        }
    return bad;
}

static canopy_status check_data(canopy_points *d1, const float **w1, canopy_points *d2,
                                const float **w2, float box, int *self) {
    canopy_status s = canopy_points_check(*d1, "paircount data1");
    if (s) return s;
    *self = d2->n == 0 && d2->data == NULL;
    if (*self) {
        *d2 = *d1;
        *w2 = *w1;
    } else if ((s = canopy_points_check(*d2, "paircount data2"))) {
        return s;
    } else if (d2->d != d1->d) {
        return canopy_fail(CANOPY_ERR_INVALID,
                           "paircount: data1 has %d dimensions but data2 has %d", (int)d1->d,
                           (int)d2->d);
    }
    const canopy_points *sets[2] = {d1, d2};
    const float *ws[2] = {*w1, *w2};
    for (int k = 0; k < 2; k++) {
        for (int64_t i = 0; ws[k] && i < sets[k]->n; i++)
            if (!isfinite(ws[k][i]))
                return canopy_fail(CANOPY_ERR_INVALID, "paircount: weight %lld of data%d is %g",
                                   (long long)i, k + 1, (double)ws[k][i]);
        if (box > 0.0f && !(k == 1 && *self) && any_outside(sets[k], box))
            for (int64_t i = 0; i < sets[k]->n; i++)
                for (int32_t j = 0; j < sets[k]->d; j++) {
                    float x = canopy_point(*sets[k], i)[j];
                    if (!(x >= 0.0f && x < box))
                        return canopy_fail(CANOPY_ERR_INVALID,
                                           "paircount: point %lld of data%d has coordinate %g "
                                           "outside the periodic box [0, %g)",
                                           (long long)i, k + 1, (double)x, (double)box);
                }
    }
    return CANOPY_OK;
}

/* Weights of the weighted form: a missing side weighs 1. */
static canopy_status unit_weights(int64_t n, const float *given, float **own, const float **w) {
    *own = NULL;
    *w = given;
    if (given) return CANOPY_OK;
    canopy_status s = canopy_alloc((void **)own, (size_t)n + 1, sizeof **own);
    if (s) return s;
    for (int64_t i = 0; i < n; i++) (*own)[i] = 1.0f;
    *w = *own;
    return CANOPY_OK;
}

/* The checks both entry points make: the squared edges (*e2, the caller frees; e2 NULL:
 * the options only, squared_edges) and the data (auto: data2 becomes data1). */
static canopy_status prepare(const canopy_paircount_options *po, canopy_points *d1,
                             const float **w1, canopy_points *d2, const float **w2, int *self,
                             float **e2) {
    canopy_status s = squared_edges(po, e2);
    if (s || (s = check_data(d1, w1, d2, w2, (float)po->boxsize, self))) {
        if (e2) canopy_free(*e2);
        if (e2) *e2 = NULL;
    }
    return s;
}

/* Leaf size of the pair walk's trees when the caller gives none: leaf pairs large
 * enough to fill the vectors many times over, small enough to prune well. The
 * counters of few unweighted bins skip a's points out of range of b's box, so larger
 * leaves cost them little (200k points, rmax 0.1 or 0.01: 128 about 25-40 % faster
 * than 32, bench/results/paircount.md). The GPU's unweighted kernels: 64 (2M points,
 * 2026-12-03: 30 % faster than 32). */
enum {
    PCP_LEAF_SIZE = 32,
    PCP_LEAF_SIZE_CUM = 128,
    PCP_LEAF_SIZE_SMALL = 64,
    PCP_LEAF_SIZE_GPU = 64
};

/* The bin table of pair_count.h over the float bits of [e2[1], e2[nbins]). */
static canopy_status bin_table(pcp_ctx *c) {
    c->split2 = c->nbins > 1 ? c->e2[1] : c->hi2;
    uint32_t lo = pcp_bits(c->split2), span = pcp_bits(c->hi2) - lo;
    int64_t want = PCP_TABLE_MIN_CELLS;
    while (want < 8 * (int64_t)c->nbins && want < PCP_TABLE_MAX_CELLS) want *= 2;
    int32_t shift = 0;
    while ((int64_t)(span >> shift) >= want) shift++;
    int64_t cells = (int64_t)(span >> shift) + 1;
    int32_t *tab = NULL;
    canopy_status s = canopy_alloc((void **)&tab, (size_t)cells + 1, sizeof *tab);
    if (s) return s;
    int32_t b = 0;
    for (int64_t k = 0; k <= cells; k++) {
        uint64_t bits = (uint64_t)lo + ((uint64_t)k << shift);
        if (bits >= (uint64_t)lo + span) {
            tab[k] = c->nbins - 1;
            continue;
        }
        uint32_t u = (uint32_t)bits;
        float x;
        memcpy(&x, &u, sizeof x);
        while (b + 1 < c->nbins && c->e2[b + 1] <= x) b++;
        tab[k] = b;
    }
    c->scan = 0;
    for (int64_t k = 0; k < cells; k++)
        if (tab[k + 1] - tab[k] > c->scan) c->scan = tab[k + 1] - tab[k];
    if (c->scan > PCP_SCAN_MAX) c->scan = -1;
    /* the flag of pair_count.h: whether the cell holds an edge */
    for (int64_t k = 0; k <= cells; k++) tab[k] = 2 * tab[k] + (k < cells && tab[k + 1] != tab[k]);
    c->tab = tab;
    c->tab_cells = cells + 1;
    c->tab_base = lo;
    c->tab_shift = shift;
    return CANOPY_OK;
}

/* A bound on |t - T(x)| + |T(e2[b]) - b| over every float x >= split2 and edge b, where t
 * is pcp_direct_pos's position of x (the same float operations as the lanes) and T the
 * exact one of the cell table, T(x) = (log(x) - l0) * dk (log) or (sqrt(x) - rmin) * dk:
 * - each squared edge is rounded once to float (relative 2^-24): dk * 2^-24 bins of log
 *   position, at most dk * rmax * 2^-25 linear; the double edges, l0, dk and the table's
 *   doubles add a few double ulps of the positions (bounded by far more here);
 * - the table's 11 fraction bits (2^-12); the series' at most `most` bins: about 7
 *   float roundings of 2^-24 (quotient, series, float dk and its product; linear also
 *   sqrtf) and its truncation (the next term: r^4 / 4 of log(1 + r), 5 r^4 / 128 of
 *   sqrt(1 + r) - 1, for r < cell, the cell's relative width); t's sum, one more.
 * A fraction of t farther than this from a whole number gives the bin for certain (T is
 * increasing). It replaced a pass measuring the error at all 10^6 edges (about 2 ms);
 * tests/test_paircount.c measures it against this bound. */
static double direct_error(const canopy_paircount_options *po, double dk, double l0, double most,
                           double cell) {
    const double u = 0x1p-24;
    const double edge = (po->log_bins ? dk : dk * po->rmax * 0.5) * u * 1.001;
    const double dbl =
        ((po->log_bins ? dk * (fabs(l0) + 256.0) : dk * po->rmax * 8.0) + po->nbins + 1048576.0) *
        0x1p-48;
    const double series = 0x1p-12 + 9.0 * u * most + u + most * cell * cell * cell * 0.25;
    return edge + dbl + series;
}

/* The cell table of pcp_direct_pos (pair_count.h) for log or linear bins and the margin
 * of its certain fractions (direct_error); c->direct stays 0 (the bin table instead)
 * where the bins are too narrow for float32 positions, the range spans too many cells,
 * or the float edges might not rise strictly (the table's check then refuses them). */
static canopy_status bin_direct(pcp_ctx *c, const canopy_paircount_options *po) {
    c->split2 = c->nbins > 1 ? pcp_e2(c, 1) : c->hi2;
    const double span = po->log_bins ? 2.0 * log(po->rmax / po->rmin) : po->rmax - po->rmin;
    const double dk = po->nbins / span;
    /* most bins one cell's series can add (dk * slope * cell width): a few float ulps
       of it must stay far below the certain margin */
    double reach = po->log_bins ? dk : dk * po->rmax;
    int32_t shift = PCP_DIRECT_SHIFT;
    while (shift > 0 && reach * ldexp(1.0, shift - 23) > 512.0) shift--;
    uint32_t base = pcp_bits(c->split2) & ~((1u << shift) - 1);
    int64_t cells = (int64_t)((pcp_bits(c->hi2) - base) >> shift) + 1;
    const double l0 = po->log_bins ? 2.0 * log(po->rmin) : 0.0; /* not of e2[0], rounded */
    const double cell = ldexp(1.0, shift - 23), err = direct_error(po, dk, l0, reach * cell, cell);
    /* squared edges whose exact ratio exceeds 1 + 2^-21 round to rising floats (two
       roundings of 2^-24 and the doubles' error apart); linear: the smallest ratio is at
       rmax, (1 + 1 / (dk rmax))^2 */
    const double gap = po->log_bins ? expm1(1.0 / dk) : 2.0 / (dk * po->rmax);
    c->direct = 0;
    if (!(c->split2 >= FLT_MIN) || !(c->hi2 <= FLT_MAX) || reach * cell > 512.0 ||
        cells > PCP_DIRECT_MAX_CELLS || !(gap > 0x1p-21) || !(err + 1e-3 < 0.25))
        return CANOPY_OK;
    int32_t *dpos = NULL;
    canopy_status s = canopy_alloc((void **)&dpos, (size_t)cells, sizeof *dpos);
    if (s) return s;
    int ok = 1;
    for (int64_t k = 0; k < cells; k++) {
        double x = (double)pcp_float(base + (uint32_t)(k << shift));
        double t = po->log_bins ? (log(x) - l0) * dk : (sqrt(x) - po->rmin) * dk;
        ok &= fabs(t) < 1048576.0;
        dpos[k] = ok ? (int32_t)lround(ldexp(t, PCP_DIRECT_FRAC)) : 0;
    }
    if (!ok) {
        canopy_free(dpos);
        return CANOPY_OK;
    }
    c->dbase = base;
    c->dshift = shift;
    c->dpos = dpos;
    c->dk = (float)dk;
    c->dlog = po->log_bins;
    c->dlo = (float)(err + 1e-3);
    c->dhi = 1.0f - c->dlo;
    c->direct = 1;
    return CANOPY_OK;
}

/* For tests/test_paircount.c: the bins by formula of the pair walk for po, made as
 * walk_trees makes them (c->direct 0: none; the caller frees c->dpos and c->edges). */
canopy_status canopy_pcp_direct_make(const canopy_paircount_options *po, pcp_ctx *c) {
    memset(c, 0, sizeof *c);
    pcp_edges *g = NULL;
    canopy_status s = check_edges(po);
    if (!s) s = canopy_alloc((void **)&g, 1, sizeof *g);
    if (s) return s;
    pcp_edges_init(g, po->rmin, po->rmax, po->nbins, po->log_bins);
    c->edges = g;
    c->nbins = po->nbins;
    c->lo2 = pcp_e2(c, 0);
    c->hi2 = pcp_e2(c, po->nbins);
    return bin_direct(c, po);
}

/* Prefix sums of a tree's weights in tree order (squared: of their squares). */
static canopy_status weight_prefix(const canopy_tree_view *t, int squared, double **out) {
    canopy_status s = canopy_alloc((void **)out, (size_t)t->n + 1, sizeof **out);
    if (s) return s;
    (*out)[0] = 0.0;
    for (int64_t i = 0; i < t->n; i++) {
        double w = (double)t->weights[i];
        (*out)[i + 1] = (*out)[i] + (squared ? w * w : w);
    }
    return CANOPY_OK;
}

/* A tree's points as d arrays (pcp_ctx's SoA runs): each leaf's run starts at a
 * multiple of 16 and is padded with +inf (a distance to padding is +inf, outside every
 * bin, so whole vectors need no end mask), 16 more +inf at the end (a run's vectors
 * read from any point of it on); *off (per node) is where a leaf's run starts. */
static canopy_status soa_copy(const canopy_tree_view *t, float **out, int64_t **off,
                              int64_t *stride) {
    int32_t *leaf_at = NULL; /* leaf node + 1 by its first point */
    canopy_status s = canopy_alloc((void **)&leaf_at, (size_t)t->n + 1, sizeof *leaf_at);
    if (!s) s = canopy_alloc((void **)off, (size_t)t->n_nodes, sizeof **off);
    if (s) {
        canopy_free(leaf_at);
        return s;
    }
    memset(leaf_at, 0, sizeof *leaf_at * (size_t)(t->n + 1));
    int64_t total = 16;
    for (int32_t v = 0; v < t->n_nodes; v++) {
        const canopy_node *h = canopy_tv_node(t, v);
        (*off)[v] = 0;
        if (h->child >= 0 || h->end == h->begin) continue;
        leaf_at[h->begin] = v + 1;
        total += (h->end - h->begin + 15) / 16 * 16;
    }
    *stride = total;
    s = canopy_alloc((void **)out, (size_t)(total * t->d), sizeof **out);
    for (int64_t i = 0; i < total * t->d && !s; i++) (*out)[i] = INFINITY;
    for (int64_t i = 0, at = 0; i < t->n && !s; i++, at++) {
        if (leaf_at[i]) at = (*off)[leaf_at[i] - 1] = (at + 15) / 16 * 16;
        for (int32_t j = 0; j < t->d; j++) (*out)[j * total + at] = canopy_tv_point(t, i)[j];
    }
    canopy_free(leaf_at);
    return s;
}

static void leaf_kernel(pcp_ctx *c) {
    switch (canopy_cpu_isa()) {
    case CANOPY_ISA_AVX512:
        c->leaf = canopy_pcp_leaf_avx512;
        break;
    case CANOPY_ISA_AVX2:
        c->leaf = canopy_pcp_leaf_avx2;
        break;
    default:
        c->leaf = canopy_pcp_leaf_generic;
    }
}

/* The pair walk over built kd trees ta and tb (tb NULL: ta against itself), weighted
 * when the trees carry weights; on_cpu: the walk will run on the CPU (bins by formula
 * there; the GPU kernel keeps the bin table). resident: the device copies of ta and tb
 * (GPU backend, trees built on the device: no upload, and no CPU leaf arrays), else NULL. */
static canopy_status walk_trees(const canopy_tree *ta, const canopy_tree *tb, const float *e2,
                                const canopy_paircount_options *po, const canopy_run_options *o,
                                int on_cpu, const canopy_tree_view *const resident[2],
                                double *counts, pcp_out *out, canopy_stats *stats) {
    const int self = tb == NULL;
    double *pa = NULL, *pa2 = NULL, *pb = NULL;
    float *soa = NULL, *soa_a = NULL;
    int64_t *off = NULL, *off_a = NULL;
    const canopy_tree_view *va = canopy_tree_get_view(ta);
    const canopy_tree_view *vb = self ? va : canopy_tree_get_view(tb);
    const int weighted = va->weights != NULL;
    pcp_ctx c;
    memset(&c, 0, sizeof c);
    c.nbins = po->nbins;
    c.box = (float)po->boxsize;
    /* bins by formula on the CPU (bin_direct) need no table of squared edges */
    const int direct_bins =
        on_cpu && po->nbins >= (weighted ? PCP_DIRECT_MIN_BINS : PCP_CUM_MAX + 1);
    float *own_e2 = NULL;
    pcp_edges *gen = NULL;
    canopy_status s = CANOPY_OK;
    if (direct_bins && !(s = canopy_alloc((void **)&gen, 1, sizeof *gen))) {
        pcp_edges_init(gen, po->rmin, po->rmax, po->nbins, po->log_bins);
        c.edges = gen;
    }
    if (!s && !e2 && !direct_bins) s = squared_edges(po, &own_e2);
    c.e2 = e2 ? e2 : own_e2;
    if (!s) {
        c.lo2 = pcp_e2(&c, 0);
        c.hi2 = pcp_e2(&c, po->nbins);
    }
    leaf_kernel(&c);
    c.copies = po->nbins <= PCP_COPIES_MAX_BINS ? PCP_COPIES : 1;
    c.mult = self ? 2.0 : 1.0;
    c.resident_a = resident ? resident[0] : NULL;
    c.resident_b = resident ? resident[1] : NULL;
    if (!s && weighted && !(s = weight_prefix(va, 0, &pa))) {
        s = self ? weight_prefix(va, 1, &pa2) : weight_prefix(vb, 0, &pb);
        c.pa = pa;
        c.pa2 = pa2;
        c.pb = self ? pa : pb;
    }
    if (!s && !resident) s = soa_copy(vb, &soa, &off, &c.soa_stride);
    if (!s && !resident && !self) s = soa_copy(va, &soa_a, &off_a, &c.soa_stride_a);
    c.soa_b = soa;
    c.soa_off_b = off;
    c.soa_a = self ? soa : soa_a;
    c.soa_off_a = self ? off : off_a;
    c.soa_stride_a = self ? c.soa_stride : c.soa_stride_a;
    if (!s && direct_bins) s = bin_direct(&c, po);
    if (!s && !c.direct && !c.e2 && !(s = squared_edges(po, &own_e2))) c.e2 = own_e2;
    if (!s && !c.direct) s = bin_table(&c);
    c.small = c.direct && !weighted ? c.copies : 0;
    if (c.small) c.copies = 1;
    /* the CPU walk's merge writes the counts or feeds the sink; the GPU's runner adds
       to an array (with a sink, one of its own, handed over whole) */
    c.out = out;
    const int cpu_walk = o->backend == CANOPY_BACKEND_CPU ||
                         (o->backend == CANOPY_BACKEND_AUTO &&
                          (va->n < CANOPY_PAIR_GPU_AUTO_MIN_POINTS || !canopy_gpu_usable()));
    double *own = NULL;
    if (!s && out->sink)
        s = cpu_walk ? canopy_alloc((void **)&out->buf, PCP_OUT_BLOCK, sizeof *out->buf)
                     : canopy_alloc((void **)&own, (size_t)po->nbins, sizeof *own);
    c.counts = own ? own : counts;
    for (int32_t b = 0; !s && !cpu_walk && b < po->nbins; b++) c.counts[b] = 0.0;
    canopy_pair_counters cnt;
    if (!s) {
        canopy_pair_traversal tr = {"paircount",
                                    &pcp_app,
                                    pcp_pair_cpu_runners,
                                    CANOPY_PAIRCOUNT_PAIR_GPU,
                                    &c,
                                    sizeof(double) * (size_t)po->nbins * c.copies +
                                        (size_t)c.small * po->nbins +
                                        (c.small ? po->nbins / PCP_SMALL_BLOCK + 1 : 0)};
        s = canopy_pair_traverse(ta, self ? NULL : tb, &tr, o, &cnt, stats);
    }
    if (!s && cpu_walk && !out->merged) pcp_merge_all(&c, NULL, 0); /* no pairs: zeros */
    if (!s && own) s = out->sink(out->user, 0, po->nbins, own);
    if (!s) s = out->status;
    if (!s && stats) { /* from the views' sizes: a device walk's host trees are shells */
        stats->build_seconds = ta->build_seconds + (tb ? tb->build_seconds : 0.0);
        stats->tree = CANOPY_TREE_KD;
        stats->tree_nodes = va->n_nodes + (tb ? vb->n_nodes : 0);
        stats->tree_depth = va->depth > (tb ? vb->depth : 0) ? va->depth : vb->depth;
    }
    canopy_free((void *)c.tab);
    canopy_free((void *)c.dpos);
    canopy_free(own);
    canopy_free(out->buf);
    out->buf = NULL;
    canopy_free(gen);
    canopy_free(own_e2);
    canopy_free(soa);
    canopy_free(soa_a);
    canopy_free(off);
    canopy_free(off_a);
    canopy_free(pa);
    canopy_free(pa2);
    canopy_free(pb);
    return s;
}

static canopy_status device_tree(canopy_points pts, const float *w, int32_t leaf, int copy,
                                 canopy_gpu_tree **g, canopy_tree **host, double *download);

/* Frees the host trees and their device copies (any may be NULL): the seconds it took. */
static double free_trees(canopy_tree *ta, canopy_tree *tb, canopy_gpu_tree *ga,
                         canopy_gpu_tree *gb) {
    const double t0 = canopy_now();
    canopy_tree_free(ta);
    canopy_tree_free(tb);
    canopy_gpu_tree_free(ga);
    canopy_gpu_tree_free(gb);
    return canopy_now() - t0;
}

/* The GPU walk's phases from host arrays into stats (build_seconds the device builds,
 * download_seconds the trees' copy to the host, part of transfer_seconds) and its note:
 * where a whole call's time goes (bench/paircount_bench.py --gpu-only prints them). */
static void gpu_phases(canopy_stats *stats, double build, double download, double walk,
                       double release) {
    const double walk_gpu =
        stats->transfer_seconds + stats->schedule_seconds + stats->traverse_seconds;
    stats->build_seconds = build;
    stats->download_seconds = download;
    stats->transfer_seconds += download;
    size_t k = strlen(stats->note);
    snprintf(stats->note + k, sizeof stats->note - k,
             "; GPU phases: build %.4f s, download %.4f s, frontier %.4f s, other copies %.4f s, "
             "kernel %.4f s, host setup %.4f s, release %.4f s",
             build, download, stats->schedule_seconds, stats->transfer_seconds - download,
             stats->traverse_seconds, walk - walk_gpu, release);
}

/* Variant auto on kd trees: the pair walk. Weights are both given or both NULL. */
static canopy_status pair_walk(canopy_points d1, const float *w1, canopy_points d2, const float *w2,
                               int self, const float *e2, const canopy_paircount_options *po,
                               const canopy_run_options *o, double *counts, pcp_out *out,
                               canopy_stats *stats) {
    canopy_tree *ta = NULL, *tb = NULL;
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    /* the walk's backend as canopy_pair_traverse will resolve it (the GPU kernel keeps
       the leaf size it was tuned with) */
    int on_cpu = o->backend == CANOPY_BACKEND_CPU ||
                 (o->backend == CANOPY_BACKEND_AUTO &&
                  (d1.n < CANOPY_PAIR_GPU_AUTO_MIN_POINTS || canopy_gpu_info(NULL, 0, NULL)));
    to.leaf_size = o->leaf_size > 0                            ? o->leaf_size
                   : on_cpu && !w1 && po->nbins <= PCP_CUM_MAX ? PCP_LEAF_SIZE_CUM
                   : on_cpu && !w1                             ? PCP_LEAF_SIZE_SMALL
                   : !w1                                       ? PCP_LEAF_SIZE_GPU
                                                               : PCP_LEAF_SIZE;
    /* the GPU walk builds its trees there from the host points (their host shells serve
       the walk's host side): at 2M points that beat the host build and its upload */
    canopy_gpu_tree *ga = NULL, *gb = NULL;
    const int on_gpu = !on_cpu && d1.n > 0 && d2.n > 0 && canopy_gpu_usable();
    canopy_status s = CANOPY_OK;
    double t0 = canopy_now(), download = 0.0, build;
    if (on_gpu) {
        s = device_tree(d1, w1, to.leaf_size, 0, &ga, &ta, &download);
        if (!s && !self) s = device_tree(d2, w2, to.leaf_size, 0, &gb, &tb, &download);
    } else {
        to.weights = w1;
        s = canopy_tree_build(d1, &to, &ta);
        to.weights = w2;
        if (!s && !self) s = canopy_tree_build(d2, &to, &tb);
    }
    const canopy_tree_view *resident[2] = {ga ? &ga->view : NULL, gb ? &gb->view : NULL};
    build = canopy_now() - t0 - download;
    t0 = canopy_now();
    if (!s)
        s = walk_trees(ta, self ? NULL : tb, e2, po, o, on_cpu, on_gpu ? resident : NULL, counts,
                       out, stats);
    const double walk = canopy_now() - t0, release = free_trees(ta, tb, ga, gb);
    if (!s && stats && on_gpu) gpu_phases(stats, build, download, walk, release);
    return s;
}

/* canopy_paircount into counts, or with out->sink into it (counts NULL). */
static canopy_status paircount(canopy_points data1, const float *weights1, canopy_points data2,
                               const float *weights2, const canopy_paircount_options *po,
                               const canopy_run_options *opt, double *counts, pcp_out *out,
                               canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    int self = 0;
    float *e2 = NULL;
    /* the pair walk makes the squared edges it needs itself (walk_trees) */
    const int pair = o.variant == CANOPY_VARIANT_AUTO && o.tree == CANOPY_TREE_KD;
    canopy_status s = prepare(po, &data1, &weights1, &data2, &weights2, &self, pair ? NULL : &e2);
    if (s) return s;
    if (o.tree == CANOPY_TREE_BST || (po->boxsize > 0.0 && o.tree != CANOPY_TREE_KD))
        s = canopy_fail(CANOPY_ERR_INVALID, "paircount: tree %s cannot count pairs%s (use kd)",
                        canopy_tree_kind_name(o.tree),
                        po->boxsize > 0.0 ? " in a periodic box" : "");
    int weighted = weights1 || weights2;
    float *own1 = NULL, *own2 = NULL;
    if (!s && weighted) s = unit_weights(data1.n, weights1, &own1, &weights1);
    if (!s && weighted) s = unit_weights(data2.n, weights2, &own2, &weights2);
    canopy_tree *tree = NULL;
    double *prefix = NULL;
    if (stats) memset(stats, 0, sizeof *stats);
    if (!s && pair) {
        s = pair_walk(data1, weights1, data2, weights2, self, e2, po, &o, counts, out, stats);
        canopy_free(own1);
        canopy_free(own2);
        canopy_free(e2);
        return s;
    }
    double *own = NULL; /* the single-tree walk's counts for a sink */
    if (!s && out->sink && !(s = canopy_alloc((void **)&own, (size_t)po->nbins, sizeof *own)))
        counts = own;
    if (!s) {
        canopy_tree_options to = canopy_tree_options_default(o.tree);
        to.leaf_size = o.leaf_size;
        to.weights = weighted ? weights2 : NULL;
        s = canopy_tree_build(data2, &to, &tree);
    }
    const canopy_tree_view *tv = tree ? canopy_tree_get_view(tree) : NULL;
    if (!s && weighted &&
        !(s = canopy_alloc((void **)&prefix, (size_t)tv->n + 1, sizeof *prefix))) {
        prefix[0] = 0.0;
        for (int64_t i = 0; i < tv->n; i++) prefix[i + 1] = prefix[i] + (double)tv->weights[i];
    }
    for (int32_t b = 0; counts && b < po->nbins; b++) counts[b] = 0.0;
    canopy_stats pass;
    double traverse = 0.0, schedule = 0.0, nodes = 0.0;
    for (int32_t b0 = 0; !s && b0 < po->nbins; b0 += PASS_BINS) {
        int32_t nb = po->nbins - b0 < PASS_BINS ? po->nbins - b0 : PASS_BINS;
        pc_ctx ctx = {data1,       weighted ? weights1 : NULL, prefix, e2,        b0,    nb, e2[b0],
                      e2[b0 + nb], (float)po->boxsize,         self,   po->nbins, counts};
        canopy_traversal tr = {"paircount", &pc_app, pc_cpu_runners, CANOPY_PAIRCOUNT_GPU,
                               &ctx,        data1,   data1.n,        NULL};
        memset(&pass, 0, sizeof pass);
        s = canopy_traverse(tree, &tr, &o, &pass);
        traverse += pass.traverse_seconds;
        schedule += pass.schedule_seconds;
        nodes += pass.nodes_per_query;
    }
    if (!s && stats) {
        canopy_tree_info info;
        canopy_tree_get_info(tree, &info);
        *stats = pass;
        stats->build_seconds = info.build_seconds;
        stats->tree = o.tree;
        stats->tree_nodes = info.n_nodes;
        stats->tree_depth = info.depth;
        stats->traverse_seconds = traverse;
        stats->schedule_seconds = schedule;
        stats->nodes_per_query = nodes; /* summed over the passes */
    }
    if (!s && own) s = out->sink(out->user, 0, po->nbins, own);
    canopy_tree_free(tree);
    canopy_free(prefix);
    canopy_free(own);
    canopy_free(own1);
    canopy_free(own2);
    canopy_free(e2);
    return s;
}

canopy_status canopy_paircount(canopy_points data1, const float *weights1, canopy_points data2,
                               const float *weights2, const canopy_paircount_options *po,
                               const canopy_run_options *opt, double *counts, canopy_stats *stats) {
    pcp_out out = {NULL, NULL, NULL, CANOPY_OK, 0};
    return paircount(data1, weights1, data2, weights2, po, opt, counts, &out, stats);
}

canopy_status canopy_paircount_blocks(canopy_points data1, const float *weights1,
                                      canopy_points data2, const float *weights2,
                                      const canopy_paircount_options *po,
                                      const canopy_run_options *opt, canopy_paircount_sink sink,
                                      void *user, canopy_stats *stats) {
    if (!sink) return canopy_fail(CANOPY_ERR_INVALID, "paircount: no sink for the counts");
    pcp_out out = {sink, user, NULL, CANOPY_OK, 0};
    return paircount(data1, weights1, data2, weights2, po, opt, NULL, &out, stats);
}

/* ---------------------------------------------------- device pointers -- */

/* A kd tree built on the device from device points (and weights, or NULL), and its
 * host side: a copy for the checks of device points (check_tree), else a shell (the
 * walk's host side needs its sizes and weights alone); the copy's seconds are added
 * to *download. */
static canopy_status device_tree(canopy_points pts, const float *w, int32_t leaf, int copy,
                                 canopy_gpu_tree **g, canopy_tree **host, double *download) {
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = leaf;
    to.weights = w;
    canopy_status s = canopy_tree_build_gpu(pts, &to, g);
    const double t0 = canopy_now();
    if (!s) s = copy ? canopy_gpu_tree_download(*g, host) : canopy_gpu_tree_host_shell(*g, host);
    *download += canopy_now() - t0;
    return s;
}

/* What check_data checks on host arrays, on the host copy of a device tree (the
 * points were checked finite by the build). */
static canopy_status check_tree(const canopy_tree *t, int k, float box) {
    const canopy_tree_view *v = canopy_tree_get_view(t);
    for (int64_t i = 0; v->weights && i < v->n; i++)
        if (!isfinite(v->weights[i]))
            return canopy_fail(CANOPY_ERR_INVALID, "paircount: weight %lld of data%d is %g",
                               (long long)v->ids[i], k, (double)v->weights[i]);
    const canopy_points pts = canopy_points_make(v->points, v->n, v->d);
    if (box > 0.0f && any_outside(&pts, box))
        for (int64_t i = 0; i < v->n; i++)
            for (int32_t j = 0; j < v->d; j++) {
                float x = canopy_tv_point(v, i)[j];
                if (!(x >= 0.0f && x < box))
                    return canopy_fail(CANOPY_ERR_INVALID,
                                       "paircount: point %lld of data%d has coordinate %g "
                                       "outside the periodic box [0, %g)",
                                       (long long)v->ids[i], k, (double)x, (double)box);
            }
    return CANOPY_OK;
}

/* The shapes and pointers of canopy_paircount_device's inputs (data2 the auto form
 * resolved: self). */
static canopy_status check_device_inputs(canopy_points d1, const float *w1, canopy_points d2,
                                         const float *w2, int self) {
    const canopy_points *sets[2] = {&d1, &d2};
    const float *ws[2] = {w1, w2};
    static const char *const names[2][2] = {{"paircount (device): data1", "weights1"},
                                            {"paircount (device): data2", "weights2"}};
    for (int k = 0; k < 2 - self; k++) {
        const canopy_points *p = sets[k];
        if (p->n < 0 || p->d < 1 || p->stride < p->d || (p->n > 0 && !p->data))
            return canopy_fail(CANOPY_ERR_INVALID, "%s: bad shape (n=%lld, d=%d, stride=%lld)",
                               names[k][0], (long long)p->n, (int)p->d, (long long)p->stride);
        canopy_status s = p->n > 0 ? canopy_gpu_require_device(p->data, names[k][0]) : CANOPY_OK;
        if (!s && ws[k] && p->n > 0) s = canopy_gpu_require_device(ws[k], names[k][1]);
        if (s) return s;
    }
    if (d2.d != d1.d)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "paircount: data1 has %d dimensions but data2 has %d", (int)d1.d,
                           (int)d2.d);
    if (!w1 != !w2)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "paircount (device): give both weights1 and weights2 or neither (a "
                           "side of weight 1 needs a device array of ones)");
    return CANOPY_OK;
}

canopy_status canopy_paircount_device(canopy_points d_data1, const float *d_weights1,
                                      canopy_points d_data2, const float *d_weights2,
                                      const canopy_paircount_options *po,
                                      const canopy_run_options *opt, double *counts, void *stream,
                                      canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    float *e2 = NULL;
    canopy_status s = squared_edges(po, &e2);
    if (s) return s;
    const int self = d_data2.n == 0 && d_data2.data == NULL;
    if (self) {
        d_data2 = d_data1;
        d_weights2 = d_weights1;
    }
    if (!counts)
        s = canopy_fail(CANOPY_ERR_INVALID, "paircount (device): counts must be a host array");
    else if (o.backend == CANOPY_BACKEND_CPU)
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "paircount (device): device pointers need backend gpu or auto");
    else if (o.tree != CANOPY_TREE_KD || o.variant != CANOPY_VARIANT_AUTO || o.leaf_size != 0)
        s = canopy_fail(CANOPY_ERR_UNSUPPORTED,
                        "paircount (device): only the kd pair walk runs from device pointers "
                        "(tree kd, variant auto, leaf size 0)");
    if (!s) s = check_device_inputs(d_data1, d_weights1, d_data2, d_weights2, self);
    for (int32_t b = 0; !s && b < po->nbins; b++) counts[b] = 0.0;
    if (stats) memset(stats, 0, sizeof *stats);
    canopy_gpu_tree *ga = NULL, *gb = NULL;
    canopy_tree *ta = NULL, *tb = NULL;
    const float box = (float)po->boxsize;
    if (!s && d_data1.n > 0 && d_data2.n > 0) {
        o.backend = CANOPY_BACKEND_GPU;
        s = canopy_gpu_wait_stream(stream);
        double t0 = canopy_now(), download = 0.0;
        const int32_t leaf = d_weights1 ? PCP_LEAF_SIZE : PCP_LEAF_SIZE_GPU;
        const int copy = d_weights1 || box > 0.0f; /* for check_tree */
        if (!s) s = device_tree(d_data1, d_weights1, leaf, copy, &ga, &ta, &download);
        if (!s && !self) s = device_tree(d_data2, d_weights2, leaf, copy, &gb, &tb, &download);
        const double build = canopy_now() - t0 - download;
        if (!s) s = check_tree(ta, 1, box);
        if (!s && !self) s = check_tree(tb, 2, box);
        const canopy_tree_view *resident[2] = {ga ? &ga->view : NULL, gb ? &gb->view : NULL};
        t0 = canopy_now();
        pcp_out out = {NULL, NULL, NULL, CANOPY_OK, 0};
        if (!s) s = walk_trees(ta, self ? NULL : tb, e2, po, &o, 0, resident, counts, &out, stats);
        const double walk = canopy_now() - t0, release = free_trees(ta, tb, ga, gb);
        if (!s && stats) gpu_phases(stats, build, download, walk, release);
    }
    canopy_free(e2);
    return s;
}

canopy_status canopy_paircount_brute(canopy_points data1, const float *weights1,
                                     canopy_points data2, const float *weights2,
                                     const canopy_paircount_options *po, double *counts) {
    int self = 0;
    float *e2 = NULL;
    canopy_status s = prepare(po, &data1, &weights1, &data2, &weights2, &self, &e2);
    if (s) return s;
    int32_t nbins = po->nbins;
    float box = (float)po->boxsize;
    for (int32_t b = 0; b < nbins; b++) counts[b] = 0.0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(canopy_threads())
    for (int64_t i = 0; i < data1.n; i++) {
        const float *x = canopy_point(data1, i);
        for (int64_t j = 0; j < data2.n; j++) {
            if (self && i == j) continue;
            float d2 = pc_dist2(x, canopy_point(data2, j), data1.d, box);
            if (d2 < e2[0] || d2 >= e2[nbins]) continue;
            int32_t b = 0, hi = nbins - 1; /* the last edge <= d2, by bisection */
            while (b < hi) {
                int32_t mid = b + (hi - b + 1) / 2;
                if (e2[mid] <= d2)
                    b = mid;
                else
                    hi = mid - 1;
            }
            double w =
                (weights1 ? (double)weights1[i] : 1.0) * (weights2 ? (double)weights2[j] : 1.0);
#pragma omp atomic
            counts[b] += w;
        }
    }
    canopy_free(e2);
    return CANOPY_OK;
}
