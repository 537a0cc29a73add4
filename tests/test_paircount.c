/* SPDX-License-Identifier: MIT */
/* canopy_paircount against its brute force: auto and cross, weights, linear and log
 * bins, periodic boxes, every CPU variant and schedule, several tree kinds, seeds and
 * sizes (empty, d = 1, duplicates on a coarse grid), more bins than one pass holds;
 * and the refusals of bad input. With a usable GPU, every case also runs under the
 * GPU variants (the first two schedules of each CPU variant become GPU runs).
 * The pair walk (variant auto on kd trees) also runs under every ISA's leaf kernel,
 * one and two threads, up to 10^5 bins, and on the GPU when there is one. */
#include "canopy.h"
#include "check.h"
#include "core/cpu_internal.h"
#include "paircount/pair_count.h"
#include "paircount_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int gpu; /* a usable GPU: every case also runs on it */

static void check_case(int64_t n1, int64_t n2, int32_t d, int cross, int weighted, int periodic,
                       int log_bins, int32_t nbins, int coarse, canopy_tree_kind kind) {
    pc_case c = pc_case_make(n1, n2, d, cross, weighted, periodic, log_bins, nbins, coarse);
    canopy_paircount_options po = c.po;
    canopy_points p1 = c.p1, p2 = c.p2;
    const float *w1 = c.w1, *w2 = c.w2;
    double *want = c.want, *got = c.got;
    int32_t bad = 0;
    po.rmin = log_bins ? 0.3 : (coarse ? 0.0 : 0.1);
    po.rmax = periodic ? 4.0 : 3.0 + 4.0 * uniform();
    CHECK_OK(canopy_paircount_brute(p1, w1, p2, w2, &po, want));
    const canopy_variant vs[] = {CANOPY_VARIANT_AUTO, CANOPY_VARIANT_REC, CANOPY_VARIANT_DR,
                                 CANOPY_VARIANT_SR,   CANOPY_VARIANT_GDR, CANOPY_VARIANT_SIMD_L};
    const canopy_schedule ss[] = {CANOPY_SCHEDULE_AUTO, CANOPY_SCHEDULE_NONE,
                                  CANOPY_SCHEDULE_MORTON, CANOPY_SCHEDULE_TREE,
                                  CANOPY_SCHEDULE_HYBRID};
    for (size_t v = 0; v < sizeof vs / sizeof *vs; v++)
        for (size_t s = 0; s < sizeof ss / sizeof *ss; s++) {
            canopy_run_options o = canopy_run_options_default();
            o.variant = vs[v];
            o.schedule = ss[s];
            o.backend = CANOPY_BACKEND_CPU;
            o.tree = kind;
            o.leaf_size = 1 + (int32_t)(uniform() * 12);
            canopy_stats st;
            if (gpu && s < 2) { /* GPU variants, with and without the device hybrid */
                o.backend = CANOPY_BACKEND_GPU;
                const canopy_variant gv[] = {CANOPY_VARIANT_DR,   CANOPY_VARIANT_SR,
                                             CANOPY_VARIANT_GDR,  CANOPY_VARIANT_DR_L,
                                             CANOPY_VARIANT_SR_L, CANOPY_VARIANT_FSM_L};
                o.variant = gv[v];
                o.schedule = s ? CANOPY_SCHEDULE_HYBRID : CANOPY_SCHEDULE_NONE;
            }
            CHECK_OK(canopy_paircount(p1, w1, p2, w2, &po, &o, got, &st));
            CHECK_MSG(same(got, want, nbins, weighted, &bad),
                      "n1=%lld n2=%lld d=%d cross=%d w=%d box=%d log=%d nbins=%d %s %s %s %s: "
                      "bin0 %g want %g",
                      (long long)n1, (long long)n2, (int)d, cross, weighted, periodic, log_bins,
                      (int)nbins, canopy_tree_kind_name(kind), canopy_variant_name(o.variant),
                      canopy_schedule_name(o.schedule), canopy_backend_name(o.backend), got[0],
                      want[0]);
        }
    /* the whole sum: every pair in [rmin, rmax) counted once per order */
    if (!weighted && !periodic && !cross && !coarse && po.rmin == 0.0) {
        double total = 0.0;
        for (int32_t b = 0; b < nbins; b++) total += want[b];
        CHECK(fmod(total, 2.0) == 0.0);
    }
    pc_case_free(&c);
}

/* The pair walk alone: every ISA's leaf kernel, 1 and 2 threads, random leaf sizes,
 * the GPU's pair kernel when there is one; many bins, where the single-tree walk
 * would take one pass per PASS_BINS. */
static void check_pair_walk(int64_t n1, int64_t n2, int32_t d, int cross, int weighted,
                            int periodic, int log_bins, int32_t nbins, int coarse) {
    pc_case c = pc_case_make(n1, n2, d, cross, weighted, periodic, log_bins, nbins, coarse);
    canopy_paircount_options po = c.po;
    canopy_points p1 = c.p1, p2 = c.p2;
    const float *w1 = c.w1, *w2 = c.w2;
    double *want = c.want, *got = c.got;
    int32_t bad = 0;
    po.rmin = log_bins ? 0.05 : (coarse ? 0.0 : 0.01 * uniform());
    po.rmax = periodic ? 4.0 : 1.0 + 3.0 * uniform();
    CHECK_OK(canopy_paircount_brute(p1, w1, p2, w2, &po, want));
    const int isas[] = {CANOPY_ISA_SCALAR, CANOPY_ISA_AVX2, CANOPY_ISA_AVX512};
    for (int run = 0; run < 7; run++) {
        canopy_run_options o = canopy_run_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        o.leaf_size = run % 2 ? 1 + (int32_t)(uniform() * 40) : 0;
        if (run < 6) {
            canopy_cpu_isa_override(isas[run / 2]);
            canopy_set_threads(1 + run % 2);
        } else if (gpu) {
            o.backend = CANOPY_BACKEND_GPU;
        } else {
            continue;
        }
        canopy_stats st;
        CHECK_OK(canopy_paircount(p1, w1, p2, w2, &po, &o, got, &st));
        CHECK_MSG(same(got, want, nbins, weighted, &bad) && st.variant == CANOPY_VARIANT_DR,
                  "pair walk n1=%lld n2=%lld d=%d cross=%d w=%d box=%d log=%d nbins=%d leaf=%d "
                  "run %d (%s): %s",
                  (long long)n1, (long long)n2, (int)d, cross, weighted, periodic, log_bins,
                  (int)nbins, (int)o.leaf_size, run, canopy_backend_name(o.backend), st.note);
    }
    canopy_cpu_isa_override(-1);
    canopy_set_threads(0);
    pc_case_free(&c);
}

/* What canopy_paircount_blocks handed its sink: the counts by bin, the blocks seen,
 * whether they came in order, and the block at which the sink fails (-1: never). */
typedef struct block_sink {
    double *got;
    int32_t next, blocks, fail_at, in_order;
} block_sink;

static canopy_status take_block(void *user, int32_t first, int32_t n, const double *counts) {
    block_sink *k = (block_sink *)user;
    k->in_order &= first == k->next && n > 0;
    if (k->blocks++ == k->fail_at) return canopy_fail(CANOPY_ERR_IO, "sink full");
    memcpy(k->got + first, counts, sizeof *counts * (size_t)n);
    k->next = first + n;
    return CANOPY_OK;
}

/* canopy_paircount_blocks equals canopy_paircount bit for bit, its blocks consecutive,
 * on the pair walk (one and two threads: several histograms summed a block at a time),
 * the single-tree walk and the GPU's (one block), auto and cross, weighted, empty data (zeros), a
 * few bins to several blocks; a sink's error ends the call; no sink is refused. */
static void check_blocks(int64_t n1, int cross, int weighted, int32_t nbins) {
    pc_case c = pc_case_make(n1, cross ? n1 / 2 + 1 : 0, 3, cross, weighted, 0, 1, nbins, 0);
    c.po.rmin = 0.05;
    c.po.rmax = 1.0 + 3.0 * uniform();
    block_sink k = {c.want, 0, 0, -1, 1};
    for (int run = 0; run < 4; run++) {
        /* dr: passes of 26 bins; the GPU's weighted sums vary in their last bits */
        if ((run == 2 && nbins > 20000) || (run == 3 && (!gpu || weighted))) continue;
        canopy_run_options o = canopy_run_options_default();
        o.backend = run == 3 ? CANOPY_BACKEND_GPU : CANOPY_BACKEND_CPU; /* an array handed over */
        o.variant = run == 2 ? CANOPY_VARIANT_DR : CANOPY_VARIANT_AUTO;
        canopy_set_threads(1 + run % 2);
        CHECK_OK(canopy_paircount(c.p1, c.w1, c.p2, c.w2, &c.po, &o, c.got, NULL));
        memset(c.want, 0xff, sizeof *c.want * (size_t)nbins);
        k.next = k.blocks = 0;
        CHECK_OK(canopy_paircount_blocks(c.p1, c.w1, c.p2, c.w2, &c.po, &o, take_block, &k, NULL));
        CHECK_MSG(k.in_order && k.next == nbins &&
                      !memcmp(c.want, c.got, sizeof *c.got * (size_t)nbins),
                  "blocks n1=%lld cross=%d w=%d nbins=%d run %d: %d blocks, in order %d, to %d",
                  (long long)n1, cross, weighted, (int)nbins, run, (int)k.blocks, (int)k.in_order,
                  (int)k.next);
        k.fail_at = k.blocks - 1; /* the last block fails */
        k.next = k.blocks = 0;
        CHECK_FAILS(
            canopy_paircount_blocks(c.p1, c.w1, c.p2, c.w2, &c.po, &o, take_block, &k, NULL),
            CANOPY_ERR_IO, "sink full");
        k.fail_at = -1;
        CHECK_FAILS(canopy_paircount_blocks(c.p1, c.w1, c.p2, c.w2, &c.po, &o, NULL, &k, NULL),
                    CANOPY_ERR_INVALID, "no sink");
    }
    canopy_set_threads(0);
    pc_case_free(&c);
}

/* Unweighted counts into at most 15 bins (the per-lane edge counters of the leaf
 * kernels and their default leaf size of 128): dense enough that most leaf pairs are
 * in range, bin counts around every counter width (4, 8, 12, 16), auto and cross,
 * open and periodic, uniform and on the coarse grid (distances on the edges), leaf
 * sizes from 1 to 200 (leaves of several vectors, partial vectors, a's points out of
 * range of b's box, periodic leaf pairs that do and do not wrap). Quick: half the points,
 * still several leaves of the largest size (the counters go to the histogram after each
 * vector of a's points, whatever n). */
static void check_counters(int32_t nbins, int cross, int periodic, int coarse, int32_t d) {
    const int64_t n = check_quick() ? 750 : 1500, n2 = cross ? n * 11 / 15 : 0;
    pc_case c = pc_case_make(n, n2, d, cross, 0, periodic, !coarse, nbins, coarse);
    c.po.rmin = coarse ? 0.0 : 0.05 + 0.2 * uniform();
    c.po.rmax = periodic || coarse ? 4.0 : 1.5 + 2.5 * uniform();
    CHECK_OK(canopy_paircount_brute(c.p1, NULL, c.p2, NULL, &c.po, c.want));
    const int isas[] = {CANOPY_ISA_SCALAR, CANOPY_ISA_AVX2, CANOPY_ISA_AVX512};
    for (int run = 0; run < 9; run++) {
        canopy_run_options o = canopy_run_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        o.leaf_size = run % 3 == 0 ? 0 : run % 3 == 1 ? 17 : 1 + (int32_t)(uniform() * 200);
        canopy_cpu_isa_override(isas[run / 3]);
        canopy_set_threads(1 + run % 2);
        int32_t bad = 0;
        CHECK_OK(canopy_paircount(c.p1, NULL, c.p2, NULL, &c.po, &o, c.got, NULL));
        CHECK_MSG(same(c.got, c.want, nbins, 0, &bad),
                  "counters nbins=%d cross=%d box=%d coarse=%d d=%d leaf=%d run %d: bin %d %g, "
                  "brute force %g",
                  (int)nbins, cross, periodic, coarse, (int)d, (int)o.leaf_size, run, (int)bad,
                  c.got[bad], c.want[bad]);
    }
    canopy_cpu_isa_override(-1);
    canopy_set_threads(0);
    pc_case_free(&c);
}

/* The counters' edge windows: leaf pairs compare only with the edges inside their
 * distance bounds, so with small leaves against many narrow log bins (rmin far below the
 * point spacing, rmax half the side) the windows run from none to all edges; open and
 * periodic, auto and cross, uniform and on the grid (distances equal to the bounds and
 * the edges), every ISA. Quick: half the points (spacing 0.75, still far above rmin). */
static void check_windows(int cross, int periodic, int coarse) {
    const int32_t nbins = 15;
    const int64_t n = check_quick() ? 1250 : 2500, n2 = cross ? n * 18 / 25 : 0;
    pc_case c = pc_case_make(n, n2, 3, cross, 0, periodic, 1, nbins, coarse);
    c.po.rmin = coarse ? 1.0 : 0.02 + 0.05 * uniform();
    c.po.rmax = 4.0;
    CHECK_OK(canopy_paircount_brute(c.p1, NULL, c.p2, NULL, &c.po, c.want));
    const int isas[] = {CANOPY_ISA_SCALAR, CANOPY_ISA_AVX2, CANOPY_ISA_AVX512};
    for (int run = 0; run < 6; run++) {
        canopy_run_options o = canopy_run_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        o.leaf_size = run % 2 ? 1 + (int32_t)(uniform() * 8) : 8 + (int32_t)(uniform() * 40);
        canopy_cpu_isa_override(isas[run / 2]);
        int32_t bad = 0;
        CHECK_OK(canopy_paircount(c.p1, NULL, c.p2, NULL, &c.po, &o, c.got, NULL));
        CHECK_MSG(same(c.got, c.want, nbins, 0, &bad),
                  "windows cross=%d box=%d coarse=%d leaf=%d run %d: bin %d %g, brute force %g",
                  cross, periodic, coarse, (int)o.leaf_size, run, (int)bad, c.got[bad],
                  c.want[bad]);
    }
    canopy_cpu_isa_override(-1);
    pc_case_free(&c);
}

/* Issue 35's case scaled to [0, 8): 20k points, 10^6 log bins out to a tenth of the
 * side, about a million pairs in range, which stay in the buffer until the merge
 * counts them (one and two threads). Quick: 10k points, rmax 1.3 (as many pairs). */
static void check_many_bins_20k(void) {
    int quick = check_quick();
    pc_case c = pc_case_make(quick ? 10000 : 20000, 0, 3, 0, 0, 0, 1, 1000000, 0);
    c.po.rmin = 0.04;
    c.po.rmax = quick ? 1.3 : 0.8;
    CHECK_OK(canopy_paircount_brute(c.p1, NULL, c.p2, NULL, &c.po, c.want));
    double total = 0.0;
    for (int32_t b = 0; b < c.po.nbins; b++) total += c.want[b];
    CHECK_MSG(total > 1e6, "20k points, 10^6 bins: only %g pairs in range", total);
    for (int threads = 1; threads <= 2; threads++) {
        canopy_set_threads(threads);
        int32_t bad = 0;
        CHECK_OK(canopy_paircount(c.p1, NULL, c.p2, NULL, &c.po, NULL, c.got, NULL));
        CHECK_MSG(same(c.got, c.want, c.po.nbins, 0, &bad),
                  "20k points, 10^6 bins, %d threads: bin %d %g, brute force %g", threads, (int)bad,
                  c.got[bad], c.want[bad]);
    }
    canopy_set_threads(0);
    pc_case_free(&c);
}

/* Distances exactly on the float edges and one or two ulps to either side (1-d points
 * at sqrtf(e2[b]) +- k ulps from a point at 0: d2 = y * y), for the bins by formula
 * (their uncertain fractions) and the bin table (weighted, 100 bins): data1 = {0}
 * against them (only those pairs), then all of them together (auto), every ISA. */
static void check_on_edges(int32_t nbins, int log_bins, int weighted) {
    canopy_paircount_options po = canopy_paircount_options_default();
    po.nbins = nbins;
    po.log_bins = log_bins;
    po.rmin = log_bins ? 0.05 + 0.1 * uniform() : 0.0;
    po.rmax = 2.0 + 2.0 * uniform();
    double *edges = malloc(sizeof *edges * (size_t)(nbins + 1));
    CHECK_OK(canopy_paircount_edges(&po, edges));
    enum { NUDGE = 2 };
    const int64_t picks = check_quick() ? 200 : 600, n = picks * (2 * NUDGE + 1) + 1;
    float *y = malloc(sizeof *y * (size_t)n), *w = malloc(sizeof *w * (size_t)n);
    y[0] = 0.0f;
    for (int64_t i = 1; i < n; i++) {
        int32_t b = (int32_t)(uniform() * (float)(nbins + 1));
        b = b > nbins ? nbins : b;
        float r = sqrtf((float)(edges[b] * edges[b]));
        for (int k = -NUDGE; k <= NUDGE && i < n; k++, i++) {
            uint32_t u;
            memcpy(&u, &r, sizeof u);
            u = (int64_t)u + k < 0 ? 0u : (uint32_t)((int64_t)u + k);
            memcpy(&y[i], &u, sizeof u);
            w[i] = 0.25f + uniform();
        }
        i--;
    }
    w[0] = 1.5f;
    double *want = calloc((size_t)nbins, sizeof *want), *got = calloc((size_t)nbins, sizeof *got);
    const int isas[] = {CANOPY_ISA_SCALAR, CANOPY_ISA_AVX2, CANOPY_ISA_AVX512};
    for (int cross = 1; cross >= 0; cross--) {
        canopy_points p1 = canopy_points_make(y, cross ? 1 : n, 1);
        canopy_points p2 =
            cross ? canopy_points_make(y + 1, n - 1, 1) : canopy_points_make(NULL, 0, 1);
        const float *w1 = weighted ? w : NULL, *w2 = weighted && cross ? w + 1 : NULL;
        CHECK_OK(canopy_paircount_brute(p1, w1, p2, w2, &po, want));
        for (int k = 0; k < 3; k++) {
            canopy_cpu_isa_override(isas[k]);
            canopy_run_options o = canopy_run_options_default();
            o.backend = CANOPY_BACKEND_CPU;
            int32_t bad = 0;
            CHECK_OK(canopy_paircount(p1, w1, p2, w2, &po, &o, got, NULL));
            CHECK_MSG(same(got, want, nbins, weighted, &bad),
                      "on edges nbins=%d log=%d w=%d cross=%d isa %d: bin %d %g, brute force %g",
                      (int)nbins, log_bins, weighted, cross, k, (int)bad, got[bad], want[bad]);
        }
    }
    canopy_cpu_isa_override(-1);
    free(edges);
    free(y);
    free(w);
    free(want);
    free(got);
}

canopy_status canopy_pcp_direct_make(const canopy_paircount_options *po, pcp_ctx *c);

/* The certain margin of the bins by formula is a bound (direct_error in paircount.c), no
 * longer measured: here the error of pcp_direct_pos (the lanes' float operations) at
 * every float edge stays within it, log and linear, 16 to 10^6 bins, ranges of many
 * scales; and the narrowest bins of a scale lose the formula rather than exceed it. */
static void check_direct_bound(void) {
    const int32_t sizes[] = {16, 100, 513, 4096, 100000, 1000000};
    int direct = 0;
    for (int rep = 0; rep < (check_quick() ? 12 : 36); rep++) {
        canopy_paircount_options po = canopy_paircount_options_default();
        po.nbins = sizes[rep % 6];
        po.log_bins = (rep / 6) % 2;
        double scale = pow(10.0, 6.0 * uniform() - 3.0);
        po.rmin = (po.log_bins || rep % 3 ? 0.01 + uniform() : 0.0) * scale;
        po.rmax = po.rmin + (rep % 5 == 4 ? 1e-3 : 0.05 + 2.0 * uniform()) * scale;
        pcp_ctx c;
        CHECK_OK(canopy_pcp_direct_make(&po, &c));
        double worst = 0.0;
        int32_t at = -1;
        for (int32_t b = 1; c.direct && b < po.nbins; b++) {
            int32_t w;
            float f;
            pcp_direct_pos(&c, pcp_e2(&c, b), &w, &f);
            double e = fabs((double)(w - b) + (double)f);
            if (e > worst) worst = e, at = b;
        }
        CHECK_MSG(!c.direct || worst <= (double)c.dlo - 1e-3,
                  "direct bound nbins=%d log=%d rmin=%g rmax=%g: error %g at edge %d over the "
                  "bound %g",
                  (int)po.nbins, po.log_bins, po.rmin, po.rmax, worst, (int)at,
                  (double)c.dlo - 1e-3);
        direct += c.direct;
        canopy_free((void *)c.dpos);
        canopy_free((void *)c.edges);
    }
    CHECK_MSG(direct >= (check_quick() ? 6 : 18), "bins by formula in only %d cases", direct);
}

/* pcp_edges2_fill against pcp_edge2 edge by edge (bit for bit), over ranges that start
 * and end inside and across runs of 1024 log edges, both ends included; the array
 * from canopy_alloc_large (huge pages from 2 MiB) filled and read through. */
static void check_edges_fill(void) {
    const int32_t sizes[] = {1, 2, 1023, 1024, 1025, 4096, 100000, 999999, 1000000};
    for (int k = 0; k < (int)(sizeof sizes / sizeof *sizes); k++) {
        const int32_t nbins = sizes[k];
        float *e2 = NULL;
        CHECK_OK(canopy_alloc_large((void **)&e2, (size_t)nbins + 1, sizeof *e2));
        CHECK(((uintptr_t)e2 % 64) == 0);
        pcp_edges *g = malloc(sizeof *g);
        for (int log_bins = 0; log_bins <= 1; log_bins++) {
            double rmin = log_bins ? 1e-3 + uniform() : 0.5 * uniform(),
                   rmax = rmin + 0.1 + uniform();
            pcp_edges_init(g, rmin, rmax, nbins, log_bins);
            for (int rep = 0; rep < 4; rep++) {
                int32_t b0 = rep ? (int32_t)(uniform() * (float)nbins) : 0;
                int32_t b1 =
                    rep == 1 ? nbins + 1 : b0 + (int32_t)(uniform() * (float)(nbins + 1 - b0));
                b1 = b1 > nbins + 1 ? nbins + 1 : b1 < b0 ? b0 : b1;
                pcp_edges2_fill(g, b0, b1, e2 + b0);
                int32_t bad = -1;
                for (int32_t b = b0; b < b1 && bad < 0; b++)
                    if (memcmp(&e2[b], &(float){pcp_edge2(g, b)}, sizeof(float))) bad = b;
                CHECK_MSG(bad < 0, "edges fill nbins=%d log=%d [%d, %d): edge %d %a, pcp_edge2 %a",
                          (int)nbins, log_bins, (int)b0, (int)b1, (int)bad, bad < 0 ? 0.0 : e2[bad],
                          bad < 0 ? 0.0 : pcp_edge2(g, bad));
            }
        }
        free(g);
        canopy_free(e2);
    }
    void *p = NULL;
    CHECK_FAILS(canopy_alloc_large(&p, SIZE_MAX / 2, 4), CANOPY_ERR_NOMEM, "overflow");
    CHECK(p == NULL);
    CHECK_FAILS(canopy_alloc_large(&p, SIZE_MAX - 100, 1), CANOPY_ERR_NOMEM, "too large");
    CHECK_OK(canopy_alloc_large(&p, 0, 8));
    canopy_free(p);
}

/* Bins whose float32 squared edges coincide are refused with the first such pair, the
 * same on every path: the pair walk checks the edges it makes a block at a time (bins by
 * formula: no table; here pairs inside a block and across the blocks' seams), the other
 * paths on a table. The expected pairs were found with the table's check. */
static void check_flat_edges(void) {
    static const struct {
        double rmin, rmax;
        int32_t nbins, log_bins, first;
    } cases[] = {{0.99, 1.005, 300000, 0, 200004},
                 {0.9995, 1.0001, 14743, 0, 12288},
                 {0.9995, 1.0001, 14746, 0, 12289},
                 {0.9995, 1.0001, 12290, 0, 10247},
                 {0.9995, 1.0001, 14743, 1, 12290}};
    float x[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
    canopy_points p = canopy_points_make(x, 2, 3), none = canopy_points_make(NULL, 0, 3);
    float w[2] = {1.0f, 2.0f};
    double *c = NULL;
    CHECK_OK(canopy_alloc((void **)&c, 300000, sizeof *c));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        canopy_paircount_options po = canopy_paircount_options_default();
        po.rmin = cases[i].rmin;
        po.rmax = cases[i].rmax;
        po.nbins = cases[i].nbins;
        po.log_bins = cases[i].log_bins;
        char want[128];
        snprintf(want, sizeof want, "bins %d and %d have the same float32 squared edge",
                 (int)cases[i].first - 1, (int)cases[i].first);
        canopy_run_options o = canopy_run_options_default();
        o.backend = CANOPY_BACKEND_CPU;
        CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, &o, c, NULL), CANOPY_ERR_INVALID,
                    want);
        CHECK_FAILS(canopy_paircount(p, w, none, NULL, &po, &o, c, NULL), CANOPY_ERR_INVALID, want);
        CHECK_FAILS(canopy_paircount_brute(p, NULL, none, NULL, &po, c), CANOPY_ERR_INVALID, want);
        o.variant = CANOPY_VARIANT_DR;
        CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, &o, c, NULL), CANOPY_ERR_INVALID,
                    want);
    }
    canopy_free(c);
}

static void check_refusals(void) {
    float x[4] = {0.5f, 1.5f, 2.5f, 9.0f};
    canopy_points p = canopy_points_make(x, 4, 1), none = canopy_points_make(NULL, 0, 1);
    double c[4];
    canopy_paircount_options po = canopy_paircount_options_default();
    po.rmax = 0.5;
    po.nbins = 0;
    CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, NULL, c, NULL), CANOPY_ERR_INVALID,
                "nbins");
    po.nbins = 2;
    po.log_bins = 1;
    CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, NULL, c, NULL), CANOPY_ERR_INVALID,
                "rmin > 0");
    po.log_bins = 0;
    po.boxsize = 4.0;
    CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, NULL, c, NULL), CANOPY_ERR_INVALID,
                "outside the periodic box");
    po.rmax = 3.0;
    CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, NULL, c, NULL), CANOPY_ERR_INVALID,
                "half the periodic box");
    po.boxsize = 0.0;
    po.rmin = 2.0;
    po.rmax = 1.0;
    CHECK_FAILS(canopy_paircount(p, NULL, none, NULL, &po, NULL, c, NULL), CANOPY_ERR_INVALID,
                "rmin < rmax");
    po.rmin = 0.0;
    float w[4] = {1.0f, NAN, 1.0f, 1.0f};
    CHECK_FAILS(canopy_paircount(p, w, none, NULL, &po, NULL, c, NULL), CANOPY_ERR_INVALID,
                "weight 1");
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_GPU;
    if (!gpu)
        CHECK(canopy_paircount(p, NULL, none, NULL, &po, &o, c, NULL) == CANOPY_ERR_UNSUPPORTED);
    /* the device entry with host points: refused (no module: unsupported, with the
       reason; a module: not device memory), and backend cpu before any pointer is read */
    canopy_status ds = canopy_paircount_device(p, NULL, none, NULL, &po, NULL, c, NULL, NULL);
    CHECK_MSG((ds == CANOPY_ERR_UNSUPPORTED && strstr(canopy_last_error(), "CUDA")) ||
                  (ds == CANOPY_ERR_INVALID && strstr(canopy_last_error(), "device memory")),
              "paircount_device on host points -> %s: %s", canopy_status_name(ds),
              canopy_last_error());
    o.backend = CANOPY_BACKEND_CPU;
    CHECK_FAILS(canopy_paircount_device(p, NULL, none, NULL, &po, &o, c, NULL, NULL),
                CANOPY_ERR_INVALID, "backend gpu or auto");
    o.backend = CANOPY_BACKEND_GPU;
    /* a hand count: 1-d points 0.5 1.5 2.5 9, bins [0, 0.5) [0.5, 1) ... auto */
    po.rmax = 3.0;
    po.nbins = 3;
    CHECK_OK(canopy_paircount(p, NULL, none, NULL, &po, NULL, c, NULL));
    CHECK_MSG(c[0] == 0.0 && c[1] == 4.0 && c[2] == 2.0, "hand count %g %g %g", c[0], c[1], c[2]);
}

int main(void) {
    rng = check_seed();
    gpu = canopy_gpu_info(NULL, 0, NULL) == CANOPY_OK;
    /* quick: one draw of each shape (leaf sizes, ranges; the seed changes every run) */
    for (int rep = 0; rep < (check_quick() ? 1 : 2); rep++) {
        check_case(0, 0, 2, 0, 0, 0, 0, 5, 0, CANOPY_TREE_KD);
        check_case(0, 50, 2, 1, 1, 0, 0, 5, 0, CANOPY_TREE_KD);
        check_case(60, 0, 2, 1, 0, 0, 0, 5, 0, CANOPY_TREE_KD);
        check_case(1, 0, 1, 0, 0, 0, 0, 4, 0, CANOPY_TREE_KD);
        check_case(700, 0, 1, 0, 0, 0, 0, 12, 1, CANOPY_TREE_KD);
        check_case(900, 0, 3, 0, 0, 0, 0, 30, 0, CANOPY_TREE_KD);
        check_case(900, 0, 3, 0, 1, 0, 1, 8, 0, CANOPY_TREE_KD);
        check_case(500, 700, 2, 1, 0, 0, 1, 15, 1, CANOPY_TREE_KD);
        check_case(500, 700, 2, 1, 1, 0, 0, 60, 0, CANOPY_TREE_KD);
        check_case(800, 0, 3, 0, 0, 1, 0, 20, 0, CANOPY_TREE_KD);
        check_case(600, 400, 3, 1, 1, 1, 1, 10, 1, CANOPY_TREE_KD);
        check_case(600, 0, 2, 0, 1, 1, 0, 7, 0, CANOPY_TREE_KD);
        check_case(600, 0, 4, 0, 0, 0, 0, 9, 1, CANOPY_TREE_BALL);
        check_case(600, 500, 3, 1, 1, 0, 0, 9, 0, CANOPY_TREE_VP);
        check_case(700, 0, 3, 0, 0, 0, 1, 9, 0, CANOPY_TREE_OCT);
    }
    for (int rep = 0; rep < 2; rep++) {
        check_pair_walk(0, 0, 3, 0, 0, 0, 0, 7, 0);
        check_pair_walk(300, 0, 1, 0, 0, 0, 1, 1000, 0);
        check_pair_walk(1000, 0, 3, 0, 0, 0, 1, 100000, 0);
        check_pair_walk(1000, 0, 3, 0, 1, 1, 0, 20000, 0);
        check_pair_walk(1200, 900, 3, 1, 0, 1, 1, 10, 0);
        check_pair_walk(1000, 800, 2, 1, 1, 0, 0, 33, 1);
        check_pair_walk(1000, 0, 3, 0, 1, 0, 0, 5, 1);
        check_pair_walk(600, 0, 5, 0, 0, 0, 0, 3, 0);
        check_pair_walk(40, 0, 3, 0, 0, 0, 0, 1, 1);
    }
    /* 10^6 bins: over a million pairs in range, so the buffered counting flushes
     * (linear on the grid: distances on the edges, cells of many edges; log: the
     * scan of a cell's few edges); weighted pairs go to their bins at once */
    check_pair_walk(1500, 0, 3, 0, 0, 1, 0, 1000000, 1);
    check_pair_walk(1500, 0, 3, 0, 0, 1, 1, 1000000, 0);
    check_pair_walk(600, 500, 3, 1, 1, 0, 1, 1000000, 1);
    /* cross, 3-D, open, unweighted, on the grid: the many-bins kernel's 3-D loop with
       many distances on the edges (uncertain lanes in most vectors) */
    check_pair_walk(1200, 900, 3, 1, 0, 0, 0, 1000000, 1);
    check_pair_walk(1200, 900, 3, 1, 0, 0, 0, 4096, 1);
    const int32_t few[] = {1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 15, 16};
    for (int k = 0; k < (int)(sizeof few / sizeof *few); k++)
        for (int v = 0; v < 4; v++)
            check_counters(few[k], v & 1, (v >> 1) & 1, (k + v) % 3 == 0, 1 + (k + v) % 3);
    for (int v = 0; v < 8; v++) check_windows(v & 1, (v >> 1) & 1, (v >> 2) & 1);
    /* many bins on fresh data: 513 (the first by formula when weighted) to 10^6, log and linear,
     * auto and cross, weighted, periodic, uniform and on the grid */
    for (int rep = 0; rep < 3; rep++) {
        const int32_t many[] = {513, 1000, 4096, 10000, 100000, 1000000};
        int32_t nb = many[(int)(uniform() * 6.0f) % 6];
        int v = (int)(uniform() * 16.0f);
        check_pair_walk(900 + (int64_t)(uniform() * 600), v & 1 ? 700 : 0, 1 + rep, v & 1,
                        (v >> 1) & 1, (v >> 2) & 1, (v >> 3) & 1, nb, rep == 2);
    }
    const int32_t edge_bins[] = {100, 513, 1000, 100000, 1000000};
    for (int k = 0; k < 5; k++) {
        check_on_edges(edge_bins[k], 1, 0);
        check_on_edges(edge_bins[k], 0, k % 2 == 0);
    }
    check_many_bins_20k();
    const int32_t block_bins[] = {7, 600, 8192, 20000, 1000000};
    for (int k = 0; k < 5; k++) check_blocks(k ? 700 : 0, k % 2, k == 3, block_bins[k]);
    check_edges_fill();
    check_direct_bound();
    check_refusals();
    check_flat_edges();
    return check_finish();
}
