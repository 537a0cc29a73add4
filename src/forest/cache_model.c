/* SPDX-License-Identifier: MIT */
/* The cache model behind --layout auto for the interpreter engines: Ren §5's count of
 * the cache lines a layout makes traversals read, priced with this machine's
 * latencies (cache_calibrate.c), for the batch the interpreter actually runs.
 *
 * Ren's T(x) = (T1+T2+TM) B/L (2^x - 1) + [T1 (N-x) + ceil((N-x)/G) (T2+TM)] B counts
 * every line of the sll top once per input and assumes nothing stays cached. The
 * interpreter instead runs blocks of R = 64 rows over 64 trees, so a line is loaded
 * once per block and shared by the block's rows (bench/results/forests.md measured
 * ll, which Ren's T(x) ranks last, fastest). Per tree and block of R rows:
 * - ll levels (all of ll, sll; hybrid above its switch level x): level k's n_k nodes
 *   fill s = n_k / L lines; if s <= 1 they share lines with the next trees' level k
 *   (s lines), else R rows picking nodes at random touch s (1 - (1 - 1/s)^R) lines.
 *   sll is costed as ll: its hot-first order (Ren's bias) measured no gain over ll
 *   here (bench/results/forests.md), so beta does not enter and ties go to ll.
 * - cc levels (all of cc; hybrid from x): per distinct block of G levels the rows
 *   enter, n (1 - (1 - 1/n)^R) for the n nodes at the block's top level, the lines
 *   a path reads in a block: its (2^(G+1) - 2) instructions' bytes / 64.
 * A line costs the latency of the smallest cache that holds its region (the top
 * levels for ll lines above a hybrid's switch level, the whole program otherwise);
 * each step costs T1. The costs rank layouts; they are not seconds. */
#include "forest/forest.h"
#include "vm/vm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { MODEL_ROWS = 64, MODEL_LEVELS = 64 };

static double level_latency(const cf_latencies *m, double bytes) {
    if (m->l1_bytes > 0 && bytes <= (double)m->l1_bytes) return m->l1;
    if (m->l2_bytes > 0 && bytes <= (double)m->l2_bytes) return m->l2;
    if (m->l3_bytes > 0 && bytes <= (double)m->l3_bytes) return m->l3;
    return m->mem;
}

/* Distinct items R rows touch when each picks one of n at random. */
static double touched(double n, double rows) {
    return n <= 1 ? n : n * (1 - pow(1 - 1 / n, rows));
}

/* Lines one ll level of n nodes per tree costs a block. */
static double ll_lines(double n, double L) {
    double s = n / L;
    return s <= 1 ? s : touched(s, MODEL_ROWS);
}

typedef struct shape {
    int32_t levels;                 /* deepest level + 1 */
    double n[MODEL_LEVELS];         /* mean nodes per tree at each level */
    double below[MODEL_LEVELS + 1]; /* program bytes of levels < k, all trees */
    double bytes, steps;            /* whole program; mean steps per row and tree */
} shape;

/* Cost of one tree for one block: ll levels [0, x), cc blocks from x. */
static double cost(const shape *sh, const cf_latencies *m, int32_t x) {
    double L = 64.0 / sizeof(cvm_insn), lat_all = level_latency(m, sh->bytes);
    double lat_top = level_latency(m, sh->below[x < sh->levels ? x : sh->levels]);
    double lines_top = 0, lines_cc = 0;
    for (int32_t k = 0; k < x && k < sh->levels; k++) lines_top += ll_lines(sh->n[k], L);
    int32_t G = canopy_cf_cc_levels();
    double per_block = (double)((1 << (G + 1)) - 2) * sizeof(cvm_insn) / 64.0;
    if (per_block < 1) per_block = 1;
    for (int32_t k = x; k < sh->levels; k += G)
        lines_cc += touched(sh->n[k], MODEL_ROWS) * per_block;
    return lines_top * lat_top + lines_cc * lat_all + sh->steps * MODEL_ROWS * m->l1;
}

void canopy_cf_cache_model(const canopy_forest *f, double beta, cf_cache_choice *out) {
    memset(out, 0, sizeof *out);
    shape sh;
    memset(&sh, 0, sizeof sh);
    double B = f->n_trees > 0 ? f->n_trees : 1, leaves = 0, leaf_depth = 0;
    for (int32_t t = 0; t < f->n_trees; t++) {
        /* breadth-first numbering: a node's level is one more than its parent's */
        int64_t b = f->trees[t].first;
        int32_t n = f->trees[t].n_nodes;
        int32_t *lv = malloc((size_t)n * sizeof *lv);
        if (!lv) continue;
        lv[0] = 0;
        for (int32_t i = 0; i < n; i++) {
            int32_t k = lv[i] < MODEL_LEVELS - 1 ? lv[i] : MODEL_LEVELS - 1;
            sh.n[k] += 1 / B;
            if (k + 1 > sh.levels) sh.levels = k + 1;
            if (f->feature[b + i] < 0) {
                leaves++;
                leaf_depth += lv[i];
                continue;
            }
            lv[f->left[b + i]] = lv[f->right[b + i]] = lv[i] + 1;
        }
        free(lv);
    }
    for (int32_t k = 1; k <= sh.levels; k++)
        sh.below[k] = sh.below[k - 1] + sh.n[k - 1] * B * sizeof(cvm_insn);
    sh.bytes = sh.below[sh.levels];
    sh.steps = leaves > 0 ? leaf_depth / leaves : 1; /* a leaf per tree; mean leaf depth */
    const cf_latencies *m = canopy_cf_machine_latencies();
    (void)beta; /* sll is costed as ll (see the top of the file) */
    int32_t N = sh.levels > 1 ? sh.levels : 2, best_x = 1;
    double best = INFINITY;
    for (int32_t x = 1; x < N; x++) {
        double c = cost(&sh, m, x);
        if (c < best) best = c, best_x = x;
    }
    out->cost[CANOPY_FOREST_LAYOUT_CC] = B * cost(&sh, m, 0);
    out->cost[CANOPY_FOREST_LAYOUT_SLL] = B * cost(&sh, m, N);
    out->cost[CANOPY_FOREST_LAYOUT_LL] = B * cost(&sh, m, N);
    out->cost[CANOPY_FOREST_LAYOUT_HYBRID] = B * best;
    out->switch_level = best_x; /* also for a hybrid asked for explicitly */
    canopy_forest_layout pick = CANOPY_FOREST_LAYOUT_HYBRID;
    static const canopy_forest_layout order[] = {CANOPY_FOREST_LAYOUT_LL, CANOPY_FOREST_LAYOUT_SLL,
                                                 CANOPY_FOREST_LAYOUT_CC};
    for (int i = 0; i < 3; i++)
        if (out->cost[order[i]] < out->cost[pick]) pick = order[i];
    out->layout = pick;
    /* Forest predictions take ll or cc (ties: ll). Every hybrid measured behind ll where
     * the line counts put it first: 7-22 % on both depth-10 forests on the AMD VM, 6-16 %
     * on the Xeon's batch models (bench/results/forests.md), a cost the counts do not
     * see; the B+ tree's lookups measured hybrid x = 1-3 among the best (bptree.md). */
    out->forest_layout = out->cost[CANOPY_FOREST_LAYOUT_CC] < out->cost[CANOPY_FOREST_LAYOUT_LL]
                             ? CANOPY_FOREST_LAYOUT_CC
                             : CANOPY_FOREST_LAYOUT_LL;
}

/* Ren samples 5 % of the input; every 20th row, capped at 64 rows so that auto's
 * estimate stays a small fraction of the prediction itself: the sample walks branchy
 * and unordered, ~10x slower per step than the interpreter, and at 256 rows it was
 * ~5 % of a 10,000-row vm_simd prediction of 100 depth-8 trees on one core
 * (bench/results/forests.md); 64 rows x the trees' decisions still give the share to
 * about 0.01. Counts are per tree (trees are disjoint node ranges), so the threads
 * share nothing. */
double canopy_cf_sample_bias(const canopy_forest *f, canopy_points X, uint8_t *cold) {
    int64_t step = X.n / 64 > 20 ? X.n / 64 : 20;
    int64_t hot = 0, total = 0;
#pragma omp parallel for num_threads(canopy_threads()) reduction(+ : hot, total) schedule(dynamic, 16)
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t b = f->trees[t].first;
        int32_t n = f->trees[t].n_nodes;
        uint32_t *went = calloc(2 * (size_t)n, sizeof *went); /* per node: left, right */
        for (int32_t i = 0; i < n && cold; i++) /* without statistics: right is cold */
            if (f->feature[b + i] >= 0) {
                cold[b + f->left[b + i]] = 0;
                cold[b + f->right[b + i]] = 1;
            }
        if (!went) continue;
        for (int64_t r = 0; r < X.n; r += step) {
            const float *x = X.data + r * X.stride;
            int64_t g = b;
            while (f->feature[g] >= 0) {
                /* the model's own comparison in double: canopy_cf_le_threshold's rounding
                 * (a libm call per node) would be most of the sample's time */
                uint8_t fl = f->flags[g];
                float v = x[f->feature[g]];
                int miss = v != v || ((fl & CF_MISS_ZERO) && v >= -CF_ZERO_EPS && v <= CF_ZERO_EPS);
                double th = f->threshold[g];
                int right = miss               ? !(fl & CF_DEFAULT_LEFT)
                            : (fl & CF_CMP_LT) ? !((double)v < th)
                                               : !((double)v <= th);
                went[2 * (g - b) + right]++;
                g = b + (right ? f->right[g] : f->left[g]);
            }
        }
        for (int32_t i = 0; i < n; i++) {
            int64_t g = b + i;
            if (f->feature[g] < 0) continue;
            uint32_t l = went[2 * i], r = went[2 * i + 1];
            hot += l > r ? l : r;
            total += l + r;
            if (cold) {
                cold[b + f->left[g]] = r > l;
                cold[b + f->right[g]] = !(r > l);
            }
        }
        free(went);
    }
    if (cold)
        for (int32_t t = 0; t < f->n_trees; t++) cold[f->trees[t].first] = 0; /* roots */
    return total ? (double)hot / (double)total : 0.5;
}
