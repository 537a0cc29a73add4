/* SPDX-License-Identifier: MIT */
/* Ren §5's analytical cache model, used by --layout auto. For B trees of N levels,
 * L nodes per cache line, G = levels per cc block and latencies T1 (L1 hit), T2
 * (L2) and TM (memory):
 *   T(x) = (T1+T2+TM) B/L (2^x - 1) + [T1 (N-x) + ceil((N-x)/G) (T2+TM)] B
 * for a hybrid with switch level x: the first term is the sll top (lines shared by
 * traversals), the second the per-tree cc bottom. x = N is pure sll, x = 0 pure cc.
 * Bias beta (share of left decisions, sampled) shrinks the top term: sll reads a
 * region narrower by up to 2 per level when inputs prefer one side. ll is sll
 * without the bias gain. Latencies are typical cycle counts of current x86 cores;
 * the model ranks layouts, it does not predict seconds. */
#include "forest/forest.h"

#include <math.h>
#include <string.h>

enum { T1 = 4, T2 = 14, TM = 200 };

static double cost(double B, int32_t N, double L, int32_t G, int32_t x, double bias_gain) {
    double top = (double)(T1 + T2 + TM) * B / L * (pow(2.0, x) - 1) * bias_gain;
    double rest = N - x;
    double bottom = (T1 * rest + ceil(rest / G) * (T2 + TM)) * B;
    return top + bottom;
}

void cf_cache_model(const canopy_forest *f, double beta, cf_cache_choice *out) {
    memset(out, 0, sizeof *out);
    int32_t N = 0;
    double mean_depth = 0;
    for (int32_t t = 0; t < f->n_trees; t++) {
        int32_t d = cf_tree_depth(f, t);
        mean_depth += d;
        if (d > N) N = d;
    }
    mean_depth /= f->n_trees > 0 ? f->n_trees : 1;
    /* Paths end at the leaves: model the mean depth, at least one level. */
    int32_t depth = (int32_t)ceil(mean_depth);
    if (depth < 1) depth = 1;
    double B = f->n_trees, L = 64.0 / sizeof(cf_lnode);
    int32_t G = cf_cc_levels();
    double skew = fabs(2 * beta - 1); /* 0 unbiased, 1 always one side */
    double gain = 1 - skew / 2;
    int32_t best_x = 0;
    double best = INFINITY;
    for (int32_t x = 0; x <= depth; x++) {
        double c = cost(B, depth, L, G, x, gain);
        if (c < best) {
            best = c;
            best_x = x;
        }
    }
    out->cost[CANOPY_FOREST_LAYOUT_CC] = cost(B, depth, L, G, 0, gain);
    out->cost[CANOPY_FOREST_LAYOUT_SLL] = cost(B, depth, L, G, depth, gain);
    out->cost[CANOPY_FOREST_LAYOUT_LL] = cost(B, depth, L, G, depth, 1.0);
    out->cost[CANOPY_FOREST_LAYOUT_HYBRID] = best;
    if (best_x == 0) {
        out->layout = CANOPY_FOREST_LAYOUT_CC;
        out->switch_level = 0;
    } else if (best_x >= depth) {
        out->layout = CANOPY_FOREST_LAYOUT_SLL;
        out->switch_level = 0;
    } else {
        out->layout = CANOPY_FOREST_LAYOUT_HYBRID;
        out->switch_level = best_x;
    }
    if (out->layout != CANOPY_FOREST_LAYOUT_HYBRID) {
        /* a hybrid asked for explicitly still needs a switch level inside the tree */
        out->switch_level = best_x < 1 ? 1 : best_x >= depth ? (depth > 1 ? depth - 1 : 1) : best_x;
    }
}

/* Ren samples 5 % of the input; every 20th row, capped at 256 rows so that auto's
 * estimate stays a small fraction of the prediction itself: the sample walks branchy
 * and unordered, ~10x slower per step than the walkers (1,024 rows cost a quarter of
 * a 20,000-row prediction of 200 trees), and 256 rows x the trees' decisions still
 * give the share to well under 0.01. */
double cf_sample_beta(const canopy_forest *f, canopy_points X) {
    int64_t step = X.n / 256 > 20 ? X.n / 256 : 20;
    int64_t left = 0, total = 0;
#pragma omp parallel for num_threads(canopy_threads()) reduction(+ : left, total) schedule(dynamic, 16)
    for (int32_t t = 0; t < f->n_trees; t++) {
        int64_t b = f->trees[t].first;
        for (int64_t r = 0; r < X.n; r += step) {
            const float *x = X.data + r * X.stride;
            int64_t g = b;
            while (f->feature[g] >= 0) {
                /* the model's own comparison in double: cf_le_threshold's rounding
                 * (a libm call per node) would be most of the sample's time */
                uint8_t fl = f->flags[g];
                float v = x[f->feature[g]];
                int miss = v != v || ((fl & CF_MISS_ZERO) && v >= -CF_ZERO_EPS && v <= CF_ZERO_EPS);
                double t = f->threshold[g];
                int right = miss               ? !(fl & CF_DEFAULT_LEFT)
                            : (fl & CF_CMP_LT) ? !((double)v < t)
                                               : !((double)v <= t);
                left += !right;
                total++;
                g = b + (right ? f->right[g] : f->left[g]);
            }
        }
    }
    return total ? (double)left / (double)total : 0.5;
}
