// SPDX-License-Identifier: MIT
/* Space-filling-curve decomposition of points spread over ranks, and the all-to-all
 * that moves rows to their new ranks. The curve keys are schedule.c's (one curve code
 * for query schedules and rank domains), computed over the global bounding box. */
#include "dist/comm.h"
#include "traverse/run.h"

#include <math.h>
#include <omp.h>
#include <string.h>

/* The global order is (key, rank, local index); the cut between pieces p and p + 1
 * falls where the work before a point, plus half its own, reaches W (p + 1) / size.
 * Each cut's key s (the smallest with global work of keys <= s at least the target)
 * is found by bisection over the key range, all cuts in lockstep with one Allreduce
 * per step; the points whose key equals a cut key are then placed by an exclusive
 * scan of their work over the ranks. No point moves before dest is known. */

/* Number of sorted keys <= key (upper bound). */
static int64_t count_le(const canopy_keyed *k, int64_t n, uint64_t key) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (k[mid].key <= key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static canopy_status check_work(canopy_points local, const double *work) {
    if (!work) return CANOPY_OK;
    for (int64_t i = 0; i < local.n; i++)
        if (!(work[i] >= 0.0) || !isfinite(work[i]))
            return canopy_fail(CANOPY_ERR_INVALID,
                               "decompose: work[%lld] = %g (must be finite and >= 0)", (long long)i,
                               work[i]);
    return CANOPY_OK;
}

/* Local key-sorted points and the prefix sums of their work (pre[j] = work of the
 * first j sorted points). */
typedef struct sorted_work {
    canopy_keyed *k;
    double *pre;
} sorted_work;

/* The points' curve keys over the global box (s->k, in local order) and whether the
 * work is uniform; sort_keys then orders them and sums their work. */
static canopy_status local_keys(MPI_Comm comm, canopy_points local, const double *work,
                                canopy_curve curve, int32_t bits, sorted_work *s, int *uniform) {
    int32_t dk = local.d < 63 ? local.d : 63;
    float lo[63], hi[63], glo[63], ghi[63];
    for (int32_t j = 0; j < dk; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (int64_t i = 0; i < local.n; i++)
        for (int32_t j = 0; j < dk; j++) {
            float v = canopy_point(local, i)[j];
            lo[j] = v < lo[j] ? v : lo[j];
            hi[j] = v > hi[j] ? v : hi[j];
        }
    MPI_Allreduce(lo, glo, dk, MPI_FLOAT, MPI_MIN, comm);
    MPI_Allreduce(hi, ghi, dk, MPI_FLOAT, MPI_MAX, comm);
    /* All-zero work (e.g. a first step with nothing measured) counts points. */
    double mine = 0.0, total = 0.0;
    for (int64_t i = 0; work && i < local.n; i++) mine += work[i];
    MPI_Allreduce(&mine, &total, 1, MPI_DOUBLE, MPI_SUM, comm);
    *uniform = !work || !(total > 0.0);
    canopy_status st = canopy_alloc((void **)&s->k, (size_t)local.n + 1, sizeof *s->k);
    if (!st) st = canopy_alloc((void **)&s->pre, (size_t)local.n + 1, sizeof *s->pre);
    if (!st && local.n > 0)
        canopy_curve_keys_bits(curve == CANOPY_CURVE_HILBERT ? CANOPY_SCHEDULE_HILBERT
                                                             : CANOPY_SCHEDULE_MORTON,
                               local, glo, ghi, bits, s->k);
    return st;
}

/* The prefix sums of the sorted points' work. */
static void sum_work(sorted_work *s, int64_t n, const double *work, int uniform) {
    s->pre[0] = 0.0;
    for (int64_t j = 0; j < n; j++) s->pre[j + 1] = s->pre[j] + (uniform ? 1.0 : work[s->k[j].idx]);
}

/* With slack, most cuts need no sort: the work of every top-CUT_BIN_BITS curve block,
 * summed over the ranks (one Allreduce), places each cut on the coarsest block boundary
 * within tol = slack W / R of its target, and each point's piece follows from its block.
 * The sort and the bisection (the sort alone was 0.11-0.14 s of placing kNN's reference
 * points in 0.2-0.3 s, 2 ranks of 500k) run only when some cut finds no block boundary in
 * reach (*done = 0: a cluster denser than a block, or thousands of ranks). */
enum { CUT_BIN_BITS = 16 };

static canopy_status cut_on_blocks(MPI_Comm comm, const sorted_work *s, int64_t n,
                                   const double *work, int uniform, int32_t bits, int size,
                                   double slack, int32_t *dest, int *done) {
    int32_t hb = bits < CUT_BIN_BITS ? bits : CUT_BIN_BITS, shift = bits - hb;
    int64_t nb = (int64_t)1 << hb, *cut = NULL;
    double *pre = NULL;
    int32_t *piece = NULL;
    *done = 0;
    canopy_status st = canopy_calloc((void **)&pre, (size_t)nb + 1, sizeof *pre);
    if (!st) st = canopy_alloc((void **)&cut, (size_t)size, sizeof *cut);
    if (!st) st = canopy_alloc((void **)&piece, (size_t)nb, sizeof *piece);
    st = canopy_dist_agree(comm, st);
    if (!st) {
        for (int64_t i = 0; i < n; i++)
            pre[(s->k[i].key >> shift) + 1] += uniform ? 1.0 : work[s->k[i].idx];
        MPI_Allreduce(MPI_IN_PLACE, pre + 1, (int)nb, MPI_DOUBLE, MPI_SUM, comm);
        for (int64_t b = 0; b < nb; b++) pre[b + 1] += pre[b]; /* pre[b]: work in blocks < b */
        double total = pre[nb], tol = slack * total / (double)size;
        int found = 1;
        for (int c = 0; c + 1 < size && found; c++) {
            double target = total * (double)(c + 1) / (double)size;
            int64_t e = 0, hi = nb; /* the first boundary with at least the target below it */
            while (e < hi) {
                int64_t mid = e + (hi - e) / 2;
                if (pre[mid] < target)
                    e = mid + 1;
                else
                    hi = mid;
            }
            cut[c] = 0;
            for (int32_t m = hb; m >= 0 && !cut[c]; m--) {
                int64_t down = e >> m << m, up = down + ((int64_t)1 << m);
                double off0 = fabs(pre[down] - target),
                       off1 = up <= nb ? fabs(pre[up] - target) : INFINITY;
                if (down > 0 && off0 <= tol && off0 <= off1)
                    cut[c] = down;
                else if (off1 <= tol)
                    cut[c] = up;
            }
            found = cut[c] > 0;
        }
        if (found) {
            /* the windows of the cuts are disjoint (slack < 0.5): the cuts ascend */
            for (int64_t b = 0, p = 0; b < nb; b++) {
                while (p + 1 < size && cut[p] <= b) p++;
                piece[b] = (int32_t)p;
            }
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
            for (int64_t i = 0; i < n; i++) dest[s->k[i].idx] = piece[s->k[i].key >> shift];
            *done = 1;
        }
    }
    canopy_free(pre);
    canopy_free(cut);
    canopy_free(piece);
    return st;
}

/* Moves each exact cut (key clo[c]) to the coarsest curve boundary K, a multiple of
 * 2^m with m as large as possible, whose work below (keys < K, over all ranks) is within
 * tol of the target: round[c] = K, or 0 where no boundary is close enough. Cut exactly,
 * uniform points leave a few hundred of one piece's points past a face of its
 * neighbour's, the first cells of the next curve block, and the neighbour's queries
 * near them all go remote; on a block boundary the faces are clean (kNN's reference
 * pieces, docs/distributed.md). One Allreduce of 2 candidates per level and cut. */
static canopy_status round_cuts(MPI_Comm comm, const sorted_work *s, int64_t n, int32_t bits,
                                const uint64_t *clo, const double *target, int ncut, double tol,
                                uint64_t *round) {
    size_t m_levels = (size_t)bits, cand = 2 * m_levels * (size_t)ncut;
    uint64_t *key = NULL;
    double *mine = NULL, *all = NULL;
    canopy_status st = canopy_alloc((void **)&key, cand + 1, sizeof *key);
    if (!st) st = canopy_alloc((void **)&mine, cand + 1, sizeof *mine);
    if (!st) st = canopy_alloc((void **)&all, cand + 1, sizeof *all);
    st = canopy_dist_agree(comm, st);
    if (!st) {
        /* candidates (c, m, side): clo rounded down and up to a multiple of 2^m, m >= 1 */
        for (int c = 0; c < ncut; c++)
            for (size_t m = 1; m <= m_levels; m++) {
                size_t at = 2 * ((size_t)c * m_levels + m - 1);
                uint64_t down = clo[c] >> m << m;
                key[at] = down;
                key[at + 1] = down + ((uint64_t)1 << m);
                for (int e = 0; e < 2; e++)
                    mine[at + (size_t)e] = key[at + (size_t)e] == 0
                                               ? 0.0
                                               : s->pre[count_le(s->k, n, key[at + (size_t)e] - 1)];
            }
        MPI_Allreduce(mine, all, (int)cand, MPI_DOUBLE, MPI_SUM, comm);
        for (int c = 0; c < ncut; c++)
            for (size_t m = m_levels; m >= 1 && !round[c]; m--) {
                size_t at = 2 * ((size_t)c * m_levels + m - 1);
                double off0 = fabs(all[at] - target[c]), off1 = fabs(all[at + 1] - target[c]);
                if (key[at] > 0 && off0 <= tol && off0 <= off1)
                    round[c] = key[at];
                else if (off1 <= tol)
                    round[c] = key[at + 1];
            }
    }
    canopy_free(key);
    canopy_free(mine);
    canopy_free(all);
    return st;
}

/* A body's share of a gravity walk grows with the log of the density around it (a
 * denser region sits deeper in the tree: more levels of cells to open). Plummer 1M,
 * order 2, theta 0.5, binary tree: 375 interactions per decade of density on a mean of
 * 6,000 (bench/results/distributed.md), so 6 % a decade; the density is that of the
 * DENSITY_SPAN sorted keys on either side. */
#define DENSITY_WORK_PER_DECADE 0.06
enum { DENSITY_SPAN = 8 };

/* density_work's weights from keys already sorted (collective). */
static void density_from_sorted(MPI_Comm comm, const sorted_work *s, int64_t n, double *work) {
    /* log10 of the keys per unit of key range around each body (NaN where a rank holds
     * one body: no neighbour to measure against), then centred on the mean of all ranks */
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t j = 0; j < n; j++) {
        int64_t a = j > DENSITY_SPAN ? j - DENSITY_SPAN : 0,
                c = j + DENSITY_SPAN < n ? j + DENSITY_SPAN : n - 1;
        double gap = (double)(s->k[c].key - s->k[a].key);
        work[s->k[j].idx] = c > a ? log10((double)(c - a) / (gap > 1.0 ? gap : 1.0)) : NAN;
    }
    double sum[2] = {0.0, 0.0}, all[2]; /* in order: the cut does not depend on threads */
    for (int64_t i = 0; i < n; i++)
        if (work[i] == work[i]) sum[0] += work[i], sum[1] += 1.0;
    MPI_Allreduce(sum, all, 2, MPI_DOUBLE, MPI_SUM, comm);
    const double mean = all[1] > 0.0 ? all[0] / all[1] : 0.0;
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t i = 0; i < n; i++) {
        double w = work[i] == work[i] ? 1.0 + DENSITY_WORK_PER_DECADE * (work[i] - mean) : 1.0;
        work[i] = w < 0.2 ? 0.2 : w;
    }
}

canopy_status canopy_dist_density_work(MPI_Comm comm, canopy_points local, double *work) {
    sorted_work s = {0};
    int uniform = 1;
    const int64_t n = local.n;
    canopy_status st = local_keys(comm, local, NULL, CANOPY_CURVE_HILBERT,
                                  canopy_curve_bits(local.d), &s, &uniform);
    if (!st && n > 0) st = canopy_sort_keyed(s.k, n);
    if (!(st = canopy_dist_agree(comm, st))) density_from_sorted(comm, &s, n, work);
    canopy_free(s.k);
    canopy_free(s.pre);
    return st;
}

canopy_status canopy_dist_decompose(MPI_Comm comm, canopy_points local, const double *work,
                                    canopy_curve curve, int32_t *dest) {
    return canopy_dist_decompose_bits(comm, local, work, curve, 0, 0.0, dest);
}

/* A cut's inputs, agreed over the ranks: every rank must have the same d for one curve. */
static canopy_status check_input(MPI_Comm comm, int size, canopy_points local, const double *work,
                                 canopy_curve curve, const int32_t *dest) {
    canopy_status st = CANOPY_OK;
    if (local.n < 0 || local.d < 1 || (local.n > 0 && (!local.data || !dest)) ||
        local.stride < local.d)
        st = canopy_fail(CANOPY_ERR_INVALID, "decompose: bad local points (n %lld, d %d)",
                         (long long)local.n, (int)local.d);
    if (!st && curve != CANOPY_CURVE_MORTON && curve != CANOPY_CURVE_HILBERT)
        st = canopy_fail(CANOPY_ERR_INVALID, "decompose: unknown curve %d", (int)curve);
    if (!st) st = canopy_points_check(local, "decompose points");
    if (!st) st = check_work(local, work);
    if (size == 1 || (st = canopy_dist_agree(comm, st))) return st;
    int dmin = local.d, dmax = local.d;
    MPI_Allreduce(&local.d, &dmin, 1, MPI_INT32_T, MPI_MIN, comm);
    MPI_Allreduce(&local.d, &dmax, 1, MPI_INT32_T, MPI_MAX, comm);
    if (dmin != dmax)
        return canopy_fail(CANOPY_ERR_INVALID,
                           "decompose: ranks hold points of different dimensions (%d and %d)",
                           (int)dmin, (int)dmax);
    return CANOPY_OK;
}

/* canopy_dist_decompose_bits; with density (not NULL), the work is
 * canopy_dist_density_work's, written there from the keys the cut sorts anyway. */
static canopy_status decompose(MPI_Comm comm, canopy_points local, const double *work,
                               double *density, canopy_curve curve, int32_t bits_per_dim,
                               double slack, int32_t *dest) {
    int size = canopy_dist_size(comm), rank = canopy_dist_rank(comm);
    canopy_status st = check_input(comm, size, local, work, curve, dest);
    if (st) return st;
    if (size == 1) { /* one piece: no keys, no sort */
        for (int64_t i = 0; i < local.n; i++) dest[i] = 0;
        return CANOPY_OK;
    }
    sorted_work s = {0};
    int uniform = 1;
    int ncut = size - 1;
    double *target = NULL, *sum = NULL, *loc = NULL, *eqw = NULL, *eqx = NULL;
    uint64_t *clo = NULL, *chi = NULL, *mid = NULL, *round = NULL;
    int64_t *below = NULL;
    int32_t full = canopy_curve_bits(local.d);
    int32_t per_dim = bits_per_dim > 0 && bits_per_dim < full ? bits_per_dim : full;
    int32_t bits = per_dim * (local.d < 63 ? local.d : 63);
    int on_blocks = 0;
    if (slack > 0.0) {
        /* The blocks are the keys' top CUT_BIN_BITS bits, which are the keys of a coarser
         * grid (the cells' coordinates scale by a power of two, and both curves nest):
         * 6 bits a side in 3-D instead of 10, 60 % of the keys' cost. */
        int32_t dk = local.d < 63 ? local.d : 63, coarse = (CUT_BIN_BITS + dk - 1) / dk;
        coarse = coarse < per_dim ? coarse : per_dim;
        st = local_keys(comm, local, work, curve, coarse, &s, &uniform);
        st = canopy_dist_agree(comm, st);
        if (!st)
            st = cut_on_blocks(comm, &s, local.n, work, uniform, coarse * dk, size, slack, dest,
                               &on_blocks);
        if (st || on_blocks) goto done;
        canopy_free(s.k);
        canopy_free(s.pre);
        memset(&s, 0, sizeof s);
    }
    st = local_keys(comm, local, work, curve, per_dim, &s, &uniform);
    if (!st && local.n > 0) st = canopy_sort_keyed(s.k, local.n);
    if (density && !(st = canopy_dist_agree(comm, st))) {
        density_from_sorted(comm, &s, local.n, density);
        work = density;
        uniform = 0;
    }
    if (!st) sum_work(&s, local.n, work, uniform);
    if (!st) st = canopy_alloc((void **)&target, (size_t)size, sizeof *target);
    if (!st) st = canopy_alloc((void **)&sum, (size_t)size, sizeof *sum);
    if (!st) st = canopy_alloc((void **)&loc, (size_t)size, sizeof *loc);
    if (!st) st = canopy_alloc((void **)&clo, (size_t)size, sizeof *clo);
    if (!st) st = canopy_alloc((void **)&chi, (size_t)size, sizeof *chi);
    if (!st) st = canopy_alloc((void **)&mid, (size_t)size, sizeof *mid);
    if (!st) st = canopy_alloc((void **)&eqw, (size_t)size, sizeof *eqw);
    if (!st) st = canopy_alloc((void **)&eqx, (size_t)size, sizeof *eqx);
    if (!st) st = canopy_alloc((void **)&below, (size_t)size, sizeof *below);
    if (!st) st = canopy_calloc((void **)&round, (size_t)size, sizeof *round);
    st = canopy_dist_agree(comm, st);
    if (st) goto done;
    double total = 0.0;
    MPI_Allreduce(&s.pre[local.n], &total, 1, MPI_DOUBLE, MPI_SUM, comm);
    uint64_t key_max = bits >= 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    for (int c = 0; c < ncut; c++) {
        target[c] = total * (double)(c + 1) / (double)size;
        clo[c] = 0;
        chi[c] = key_max;
    }
    /* Bisection: the smallest key s with (global work of keys <= s) >= target. */
    for (int step = 0; step <= bits; step++) {
        for (int c = 0; c < ncut; c++) {
            mid[c] = clo[c] + (chi[c] - clo[c]) / 2;
            loc[c] = s.pre[count_le(s.k, local.n, mid[c])];
        }
        MPI_Allreduce(loc, sum, ncut, MPI_DOUBLE, MPI_SUM, comm);
        for (int c = 0; c < ncut; c++) {
            if (clo[c] == chi[c]) continue;
            if (sum[c] >= target[c])
                chi[c] = mid[c];
            else
                clo[c] = mid[c] + 1;
        }
    }
    /* Per cut key: the local points below it (below), the work before it over all
     * ranks (sum), and the work of the points with that key on lower ranks (eqx). */
    for (int c = 0; c < ncut; c++) {
        below[c] = clo[c] == 0 ? 0 : count_le(s.k, local.n, clo[c] - 1);
        loc[c] = s.pre[below[c]];
        eqw[c] = s.pre[count_le(s.k, local.n, clo[c])] - s.pre[below[c]];
    }
    if (slack > 0.0 && (st = round_cuts(comm, &s, local.n, bits, clo, target, ncut,
                                        slack * total / (double)size, round)))
        goto done;
    MPI_Allreduce(loc, sum, ncut, MPI_DOUBLE, MPI_SUM, comm);
    MPI_Exscan(eqw, eqx, ncut, MPI_DOUBLE, MPI_SUM, comm);
    if (rank == 0)
        for (int c = 0; c < ncut; c++) eqx[c] = 0.0;
    /* A point is after cut c when its key is above the cut key, or equal and the work
     * before it plus half its own reaches the target; its piece is the number of cuts
     * it is after (monotone in c, so a binary search). */
#pragma omp parallel for schedule(static) num_threads(canopy_threads())
    for (int64_t j = 0; j < local.n; j++) {
        uint64_t key = s.k[j].key;
        double w = s.pre[j + 1] - s.pre[j];
        int lo = 0, hi = ncut; /* first cut the point is not after */
        while (lo < hi) {
            int c = lo + (hi - lo) / 2;
            int after;
            if (round[c]) {
                after = key >= round[c];
            } else if (key != clo[c]) {
                after = key > clo[c];
            } else {
                double before = sum[c] + eqx[c] + (s.pre[j] - s.pre[below[c]]);
                after = before + 0.5 * w >= target[c];
            }
            if (after)
                lo = c + 1;
            else
                hi = c;
        }
        dest[s.k[j].idx] = lo;
    }
done:
    canopy_free(s.k);
    canopy_free(s.pre);
    canopy_free(target);
    canopy_free(sum);
    canopy_free(loc);
    canopy_free(clo);
    canopy_free(chi);
    canopy_free(mid);
    canopy_free(eqw);
    canopy_free(eqx);
    canopy_free(below);
    canopy_free(round);
    return st;
}

canopy_status canopy_dist_decompose_bits(MPI_Comm comm, canopy_points local, const double *work,
                                         canopy_curve curve, int32_t bits_per_dim, double slack,
                                         int32_t *dest) {
    return decompose(comm, local, work, NULL, curve, bits_per_dim, slack, dest);
}

canopy_status canopy_dist_decompose_by_density(MPI_Comm comm, canopy_points local, double *work,
                                               int32_t *dest) {
    return decompose(comm, local, NULL, work, CANOPY_CURVE_HILBERT, 0, 0.0, dest);
}

/* Rows into buf grouped by destination, each group in row order, from pos[r] (bytes)
 * on: each of nt threads packs a contiguous share of the rows after the shares before
 * it (serial, this was most of moving 500k points on a 4-thread rank). at: nt * size
 * zeros, then per thread and destination where its next row goes. */
static void pack_by_dest(const void *rows, int64_t n, size_t row_bytes, const int32_t *dest,
                         int size, const int64_t *pos, int64_t *at, int nt, char *buf) {
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        int64_t i0 = n * t / m, i1 = n * (t + 1) / m, *mine = at + (size_t)t * (size_t)size;
        for (int64_t i = i0; i < i1; i++) mine[dest[i]] += (int64_t)row_bytes;
#pragma omp barrier
#pragma omp single
        for (int r = 0; r < size; r++) {
            int64_t o = pos[r];
            for (int u = 0; u < m; u++) {
                int64_t c = at[(size_t)u * (size_t)size + (size_t)r];
                at[(size_t)u * (size_t)size + (size_t)r] = o;
                o += c;
            }
        }
        for (int64_t i = i0; i < i1; i++) {
            memcpy(buf + mine[dest[i]], (const char *)rows + (size_t)i * row_bytes, row_bytes);
            mine[dest[i]] += (int64_t)row_bytes;
        }
    }
}

canopy_status canopy_dist_exchange(MPI_Comm comm, const void *rows, int64_t n, size_t row_bytes,
                                   const int32_t *dest, void **out, int64_t *n_out,
                                   canopy_dist_stats *stats) {
    int size = canopy_dist_size(comm);
    *out = NULL;
    *n_out = 0;
    int64_t *cnt = NULL, *rcnt = NULL, *rdis = NULL, *pos = NULL, *at = NULL;
    char *buf = NULL;
    int nt = canopy_threads();
    canopy_status st = CANOPY_OK;
    if (n < 0 || row_bytes == 0 || (n > 0 && (!rows || !dest)))
        st = canopy_fail(CANOPY_ERR_INVALID, "exchange: bad rows (n %lld, %zu bytes each)",
                         (long long)n, row_bytes);
    if (!st) st = canopy_calloc((void **)&cnt, (size_t)size, sizeof *cnt);
    if (!st) st = canopy_alloc((void **)&rcnt, (size_t)size, sizeof *rcnt);
    if (!st) st = canopy_alloc((void **)&rdis, (size_t)size, sizeof *rdis);
    if (!st) st = canopy_alloc((void **)&pos, (size_t)size, sizeof *pos);
    for (int64_t i = 0; !st && i < n; i++) {
        if (dest[i] < 0 || dest[i] >= size)
            st = canopy_fail(CANOPY_ERR_INVALID, "exchange: dest[%lld] = %d is not a rank of %d",
                             (long long)i, (int)dest[i], size);
        else
            cnt[dest[i]] += (int64_t)row_bytes;
    }
    if (!st) st = canopy_alloc((void **)&buf, (size_t)n + 1, row_bytes);
    if (!st) st = canopy_calloc((void **)&at, (size_t)nt * (size_t)size, sizeof *at);
    st = canopy_dist_agree(comm, st);
    if (!st) {
        int64_t off = 0;
        for (int r = 0; r < size; r++) {
            pos[r] = off;
            off += cnt[r];
        }
        pack_by_dest(rows, n, row_bytes, dest, size, pos, at, nt, buf);
        void *recv = NULL;
        st = canopy_dist_alltoallv_bytes(comm, buf, cnt, &recv, rcnt, rdis, stats);
        if (!st) {
            int64_t total = 0;
            for (int r = 0; r < size; r++) total += rcnt[r];
            *out = recv;
            *n_out = total / (int64_t)row_bytes;
        }
    }
    canopy_free(cnt);
    canopy_free(rcnt);
    canopy_free(rdis);
    canopy_free(pos);
    canopy_free(at);
    canopy_free(buf);
    return st;
}
