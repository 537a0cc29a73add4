/* SPDX-License-Identifier: MIT */
/* canopy_kde: kernel density estimates on the pair traversal (canopy/pair.h),
 * written against the public headers and its own folder (kde_pair.h, the descriptor
 * it shares with kde_gpu.cu).
 *
 * S(q) = sum_j k(|q - x_j|) with k the unnormalised kernel (k(0) = 1, non-increasing
 * in the distance); the density is p = knorm * S / n. A node pair (Q of the query
 * tree, R of the data tree) with squared-distance interval [mn, mx] gives every
 * query of Q between k(mx) and k(mn) per point of R. Adding the midpoint for all of
 * R errs by at most (k(mn) - k(mx)) / 2 per point, so the pair is accepted whole
 * when that is within a point's share of the tolerance, atol / knorm + rtol * L(Q) / n,
 * with L(Q) a lower bound on S over Q's queries: summed over the n data points the
 * error stays within atol * n / knorm + rtol * S, i.e. |p' - p| <= atol + rtol * p
 * (scikit-learn's KernelDensity semantics), on every query. Pairs with k(mn) == k(mx)
 * (0 beyond a compact kernel's support, 1 inside a tophat) are exact; leaf pairs are
 * summed point by point.
 *
 * L comes from a first walk that only has to under-estimate: it drops node pairs
 * whose kernel is below KDE_LB_FAR, adds k(mx) for pairs whose kernel varies by at
 * most a factor 2, and sums leaf pairs exactly. With rtol = 0 it is skipped.
 *
 * An accepted pair adds to the query node (not to each of its queries); after a walk
 * the node sums are pushed down the query tree. Each thread accumulates into its own
 * copy of node and query sums (canopy/pair_cpu.h), merged after the walk.
 *
 * canopy_kde_device (device pointers) builds both trees on the GPU (tree/gpu_build.h;
 * core/device.h checks the pointers), copies them to the host for the walk's host side
 * and walks the device copies in place: the same walks, no upload. */
#include "kde/kde_pair.h"
#include "kde/kde_tree.h"

#include "canopy/pair_cpu.h"
#include "core/device.h"
#include "tree/gpu_build.h"

#include <math.h>
#include <string.h>

/* Leaf size of both trees when the caller gives none. */
enum { KDE_LEAF_SIZE = 32 };
/* Squared distances of a leaf pair computed at a time before the kernel's loop. */
enum { KDE_CHUNK = 64 };
/* Lanes of the gaussian's vector loop (two AVX-512 vectors of doubles); KDE_CHUNK is a
 * multiple. */
enum { KDE_PAD = 16 };

static const char *const kernel_names[CANOPY_KDE_KERNEL_COUNT] = {
    "gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"};

const char *canopy_kde_kernel_name(canopy_kde_kernel k) {
    return (unsigned)k < CANOPY_KDE_KERNEL_COUNT ? kernel_names[k] : "?";
}

canopy_status canopy_kde_kernel_parse(const char *s, canopy_kde_kernel *out) {
    for (int k = 0; s && k < CANOPY_KDE_KERNEL_COUNT; k++)
        if (!strcmp(s, kernel_names[k])) {
            *out = (canopy_kde_kernel)k;
            return CANOPY_OK;
        }
    return canopy_fail(CANOPY_ERR_INVALID,
                       "kde: unknown kernel '%s' (gaussian, tophat, epanechnikov, exponential, "
                       "linear, cosine)",
                       s ? s : "(null)");
}

canopy_kde_options canopy_kde_options_default(void) {
    canopy_kde_options o = {CANOPY_KDE_GAUSSIAN, 1.0, 0.0, 0.0};
    return o;
}

/* log of the factor that makes k_h integrate to 1 over R^d (scikit-learn's
 * kernel norms: volume V_d and surface S_{d-1} of the unit ball). */
static double log_vn(int32_t d) {
    return 0.5 * d * log(KDE_PI) - lgamma(0.5 * d + 1.0);
}
static double log_sn(int32_t d) { /* surface of the unit sphere in R^(d+1) */
    return log(2.0 * KDE_PI) + log_vn(d - 1);
}
static double log_kernel_norm(canopy_kde_kernel kernel, double h, int32_t d) {
    double f = 0.0;
    switch (kernel) {
    case CANOPY_KDE_GAUSSIAN:
        f = 0.5 * d * log(2.0 * KDE_PI);
        break;
    case CANOPY_KDE_TOPHAT:
        f = log_vn(d);
        break;
    case CANOPY_KDE_EPANECHNIKOV:
        f = log_vn(d) + log(2.0 / (d + 2.0));
        break;
    case CANOPY_KDE_EXPONENTIAL:
        f = log_sn(d - 1) + lgamma((double)d);
        break;
    case CANOPY_KDE_LINEAR:
        f = log_vn(d) - log(d + 1.0);
        break;
    default: { /* cosine: S_(d-1) times the integral of cos(pi r / 2) r^(d-1) over [0, 1],
                  by Simpson's rule (scikit-learn's closed form is right for odd d only) */
        enum { STEPS = 8192 };
        double sum = 0.0;
        for (int32_t k = 0; k <= STEPS; k++) {
            double r = (double)k / STEPS, w = k == 0 || k == STEPS ? 1.0 : (k & 1 ? 4.0 : 2.0);
            sum += w * cos(0.5 * KDE_PI * r) * pow(r, d - 1);
        }
        f = log(sum / (3.0 * STEPS)) + log_sn(d - 1);
    }
    }
    return -f - d * log(h);
}

/* glibc's libmvec has vector versions of exp (the x86 vector ABI); declaring them
 * lets `omp simd` loops call them, 8 lanes at a time under AVX-512. Elsewhere the
 * loop stays scalar (no simd pragma: clang, which cannot vectorise it without
 * -fveclib, would report that). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__GLIBC__)
#pragma omp declare simd notinbranch
extern double exp(double);
#define KDE_SIMD _Pragma("omp simd")
#else
#define KDE_SIMD
#endif

/* The sum over squared distances d2[0..m) of k (d2 holds whole vectors of KDE_PAD,
 * the lanes past m zero). The gaussian's exp runs as a vector loop of fixed length
 * (a loop of variable length leaves a scalar remainder of exp calls; inputs inf or
 * below the underflow would take libmvec's slow path, 0 does not), its lanes summed
 * in order; the other kernels lane by lane (their sqrt may set errno, which keeps the
 * compiler from vectorising it). */
static inline __attribute__((always_inline)) double kernel_sum(const kde_ctx *c, const float *d2,
                                                               int32_t m) {
    double s = 0.0;
    if (c->kernel != CANOPY_KDE_GAUSSIAN) {
        for (int32_t t = 0; t < m; t++) s += kde_k(c->kernel, d2[t], c->inv_h, c->inv_h2);
        return s;
    }
    const double ih2 = c->inv_h2;
    for (int32_t t0 = 0; t0 < m; t0 += KDE_PAD) {
        double k[KDE_PAD];
        KDE_SIMD
        for (int32_t l = 0; l < KDE_PAD; l++) k[l] = exp(-0.5 * ((double)d2[t0 + l] * ih2));
        int32_t e = m - t0 < KDE_PAD ? m - t0 : KDE_PAD;
        for (int32_t l = 0; l < e; l++) s += k[l];
    }
    return s;
}

/* Sum over data points [begin, end) of tree tb of k(|q - x|). */
static inline __attribute__((always_inline)) double leaf_sum_body(const kde_ctx *c, const float *q,
                                                                  const canopy_tree_view *tb,
                                                                  int32_t begin, int32_t end) {
    const int32_t d = tb->d;
    double s = 0.0;
    for (int32_t j0 = begin; j0 < end; j0 += KDE_CHUNK) {
        int32_t m = end - j0 < KDE_CHUNK ? end - j0 : KDE_CHUNK;
        int32_t padded = (m + KDE_PAD - 1) / KDE_PAD * KDE_PAD;
        float d2[KDE_CHUNK];
        if (d == 3) /* the common case, its dimension loop unrolled */
            for (int32_t t = 0; t < m; t++) d2[t] = canopy_dist2(q, canopy_tv_point(tb, j0 + t), 3);
        else
            for (int32_t t = 0; t < m; t++) d2[t] = canopy_dist2(q, canopy_tv_point(tb, j0 + t), d);
        for (int32_t t = m; t < padded; t++) d2[t] = 0.0f;
        s += kernel_sum(c, d2, m);
    }
    return s;
}

/* One instance per ISA (libmvec's variant follows the caller's), picked by
 * canopy_cpu_isa. */
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,avx2,fma"))) static double
leaf_sum_avx512(const kde_ctx *c, const float *q, const canopy_tree_view *tb, int32_t begin,
                int32_t end) {
    return leaf_sum_body(c, q, tb, begin, end);
}
__attribute__((target("avx2,fma"))) static double leaf_sum_avx2(const kde_ctx *c, const float *q,
                                                                const canopy_tree_view *tb,
                                                                int32_t begin, int32_t end) {
    return leaf_sum_body(c, q, tb, begin, end);
}
#endif
static double leaf_sum_generic(const kde_ctx *c, const float *q, const canopy_tree_view *tb,
                               int32_t begin, int32_t end) {
    return leaf_sum_body(c, q, tb, begin, end);
}

static inline void kde_visit(const void *vctx, void *acc, const canopy_tree_view *ta, int32_t a,
                             const canopy_tree_view *tb, int32_t b, int sym) {
    (void)sym;
    const kde_ctx *c = (const kde_ctx *)vctx;
    const canopy_node *ha = canopy_tv_node(ta, a), *hb = canopy_tv_node(tb, b);
    double *point = (double *)acc + c->qnodes;
    for (int32_t i = ha->begin; i < ha->end; i++)
        point[i] += c->leaf_sum(c, canopy_tv_point(ta, i), tb, hb->begin, hb->end);
}

static inline void kde_merge(const void *vctx, const void *acc) {
    const kde_ctx *c = (const kde_ctx *)vctx;
    const double *node = (const double *)acc, *point = node + c->qnodes;
    for (int32_t k = 0; k < c->qnodes; k++) c->node_sum[k] += node[k];
    for (int64_t i = 0; i < c->nq; i++) c->point_sum[i] += point[i];
}

static const canopy_pair_app kde_app = {"kde", kde_test, kde_visit, kde_merge, NULL};
CANOPY_PAIR_CPU_INSTANTIATE(kde, &kde_app)

/* point_sum[i] += the node sums of i's leaf and its ancestors (children follow their
 * parent in the node array); with lower, lower[node] = min over its queries. */
static canopy_status push_down(const canopy_tree_view *t, double *node_sum, double *point_sum,
                               double *lower) {
    for (int32_t k = 0; k < t->n_nodes; k++) {
        const canopy_node *h = canopy_tv_node(t, k);
        if (h->child >= 0 && h->child <= k)
            return canopy_fail(CANOPY_ERR_INTERNAL, "kde: node %d precedes its parent %d",
                               (int)h->child, (int)k);
        for (int32_t j = 0; h->child >= 0 && j < h->nchild; j++)
            node_sum[h->child + j] += node_sum[k];
        for (int32_t i = h->begin; h->child < 0 && i < h->end; i++) point_sum[i] += node_sum[k];
    }
    for (int32_t k = t->n_nodes - 1; lower && k >= 0; k--) {
        const canopy_node *h = canopy_tv_node(t, k);
        double m = INFINITY;
        for (int32_t i = h->begin; h->child < 0 && i < h->end; i++)
            m = point_sum[i] < m ? point_sum[i] : m;
        for (int32_t j = 0; h->child >= 0 && j < h->nchild; j++)
            m = lower[h->child + j] < m ? lower[h->child + j] : m;
        lower[k] = m;
    }
    return CANOPY_OK;
}

/* The options, for data of n points in d dimensions. */
static canopy_status check_options(const canopy_kde_options *ko, int64_t n, int32_t d) {
    if (!ko) return canopy_fail(CANOPY_ERR_INVALID, "kde: missing options");
    if (n < 1) return canopy_fail(CANOPY_ERR_INVALID, "kde: the data has no points");
    if (d < 1) return canopy_fail(CANOPY_ERR_INVALID, "kde: the data has no dimensions");
    if ((unsigned)ko->kernel >= CANOPY_KDE_KERNEL_COUNT)
        return canopy_fail(CANOPY_ERR_INVALID, "kde: unknown kernel %d", (int)ko->kernel);
    if (!(ko->bandwidth > 0.0) || !isfinite(ko->bandwidth))
        return canopy_fail(CANOPY_ERR_INVALID, "kde: bandwidth must be finite and > 0 (got %g)",
                           ko->bandwidth);
    if (!(ko->atol >= 0.0) || !isfinite(ko->atol) || !(ko->rtol >= 0.0) || !isfinite(ko->rtol))
        return canopy_fail(CANOPY_ERR_INVALID,
                           "kde: atol and rtol must be finite and >= 0 (got %g, %g)", ko->atol,
                           ko->rtol);
    return CANOPY_OK;
}

static canopy_status check(canopy_points data, canopy_points queries,
                           const canopy_kde_options *ko) {
    canopy_status s = canopy_points_check(data, "kde data");
    if (s || (s = canopy_points_check(queries, "kde queries"))) return s;
    if ((s = check_options(ko, data.n, data.d))) return s;
    if (queries.n > 0 && queries.d != data.d)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "kde: the data has %d dimensions but the queries have %d", (int)data.d,
                           (int)queries.d);
    return CANOPY_OK;
}

/* One walk of the queries' tree ta against the data's tree tb into c->node_sum and
 * c->point_sum (zeroed here), then pushed down (and lower bounds when lower). The
 * walk's traverse and transfer times are added to *traverse and *transfer. */
static canopy_status walk(kde_ctx *c, const canopy_tree *ta, const canopy_tree *tb,
                          const canopy_run_options *o, double *lower, canopy_stats *stats,
                          double *traverse, double *transfer) {
    const canopy_tree_view *va = canopy_tree_get_view(ta);
    memset(c->node_sum, 0, sizeof *c->node_sum * (size_t)c->qnodes);
    memset(c->point_sum, 0, sizeof *c->point_sum * (size_t)c->nq);
    canopy_pair_traversal tr = {"kde",
                                &kde_app,
                                kde_pair_cpu_runners,
                                canopy_gpu_kde_pairs,
                                c,
                                sizeof(double) * ((size_t)c->qnodes + (size_t)c->nq)};
    canopy_pair_counters cnt;
    canopy_status s = canopy_pair_traverse(ta, tb, &tr, o, &cnt, stats);
    if (stats) {
        *traverse += stats->traverse_seconds;
        *transfer += stats->transfer_seconds;
    }
    return s ? s : push_down(va, c->node_sum, c->point_sum, lower);
}

/* The context of a walk over data of n points in d dimensions. */
static void kde_setup(kde_ctx *c, const canopy_kde_options *ko, int64_t n, int32_t d, int64_t nq) {
    memset(c, 0, sizeof *c);
    c->kernel = ko->kernel;
    c->inv_h = 1.0 / ko->bandwidth;
    c->inv_h2 = c->inv_h * c->inv_h;
    c->abs_share = ko->atol / exp(log_kernel_norm(ko->kernel, ko->bandwidth, d));
    c->rel_share = ko->rtol / (double)n;
    c->nq = nq;
    c->leaf_sum = leaf_sum_generic;
#if defined(__x86_64__) && defined(__GNUC__)
    canopy_isa isa = canopy_cpu_isa();
    c->leaf_sum = isa == CANOPY_ISA_AVX512 ? leaf_sum_avx512
                  : isa == CANOPY_ISA_AVX2 ? leaf_sum_avx2
                                           : leaf_sum_generic;
#endif
}

/* The estimate of the queries' kd tree ta over the data's tb (options checked, both
 * non-empty): walks for the lower bounds (rtol > 0), then for the sums. resident: the
 * device copies of ta and tb (GPU backend: walked with no upload), else NULL. stats'
 * traverse and transfer times are filled, the others left. */
static canopy_status kde_walks(const canopy_tree *ta, const canopy_tree *tb,
                               const canopy_kde_options *ko, const canopy_run_options *o,
                               const canopy_tree_view *const resident[2], double *log_density,
                               canopy_stats *stats) {
    const canopy_tree_view *va = canopy_tree_get_view(ta), *vb = canopy_tree_get_view(tb);
    double log_norm = log_kernel_norm(ko->kernel, ko->bandwidth, vb->d) - log((double)vb->n);
    kde_ctx c;
    kde_setup(&c, ko, vb->n, vb->d, va->n);
    c.resident_a = resident ? resident[0] : NULL;
    c.resident_b = resident ? resident[1] : NULL;
    double *lower = NULL, traverse = 0.0, transfer = 0.0;
    c.qnodes = va->n_nodes;
    canopy_status s = canopy_alloc((void **)&c.node_sum, (size_t)c.qnodes, sizeof *c.node_sum);
    if (!s) s = canopy_alloc((void **)&c.point_sum, (size_t)c.nq, sizeof *c.point_sum);
    if (!s) s = canopy_alloc((void **)&lower, (size_t)c.qnodes, sizeof *lower);
    if (!s && ko->rtol > 0.0) {
        c.lower_walk = 1;
        s = walk(&c, ta, tb, o, lower, stats, &traverse, &transfer);
        c.lower_walk = 0;
    } else if (!s) {
        memset(lower, 0, sizeof *lower * (size_t)c.qnodes);
    }
    c.lower = lower;
    if (!s) s = walk(&c, ta, tb, o, NULL, stats, &traverse, &transfer);
    for (int64_t i = 0; !s && i < c.nq; i++)
        log_density[va->ids[i]] = log(c.point_sum[i]) + log_norm;
    if (!s && stats) {
        stats->traverse_seconds = traverse;
        stats->transfer_seconds = transfer;
    }
    canopy_free(lower);
    canopy_free(c.node_sum);
    canopy_free(c.point_sum);
    return s;
}

/* The estimate over the data's kd tree tb (options checked, queries.n > 0): builds the
 * queries' tree (its time is stats->schedule_seconds) and walks. stats' walk fields
 * are filled, the others left. */
static canopy_status kde_run(const canopy_tree *tb, canopy_points queries,
                             const canopy_kde_options *ko, const canopy_run_options *o,
                             double *log_density, canopy_stats *stats) {
    canopy_tree *ta = NULL;
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = o->leaf_size > 0 ? o->leaf_size : KDE_LEAF_SIZE;
    canopy_status s = canopy_tree_build(queries, &to, &ta);
    if (!s) s = kde_walks(ta, tb, ko, o, NULL, log_density, stats);
    if (!s && stats) {
        canopy_tree_info ia;
        canopy_tree_get_info(ta, &ia);
        stats->schedule_seconds = ia.build_seconds;
    }
    canopy_tree_free(ta);
    return s;
}

canopy_status canopy_kde(canopy_points data, canopy_points queries, const canopy_kde_options *ko,
                         const canopy_run_options *opt, double *log_density, canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    canopy_status s = check(data, queries, ko);
    if (s) return s;
    if (o.tree != CANOPY_TREE_KD)
        return canopy_fail(CANOPY_ERR_INVALID, "kde: tree %s is not supported (use kd)",
                           canopy_tree_kind_name(o.tree));
    if (stats) memset(stats, 0, sizeof *stats);
    if (queries.n == 0) return CANOPY_OK;
    canopy_tree *tb = NULL;
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = o.leaf_size > 0 ? o.leaf_size : KDE_LEAF_SIZE;
    s = canopy_tree_build(data, &to, &tb);
    if (!s) s = kde_run(tb, queries, ko, &o, log_density, stats);
    if (!s && stats) {
        canopy_tree_info ib;
        canopy_tree_get_info(tb, &ib);
        /* both trees are builds here */
        stats->build_seconds = ib.build_seconds + stats->schedule_seconds;
        stats->schedule_seconds = 0.0;
        stats->tree = CANOPY_TREE_KD;
        stats->tree_nodes = ib.n_nodes;
        stats->tree_depth = ib.depth;
    }
    canopy_tree_free(tb);
    return s;
}

/* A kd tree built on the device from device points, and its host copy for the walk's
 * host side (frontier, push-down, the queries' order). */
static canopy_status device_tree(canopy_points pts, int32_t leaf, canopy_gpu_tree **g,
                                 canopy_tree **host) {
    canopy_tree_options to = canopy_tree_options_default(CANOPY_TREE_KD);
    to.leaf_size = leaf;
    canopy_status s = canopy_tree_build_gpu(pts, &to, g);
    return s ? s : canopy_gpu_tree_download(*g, host);
}

/* canopy_kde_device's checks beyond check_options (which needs n >= 1, d >= 1). */
static canopy_status check_device(canopy_points data, canopy_points queries,
                                  const double *d_log_density, const canopy_run_options *o) {
    const canopy_points *sets[2] = {&data, &queries};
    static const char *const names[2] = {"kde (device): data", "kde (device): queries"};
    for (int k = 0; k < 2; k++)
        if (sets[k]->n < 0 || sets[k]->stride < sets[k]->d || (sets[k]->n > 0 && !sets[k]->data))
            return canopy_fail(CANOPY_ERR_INVALID, "%s: bad shape (n=%lld, d=%d, stride=%lld)",
                               names[k], (long long)sets[k]->n, (int)sets[k]->d,
                               (long long)sets[k]->stride);
    if (queries.n > 0 && queries.d != data.d)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "kde: the data has %d dimensions but the queries have %d", (int)data.d,
                           (int)queries.d);
    if (o->backend == CANOPY_BACKEND_CPU)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "kde (device): device pointers need backend gpu or auto");
    if (o->tree != CANOPY_TREE_KD)
        return canopy_fail(CANOPY_ERR_INVALID, "kde: tree %s is not supported (use kd)",
                           canopy_tree_kind_name(o->tree));
    if (o->variant != CANOPY_VARIANT_AUTO && o->variant != CANOPY_VARIANT_DR)
        return canopy_fail(CANOPY_ERR_UNSUPPORTED,
                           "kde (device): pair walks run variant dr on the GPU (got %s)",
                           canopy_variant_name(o->variant));
    if (queries.n == 0) return CANOPY_OK;
    canopy_status s = canopy_gpu_require_device(data.data, names[0]);
    if (!s) s = canopy_gpu_require_device(queries.data, names[1]);
    if (!s) s = canopy_gpu_require_device(d_log_density, "kde (device): log_density");
    return s;
}

canopy_status canopy_kde_device(canopy_points d_data, canopy_points d_queries,
                                const canopy_kde_options *ko, const canopy_run_options *opt,
                                double *d_log_density, void *stream, canopy_stats *stats) {
    canopy_run_options o = opt ? *opt : canopy_run_options_default();
    canopy_status s = check_options(ko, d_data.n, d_data.d);
    if (s || (s = check_device(d_data, d_queries, d_log_density, &o))) return s;
    if (stats) memset(stats, 0, sizeof *stats);
    if (d_queries.n == 0) return CANOPY_OK;
    o.backend = CANOPY_BACKEND_GPU;
    const int32_t leaf = o.leaf_size > 0 ? o.leaf_size : KDE_LEAF_SIZE;
    /* the self form (queries = data, as the Python package passes it): one tree */
    const int same = d_queries.data == d_data.data && d_queries.n == d_data.n &&
                     d_queries.stride == d_data.stride;
    canopy_gpu_tree *ga = NULL, *gb = NULL;
    canopy_tree *ta = NULL, *tb = NULL;
    double *out = NULL, t0 = canopy_now();
    s = canopy_gpu_wait_stream(stream);
    if (!s) s = device_tree(d_data, leaf, &gb, &tb);
    if (!s && !same) s = device_tree(d_queries, leaf, &ga, &ta);
    double built = canopy_now() - t0;
    const canopy_gpu_tree *gq = same ? gb : ga;
    const canopy_tree_view *resident[2] = {gq ? &gq->view : NULL, gb ? &gb->view : NULL};
    if (!s) s = canopy_alloc((void **)&out, (size_t)d_queries.n, sizeof *out);
    if (!s) s = kde_walks(same ? tb : ta, tb, ko, &o, resident, out, stats);
    t0 = canopy_now();
    if (!s)
        s = canopy_gpu_to_device(d_log_density, out, sizeof *out * (size_t)d_queries.n,
                                 "kde (device): writing the log-densities");
    if (!s && stats) {
        canopy_tree_info ib;
        canopy_tree_get_info(tb, &ib);
        stats->transfer_seconds += canopy_now() - t0;
        stats->build_seconds = built; /* both trees, on the device, and their host copies */
        stats->tree = CANOPY_TREE_KD;
        stats->tree_nodes = ib.n_nodes;
        stats->tree_depth = ib.depth;
    }
    canopy_free(out);
    canopy_tree_free(ta);
    canopy_tree_free(tb);
    canopy_gpu_tree_free(ga);
    canopy_gpu_tree_free(gb);
    return s;
}

canopy_status canopy_kde_on_tree(const canopy_tree *tree, canopy_points queries,
                                 const canopy_kde_options *ko, const canopy_run_options *o,
                                 double *log_density, canopy_stats *stats) {
    const canopy_tree_view *v = canopy_tree_get_view(tree);
    canopy_status s = check_options(ko, v->n, v->d);
    if (s) return s;
    if (v->kind != CANOPY_TREE_KD)
        return canopy_fail(CANOPY_ERR_INVALID, "kde: an index of tree %s cannot answer it (use kd)",
                           canopy_tree_kind_name((canopy_tree_kind)v->kind));
    return queries.n > 0 ? kde_run(tree, queries, ko, o, log_density, stats) : CANOPY_OK;
}

canopy_status canopy_kde_brute(canopy_points data, canopy_points queries,
                               const canopy_kde_options *ko, double *log_density) {
    canopy_status s = check(data, queries, ko);
    if (s) return s;
    double log_norm = log_kernel_norm(ko->kernel, ko->bandwidth, data.d) - log((double)data.n);
    double inv_h = 1.0 / ko->bandwidth, inv_h2 = inv_h * inv_h;
#pragma omp parallel for schedule(dynamic, 16) num_threads(canopy_threads())
    for (int64_t i = 0; i < queries.n; i++) {
        double sum = 0.0;
        for (int64_t j = 0; j < data.n; j++)
            sum += kde_k(ko->kernel,
                         canopy_dist2(canopy_point(queries, i), canopy_point(data, j), data.d),
                         inv_h, inv_h2);
        log_density[i] = log(sum) + log_norm;
    }
    return CANOPY_OK;
}
