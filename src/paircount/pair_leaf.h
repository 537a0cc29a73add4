/* SPDX-License-Identifier: MIT */
/* The leaf-pair kernel of pair counts, one body for every lane width: each point of
 * leaf a against SIMT_W points of leaf b at a time (b's coordinates from the SoA
 * copy, so a vector load per dimension), distances exactly as canopy_paircount_brute
 * computes them (|x - y|, minimum image, squares summed in dimension order, no FMA:
 * C11 mode), then the bin of the lanes in range: up to SIMT_W bins by a binary search
 * over the edges held in a register, more from the bin table (one gather) and a count
 * of the cell's few edges <= d2 (a gather each) or a binary search among its bins (a
 * gather per step, while any lane is unresolved), and a scalar add per counted pair;
 * with many bins and no weights, the squared distances go to the buffer of
 * canopy_pcp_sort_flush instead.
 *
 * Include once per width's translation unit with SIMT_W defined and canopy/simt.h
 * included; PCP_LEAF_NAME names the kernel. */
#ifndef PCP_LEAF_NAME
#error "define PCP_LEAF_NAME before including paircount/pair_leaf.h"
#endif

#include "paircount/pair_count.h"

void PCP_LEAF_NAME(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                   const canopy_tree_view *tb, int32_t b, int sym);
void canopy_pcp_sort_flush(const pcp_ctx *c, double *hist, pcp_sortbuf *sb);

/* Unweighted pairs' bins wait in a buffer, so that the adds run as one tight loop
 * (consecutive ones into different histogram copies) rather than lane by lane. */
enum { PCP_LEAF_BUF = 1024 };

static inline int32_t pcp_leaf_flush(const pcp_ctx *c, double *hist, const int32_t *buf, int32_t n,
                                     double w) {
    const int32_t mask = c->copies - 1;
    const int64_t nbins = c->nbins;
    for (int32_t i = 0; i < n; i++) hist[(i & mask) * nbins + buf[i]] += w;
    return 0;
}

/* Few bins: the number of inner edges <= d2 by a branchless binary search over the
 * register, log2(SIMT_W) permutes and no memory access. */
static inline simt_int pcp_bins_reg(simt_float inner, simt_float d2) {
    simt_int pos = simt_splat(0);
    for (int32_t step = SIMT_W / 2; step >= 1; step /= 2) {
        simt_int cand = pos + step;
        pos = simt_blend_i(simt_shfl_f(inner, cand - 1) <= d2, cand, pos);
    }
    return pos;
}

/* More bins: the lane's table cell (one gather, two when it holds an edge), then
 * the last edge <= d2 among the cell's bins. Lanes outside `in` get 0. */
static inline simt_int pcp_bins_table(const pcp_ctx *c, simt_float d2, simt_mask in) {
    simt_mask far = in & (d2 >= c->split2); /* the others are in bin 0 */
    simt_int cell =
        simt_blend_i(far, ((simt_int)d2 - (int32_t)c->tab_base) >> c->tab_shift, simt_splat(0));
    simt_int t = simt_gather_i(c->tab, cell, far), lo = t >> 1, hi = lo;
    if (c->scan >= 0) {
        simt_int b = lo;
        for (int32_t m = 1; m <= c->scan; m++) b -= far & (simt_gather_f(c->e2, lo + m, far) <= d2);
        return b;
    }
    simt_mask wide = far & ((t & 1) != 0);
    if (simt_any(wide)) hi = simt_blend_i(wide, simt_gather_i(c->tab + 1, cell, wide) >> 1, lo);
    simt_mask open = wide & (lo < hi);
    while (simt_any(open)) {
        simt_int mid = (lo + hi + 1) >> 1;
        simt_mask le = simt_gather_f(c->e2, mid, open) <= d2;
        lo = simt_blend_i(open & le, mid, lo);
        hi = simt_blend_i(open & ~le, mid - 1, hi);
        open = open & (lo < hi);
    }
    return lo;
}

void PCP_LEAF_NAME(const pcp_ctx *c, double *hist, const canopy_tree_view *ta, int32_t a,
                   const canopy_tree_view *tb, int32_t b, int sym) {
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    const int32_t d = ta->d, end = hb->end;
    const int diag = sym && a == b;
    /* symmetric walks: each unordered pair is met once and stands for two */
    const double mult = sym ? 2.0 : 1.0;
    const float box = c->box, lo2 = c->lo2, hi2 = c->hi2;
    int32_t buf[PCP_LEAF_BUF], nbuf = 0;
    pcp_sortbuf *sb = c->sorted && !c->pa ? (pcp_sortbuf *)(void *)(hist + c->nbins) : NULL;
    if (sb) sb->w = mult;
    /* up to SIMT_W bins: the inner edges e2[1..nbins) in one register, +inf after */
    const int few = c->nbins <= SIMT_W;
    simt_float inner = simt_splat_f(INFINITY);
    for (int32_t l = 0; few && l + 1 < c->nbins; l++) inner[l] = c->e2[l + 1];
    for (int32_t i = ha->begin; i < ha->end; i++) {
        const float *p = canopy_tv_point(ta, i);
        const double wi = c->pa ? mult * (double)ta->weights[i] : mult;
        for (int32_t k = diag ? i + 1 : hb->begin; k < end; k += SIMT_W) {
            simt_float d2 = simt_splat_f(0.0f);
            for (int32_t j = 0; j < d; j++) {
                simt_float y;
                __builtin_memcpy(&y, c->soa_b + (int64_t)j * c->soa_stride + k, sizeof y);
                simt_float x = simt_abs_f(p[j] - y);
                if (box > 0.0f) {
                    simt_float z = box - x;
                    x = simt_blend_f(z < x, z, x);
                }
                d2 += x * x;
            }
            simt_mask in = (simt_iota() + k < end) & (d2 >= lo2) & (d2 < hi2);
            if (!simt_any(in)) continue;
            if (sb) { /* counted later, part by part */
                sb->n +=
                    simt_compress_i_padded((int32_t *)(void *)(sb + 1) + sb->n, (simt_int)d2, in);
                if (sb->n > c->sort_cap - SIMT_W) canopy_pcp_sort_flush(c, hist, sb);
                continue;
            }
            simt_int lo = few ? pcp_bins_reg(inner, d2) : pcp_bins_table(c, d2, in);
            if (!c->pa) { /* counts: the bins of this run of pairs, added below */
                nbuf += simt_compress_i_padded(buf + nbuf, lo, in);
                if (nbuf > PCP_LEAF_BUF - SIMT_W) nbuf = pcp_leaf_flush(c, hist, buf, nbuf, mult);
                continue;
            }
            for (uint32_t m = simt_bits(in); m; m &= m - 1) {
                int l = __builtin_ctz(m);
                double *h = hist + (int64_t)(l & (c->copies - 1)) * c->nbins;
                h[lo[l]] += wi * (double)tb->weights[k + l];
            }
        }
    }
    pcp_leaf_flush(c, hist, buf, nbuf, mult);
}
