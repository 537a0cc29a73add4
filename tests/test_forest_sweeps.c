/* SPDX-License-Identifier: MIT */
/* The level-synchronous walker's sweeps (src/forest/walk_sync.h), each step rule on
 * every lane width this CPU has (scalar, 8 AVX2 lanes, 16 AVX-512 lanes), against a
 * row-by-row walk of the same nodes: random linked trees with random default
 * directions and zero-as-missing flags, random complete trees, and rows full of
 * threshold ties, NaN, signed zeros, values at LightGBM's zero bound and infinities,
 * for every block size 0..128 (the lane tails). The offsets and rows are allocated to
 * the sizes the contract promises, so the sanitizer build catches a sweep that reads
 * or writes past them. */
#include "check.h"
#include "forest/forest.h"
#include "forest/walk_sync.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_NODES = 2048, MAX_DEPTH = 10 };

static canopy_rng rng;

static uint32_t below(uint32_t n) {
    return (uint32_t)canopy_rng_below(&rng, n);
}

/* Thresholds and inputs share a grid, so ties x == t are common; the rest are the
 * values where the rules differ. */
static float rnd_value(void) {
    static const float special[] = {0.0f,   -0.0f,   1e-35f,   -1e-35f,   1.2e-35f,
                                    1e-36f, -1e-36f, INFINITY, -INFINITY, NAN};
    uint32_t k = below(10);
    if (k < 6) return (float)below(8) * 0.25f - 1.0f;
    if (k < 9) return special[below(sizeof special / sizeof special[0])];
    return (float)(canopy_rng_uniform(&rng) * 4 - 2);
}

typedef struct linked {
    cf_snode node[MAX_NODES];
    int32_t n, depth;
} linked;

/* Node i at index i: leaves are self-loops (threshold +inf, missing goes left), an
 * inner node's children sit side by side at next and next + 16, as canopy_cf_build_sync
 * lays them out. */
static void grow(linked *t, int32_t i, int32_t d, int32_t max_depth, int32_t nf) {
    if (d > t->depth) t->depth = d;
    if (d >= max_depth || t->n + 2 > MAX_NODES || below(100) < (uint32_t)(12 * d)) {
        t->node[i] = (cf_snode){INFINITY, 0, (uint32_t)i * 16u, CF_KEY_DL};
        return;
    }
    int32_t c = t->n;
    t->n += 2;
    float thr = rnd_value();
    if (thr != thr) thr = 0.5f; /* models have no NaN thresholds */
    int32_t key =
        (int32_t)below((uint32_t)nf) | (below(2) ? CF_KEY_DL : 0) | (below(2) ? CF_KEY_ZERO : 0);
    t->node[i] = (cf_snode){thr, (uint32_t)(key & CF_KEY_FEATURE) * 4u, (uint32_t)c * 16u, key};
    grow(t, c, d + 1, max_depth, nf);
    grow(t, c + 1, d + 1, max_depth, nf);
}

/* The rules written out per row (forest.h's cf_go_right for zero-as-missing). */
static uint32_t walk_linked(const linked *t, const float *x, int mode) {
    uint32_t o = 0;
    for (int32_t s = 0; s < t->depth; s++) {
        const cf_snode *nd = &t->node[o / 16];
        float v = x[nd->fofs / 4];
        int right = v > nd->thr;
        if (mode == CF_SWEEP_NAN && v != v) right = !(nd->key & CF_KEY_DL);
        if (mode == CF_SWEEP_ZERO) right = cf_go_right(v, nd->thr, nd->key);
        o = nd->next + (right ? 16u : 0u);
    }
    return o;
}

/* Runs every sweep table on a copy of off (nr rounded up to 16 slots; a whole block's
 * CF_SYNC_ROWS on complete trees, as the contract says) and compares the rows' final
 * offsets with want. */
static void check_tables(int mode, const char *base, int32_t depth, const char *xb, size_t rs,
                         int32_t nr, uint32_t root, const uint32_t *want, const char *what) {
    static const char *const names[] = {"scalar", "avx2", "avx512"};
    const cf_sweep_fn *tables[] = {
        canopy_cf_sweeps_scalar, canopy_cpu_isa() >= CANOPY_ISA_AVX2 ? canopy_cf_sweeps_avx2 : NULL,
        canopy_cpu_isa() >= CANOPY_ISA_AVX512 ? canopy_cf_sweeps_avx512 : NULL};
    size_t room = mode == CF_SWEEP_PERFECT ? CF_SYNC_ROWS : ((size_t)nr + 15) / 16 * 16;
    uint32_t *off = malloc((room ? room : 1) * sizeof *off);
    for (int k = 0; k < 3; k++) {
        if (!tables[k]) continue;
        for (size_t r = 0; r < room; r++) off[r] = root;
        tables[k][mode](base, depth, xb, rs, nr, off);
        int32_t bad = -1;
        for (int32_t r = 0; r < nr && bad < 0; r++)
            if (off[r] != want[r]) bad = r;
        CHECK_MSG(bad < 0, "%s, %s sweep: row %d of %d ends at %u, not %u", what, names[k], bad, nr,
                  bad < 0 ? 0 : off[bad], bad < 0 ? 0 : want[bad]);
    }
    free(off);
}

static void check_linked(int trial) {
    static linked t;
    int32_t nf = 1 + (int32_t)below(12), stride = nf + (int32_t)below(4);
    int32_t nr = trial % 4 == 0 ? (int32_t)below(CF_SYNC_ROWS + 1) : trial % CF_SYNC_ROWS + 1;
    t.n = 1;
    t.depth = 0;
    grow(&t, 0, 0, 1 + (int32_t)below(MAX_DEPTH), nf);
    float *x = malloc(((size_t)nr * (size_t)stride + 1) * sizeof *x);
    for (int32_t k = 0; k < nr * stride; k++) x[k] = rnd_value();
    uint32_t want[CF_SYNC_ROWS];
    char what[96];
    for (int mode = CF_SWEEP_PLAIN; mode <= CF_SWEEP_ZERO; mode++) {
        for (int32_t r = 0; r < nr; r++) want[r] = walk_linked(&t, x + (size_t)r * stride, mode);
        snprintf(what, sizeof what, "trial %d, linked mode %d, depth %d, %d rows", trial, mode,
                 t.depth, nr);
        check_tables(mode, (const char *)t.node, t.depth, (const char *)x,
                     (size_t)stride * sizeof *x, nr, 0, want, what);
    }
    free(x);
}

/* A complete tree of depth D over a feature-major block (a column of CF_SYNC_ROWS
 * floats per feature): slot i's children at 2i + 1 and 2i + 2, right when !(x <= t).
 * The SIMD sweeps take the top levels from registers and the rest in scalar chains:
 * depths 0..10 cover both parts and the hand-over. */
static void check_perfect(int trial) {
    int32_t depth = (int32_t)below(MAX_DEPTH + 1), ncols = 1 + (int32_t)below(9);
    int32_t nr = trial % 4 == 0 ? (int32_t)below(CF_SYNC_ROWS + 1) : trial % CF_SYNC_ROWS + 1;
    size_t slots = ((size_t)2 << depth) - 1;
    cf_pnode *nodes = malloc((slots + CF_PERFECT_PAD) * sizeof *nodes);
    for (size_t i = 0; i < slots + CF_PERFECT_PAD; i++) {
        float thr = rnd_value();
        nodes[i] = (cf_pnode){thr != thr ? INFINITY : thr,
                              below((uint32_t)ncols) * 4u * (uint32_t)CF_SYNC_ROWS};
    }
    float *cols = malloc((size_t)ncols * CF_SYNC_ROWS * sizeof *cols);
    for (int32_t k = 0; k < ncols * CF_SYNC_ROWS; k++) cols[k] = rnd_value();
    uint32_t want[CF_SYNC_ROWS];
    for (int32_t r = 0; r < nr; r++) {
        uint32_t i = 0;
        for (int32_t s = 0; s < depth; s++) {
            float v = cols[nodes[i].fofs / 4 + (uint32_t)r];
            i = 2 * i + 1 + !(v <= nodes[i].thr);
        }
        want[r] = i;
    }
    char what[96];
    snprintf(what, sizeof what, "trial %d, complete tree of depth %d, %d rows", trial, depth, nr);
    check_tables(CF_SWEEP_PERFECT, (const char *)nodes, depth, (const char *)cols, sizeof *cols, nr,
                 0, want, what);
    free(nodes);
    free(cols);
}

int main(void) {
    rng = canopy_rng_make(check_seed(), 18);
    if (canopy_cpu_isa() < CANOPY_ISA_AVX512)
        printf("skip: %s lanes (no %s here, or CANOPY_ISA caps it)\n",
               canopy_cpu_isa() < CANOPY_ISA_AVX2 ? "8 and 16" : "16",
               canopy_cpu_isa() < CANOPY_ISA_AVX2 ? "AVX2" : "AVX-512");
    for (int trial = 0; trial < 400; trial++) {
        check_linked(trial);
        check_perfect(trial);
    }
    return check_finish();
}
