/* SPDX-License-Identifier: MIT */
/* The per-row entry of the forest engines: each row is one task that starts at the
 * root of its own tree (tree_of[row]) instead of visiting every tree. The walkers and
 * the interpreter are the forests' own; only the task set differs. */
#include "forest/engine.h"
#include "forest/vm_forest.h"
#include "forest/forest.h"

#include <stdlib.h>

/* Large enough that the interpreter's queue hides memory latency across many
 * independent tasks, small enough for the queue to stay in L1/L2. */
enum { ROWS_BLOCK = 1024 };

/* One row down one tree of a linked layout: a single dependent walk, so the
 * level-synchronous walker's row blocks (walk_sync.c) do not apply. */
static void walk_linked_row(const cf_layout *L, const float *x, int32_t t, double *acc_row) {
    const cf_lnode *nodes = L->nodes;
    cf_lnode nd = nodes[L->root[t]];
    while (nd.key >= 0)
        nd = nodes[nd.child + cf_go_right(x[nd.key & CF_KEY_FEATURE], nd.thr, nd.key)];
    cf_add_leaf(L, ~nd.key, acc_row);
}

static void walk_row(const cf_layout *L, const float *X, int64_t stride, int64_t r, int32_t t,
                     double *acc_row) {
    switch (L->kind) {
    case CANOPY_FOREST_LAYOUT_CSR:
        canopy_cf_walk_csr(L, X, stride, r, r + 1, t, t + 1, acc_row);
        break;
    case CANOPY_FOREST_LAYOUT_HIER:
        canopy_cf_walk_hier(L, X, stride, r, r + 1, t, t + 1, acc_row);
        break;
    default:
        walk_linked_row(L, X + r * stride, t, acc_row);
        break;
    }
}

canopy_status canopy_cf_predict_rows(const cf_layout *L, const cvm_program *prog, int simd,
                                     int compaction, const float *X, int64_t stride, int64_t n,
                                     const int32_t *tree_of, double *acc, int64_t *steps) {
    if (prog && (int64_t)ROWS_BLOCK * stride >= INT32_MAX) simd = 0; /* 32-bit gathers */
    int64_t nb = (n + ROWS_BLOCK - 1) / ROWS_BLOCK, total = 0;
    int failed = 0;
#pragma omp parallel num_threads(canopy_threads()) reduction(+ : total) if (nb > 1)
    {
        int32_t *qrow = NULL, *qpc = NULL;
        if (prog) {
            qrow = malloc((ROWS_BLOCK + CVM_PAD) * sizeof *qrow);
            qpc = malloc((ROWS_BLOCK + CVM_PAD) * sizeof *qpc);
            if (!qrow || !qpc) {
#pragma omp atomic write
                failed = 1;
            }
        }
#pragma omp for schedule(dynamic, 4)
        for (int64_t b = 0; b < nb; b++) {
            int64_t r0 = b * ROWS_BLOCK, r1 = r0 + ROWS_BLOCK < n ? r0 + ROWS_BLOCK : n;
            double *a = acc + r0 * L->n_outputs;
            if (!prog) {
                for (int64_t r = r0; r < r1; r++)
                    walk_row(L, X, stride, r, tree_of[r], a + (r - r0) * L->n_outputs);
                continue;
            }
            if (!qrow || !qpc) continue;
            int32_t m = (int32_t)(r1 - r0);
            for (int32_t i = 0; i < m; i++) {
                qrow[i] = i;
                qpc[i] = L->root[tree_of[r0 + i]];
            }
            cvm_forest_ctx ctx = {prog, L->values, L->n_outputs};
            total +=
                simd ? canopy_cvm_forest_run_avx2(&ctx, X + r0 * stride, stride, qrow, qpc, m, a,
                                                  compaction)
                     : canopy_cvm_forest_run_scalar(&ctx, X + r0 * stride, stride, qrow, qpc, m, a);
        }
        free(qrow);
        free(qpc);
    }
    if (steps) *steps = total;
    if (failed) return canopy_fail(CANOPY_ERR_NOMEM, "out of memory for interpreter queues");
    return CANOPY_OK;
}
