/* SPDX-License-Identifier: MIT */
/* The SIMT layer (include/canopy/simt.h) on 8 and 16 lanes against scalar references:
 * every lane primitive on random lanes and masks, divergent and early-returning kernels,
 * barriers and block-shared memory, the applications and microbenchmarks. */
#include "check.h"
#include "simt/consts.h"
#include "simt/runtime.h"

#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;
static uint32_t rnd(void) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33);
}
/* Masks with empty, full and sparse cases among the random ones. */
static uint32_t rnd_mask(int w, int k) {
    uint32_t all = (uint32_t)((1ull << w) - 1);
    if (k == 0) return 0;
    if (k == 1) return all;
    if (k == 2) return 1u << (rnd() % w);
    return rnd() & all;
}

static void check_primitives(const simt_impl *s) {
    int w = s->width;
    int32_t base[256], idx[16], a[16], b[16], out[16], ref[16];
    float fb[256], fa[16], fo[16];
    for (int k = 0; k < 256; k++) {
        base[k] = (int32_t)rnd();
        fb[k] = (float)(int32_t)rnd() / 1000.0f;
    }
    for (int trial = 0; trial < 400; trial++) {
        uint32_t m = rnd_mask(w, trial % 8);
        /* Contiguous lanes, every other word (two-word records), or scattered. */
        int contiguous = trial % 3 == 0, strided = trial % 3 == 1, off = (int)(rnd() % 200);
        for (int l = 0; l < w; l++) {
            idx[l] = contiguous ? off + l : strided ? off + 2 * l : (int32_t)(rnd() % 256);
            a[l] = (int32_t)(rnd() % 64) - 32;
            b[l] = (int32_t)(rnd() % 64) - 32;
            fa[l] = (float)a[l] / 3.0f;
        }
        s->gather(base, idx, m, out);
        for (int l = 0; l < w; l++) ref[l] = m >> l & 1 ? base[idx[l]] : 0;
        CHECK_MSG(!memcmp(out, ref, sizeof(int32_t) * w), "%s gather, trial %d", s->isa, trial);
        s->gather_f(fb, idx, m, fo);
        int ok = 1;
        for (int l = 0; l < w; l++) ok &= fo[l] == (m >> l & 1 ? fb[idx[l]] : 0.0f);
        CHECK_MSG(ok, "%s gather_f, trial %d", s->isa, trial);
        s->load(base + off, m, out);
        for (int l = 0; l < w; l++) ref[l] = m >> l & 1 ? base[off + l] : 0;
        CHECK_MSG(!memcmp(out, ref, sizeof(int32_t) * w), "%s load, trial %d", s->isa, trial);

        uint32_t lt = 0, ltf = 0;
        for (int l = 0; l < w; l++) {
            lt |= (uint32_t)(a[l] < b[l]) << l;
            ltf |= (uint32_t)(fa[l] < (float)b[l]) << l;
        }
        float fbl[16];
        for (int l = 0; l < w; l++) fbl[l] = (float)b[l];
        CHECK_MSG(s->cmp_lt(a, b) == lt, "%s cmp_lt, trial %d", s->isa, trial);
        CHECK_MSG(s->cmp_lt_f(fa, fbl) == ltf, "%s cmp_lt_f, trial %d", s->isa, trial);

        int n = s->compress(a, m, out), rn = 0;
        for (int l = 0; l < w; l++)
            if (m >> l & 1) ref[rn++] = a[l];
        CHECK_MSG(n == rn && !memcmp(out, ref, sizeof(int32_t) * rn), "%s compress, trial %d",
                  s->isa, trial);

        s->blend(m, a, b, out);
        for (int l = 0; l < w; l++) ref[l] = m >> l & 1 ? a[l] : b[l];
        CHECK_MSG(!memcmp(out, ref, sizeof(int32_t) * w), "%s blend, trial %d", s->isa, trial);

        int32_t mem[256], rmem[256];
        memcpy(mem, base, sizeof mem);
        memcpy(rmem, base, sizeof rmem);
        s->store(mem + off, a, m);
        for (int l = 0; l < w; l++)
            if (m >> l & 1) rmem[off + l] = a[l];
        CHECK_MSG(!memcmp(mem, rmem, sizeof mem), "%s masked store, trial %d", s->isa, trial);
        /* Duplicate indices: the highest active lane's value stays. */
        for (int l = 0; l < w && !contiguous; l++) idx[l] = (int32_t)(rnd() % 24);
        s->scatter(mem, idx, b, m);
        for (int l = 0; l < w; l++)
            if (m >> l & 1) rmem[idx[l]] = b[l];
        CHECK_MSG(!memcmp(mem, rmem, sizeof mem), "%s scatter, trial %d", s->isa, trial);

        for (int l = 0; l < w; l++) idx[l] = (int32_t)(rnd() % 64);
        s->shfl(a, idx, out);
        for (int l = 0; l < w; l++) ref[l] = a[idx[l] % w];
        CHECK_MSG(!memcmp(out, ref, sizeof(int32_t) * w), "%s shfl, trial %d", s->isa, trial);

        uint32_t bal = 0;
        for (int l = 0; l < w; l++) bal |= (uint32_t)(a[l] > 0 && (m >> l & 1)) << l;
        for (int l = 0; l < w; l++) ref[l] = a[l] > 0 ? a[l] : 0;
        CHECK_MSG(s->ballot(ref, m) == bal, "%s ballot, trial %d", s->isa, trial);
    }
}

/* simt/lanes.h: gathers at every scale (byte offsets unaligned too), masked and not,
 * and the compaction store, which may fill its width but never writes past it. */
static void check_lane_extras(const simt_impl *s) {
    int w = s->width;
    unsigned char bytes[1024];
    int32_t off[16], out[17], ref[16], v[16];
    for (int k = 0; k < (int)sizeof bytes; k++) bytes[k] = (unsigned char)rnd();
    for (int trial = 0; trial < 400; trial++) {
        int scale = 1 << (trial % 4);
        uint32_t m = rnd_mask(w, trial % 8);
        for (int l = 0; l < w; l++) {
            off[l] = (int32_t)(rnd() % ((sizeof bytes - 4) / (unsigned)scale + 1));
            v[l] = (int32_t)rnd();
        }
        s->gather_at(bytes, off, scale, out);
        for (int l = 0; l < w; l++) memcpy(&ref[l], bytes + (size_t)off[l] * scale, 4);
        CHECK_MSG(!memcmp(out, ref, sizeof(int32_t) * w), "%s gather_at scale %d, trial %d", s->isa,
                  scale, trial);
        s->gather_at_masked(bytes, off, scale, m, out);
        for (int l = 0; l < w; l++)
            if (!(m >> l & 1)) ref[l] = 0;
        CHECK_MSG(!memcmp(out, ref, sizeof(int32_t) * w), "%s gather_at_masked scale %d, trial %d",
                  s->isa, scale, trial);
        out[w] = 0x5eed;
        int n = s->compact_store(v, m, out), rn = 0;
        for (int l = 0; l < w; l++)
            if (m >> l & 1) ref[rn++] = v[l];
        CHECK_MSG(n == rn && !memcmp(out, ref, sizeof(int32_t) * rn) && out[w] == 0x5eed,
                  "%s compact_store, trial %d", s->isa, trial);
    }
}

static int32_t *rnd_array(int n, int32_t mod) {
    int32_t *v = malloc(sizeof *v * (size_t)(n > 0 ? n : 1));
    for (int i = 0; i < n; i++) v[i] = (int32_t)(rnd() % (uint32_t)mod);
    return v;
}

static void check_kernels(const simt_impl *s) {
    static const int sizes[] = {0, 1, 7, 16, 17, 100, 1000, 5003};
    static const int bdims[] = {1, 8, 16, 20, 64, 96};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        int n = sizes[si];
        int32_t *in = rnd_array(n, 100000), *out = rnd_array(n, 3), *ref = rnd_array(n, 3);
        for (size_t bi = 0; bi < sizeof bdims / sizeof *bdims; bi++) {
            int bd = bdims[bi];
            canopy_simt_ref_divergent(in, ref, n);
            CHECK(s->divergent(in, out, n, bd, 2) == 0);
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s divergent n=%d bdim=%d",
                      s->isa, n, bd);
            for (int rounds = 0; rounds < 4; rounds += 3) {
                canopy_simt_ref_exchange(in, ref, n, bd, rounds);
                CHECK(s->exchange(in, out, n, bd, rounds, 1, 2) == 0);
                CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n),
                          "%s exchange n=%d bdim=%d rounds=%d", s->isa, n, bd, rounds);
            }
        }
        /* One-warp blocks need no team: the barrier is trivially kept. */
        canopy_simt_ref_exchange(in, ref, n, s->width, 5);
        CHECK(s->exchange(in, out, n, s->width, 5, 0, 2) == 0);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s exchange without team n=%d",
                  s->isa, n);

        for (int rdeg = 0; rdeg <= 4095 && rdeg + 1 <= (n > 0 ? n : 1);
             rdeg = rdeg ? 2 * rdeg + 1 : 63) {
            canopy_simt_ref_memory(in, ref, n, rdeg, 3, 1);
            CHECK(s->memory(in, out, n, rdeg, 3, 2) == 0);
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s memory n=%d rdeg=%d", s->isa,
                      n, rdeg);
        }
        for (int d = 1; d <= 32; d *= 4) {
            canopy_simt_ref_diverge(ref, n, d, 5, 1);
            CHECK(s->diverge(out, n, d, 5, 2) == 0);
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s diverge n=%d d=%d", s->isa, n,
                      d);
        }
        free(in);
        free(out);
        free(ref);
    }
    int32_t sm[64], rsm[64];
    for (int rdeg = 0; rdeg <= 2048; rdeg = rdeg ? 2 * rdeg : 64) {
        canopy_simt_ref_shmem(rsm, rdeg, 100);
        for (int team = 0; team < 2; team++) {
            memset(sm, 0, sizeof sm);
            CHECK(s->shmem(sm, rdeg, 100, team) == 0);
            CHECK_MSG(!memcmp(sm, rsm, sizeof sm), "%s shmem rdeg=%d team=%d", s->isa, rdeg, team);
        }
    }
    CHECK(s->barrier(64, 1000) == 0);
    CHECK(s->empty(10, 64, 2) == 0);
}

static void check_pathfinder(const simt_impl *s) {
    static const int shapes[][2] = {{1, 1}, {1, 9}, {2, 1}, {5, 3}, {20, 100}, {7, 1001}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int rows = shapes[k][0], cols = shapes[k][1];
        int32_t *wall = rnd_array(rows * cols, 10), *out = rnd_array(cols, 3),
                *ref = rnd_array(cols, 3);
        /* Brute force from the definition: the cheapest path ending at each cell. */
        memcpy(ref, wall, sizeof *ref * (size_t)cols);
        for (int r = 1; r < rows; r++) {
            int32_t prev[1001];
            memcpy(prev, ref, sizeof *ref * (size_t)cols);
            for (int x = 0; x < cols; x++) {
                int32_t m = prev[x];
                for (int dx = -1; dx <= 1; dx++)
                    if (x + dx >= 0 && x + dx < cols && prev[x + dx] < m) m = prev[x + dx];
                ref[x] = m + wall[r * cols + x];
            }
        }
        CHECK(s->pathfinder(wall, rows, cols, out, 2) == 0);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)cols), "%s pathfinder %dx%d", s->isa,
                  rows, cols);
        canopy_simt_ref_pathfinder(wall, rows, cols, out, 2);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)cols), "OpenMP pathfinder %dx%d", rows,
                  cols);
        free(wall);
        free(out);
        free(ref);
    }
}

/* Hotspot and NN in floats: the SIMT kernels evaluate the reference's expressions in
 * the same order, so results are bit-equal. */
static void check_float_apps(const simt_impl *s) {
    static const int shapes[][2] = {{1, 1}, {1, 5}, {4, 1}, {3, 17}, {64, 64}, {9, 300}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int rows = shapes[k][0], cols = shapes[k][1], cells = rows * cols;
        float *temp = malloc(sizeof *temp * (size_t)cells),
              *power = malloc(sizeof *power * (size_t)cells);
        float *out = malloc(sizeof *out * (size_t)cells),
              *ref = malloc(sizeof *ref * (size_t)cells);
        for (int i = 0; i < cells; i++) {
            temp[i] = 320.0f + (float)(rnd() % 1000) / 100.0f;
            power[i] = (float)(rnd() % 1000) / 1e6f;
        }
        for (int iters = 0; iters <= 5; iters += 5) {
            canopy_simt_ref_hotspot(temp, power, rows, cols, iters, ref, 2);
            CHECK(s->hotspot(temp, power, rows, cols, iters, out, 2) == 0);
            CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)cells), "%s hotspot %dx%d iters=%d",
                      s->isa, rows, cols, iters);
        }
        /* Not the identity: a step moves the temperatures. */
        CHECK(memcmp(ref, temp, sizeof *ref * (size_t)cells) != 0);
        free(temp);
        free(power);
        free(out);
        free(ref);
    }
    static const int sizes[] = {0, 1, 15, 33, 4097};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        float *rec = malloc(sizeof *rec * (size_t)(2 * n + 1)),
              *out = malloc(sizeof *out * (size_t)(n + 1)),
              *ref = malloc(sizeof *ref * (size_t)(n + 1));
        for (int i = 0; i < 2 * n; i++) rec[i] = (float)((int)(rnd() % 36000) - 18000) / 100.0f;
        canopy_simt_ref_nn(rec, n, 30.5f, -90.25f, ref, 1);
        CHECK(s->nn(rec, n, 30.5f, -90.25f, out, 2) == 0);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s nn n=%d", s->isa, n);
        free(rec);
        free(out);
        free(ref);
    }
}

/* Levenshtein against a brute force: a substring ending at i within distance 1 of the
 * pattern is one of length 7, 8 or 9 with at most one edit, checked by full DP. */
static int32_t edit_distance(const int32_t *a, int na, const int32_t *b, int nb) {
    int32_t d[16][16];
    for (int i = 0; i <= na; i++)
        for (int j = 0; j <= nb; j++) {
            if (i == 0 || j == 0) {
                d[i][j] = i + j;
                continue;
            }
            int32_t v = d[i - 1][j] + 1 < d[i][j - 1] + 1 ? d[i - 1][j] + 1 : d[i][j - 1] + 1;
            int32_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            d[i][j] = v < sub ? v : sub;
        }
    return d[na][nb];
}

static void check_lev(const simt_impl *s) {
    static const int shapes[][2] = {{1, 0}, {1, 5}, {3, 40}, {17, 64}, {100, 30}};
    int32_t pat[SIMT_LEV_M];
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int n = shapes[k][0], len = shapes[k][1];
        int32_t *text = malloc(sizeof *text * (size_t)(n * len + 1)),
                *out = malloc(sizeof *out * (size_t)n), *ref = malloc(sizeof *ref * (size_t)n),
                *row = malloc(sizeof *row * (size_t)(len + 1));
        for (int j = 0; j < SIMT_LEV_M; j++) pat[j] = (int32_t)(rnd() % 2);
        for (int i = 0; i < n * len; i++) text[i] = (int32_t)(rnd() % 2); /* 2 letters: many hits */
        /* Random text misses the pattern now and then (a flaky CHECK(any) in CI): plant one copy
         * in stream 0 so every long shape has a hit to count. */
        if (len >= SIMT_LEV_M) {
            int at = (int)(rnd() % (unsigned)(len - SIMT_LEV_M + 1));
            for (int j = 0; j < SIMT_LEV_M; j++) text[(size_t)(at + j) * n] = pat[j];
        }
        int any = 0;
        for (int g = 0; g < n; g++) {
            for (int i = 0; i < len; i++) row[i] = text[(size_t)i * n + g];
            ref[g] = 0;
            for (int e = 0; e < len; e++) {
                int hit = 0;
                for (int m = SIMT_LEV_M - 1; m <= SIMT_LEV_M + 1 && !hit; m++)
                    if (e + 1 - m >= 0)
                        hit = edit_distance(row + e + 1 - m, m, pat, SIMT_LEV_M) <= 1;
                ref[g] += hit;
            }
            any |= ref[g] > 0;
        }
        CHECK(s->lev(text, n, len, pat, out, 2) == 0);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s lev n=%d len=%d", s->isa, n, len);
        canopy_simt_ref_lev(text, n, len, pat, out, 2);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "OpenMP lev n=%d len=%d", n, len);
        if (len >= 30) CHECK(any);
        free(text);
        free(out);
        free(ref);
        free(row);
    }
}

/* Random graphs (isolated vertices, self loops, duplicate edges) against a queue BFS. */
static void check_bfs(const simt_impl *s) {
    static const size_t sizes[] = {1, 2, 30, 1000, 4000};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        /* sizes in size_t: gcc -O1 cannot see that an int n is positive in the mallocs */
        size_t un = sizes[k];
        int n = (int)un, deg = (int)(rnd() % 4);
        int32_t *rowptr = malloc(sizeof *rowptr * (un + 1));
        int32_t *col = malloc(sizeof *col * (size_t)(n * deg + 1));
        rowptr[0] = 0;
        for (int v = 0; v < n; v++) {
            int d = (int)(rnd() % (unsigned)(2 * deg + 1));
            if (d > deg) d = deg;
            for (int e = 0; e < d; e++) col[rowptr[v] + e] = (int32_t)(rnd() % (unsigned)n);
            rowptr[v + 1] = rowptr[v] + d;
        }
        int src = (int)(rnd() % (unsigned)n);
        int32_t *ref = malloc(sizeof *ref * un), *q = malloc(sizeof *q * un),
                *out = malloc(sizeof *out * un);
        for (int v = 0; v < n; v++) ref[v] = -1;
        int head = 0, tail = 0;
        ref[src] = 0;
        q[tail++] = src;
        while (head < tail) {
            int v = q[head++];
            for (int e = rowptr[v]; e < rowptr[v + 1]; e++)
                if (ref[col[e]] < 0) {
                    ref[col[e]] = ref[v] + 1;
                    q[tail++] = col[e];
                }
        }
        CHECK(s->bfs(rowptr, col, n, src, out, 2) == 0);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "%s bfs n=%d deg=%d", s->isa, n, deg);
        canopy_simt_ref_bfs(rowptr, col, n, src, out, 2);
        CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)n), "OpenMP bfs n=%d", n);
        free(rowptr);
        free(col);
        free(ref);
        free(q);
        free(out);
    }
}

/* The pyramids (block-wide kernels with shared tiles and a barrier per step) against the
 * flat references: tile sizes that do not divide the grid, pyramids taller than the
 * remaining rows or steps, blocks of partial warps, warps run in turn and as a team. */
static void check_tiles(const simt_impl *s) {
    static const int shapes[][2] = {{1, 1},    {2, 1},    {1, 9},   {5, 3},
                                    {20, 100}, {33, 517}, {7, 1001}};
    static const int pf[][2] = {{3, 1},  {16, 1}, {16, 7},
                                {20, 2}, {40, 3}, {64, 20}}; /* bdim, steps */
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        int rows = shapes[k][0], cols = shapes[k][1];
        int32_t *wall = rnd_array(rows * cols, 10), *out = rnd_array(cols, 3),
                *ref = rnd_array(cols, 3);
        canopy_simt_ref_pathfinder(wall, rows, cols, ref, 1);
        for (size_t c = 0; c < sizeof pf / sizeof *pf; c++)
            for (int team = 0; team < 2; team++) {
                memset(out, 0x55, sizeof *out * (size_t)cols);
                CHECK(s->pathfinder_tiled(wall, rows, cols, pf[c][0], pf[c][1], team, out, 2) == 0);
                CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)cols),
                          "%s tiled pathfinder %dx%d bdim=%d steps=%d team=%d", s->isa, rows, cols,
                          pf[c][0], pf[c][1], team);
            }
        free(wall);
        free(out);
        free(ref);
    }
    CHECK(s->pathfinder_tiled(NULL, 3, 3, 4, 2, 0, NULL, 1) == -1); /* bdim <= 2 steps */

    static const int hs[][2] = {{1, 1}, {1, 5}, {4, 1}, {3, 17}, {64, 64}, {37, 53}, {9, 300}};
    static const int ht[][3] = {
        {2, 3, 1}, {3, 5, 2}, {4, 8, 3}, {5, 4, 1}, {4, 16, 7}}; /* tw_log, th, steps */
    for (size_t k = 0; k < sizeof hs / sizeof *hs; k++) {
        int rows = hs[k][0], cols = hs[k][1], cells = rows * cols;
        float *temp = malloc(sizeof *temp * (size_t)cells),
              *power = malloc(sizeof *power * (size_t)cells);
        float *out = malloc(sizeof *out * (size_t)cells),
              *ref = malloc(sizeof *ref * (size_t)cells);
        for (int i = 0; i < cells; i++) {
            temp[i] = 320.0f + (float)(rnd() % 1000) / 100.0f;
            power[i] = (float)(rnd() % 1000) / 1e6f;
        }
        for (int iters = 1; iters <= 7; iters += 3) {
            canopy_simt_ref_hotspot(temp, power, rows, cols, iters, ref, 1);
            for (size_t c = 0; c < sizeof ht / sizeof *ht; c++)
                for (int team = 0; team < 2; team++) {
                    if (team && (1 << ht[c][0]) * ht[c][1] > 8 * s->width) continue;
                    memset(out, 0, sizeof *out * (size_t)cells);
                    CHECK(s->hotspot_tiled(temp, power, rows, cols, iters, ht[c][0], ht[c][1],
                                           ht[c][2], team, out, 2) == 0);
                    CHECK_MSG(!memcmp(out, ref, sizeof *out * (size_t)cells),
                              "%s tiled hotspot %dx%d iters=%d tile=%dx%d steps=%d team=%d", s->isa,
                              rows, cols, iters, 1 << ht[c][0], ht[c][1], ht[c][2], team);
                }
        }
        free(temp);
        free(power);
        free(out);
        free(ref);
    }
    CHECK(s->hotspot_tiled(NULL, NULL, 3, 3, 1, 1, 8, 1, 0, NULL, 1) == -1); /* 2 <= 2 steps */
}

/* Gaussian elimination on random diagonally dominant systems (no pivoting needed): the
 * SIMT kernels equal the scalar loops bit for bit, and both solve the system (residual
 * against a double-precision elimination). */
static void check_gaussian(const simt_impl *s) {
    static const int sizes[] = {1, 2, 3, 7, 8, 15, 16, 17, 33, 130};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        float *a = malloc(sizeof *a * (size_t)n * n), *b = malloc(sizeof *b * (size_t)n),
              *x = malloc(sizeof *x * (size_t)n), *xr = malloc(sizeof *xr * (size_t)n);
        double *ad = malloc(sizeof *ad * (size_t)n * n), *bd = malloc(sizeof *bd * (size_t)n);
        for (int i = 0; i < n; i++) {
            float sum = 0.0f;
            for (int j = 0; j < n; j++) {
                a[i * n + j] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
                sum += a[i * n + j] < 0 ? -a[i * n + j] : a[i * n + j];
            }
            a[i * n + i] = (rnd() & 1 ? -1.0f : 1.0f) * (sum + 1.0f);
            b[i] = (float)((int)(rnd() % 2001) - 1000) / 100.0f;
        }
        for (int i = 0; i < n * n; i++) ad[i] = a[i];
        for (int i = 0; i < n; i++) bd[i] = b[i];
        for (int t = 0; t < n; t++) /* double elimination and back substitution */
            for (int i = t + 1; i < n; i++) {
                double m = ad[i * n + t] / ad[t * n + t];
                for (int j = t; j < n; j++) ad[i * n + j] -= m * ad[t * n + j];
                bd[i] -= m * bd[t];
            }
        for (int i = n - 1; i >= 0; i--) {
            for (int j = i + 1; j < n; j++) bd[i] -= ad[i * n + j] * bd[j];
            bd[i] /= ad[i * n + i];
        }
        canopy_simt_ref_gaussian(a, b, n, xr, 2);
        memset(x, 0, sizeof *x * (size_t)n);
        CHECK(s->gaussian(a, b, n, x, 2) == 0);
        CHECK_MSG(!memcmp(x, xr, sizeof *x * (size_t)n), "%s gaussian n=%d", s->isa, n);
        double err = 0.0;
        for (int i = 0; i < n; i++) {
            double e = xr[i] - bd[i];
            err = e < 0 ? (-e > err ? -e : err) : (e > err ? e : err);
        }
        CHECK_MSG(err < 1e-4, "OpenMP gaussian n=%d: max error %g", n, err);
        free(a);
        free(b);
        free(x);
        free(xr);
        free(ad);
        free(bd);
    }
}

int main(void) {
    rng_state = check_seed();
    const simt_impl *tables[] = {&canopy_simt_impl_generic, canopy_simt_impl_for(8),
                                 canopy_simt_impl_for(16)};
    for (int t = 0; t < 3; t++) {
        if (!tables[t]) {
            printf("skip: 16 lanes need AVX-512, which this CPU lacks\n");
            continue;
        }
        check_primitives(tables[t]);
        check_lane_extras(tables[t]);
        check_kernels(tables[t]);
        check_pathfinder(tables[t]);
        check_bfs(tables[t]);
        check_float_apps(tables[t]);
        check_lev(tables[t]);
        check_tiles(tables[t]);
        check_gaussian(tables[t]);
    }
    return check_finish();
}
