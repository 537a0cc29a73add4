// SPDX-License-Identifier: MIT
/* canopy_dist_decompose (and _bits, on coarser curves) and canopy_dist_exchange on R
 * ranks: the pieces follow the curve order (key, rank, index) computed here
 * independently on the gathered points, their work is balanced within one point's
 * work, and exchanged rows arrive whole. */
#include "mpi_check.h"
#include "traverse/run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct dataset {
    const char *name;
    int64_t n;
    int32_t d;
    int kind; /* 0 uniform, 1 clusters, 2 all points equal, 3 few distinct values */
} dataset;

static float *make_points(const dataset *ds, uint64_t seed) {
    float *p = malloc(sizeof *p * (size_t)(ds->n * ds->d + 1));
    if (ds->kind == 1) {
        canopy_gen_clusters(p, NULL, ds->n, ds->d, 3, 0.01, seed);
    } else {
        canopy_gen_uniform(p, ds->n, ds->d, -1.0, 1.0, seed);
        for (int64_t i = 0; i < ds->n * ds->d; i++) {
            if (ds->kind == 2) p[i] = 0.25f;
            if (ds->kind == 3) p[i] = floorf(p[i] * 2.0f);
        }
    }
    return p;
}

/* Work per point: uniform (NULL), random, or zero for most points. */
static double *make_work(int64_t n, int mode, uint64_t seed) {
    if (mode == 0) return NULL;
    double *w = malloc(sizeof *w * (size_t)(n + 1));
    for (int64_t i = 0; i < n; i++) {
        canopy_rng r = canopy_rng_make(seed, (uint64_t)i);
        double u = canopy_rng_uniform(&r);
        w[i] = mode == 1 ? 0.1 + 10.0 * u * u : (u < 0.9 ? 0.0 : 1.0 + u);
    }
    return w;
}

/* bits: bits per coordinate of the curve (0: the full curve of canopy_dist_decompose);
 * slack: how far a cut may move to a curve block's boundary (_bits only). */
static void check_one(const dataset *ds, canopy_curve curve, int mode, int32_t bits, double slack,
                      uint64_t seed) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD), size = canopy_dist_size(MPI_COMM_WORLD);
    float *all = make_points(ds, seed);
    double *wall = make_work(ds->n, mode, seed + 1);
    int64_t lo, hi;
    mpi_check_block(ds->n, &lo, &hi);
    canopy_points local = canopy_points_make(all + lo * ds->d, hi - lo, ds->d);
    int32_t *dest = malloc(sizeof *dest * (size_t)(hi - lo + 1));
    if (bits || slack > 0.0)
        CHECK_OK(canopy_dist_decompose_bits(MPI_COMM_WORLD, local, wall ? wall + lo : NULL, curve,
                                            bits, slack, dest));
    else
        CHECK_OK(
            canopy_dist_decompose(MPI_COMM_WORLD, local, wall ? wall + lo : NULL, curve, dest));

    /* Gather the destinations on rank 0 (block order = global index order). */
    int32_t *gdest = NULL;
    int64_t got = 0;
    CHECK_OK(canopy_dist_gatherv(MPI_COMM_WORLD, 0, dest, hi - lo, sizeof *dest, (void **)&gdest,
                                 NULL, &got));
    if (rank == 0) {
        CHECK(got == ds->n);
        /* The order, computed independently over the global box. */
        float blo[8], bhi[8];
        for (int32_t j = 0; j < ds->d; j++) {
            blo[j] = INFINITY;
            bhi[j] = -INFINITY;
            for (int64_t i = 0; i < ds->n; i++) {
                float v = all[i * ds->d + j];
                blo[j] = v < blo[j] ? v : blo[j];
                bhi[j] = v > bhi[j] ? v : bhi[j];
            }
        }
        canopy_keyed *k = malloc(sizeof *k * (size_t)(ds->n + 1));
        int32_t full = canopy_curve_bits(ds->d);
        canopy_curve_keys_bits(
            curve == CANOPY_CURVE_HILBERT ? CANOPY_SCHEDULE_HILBERT : CANOPY_SCHEDULE_MORTON,
            canopy_points_make(all, ds->n, ds->d), blo, bhi, bits && bits < full ? bits : full, k);
        canopy_sort_keyed(k, ds->n); /* stable: ties by global index = (rank, index) */
        double total = 0.0, wmax = 0.0, *part = calloc((size_t)size, sizeof *part);
        int monotone = 1, in_range = 1, on_blocks = 1;
        /* Uniform points, many per rank, on a power-of-two number of ranks: with slack
         * every cut falls on the curve's top blocks, key (p / size) of the key range. */
        int32_t key_bits = (bits && bits < full ? bits : full) * ds->d, lg = 0;
        while ((1 << lg) < size) lg++;
        int blocks = slack > 0.0 && ds->kind == 0 && !wall && ds->n >= 1000 * size &&
                     (1 << lg) == size && size > 1;
        for (int64_t j = 0; j < ds->n; j++) {
            int32_t p = gdest[k[j].idx];
            if (p < 0 || p >= size) {
                in_range = 0;
                continue;
            }
            if (j > 0 && p < gdest[k[j - 1].idx]) monotone = 0;
            if (blocks && (int64_t)(k[j].key >> (key_bits - lg)) != p) on_blocks = 0;
            double w = wall ? wall[k[j].idx] : 1.0;
            part[p] += w;
            total += w;
            wmax = w > wmax ? w : wmax;
        }
        int uniform = !wall || total == 0.0;
        if (uniform) {
            total = (double)ds->n;
            wmax = 1.0;
            for (int p = 0; p < size; p++) part[p] = 0.0;
            for (int64_t i = 0; i < ds->n; i++) part[gdest[i]] += 1.0;
        }
        CHECK_MSG(in_range && monotone, "%s %s work %d: pieces follow the curve order", ds->name,
                  curve ? "hilbert" : "morton", mode);
        CHECK_MSG(on_blocks, "%s %s slack %g: cuts on the curve's top blocks", ds->name,
                  curve ? "hilbert" : "morton", slack);
        for (int p = 0; p < size; p++)
            CHECK_MSG(
                fabs(part[p] - total / size) <= wmax + 2.0 * slack * total / size + 1e-9 * total,
                "%s %s work %d: piece %d holds work %g of %g (ideal %g, max point %g)", ds->name,
                curve ? "hilbert" : "morton", mode, p, part[p], total, total / size, wmax);
        free(k);
        free(part);
    }
    canopy_free(gdest);

    /* Exchange the global indices with dest: each rank receives exactly its piece. */
    int64_t *ids = malloc(sizeof *ids * (size_t)(hi - lo + 1));
    for (int64_t i = lo; i < hi; i++) ids[i - lo] = i;
    int64_t *mine = NULL, nmine = 0;
    canopy_dist_stats st = {0};
    CHECK_OK(canopy_dist_exchange(MPI_COMM_WORLD, ids, hi - lo, sizeof *ids, dest, (void **)&mine,
                                  &nmine, &st));
    int32_t *all_dest = NULL;
    int64_t nall = 0;
    CHECK_OK(canopy_dist_allgatherv(MPI_COMM_WORLD, dest, hi - lo, sizeof *dest, (void **)&all_dest,
                                    NULL, &nall));
    int64_t expect = 0, ok = 1, prev = -1;
    for (int64_t i = 0; i < nall; i++) expect += all_dest[i] == rank;
    for (int64_t i = 0; i < nmine; i++) {
        ok &= mine[i] >= 0 && mine[i] < ds->n && all_dest[mine[i]] == rank;
        ok &= mine[i] > prev; /* block order: by source rank, then source order */
        prev = mine[i];
    }
    CHECK_MSG(nmine == expect && ok, "%s: rank %d received %lld rows, expected %lld", ds->name,
              rank, (long long)nmine, (long long)expect);
    int64_t moved = 0;
    for (int64_t i = 0; i < hi - lo; i++) moved += dest[i] != rank;
    CHECK(st.bytes_sent == moved * (int64_t)sizeof *ids);
    canopy_free(mine);
    canopy_free(all_dest);
    free(ids);
    free(dest);
    free(all);
    free(wall);
}

/* canopy_dist_density_work on kind (0 uniform, 1 Plummer, 2 all points equal), the
 * points in rank blocks (and canopy_dist_decompose_by_density: its weights and pieces): weights >=
 * 0.2 everywhere; on uniform points 1 within 0.1 for 95 % of them; on a Plummer sphere the core (r
 * < 0.5) weighs more than the halo (r > 2) by more than half of 6 % a decade of its ~3 decades;
 * equal points (one cell of the curve) 1 within 0.05. */
static void check_density_work(int kind, int64_t n, uint64_t seed) {
    int rank = canopy_dist_rank(MPI_COMM_WORLD);
    float *all = malloc(sizeof *all * (size_t)(3 * n + 1));
    if (kind == 1)
        canopy_gen_plummer(all, NULL, n, seed);
    else
        canopy_gen_uniform(all, n, 3, -1.0, 1.0, seed);
    for (int64_t i = 0; kind == 2 && i < 3 * n; i++) all[i] = 0.5f;
    int64_t lo, hi;
    mpi_check_block(n, &lo, &hi);
    double *w = malloc(sizeof *w * (size_t)(hi - lo + 1));
    CHECK_OK(
        canopy_dist_density_work(MPI_COMM_WORLD, canopy_points_make(all + 3 * lo, hi - lo, 3), w));
    /* the one-sort form: the same weights and pieces as the two calls */
    canopy_points local = canopy_points_make(all + 3 * lo, hi - lo, 3);
    double *w1 = malloc(sizeof *w1 * (size_t)(hi - lo + 1));
    int32_t *d0 = malloc(sizeof *d0 * (size_t)(hi - lo + 1)),
            *d1 = malloc(sizeof *d1 * (size_t)(hi - lo + 1));
    CHECK_OK(canopy_dist_decompose(MPI_COMM_WORLD, local, w, CANOPY_CURVE_HILBERT, d0));
    CHECK_OK(canopy_dist_decompose_by_density(MPI_COMM_WORLD, local, w1, d1));
    int one = canopy_dist_size(MPI_COMM_WORLD) == 1; /* one piece: no weights needed */
    CHECK_MSG(hi == lo || ((one || !memcmp(w, w1, sizeof *w * (size_t)(hi - lo))) &&
                           !memcmp(d0, d1, sizeof *d0 * (size_t)(hi - lo))),
              "decompose by density: weights or pieces differ from the two calls' (kind %d)", kind);
    free(w1);
    free(d0);
    free(d1);
    double *gw = NULL;
    int64_t got = 0;
    CHECK_OK(
        canopy_dist_gatherv(MPI_COMM_WORLD, 0, w, hi - lo, sizeof *w, (void **)&gw, NULL, &got));
    if (rank == 0) {
        CHECK(got == n);
        int64_t low = 0, near1 = 0, close1 = 0, nc = 0, nh = 0;
        double core = 0.0, halo = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const float *p = all + 3 * i;
            double r = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
            low += !(gw[i] >= 0.2);
            near1 += fabs(gw[i] - 1.0) <= 0.1;
            close1 += fabs(gw[i] - 1.0) <= 0.05;
            if (r < 0.5) core += gw[i], nc++;
            if (r > 2.0) halo += gw[i], nh++;
        }
        CHECK_MSG(low == 0, "density work: %lld weights below 0.2", (long long)low);
        if (kind == 0)
            CHECK_MSG(near1 >= n * 95 / 100, "density work, uniform: %lld of %lld within 0.1 of 1",
                      (long long)near1, (long long)n);
        if (kind == 1)
            CHECK_MSG(nc > 0 && nh > 0 && core / nc > halo / nh + 0.09,
                      "density work, Plummer: core %g halo %g", core / (double)nc,
                      halo / (double)nh);
        if (kind == 2)
            CHECK_MSG(close1 == n, "density work, equal points: %lld of %lld within 0.05 of 1",
                      (long long)close1, (long long)n);
    }
    canopy_free(gw);
    free(w);
    free(all);
}

int main(int argc, char **argv) {
    mpi_check_init(&argc, &argv);
    uint64_t seed = mpi_check_seed();
    const dataset sets[] = {
        {"uniform3", 2000, 3, 0}, {"clusters3", 1500, 3, 1}, {"line1", 777, 1, 0},
        {"equal2", 300, 2, 2},    {"few4", 500, 4, 3},       {"tiny", 3, 2, 0},
        {"empty", 0, 3, 0},       {"wide8", 400, 8, 0},      {"uniform3big", 20000, 3, 0},
    };
    /* the full curve, and coarse ones (3 bits a side: many points share a cell, so the
     * ties by (rank, index) decide; 10: the kNN CLI's) */
    static const int32_t bit_choices[] = {0, 3, 10};
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
        for (int curve = 0; curve < 2; curve++)
            for (int mode = 0; mode < 3; mode++)
                for (int b = 0; b < 3; b++) {
                    check_one(&sets[s], (canopy_curve)curve, mode, bit_choices[b], 0.0, seed + s);
                    if (bit_choices[b] == 10) /* the CLI's cut, with slack */
                        check_one(&sets[s], (canopy_curve)curve, mode, 10, 0.1, seed + s);
                }

    check_density_work(0, 20000, seed + 100);
    check_density_work(1, 20000, seed + 101);
    check_density_work(2, 500, seed + 102);
    check_density_work(0, 3, seed + 103);
    check_density_work(0, 0, seed + 104);

    /* Bad input fails on every rank with the same message. */
    float pt[2] = {0.0f, NAN};
    int32_t d1[1];
    int rank = canopy_dist_rank(MPI_COMM_WORLD);
    canopy_points bad = canopy_points_make(pt, rank == 0 ? 1 : 0, 2);
    CHECK_FAILS(canopy_dist_decompose(MPI_COMM_WORLD, bad, NULL, CANOPY_CURVE_MORTON, d1),
                CANOPY_ERR_INVALID, "NaN");
    double negative = -1.0;
    canopy_points one = canopy_points_make(pt, rank == 0 ? 1 : 0, 1);
    CHECK_FAILS(canopy_dist_decompose(MPI_COMM_WORLD, one, &negative, CANOPY_CURVE_MORTON, d1),
                CANOPY_ERR_INVALID, "work[0]");
    return mpi_check_finish();
}
