// SPDX-License-Identifier: MIT
/* Distributed kNN and radius counts over reference points spread over ranks
 * (docs/distributed.md, "Nearest neighbours and radius"). Each rank indexes its own
 * slice with the public canopy_index API; a query is answered on its home rank (the
 * one whose points' box is nearest), then sent, with its current k-th distance, only
 * to the ranks whose boxes can hold a point as close; their candidates are merged
 * with the same (distance, index) order as canopy_knn, so the rows equal one rank's. */
#include "apps/knn/knn.h"
#include "dist/comm.h"
#include "dist/gpu_bind.h"
#include "traverse/run.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

/* This rank's slice: its index and global ids, and every rank's bounding box. */
typedef struct dist_ref {
    MPI_Comm comm;
    int rank, size;
    int32_t d;
    canopy_points pts; /* the slice as indexed (sorted by global id when ids were given) */
    canopy_index *ix;  /* NULL when the slice is empty */
    int64_t *ids;      /* global id of indexed point i, ascending */
    int64_t *perm;     /* indexed point i is the caller's point perm[i]; NULL: identity */
    float *pts_owned;  /* the sorted copy when perm */
    double *box;       /* per rank: d lows then d highs (+inf / -inf when empty) */
    double *group;     /* per rank: DIST_GROUPS boxes, each the union of its pieces' */
    int64_t *rank_n;   /* points per rank */
    int64_t n_total;
} dist_ref;

static void dist_ref_free(dist_ref *r) {
    canopy_index_free(r->ix);
    canopy_free(r->ids);
    canopy_free(r->perm);
    canopy_free(r->pts_owned);
    canopy_free(r->box);
    canopy_free(r->group);
    canopy_free(r->rank_n);
}

/* Each rank describes where its points are by DIST_BOXES + 1 boxes: box 0 bounds the
 * whole slice, boxes 1.. bound consecutive pieces of the slice along a Hilbert curve
 * (the top of its tree, in effect). One box per rank is too coarse: a curve piece
 * often reaches a little past its neighbour's face, and its box then covers a slab of
 * the neighbour's domain, where every query would have to be sent. */
enum { DIST_BOXES = 64, BOXES_PER_RANK = DIST_BOXES + 1 };

/* A query tests the box of 8 consecutive pieces before the pieces: routing the home
 * and remote queries tested up to 64 pieces a rank where ranks' whole boxes overlap
 * (a tenth of a rank's kNN time). A piece lies inside its group's box, so it is never
 * nearer than the group: a skipped group held no piece that could have been taken, and
 * every query goes where it went before. */
enum { DIST_GROUPS = 8, GROUP_PIECES = DIST_BOXES / DIST_GROUPS };

static const double *rank_box(const dist_ref *r, int rank, int b) {
    return r->box + ((size_t)rank * BOXES_PER_RANK + (size_t)b) * 2 * (size_t)r->d;
}

static double *group_box(const dist_ref *r, int rank, int g) {
    return r->group + ((size_t)rank * DIST_GROUPS + (size_t)g) * 2 * (size_t)r->d;
}

/* Every rank's group boxes from its gathered piece boxes (empty pieces: lows +inf). */
static void group_boxes(dist_ref *r) {
    int32_t d = r->d;
    for (int p = 0; p < r->size; p++)
        for (int g = 0; g < DIST_GROUPS; g++) {
            double *u = group_box(r, p, g);
            for (int32_t j = 0; j < d; j++) {
                u[j] = INFINITY;
                u[d + j] = -INFINITY;
            }
            for (int b = 1 + g * GROUP_PIECES; b <= (g + 1) * GROUP_PIECES; b++) {
                const double *box = rank_box(r, p, b);
                for (int32_t j = 0; j < d; j++) {
                    u[j] = box[j] < u[j] ? box[j] : u[j];
                    u[d + j] = box[d + j] > u[d + j] ? box[d + j] : u[d + j];
                }
            }
        }
}

/* Squared distance from q to a box (d lows, then d highs), in double; +inf for an
 * empty box (lows +inf). */
static double box_dist2(const double *lo, int32_t d, const float *q) {
    const double *hi = lo + d;
    if (lo[0] > hi[0]) return INFINITY;
    double s = 0.0;
    for (int32_t j = 0; j < d; j++) {
        double x = q[j], g = x < lo[j] ? lo[j] - x : x > hi[j] ? x - hi[j] : 0.0;
        s += g * g;
    }
    return s;
}

static double box_extent(const double *lo, int32_t d) {
    double e = 0.0;
    for (int32_t j = 0; j < d; j++) e += lo[d + j] - lo[j];
    return e;
}

/* The rank whose pieces are nearest q; among pieces containing q (they overlap at
 * curve-piece edges), the smallest. A q inside one rank's whole box only goes to that
 * rank without looking at the pieces (64 box tests a rank, most of the routing's
 * time): the rows do not depend on the home, only the remote queries do. */
static int home_rank(const dist_ref *r, const float *q) {
    int home = r->rank, inside = 0;
    for (int p = 0; p < r->size && inside < 2; p++)
        if (box_dist2(rank_box(r, p, 0), r->d, q) == 0.0) {
            home = p;
            inside++;
        }
    if (inside == 1) return home;
    home = r->rank;
    double best = INFINITY, best_extent = INFINITY;
    for (int p = 0; p < r->size; p++) {
        if (box_dist2(rank_box(r, p, 0), r->d, q) > best) continue;
        for (int g = 0; g < DIST_GROUPS; g++) {
            if (box_dist2(group_box(r, p, g), r->d, q) > best) continue;
            for (int b = 1 + g * GROUP_PIECES; b <= (g + 1) * GROUP_PIECES; b++) {
                const double *box = rank_box(r, p, b);
                double dp = box_dist2(box, r->d, q);
                if (dp > best) continue;
                double ep = box_extent(box, r->d);
                if (dp < best || ep < best_extent) {
                    best = dp;
                    best_extent = ep;
                    home = p;
                }
            }
        }
    }
    return home;
}

/* A rank can hold a point within squared distance bound of q. The points' distances
 * are float sums (relative error below d * 2^-24), so the test keeps a margin: a rank
 * is never skipped that could hold a point the one-rank run takes. */
static int box_within(const dist_ref *r, int rank, const float *q, double bound) {
    if (r->rank_n[rank] == 0) return 0; /* an unbounded row must not reach an empty rank */
    double limit = bound * (1.0 + (double)(r->d + 4) * ldexp(1.0, -20)) + 1e-30;
    if (!(box_dist2(rank_box(r, rank, 0), r->d, q) <= limit)) return 0;
    for (int g = 0; g < DIST_GROUPS; g++) {
        if (!(box_dist2(group_box(r, rank, g), r->d, q) <= limit)) continue;
        for (int b = 1 + g * GROUP_PIECES; b <= (g + 1) * GROUP_PIECES; b++)
            if (box_dist2(rank_box(r, rank, b), r->d, q) <= limit) return 1;
    }
    return 0;
}

/* This rank's boxes (see DIST_BOXES) into mine; left empty when no other rank will
 * look at them (one rank). The pieces are runs along a Hilbert curve over the slice's
 * box, found by a histogram of the keys' top LOCAL_BIN_BITS bits rather than by sorting
 * them (the sort was a third of the boxes' time): a bin stays whole, so a piece's
 * count may differ from its target by a bin's points, which no result depends on. */
enum { LOCAL_BIN_BITS = 16, LOCAL_BINS = 1 << LOCAL_BIN_BITS };

/* A run of equal count may cross empty stretches of the curve: where a slice does not
 * fill its box (the few points a cut leaves past a face), the piece holding them
 * spanned a slab of the neighbour's domain, and every query there went remote (at 4
 * ranks on 2M uniform points, one rank sent 58k queries to another instead of ~10k).
 * So a piece also ends at a stretch of at least `gap` empty bins; gap is the smallest
 * power of two >= MIN_GAP_BINS with at most MAX_GAPS such stretches, and the count
 * target leaves room for them: n / (DIST_BOXES - 1 - gaps) points a piece. */
enum { MIN_GAP_BINS = 16, MAX_GAPS = 16 };

static void piece_of_bins(int64_t *cnt, int64_t nbins, int64_t n) {
    int64_t runs[LOCAL_BIN_BITS + 1] = {0}; /* empty stretches between points, by log2 length */
    for (int64_t v = 0, last = -1; v < nbins; v++)
        if (cnt[v]) {
            int64_t len = v - last - 1;
            if (last >= 0 && len > 0) runs[63 - __builtin_clzll((uint64_t)len)]++;
            last = v;
        }
    int lg = 0, gaps = 0;
    while ((1 << lg) < MIN_GAP_BINS) lg++;
    for (;; lg++) {
        gaps = 0;
        for (int j = lg; j <= LOCAL_BIN_BITS; j++) gaps += (int)runs[j];
        if (gaps <= MAX_GAPS) break;
    }
    int64_t gap = (int64_t)1 << lg, per = DIST_BOXES - 1 - gaps;
    int64_t target = (n + per - 1) / per, piece = 1, in_piece = 0;
    /* A piece ends by count at most n / target <= per times, by a gap at most gaps
     * times: at most DIST_BOXES pieces. cnt[v] becomes bin v's piece. */
    for (int64_t v = 0, last = -1; v < nbins; v++) {
        if (!cnt[v]) continue;
        if (in_piece > 0 && (in_piece >= target || v - last - 1 >= gap)) {
            piece++;
            in_piece = 0;
        }
        in_piece += cnt[v];
        cnt[v] = piece;
        last = v;
    }
}

static void empty_boxes(double *box, int nboxes, int32_t d) {
    for (int b = 0; b < nboxes; b++)
        for (int32_t j = 0; j < d; j++) {
            box[(size_t)b * 2 * (size_t)d + (size_t)j] = INFINITY;
            box[(size_t)b * 2 * (size_t)d + (size_t)(d + j)] = -INFINITY;
        }
}

static void grow_box(double *box, const float *p, int32_t d) {
    for (int32_t j = 0; j < d; j++) {
        box[j] = p[j] < box[j] ? p[j] : box[j];
        box[d + j] = p[j] > box[d + j] ? p[j] : box[d + j];
    }
}

/* Box 0 of out bounds all points and, with bin given, box piece[bin[i]] point i: each
 * of the nt threads bounds its share into its own boxes in scratch (nt * nboxes boxes),
 * merged at the end (serial, this was a rank's longest loop on 4 threads). */
static void bound_points(canopy_points pts, const uint32_t *bin, const int64_t *piece, int nboxes,
                         double *out, double *scratch, int nt) {
    int32_t d = pts.d;
    size_t per = (size_t)nboxes * 2 * (size_t)d;
    for (int t = 0; t < nt; t++) empty_boxes(scratch + (size_t)t * per, nboxes, d);
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        double *mine = scratch + (size_t)t * per;
        for (int64_t i = pts.n * t / m; i < pts.n * (t + 1) / m; i++) {
            const float *p = canopy_point(pts, i);
            grow_box(mine, p, d);
            if (bin) grow_box(mine + (size_t)piece[bin[i]] * 2 * (size_t)d, p, d);
        }
    }
    empty_boxes(out, nboxes, d);
    for (int t = 0; t < nt; t++)
        for (size_t e = 0; e < per; e++) {
            double v = scratch[(size_t)t * per + e];
            int high = (int)(e % (2 * (size_t)d)) >= d;
            out[e] = high ? (v > out[e] ? v : out[e]) : (v < out[e] ? v : out[e]);
        }
}

static canopy_status local_boxes(canopy_points pts, int needed, double *mine) {
    int32_t d = pts.d;
    empty_boxes(mine, BOXES_PER_RANK, d);
    if (pts.n == 0 || !needed) return CANOPY_OK;
    uint32_t *bin = NULL;
    int64_t *piece = NULL;
    double *scratch = NULL;
    int nt = canopy_threads();
    canopy_status s = canopy_alloc((void **)&bin, (size_t)pts.n, sizeof *bin);
    if (!s) s = canopy_calloc((void **)&piece, LOCAL_BINS, sizeof *piece);
    if (!s)
        s = canopy_alloc((void **)&scratch, (size_t)nt * BOXES_PER_RANK * 2,
                         sizeof(double) * (size_t)d);
    if (!s) {
        bound_points(pts, NULL, NULL, 1, mine, scratch, nt);
        const double *lo = mine;
        /* Only the bins' bits are computed: a Hilbert key's top bits are the key of the
         * coarser grid (6 bits a side in 3-D, not 10, for the same bins at 60 % of the
         * cost: the keys were a rank's largest cost outside the walk). */
        int32_t dk = d < 63 ? d : 63, bits = 63 / dk < 10 ? 63 / dk : 10;
        if ((LOCAL_BIN_BITS + dk - 1) / dk < bits) bits = (LOCAL_BIN_BITS + dk - 1) / dk;
        int32_t shift = bits * dk > LOCAL_BIN_BITS ? bits * dk - LOCAL_BIN_BITS : 0;
        double scale[63], cells = ldexp(1.0, bits);
        for (int32_t j = 0; j < dk; j++)
            scale[j] = lo[d + j] > lo[j] ? cells / (lo[d + j] - lo[j]) : 0.0;
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int64_t i = 0; i < pts.n; i++) {
            uint64_t x[63];
            const float *p = canopy_point(pts, i);
            for (int32_t j = 0; j < dk; j++) {
                double c = ((double)p[j] - lo[j]) * scale[j];
                x[j] = c >= cells ? (uint64_t)cells - 1 : c > 0.0 ? (uint64_t)c : 0;
            }
            bin[i] = (uint32_t)(canopy_hilbert_key(x, dk, bits) >> shift);
        }
        for (int64_t i = 0; i < pts.n; i++) piece[bin[i]]++;
        piece_of_bins(piece, (int64_t)1 << (bits * dk - shift), pts.n);
        bound_points(pts, bin, piece, BOXES_PER_RANK, mine, scratch, nt);
    }
    canopy_free(bin);
    canopy_free(piece);
    canopy_free(scratch);
    return s;
}

static canopy_status ids_sorted(const int64_t *ids, int64_t n, int64_t *perm, int64_t *sorted) {
    /* Rows moved by canopy_dist_exchange arrive by source rank, then in the source's
     * order: blocks of rows in rank order (the CLI's) are already ascending. */
    int64_t up = 1;
    while (up < n && ids[up] > ids[up - 1]) up++;
    if (up >= n) {
        for (int64_t i = 0; i < n; i++) {
            perm[i] = i;
            sorted[i] = ids[i];
        }
        return CANOPY_OK;
    }
    canopy_keyed *k = NULL;
    canopy_status s = canopy_alloc((void **)&k, (size_t)n + 1, sizeof *k);
    if (s) return s;
    for (int64_t i = 0; i < n; i++) {
        k[i].key = (uint64_t)ids[i];
        k[i].idx = i;
    }
    /* ids are >= 0 (checked), so their order is the unsigned order */
    s = canopy_sort_keyed(k, n);
    for (int64_t i = 0; !s && i < n; i++) {
        perm[i] = k[i].idx;
        sorted[i] = (int64_t)k[i].key;
        if (i > 0 && sorted[i] == sorted[i - 1])
            s = canopy_fail(CANOPY_ERR_INVALID, "distributed: global id %lld appears twice",
                            (long long)sorted[i]);
    }
    canopy_free(k);
    return s;
}

/* Collective: checks the slice (agreeing on `pending`, a failure found before), puts
 * it in global-id order when ids are given (so the local index's ties, by local
 * index, are the global ones), builds the index and gathers every rank's box. */
static canopy_status dist_ref_setup(MPI_Comm comm, canopy_points ref, const int64_t *ref_ids,
                                    const canopy_run_options *opt, const char *app,
                                    canopy_status pending, dist_ref *r, canopy_dist_stats *st) {
    memset(r, 0, sizeof *r);
    r->comm = comm;
    r->rank = canopy_dist_rank(comm);
    r->size = canopy_dist_size(comm);
    r->d = ref.d;
    r->pts = ref;
    canopy_status s = pending;
    char what[64];
    snprintf(what, sizeof what, "%s reference points", app);
    if (!s && (ref.n < 0 || ref.d < 1 || (ref.n > 0 && !ref.data) || ref.stride < ref.d))
        s = canopy_fail(CANOPY_ERR_INVALID, "%s: bad reference slice (n %lld, d %d)", app,
                        (long long)ref.n, (int)ref.d);
    if (!s && ref.n > 0) s = canopy_points_check(ref, what);
    for (int64_t i = 0; !s && ref_ids && i < ref.n; i++)
        if (ref_ids[i] < 0)
            s = canopy_fail(CANOPY_ERR_INVALID, "%s: ref_ids[%lld] = %lld is negative", app,
                            (long long)i, (long long)ref_ids[i]);
    s = canopy_dist_agree(comm, s);
    if (s) return s;
    int32_t dmin = ref.d, dmax = ref.d;
    MPI_Allreduce(&ref.d, &dmin, 1, MPI_INT32_T, MPI_MIN, comm);
    MPI_Allreduce(&ref.d, &dmax, 1, MPI_INT32_T, MPI_MAX, comm);
    if (dmin != dmax)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "%s: ranks hold reference points of different dimensions (%d and %d)",
                           app, (int)dmin, (int)dmax);

    /* With backend gpu (or auto, when every rank has a GPU) each rank's index runs on
     * its own GPU (dist/gpu_bind.h). */
    int use_gpu = 0;
    st->device = -1;
    canopy_backend backend = opt ? opt->backend : canopy_run_options_default().backend;
    if ((s = dist_gpu_choose(comm, backend, 1, 0, app, &use_gpu))) return s;
    if (use_gpu) st->device = dist_gpu_bound().device;

    double t0 = canopy_now();
    s = canopy_alloc((void **)&r->ids, (size_t)ref.n + 1, sizeof *r->ids);
    if (!s)
        s = canopy_alloc((void **)&r->box, (size_t)r->size * BOXES_PER_RANK * 2,
                         sizeof(double) * (size_t)r->d);
    if (!s)
        s = canopy_alloc((void **)&r->group, (size_t)r->size * DIST_GROUPS * 2,
                         sizeof(double) * (size_t)r->d);
    if (!s) s = canopy_alloc((void **)&r->rank_n, (size_t)r->size, sizeof *r->rank_n);
    int64_t offset = 0;
    MPI_Exscan(&ref.n, &offset, 1, MPI_INT64_T, MPI_SUM, comm);
    if (r->rank == 0) offset = 0;
    if (!s && ref_ids) {
        s = canopy_alloc((void **)&r->perm, (size_t)ref.n + 1, sizeof *r->perm);
        if (!s) s = ids_sorted(ref_ids, ref.n, r->perm, r->ids);
        int identity = 1;
        for (int64_t i = 0; !s && i < ref.n; i++) identity &= r->perm[i] == i;
        if (!s && identity) {
            canopy_free(r->perm);
            r->perm = NULL;
        }
        if (!s && r->perm &&
            !(s = canopy_alloc((void **)&r->pts_owned, (size_t)ref.n,
                               sizeof(float) * (size_t)ref.d))) {
            for (int64_t i = 0; i < ref.n; i++)
                memcpy(r->pts_owned + i * ref.d, canopy_point(ref, r->perm[i]),
                       sizeof(float) * (size_t)ref.d);
            r->pts = canopy_points_make(r->pts_owned, ref.n, ref.d);
        }
    } else if (!s) {
        for (int64_t i = 0; i < ref.n; i++) r->ids[i] = offset + i;
    }
    if (!s && ref.n > 0) {
        canopy_index_options io =
            canopy_index_options_default(opt ? opt->tree : canopy_run_options_default().tree);
        if (opt) io.leaf_size = opt->leaf_size;
        s = canopy_index_build(r->pts, &io, &r->ix);
    }
    if (!s)
        s = local_boxes(r->pts, r->size > 1,
                        r->box + (size_t)r->rank * BOXES_PER_RANK * 2 * (size_t)r->d);
    st->local_seconds += canopy_now() - t0;
    s = canopy_dist_agree(comm, s);
    if (s) return s;

    double t1 = canopy_now();
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r->box, BOXES_PER_RANK * 2 * r->d, MPI_DOUBLE,
                  comm);
    MPI_Allgather(&ref.n, 1, MPI_INT64_T, r->rank_n, 1, MPI_INT64_T, comm);
    for (int q = 0; q < r->size; q++) r->n_total += r->rank_n[q];
    st->comm_seconds += canopy_now() - t1;
    group_boxes(r);
    return CANOPY_OK;
}

/* Query rows grouped by destination: by_dest[off[r] .. off[r + 1]) are the items
 * (in ascending order) sent to rank r. */
typedef struct routing {
    int64_t *off;   /* size + 1 */
    int64_t *items; /* item of each (item, rank) pair, grouped by rank */
    int64_t n_pairs;
} routing;

static void routing_free(routing *t) {
    canopy_free(t->off);
    canopy_free(t->items);
}

/* Per-rank byte counts and offsets of the all-to-alls (four arrays of size). */
typedef struct rank_counts {
    int64_t *a, *b, *c, *e;
} rank_counts;

static canopy_status rank_counts_alloc(rank_counts *rc, int size) {
    memset(rc, 0, sizeof *rc);
    canopy_status s = canopy_alloc((void **)&rc->a, (size_t)size, sizeof(int64_t));
    if (!s) s = canopy_alloc((void **)&rc->b, (size_t)size, sizeof(int64_t));
    if (!s) s = canopy_alloc((void **)&rc->c, (size_t)size, sizeof(int64_t));
    if (!s) s = canopy_alloc((void **)&rc->e, (size_t)size, sizeof(int64_t));
    return s;
}

static void rank_counts_free(rank_counts *rc) {
    canopy_free(rc->a);
    canopy_free(rc->b);
    canopy_free(rc->c);
    canopy_free(rc->e);
}

/* Builds the routing of n items, where item i goes to the ranks `want(i, r)` says. */
typedef int (*want_fn)(const void *ctx, int64_t item, int rank);
static canopy_status route(int size, int64_t n, want_fn want, const void *ctx, routing *t) {
    memset(t, 0, sizeof *t);
    canopy_status s = canopy_calloc((void **)&t->off, (size_t)size + 1, sizeof *t->off);
    if (s) return s;
    if (size <= 64) { /* want() once per pair, on all threads, into a mask per item */
        uint64_t *mask = NULL;
        if ((s = canopy_alloc((void **)&mask, (size_t)n + 1, sizeof *mask))) return s;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
        for (int64_t i = 0; i < n; i++) {
            uint64_t m = 0;
            for (int r = 0; r < size; r++) m |= (uint64_t)(want(ctx, i, r) != 0) << r;
            mask[i] = m;
        }
        for (int64_t i = 0; i < n; i++)
            for (uint64_t m = mask[i]; m; m &= m - 1) t->off[__builtin_ctzll(m) + 1]++;
        for (int r = 0; r < size; r++) t->off[r + 1] += t->off[r];
        t->n_pairs = t->off[size];
        int64_t *fill = NULL;
        s = canopy_alloc((void **)&t->items, (size_t)t->n_pairs + 1, sizeof *t->items);
        if (!s) s = canopy_alloc((void **)&fill, (size_t)size, sizeof *fill);
        if (!s) {
            memcpy(fill, t->off, sizeof *fill * (size_t)size);
            for (int64_t i = 0; i < n; i++)
                for (uint64_t m = mask[i]; m; m &= m - 1) t->items[fill[__builtin_ctzll(m)]++] = i;
        }
        canopy_free(fill);
        canopy_free(mask);
        return s;
    }
    for (int64_t i = 0; i < n; i++)
        for (int r = 0; r < size; r++) t->off[r + 1] += want(ctx, i, r);
    for (int r = 0; r < size; r++) t->off[r + 1] += t->off[r];
    t->n_pairs = t->off[size];
    if ((s = canopy_alloc((void **)&t->items, (size_t)t->n_pairs + 1, sizeof *t->items))) return s;
    int64_t *fill = NULL;
    if ((s = canopy_alloc((void **)&fill, (size_t)size, sizeof *fill))) return s;
    memcpy(fill, t->off, sizeof *fill * (size_t)size);
    for (int64_t i = 0; i < n; i++)
        for (int r = 0; r < size; r++)
            if (want(ctx, i, r)) t->items[fill[r]++] = i;
    canopy_free(fill);
    return CANOPY_OK;
}

/* Sends, for every (item, rank) pair of the routing, row_bytes bytes that pack()
 * writes, and returns what arrives (grouped by source rank) with per-source counts
 * in bytes. */
typedef void (*pack_fn)(const void *ctx, int64_t item, int rank, void *dst);
static canopy_status send_rows(MPI_Comm comm, const routing *t, size_t row_bytes, pack_fn pack,
                               const void *ctx, void **recv, int64_t *recv_bytes, int64_t *recv_off,
                               canopy_dist_stats *st) {
    int size = canopy_dist_size(comm);
    char *buf = NULL;
    int64_t *cnt = NULL;
    canopy_status s = canopy_alloc((void **)&buf, (size_t)t->n_pairs + 1, row_bytes);
    if (!s) s = canopy_alloc((void **)&cnt, (size_t)size, sizeof *cnt);
    if (!s) {
        for (int r = 0; r < size; r++) {
            cnt[r] = (t->off[r + 1] - t->off[r]) * (int64_t)row_bytes;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
            for (int64_t p = t->off[r]; p < t->off[r + 1]; p++)
                pack(ctx, t->items[p], r, buf + (size_t)p * row_bytes);
        }
    }
    s = canopy_dist_agree(comm, s);
    if (!s) s = canopy_dist_alltoallv_bytes(comm, buf, cnt, recv, recv_bytes, recv_off, st);
    canopy_free(buf);
    canopy_free(cnt);
    return s;
}

/* ------------------------------------------------------------------------ kNN -- */

typedef struct knn_job {
    const dist_ref *ref;
    canopy_points q; /* the queries this rank answers (home queries) */
    int32_t k;
    int64_t *idx; /* (q.n, k) rows, global ids */
    float *d2;
    const int32_t *home; /* origin side: each caller query's home rank */
    canopy_points caller;
} knn_job;

static int want_home(const void *ctx, int64_t i, int r) {
    return ((const knn_job *)ctx)->home[i] == r;
}

static void pack_query(const void *ctx, int64_t i, int r, void *dst) {
    const knn_job *j = ctx;
    (void)r;
    memcpy(dst, canopy_point(j->caller, i), sizeof(float) * (size_t)j->caller.d);
}

/* The k-th distance of row i so far (+inf while the row has fewer than k). */
static float row_bound(const knn_job *j, int64_t i) {
    return j->d2[i * j->k + j->k - 1];
}

static int want_remote(const void *ctx, int64_t i, int r) {
    const knn_job *j = ctx;
    return r != j->ref->rank && box_within(j->ref, r, canopy_point(j->q, i), row_bound(j, i));
}

static void pack_query_bound(const void *ctx, int64_t i, int r, void *dst) {
    const knn_job *j = ctx;
    (void)r;
    float *f = dst;
    memcpy(f, canopy_point(j->q, i), sizeof(float) * (size_t)j->q.d);
    f[j->q.d] = row_bound(j, i);
}

/* Local kNN of n queries on this rank's index, ids mapped to global ones; rows of
 * the self form come back in the caller's order. */
static canopy_status local_knn(const dist_ref *r, canopy_points q, int self, int32_t k,
                               const canopy_run_options *opt, int64_t *idx, float *d2) {
    int64_t n = self ? r->pts.n : q.n;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n * k; i++) {
        idx[i] = -1;
        d2[i] = INFINITY;
    }
    if (!r->ix || n == 0) return CANOPY_OK;
    canopy_points none = {NULL, 0, r->d, r->d};
    canopy_status s = canopy_index_knn(r->ix, self ? none : q, k, opt, idx, d2, NULL);
    if (s) return s;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n * k; i++)
        if (idx[i] >= 0) idx[i] = r->ids[idx[i]];
    if (self && r->perm) {
        /* row i is the indexed point i, the caller's point perm[i] */
        int64_t *ti = NULL;
        float *td = NULL;
        if ((s = canopy_alloc((void **)&ti, (size_t)(n * k), sizeof *ti))) return s;
        if ((s = canopy_alloc((void **)&td, (size_t)(n * k), sizeof *td))) {
            canopy_free(ti);
            return s;
        }
        for (int64_t i = 0; i < n; i++) {
            memcpy(ti + r->perm[i] * k, idx + i * k, sizeof *ti * (size_t)k);
            memcpy(td + r->perm[i] * k, d2 + i * k, sizeof *td * (size_t)k);
        }
        memcpy(idx, ti, sizeof *ti * (size_t)(n * k));
        memcpy(d2, td, sizeof *td * (size_t)(n * k));
        canopy_free(ti);
        canopy_free(td);
    }
    return CANOPY_OK;
}

/* Candidates for the queries other ranks sent: per query an int32 count, then that
 * many (int64 id, float d2) within the sender's bound. */
enum { CAND_BYTES = 12 };

/* The kNN of the queries other ranks sent, in RC_CHUNKS pieces with an MPI progress
 * call between them (the rows going back are in flight meanwhile: pend[0] and pend[1],
 * NULL where none). */
enum { RC_CHUNKS = 8 };

static canopy_status answer_remote(const dist_ref *r, const float *rows, int64_t n, int32_t k,
                                   const canopy_run_options *opt, const int64_t *from_bytes,
                                   size_t row_bytes, canopy_dist_pending *const *pend, char **reply,
                                   int64_t *reply_bytes) {
    int32_t d = r->d;
    int64_t *idx = NULL;
    float *d2 = NULL;
    *reply = NULL;
    canopy_status s = canopy_alloc((void **)&idx, (size_t)(n * k + 1), sizeof *idx);
    if (!s) s = canopy_alloc((void **)&d2, (size_t)(n * k + 1), sizeof *d2);
    for (int c = 0; !s && c < RC_CHUNKS; c++) {
        int64_t lo = n * c / RC_CHUNKS, hi = n * (c + 1) / RC_CHUNKS;
        canopy_points q = {rows + lo * (d + 1), hi - lo, d, d + 1};
        s = local_knn(r, q, 0, k, opt, idx + lo * k, d2 + lo * k);
        for (int p = 0; p < 2; p++) canopy_dist_pending_test(pend[p]);
    }
    if (!s) s = canopy_alloc((void **)reply, (size_t)(n * (4 + (int64_t)k * CAND_BYTES) + 1), 1);
    if (!s) {
        /* reply_bytes[src]: the bytes answering source src's queries, in its order */
        char *p = *reply;
        int64_t qi = 0;
        for (int src = 0; src < r->size; src++) {
            char *start = p;
            for (int64_t e = 0; e < from_bytes[src] / (int64_t)row_bytes; e++, qi++) {
                float bound = rows[qi * (d + 1) + d];
                int32_t c = 0;
                char *cp = p;
                p += 4;
                for (int32_t m = 0; m < k; m++) {
                    int64_t id = idx[qi * k + m];
                    float dd = d2[qi * k + m];
                    if (id < 0 || !(dd <= bound)) break; /* rows ascend: the rest are farther */
                    memcpy(p, &id, 8);
                    memcpy(p + 8, &dd, 4);
                    p += CAND_BYTES;
                    c++;
                }
                memcpy(cp, &c, 4);
            }
            reply_bytes[src] = p - start;
        }
    }
    canopy_free(idx);
    canopy_free(d2);
    return s;
}

/* A row sorted ascending on (d2, id) reversed is a max-heap for knn_offer. */
static int32_t row_to_heap(float *hd, int64_t *hi, int32_t k) {
    int32_t c = 0;
    while (c < k && hi[c] >= 0) c++;
    for (int32_t a = 0, b = c - 1; a < b; a++, b--) {
        float td = hd[a];
        hd[a] = hd[b];
        hd[b] = td;
        int64_t ti = hi[a];
        hi[a] = hi[b];
        hi[b] = ti;
    }
    return c;
}

/* Rows of home queries back to the ranks they came from (grouped by source in the
 * order they arrived), in two parts. rows_back_start sends every row as the local
 * walk left it, without waiting, so the bulk of the bytes moves while the remote
 * queries are answered; rows_back_finish then sends only the rows the remote
 * candidates changed, each with its place in its source's block, and puts all of them
 * in the caller's order. The early rows go straight from the walk's arrays (they are
 * grouped by source already): packing them into one buffer first was a tenth of a
 * rank's CPU time (2 ranks, 1M + 1M uniform), and the distances go only where some
 * rank asked for them (part 1). */
typedef struct rows_back {
    int parts;       /* 1: indices only, 2: and distances */
    size_t bytes[2]; /* of a row, per part */
    void *back[2];   /* received, grouped by home rank */
    int64_t *cnt, *rcnt, *roff[2];
    canopy_dist_pending *pend[2];
} rows_back;

static void rows_back_wait(rows_back *b) {
    for (int p = 0; p < 2; p++) {
        canopy_dist_pending_wait(b->pend[p]);
        b->pend[p] = NULL;
    }
}

static void rows_back_free(rows_back *b) {
    rows_back_wait(b); /* a started exchange ends before its buffers go */
    for (int p = 0; p < 2; p++) {
        canopy_free(b->back[p]);
        canopy_free(b->roff[p]);
    }
    canopy_free(b->cnt);
    canopy_free(b->rcnt);
    memset(b, 0, sizeof *b);
}

static void pack_row(const knn_job *j, int64_t i, int parts, char *dst) {
    size_t k = (size_t)j->k;
    memcpy(dst, j->idx + i * j->k, sizeof(int64_t) * k);
    if (parts > 1) memcpy(dst + sizeof(int64_t) * k, j->d2 + i * j->k, sizeof(float) * k);
}

/* want_d2: this rank's caller asked for distances; any rank's asking sends them all. */
static canopy_status rows_back_start(MPI_Comm comm, const knn_job *j, const int64_t *from_n,
                                     int want_d2, rows_back *b, canopy_dist_stats *st) {
    int size = canopy_dist_size(comm);
    memset(b, 0, sizeof *b);
    MPI_Allreduce(MPI_IN_PLACE, &want_d2, 1, MPI_INT, MPI_MAX, comm);
    b->parts = want_d2 ? 2 : 1;
    b->bytes[0] = sizeof(int64_t) * (size_t)j->k;
    b->bytes[1] = sizeof(float) * (size_t)j->k;
    canopy_status s = canopy_alloc((void **)&b->cnt, (size_t)size, sizeof *b->cnt);
    if (!s) s = canopy_alloc((void **)&b->rcnt, (size_t)size, sizeof *b->rcnt);
    for (int p = 0; !s && p < b->parts; p++)
        s = canopy_alloc((void **)&b->roff[p], (size_t)size, sizeof *b->roff[p]);
    s = canopy_dist_agree(comm, s);
    for (int p = 0; !s && p < b->parts; p++) {
        for (int q = 0; q < size; q++) b->cnt[q] = from_n[q] * (int64_t)b->bytes[p];
        s = canopy_dist_ialltoallv_bytes(comm, p ? (const void *)j->d2 : (const void *)j->idx,
                                         b->cnt, &b->back[p], b->rcnt, b->roff[p], st, &b->pend[p]);
    }
    return s;
}

/* After rows_back_wait (the walk's arrays were in flight until then). */
static canopy_status rows_back_finish(MPI_Comm comm, const knn_job *j, const int64_t *from_n,
                                      const uint8_t *changed, const routing *to_home, rows_back *b,
                                      int64_t *idx, float *dist2, canopy_dist_stats *st) {
    int size = canopy_dist_size(comm);
    int32_t k = j->k;
    size_t rec = sizeof(int64_t) + b->bytes[0] + (b->parts > 1 ? b->bytes[1] : 0);
    int64_t n_changed = 0, *cnt = NULL, *rcnt = NULL, *roff = NULL;
    for (int64_t i = 0; i < j->q.n; i++) n_changed += changed[i];
    char *fix = NULL, *got = NULL;
    canopy_status s = canopy_alloc((void **)&fix, (size_t)n_changed + 1, rec);
    if (!s) s = canopy_calloc((void **)&cnt, (size_t)size, sizeof *cnt);
    if (!s) s = canopy_alloc((void **)&rcnt, (size_t)size, sizeof *rcnt);
    if (!s) s = canopy_alloc((void **)&roff, (size_t)size, sizeof *roff);
    for (int64_t q = 0, i = 0, m = 0; !s && q < size; q++)
        for (int64_t p = 0; p < from_n[q]; p++, i++) {
            if (!changed[i]) continue;
            memcpy(fix + (size_t)m * rec, &p, sizeof p);
            pack_row(j, i, b->parts, fix + (size_t)m * rec + sizeof p);
            cnt[q] += (int64_t)rec;
            m++;
        }
    s = canopy_dist_agree(comm, s);
    if (!s) s = canopy_dist_alltoallv_bytes(comm, fix, cnt, (void **)&got, rcnt, roff, st);
    size_t ib = b->bytes[0], db = b->bytes[1];
    for (int h = 0; !s && h < size; h++) {
        const char *bi = (const char *)b->back[0] + b->roff[0][h];
        const char *bd = dist2 ? (const char *)b->back[1] + b->roff[1][h] : NULL;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
        for (int64_t t = to_home->off[h]; t < to_home->off[h + 1]; t++) {
            size_t e = (size_t)(t - to_home->off[h]);
            memcpy(idx + to_home->items[t] * k, bi + e * ib, ib);
            if (bd) memcpy(dist2 + to_home->items[t] * k, bd + e * db, db);
        }
        for (int64_t e = 0; e < rcnt[h] / (int64_t)rec; e++) {
            const char *r = got + roff[h] + (size_t)e * rec;
            int64_t p, at;
            memcpy(&p, r, sizeof p);
            at = to_home->items[to_home->off[h] + p];
            memcpy(idx + at * k, r + sizeof p, ib);
            if (dist2) memcpy(dist2 + at * k, r + sizeof p + ib, db);
        }
    }
    canopy_free(fix);
    canopy_free(got);
    canopy_free(cnt);
    canopy_free(rcnt);
    canopy_free(roff);
    return s;
}

/* Candidates other ranks returned for the queries of the routing: merged into the
 * rows with knn_offer, the (distance, index) order of canopy_knn; changed (may be
 * NULL) marks the rows that received any. */
static void merge_candidates(knn_job *j, const routing *remote, const char *cand,
                             const int64_t *cand_off, int size, uint8_t *changed) {
    int32_t k = j->k;
    for (int q = 0; q < size; q++) {
        const char *p = cand + cand_off[q];
        for (int64_t t = remote->off[q]; t < remote->off[q + 1]; t++) {
            int64_t i = remote->items[t];
            int32_t n_c;
            memcpy(&n_c, p, 4);
            p += 4;
            if (n_c == 0) continue;
            if (changed) changed[i] = 1;
            float *hd = j->d2 + i * k;
            int64_t *hi = j->idx + i * k;
            int32_t count = row_to_heap(hd, hi, k);
            for (int32_t m = 0; m < n_c; m++, p += CAND_BYTES) {
                int64_t id;
                float dd;
                memcpy(&id, p, 8);
                memcpy(&dd, p + 8, 4);
                knn_offer(hd, hi, k, &count, dd, id);
            }
            knn_sort_row(hd, hi, k, count);
        }
    }
}

canopy_status canopy_dist_knn(MPI_Comm comm, canopy_points ref, const int64_t *ref_ids,
                              canopy_points query, int32_t k, const canopy_run_options *opt,
                              int64_t *idx, float *dist2, canopy_dist_stats *stats) {
    double t_start = canopy_now();
    canopy_dist_stats scratch;
    canopy_dist_stats *st = stats ? stats : &scratch;
    memset(st, 0, sizeof *st);
    int self = query.n == 0 && query.data == NULL;
    int size = canopy_dist_size(comm);
    canopy_status s = CANOPY_OK;
    if (k < 1)
        s = canopy_fail(CANOPY_ERR_INVALID, "distributed knn: k must be >= 1 (got %d)", (int)k);
    if (!s && !self) s = canopy_points_check(query, "distributed knn query points");
    if (!s && !self && query.d != ref.d)
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "distributed knn: query points have %d dimensions but reference points %d",
                        (int)query.d, (int)ref.d);
    int64_t n_rows = self ? ref.n : query.n;
    if (!s && n_rows > 0 && !idx)
        s = canopy_fail(CANOPY_ERR_INVALID, "distributed knn: idx is NULL");
    dist_ref r;
    s = dist_ref_setup(comm, ref, ref_ids, opt, "distributed knn", s, &r, st);
    if (s) {
        dist_ref_free(&r);
        return s;
    }
    knn_job j = {&r, ref, k, NULL, NULL, NULL, query};
    rows_back rb = {0};
    uint8_t *changed = NULL;
    int32_t *home = NULL;
    routing to_home = {0}, remote = {0};
    void *hq_rows = NULL, *rq_rows = NULL, *cand = NULL;
    char *reply = NULL;
    int64_t *from_n = NULL;
    rank_counts rc;
    s = rank_counts_alloc(&rc, size);
    int64_t *a = rc.a, *b = rc.b, *c = rc.c, *e = rc.e;
    if (!s) s = canopy_calloc((void **)&from_n, (size_t)size, sizeof *from_n);

    /* 1. Queries to their home ranks, the nearest box (the self form's are home). */
    if (!self) {
        if (!s) s = canopy_alloc((void **)&home, (size_t)query.n + 1, sizeof *home);
        if (!s) {
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
            for (int64_t i = 0; i < query.n; i++) home[i] = home_rank(&r, canopy_point(query, i));
        }
        j.home = home;
        if (!s) s = route(size, query.n, want_home, &j, &to_home);
        s = canopy_dist_agree(comm, s);
        size_t qbytes = sizeof(float) * (size_t)r.d;
        if (!s) s = send_rows(comm, &to_home, qbytes, pack_query, &j, &hq_rows, a, b, st);
        if (s) goto done;
        int64_t nh = 0;
        for (int q = 0; q < size; q++) nh += from_n[q] = a[q] / (int64_t)qbytes;
        j.q = canopy_points_make(hq_rows, nh, r.d);
    }

    /* 2. Local rows of the home queries (the self form writes the caller's arrays). */
    double t0 = canopy_now();
    int64_t nh = j.q.n;
    if (self) {
        j.idx = idx;
        j.d2 = dist2;
        if (!s && !dist2) s = canopy_alloc((void **)&j.d2, (size_t)(nh * k + 1), sizeof *j.d2);
    } else if (!s) {
        s = canopy_alloc((void **)&j.idx, (size_t)(nh * k + 1), sizeof *j.idx);
        if (!s) s = canopy_alloc((void **)&j.d2, (size_t)(nh * k + 1), sizeof *j.d2);
        if (!s) s = canopy_calloc((void **)&changed, (size_t)nh + 1, sizeof *changed);
    }
    if (!s) s = local_knn(&r, j.q, self, k, opt, j.idx, j.d2);
    st->local_seconds += canopy_now() - t0;
    s = canopy_dist_agree(comm, s);
    if (s) goto done;

    /* 3. Each home query, with its k-th distance, to the ranks that may beat it; they
     * answer with their candidates within that distance. */
    s = route(size, nh, want_remote, &j, &remote);
    s = canopy_dist_agree(comm, s);
    /* the local rows start back to their ranks now, overlapping the remote round */
    if (!s && !self) s = rows_back_start(comm, &j, from_n, dist2 != NULL, &rb, st);
    if (s) goto done;
    st->remote_queries += remote.n_pairs;
    size_t qrow = sizeof(float) * (size_t)(r.d + 1);
    s = send_rows(comm, &remote, qrow, pack_query_bound, &j, &rq_rows, a, b, st);
    if (s) goto done;
    int64_t nr = 0;
    for (int q = 0; q < size; q++) nr += a[q] / (int64_t)qrow;
    t0 = canopy_now();
    s = answer_remote(&r, rq_rows, nr, k, opt, a, qrow, rb.pend, &reply, c);
    st->local_seconds += canopy_now() - t0;
    s = canopy_dist_agree(comm, s);
    if (!s) s = canopy_dist_alltoallv_bytes(comm, reply, c, &cand, e, b, st);
    if (s) goto done;

    /* 4. Merge (once the early rows are out of the walk's arrays), and 5. rows back to
     * the ranks the queries came from. */
    rows_back_wait(&rb);
    merge_candidates(&j, &remote, cand, b, size, changed);
    if (!self) s = rows_back_finish(comm, &j, from_n, changed, &to_home, &rb, idx, dist2, st);

done:
    rows_back_free(&rb);
    canopy_free(changed);
    if (j.d2 != dist2) canopy_free(j.d2);
    if (j.idx != idx) canopy_free(j.idx);
    canopy_free(home);
    routing_free(&to_home);
    routing_free(&remote);
    canopy_free(hq_rows);
    canopy_free(rq_rows);
    canopy_free(cand);
    canopy_free(reply);
    canopy_free(from_n);
    rank_counts_free(&rc);
    dist_ref_free(&r);
    st->total_seconds = canopy_now() - t_start;
    return s;
}

/* -------------------------------------------------------------- radius count -- */

typedef struct radius_job {
    const dist_ref *ref;
    canopy_points q;
    double r2;
} radius_job;

static int want_radius(const void *ctx, int64_t i, int r) {
    const radius_job *j = ctx;
    return r != j->ref->rank && box_within(j->ref, r, canopy_point(j->q, i), j->r2);
}

static void pack_radius_query(const void *ctx, int64_t i, int r, void *dst) {
    const radius_job *j = ctx;
    (void)r;
    memcpy(dst, canopy_point(j->q, i), sizeof(float) * (size_t)j->q.d);
}

canopy_status canopy_dist_radius_count(MPI_Comm comm, canopy_points ref, canopy_points query,
                                       float radius, const canopy_run_options *opt, int64_t *counts,
                                       canopy_dist_stats *stats) {
    double t_start = canopy_now();
    canopy_dist_stats scratch;
    canopy_dist_stats *st = stats ? stats : &scratch;
    memset(st, 0, sizeof *st);
    int self = query.n == 0 && query.data == NULL;
    int size = canopy_dist_size(comm);
    canopy_status s = CANOPY_OK;
    if (!(radius >= 0.0f) || !isfinite(radius))
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "distributed radius: the radius must be finite and >= 0 (got %g)",
                        (double)radius);
    if (!s && !self) s = canopy_points_check(query, "distributed radius query points");
    if (!s && !self && query.d != ref.d)
        s = canopy_fail(CANOPY_ERR_INVALID,
                        "distributed radius: query points have %d dimensions but reference "
                        "points %d",
                        (int)query.d, (int)ref.d);
    canopy_points q = self ? ref : query;
    if (!s && q.n > 0 && !counts)
        s = canopy_fail(CANOPY_ERR_INVALID, "distributed radius: counts is NULL");
    dist_ref r;
    s = dist_ref_setup(comm, ref, NULL, opt, "distributed radius", s, &r, st);
    if (s) {
        dist_ref_free(&r);
        return s;
    }
    /* the bound the local traversal uses: dist2 <= r * r in float */
    radius_job j = {&r, q, (double)(radius * radius)};
    routing remote = {0};
    void *rq = NULL, *back = NULL;
    int64_t *found = NULL;
    rank_counts rk;
    s = rank_counts_alloc(&rk, size);
    int64_t *a = rk.a, *b = rk.b, *c = rk.c, *e = rk.e;

    double t0 = canopy_now();
    for (int64_t i = 0; !s && i < q.n; i++) counts[i] = 0;
    canopy_points none = {NULL, 0, r.d, r.d};
    if (!s && r.ix && q.n > 0)
        s = canopy_index_radius_count(r.ix, self ? none : q, radius, opt, counts, NULL);
    st->local_seconds += canopy_now() - t0;
    if (!s) s = route(size, q.n, want_radius, &j, &remote);
    s = canopy_dist_agree(comm, s);
    if (s) goto done;
    st->remote_queries += remote.n_pairs;
    size_t qbytes = sizeof(float) * (size_t)r.d;
    s = send_rows(comm, &remote, qbytes, pack_radius_query, &j, &rq, a, b, st);
    if (s) goto done;
    int64_t nr = 0;
    for (int p = 0; p < size; p++) {
        a[p] /= (int64_t)qbytes;
        nr += a[p];
    }
    t0 = canopy_now();
    s = canopy_alloc((void **)&found, (size_t)nr + 1, sizeof *found);
    if (!s && nr > 0)
        s = canopy_index_radius_count(r.ix, canopy_points_make(rq, nr, r.d), radius, opt, found,
                                      NULL);
    st->local_seconds += canopy_now() - t0;
    for (int p = 0; p < size; p++) c[p] = a[p] * (int64_t)sizeof *found;
    s = canopy_dist_agree(comm, s);
    if (!s) s = canopy_dist_alltoallv_bytes(comm, found, c, &back, e, b, st);
    if (s) goto done;
    for (int p = 0; p < size; p++) {
        const char *src = (const char *)back + b[p];
        for (int64_t t = remote.off[p]; t < remote.off[p + 1]; t++) {
            int64_t v;
            memcpy(&v, src + (size_t)(t - remote.off[p]) * sizeof v, sizeof v);
            counts[remote.items[t]] += v;
        }
    }
done:
    routing_free(&remote);
    canopy_free(rq);
    canopy_free(back);
    canopy_free(found);
    rank_counts_free(&rk);
    dist_ref_free(&r);
    st->total_seconds = canopy_now() - t_start;
    return s;
}
