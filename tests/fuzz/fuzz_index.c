/* SPDX-License-Identifier: MIT */
/* libFuzzer target: canopy_index_load_mem on arbitrary bytes must never crash, leak or
 * read out of bounds; an error names the input. Each input is tried twice: as given
 * and with its checksum recomputed, and the structure-aware mutator
 * (section_mutator.h) edits nodes, boxes, counts and points with the checksum kept
 * valid, so the structural checks and the engines behind them are fuzzed. A loaded
 * index answers queries on every variant, and its kNN distances and radius counts
 * must equal brute force over the file's own points: a file the loader accepts may
 * not quietly change answers (issue 35, rows 1, 2 and 6). */
#include "canopy.h"
#include "io/sectionfile.h"
#include "section_mutator.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    return section_mutate(data, size, max_size, seed);
}

static const char idx_magic[8] = {'C', 'N', 'P', 'Y', 'I', 'D', 'X', '1'};

/* The loaded index's answers against brute force over the points in the file. */
static void check_answers(const uint8_t *buf, size_t size, canopy_index *ix,
                          const canopy_index_info *info, canopy_points qp,
                          const canopy_run_options *o) {
    canopy_secfile f;
    const void *pts;
    if (info->n > 2048 || canopy_secfile_open_mem(buf, size, "fuzz.idx", idx_magic, 1, &f)) return;
    if (!canopy_secfile_get(&f, 3, 4, "points", info->n * info->d, &pts, NULL)) {
        canopy_points ref = canopy_points_make((const float *)pts, info->n, info->d);
        int64_t a[4], b[4], ia[12], ib[12];
        float da[12], db[12];
        if (!canopy_index_radius_count(ix, qp, 0.5f, o, a, NULL) &&
            !canopy_radius_count_brute(ref, qp, 0.5f, b) &&
            memcmp(a, b, sizeof(int64_t) * (size_t)qp.n))
            abort();
        if (info->kind != CANOPY_TREE_OCT && !canopy_index_knn(ix, qp, 3, o, ia, da, NULL) &&
            !canopy_knn_brute(ref, qp, 3, ib, db) &&
            memcmp(da, db, sizeof(float) * 3 * (size_t)qp.n))
            abort();
    }
    canopy_secfile_close(&f);
}

static void try_load(const uint8_t *buf, size_t size) {
    canopy_set_threads(1); /* fuzzing speed: no thread team per query */
    canopy_index *ix = NULL;
    canopy_status s = canopy_index_load_mem(buf, size, "fuzz.idx", &ix);
    if (s != CANOPY_OK) {
        if (ix || strncmp(canopy_last_error(), "fuzz.idx: ", 10) != 0) abort();
        return;
    }
    canopy_index_info info;
    if (canopy_index_get_info(ix, &info) || info.n < 0 || info.d < 1) abort();
    float q[4 * 8] = {0};
    for (int i = 0; i < 32; i++) q[i] = (float)(i % 5) * 0.25f;
    int64_t out[4 * 3];
    float acc[3 * 64];
    canopy_run_options o = canopy_run_options_default();
    o.backend = CANOPY_BACKEND_CPU;
    if (info.kind == CANOPY_TREE_BST) {
        canopy_index_search(ix, q, 4, &o, out, NULL);
    } else if (info.kind == CANOPY_TREE_OCT) {
        if (info.n <= 64) canopy_index_gravity(ix, 0.5f, 0.01f, &o, acc, NULL);
        check_answers(buf, size, ix, &info, canopy_points_make(q, 4, 3), &o);
    } else if (info.d <= 8) {
        canopy_points qp = canopy_points_make(q, 32 / info.d < 4 ? 32 / info.d : 4, info.d);
        /* every CPU variant: the guided orders (rec, dr) and simd_l's kd path read
         * child orders and `child + 1` */
        for (int v = CANOPY_VARIANT_REC; v <= CANOPY_VARIANT_SIMD_L; v++) {
            o.variant = (canopy_variant)v;
            canopy_index_knn(ix, qp, 3, &o, out, NULL, NULL);
        }
        o.variant = CANOPY_VARIANT_AUTO;
        check_answers(buf, size, ix, &info, qp, &o);
    }
    canopy_index_free(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try_load(data, size);
    if (size >= 64) {
        uint8_t *c = malloc(size);
        memcpy(c, data, size);
        memset(c + 28, 0, 4);
        uint32_t crc = canopy_crc32c(0, c, size);
        memcpy(c + 28, &crc, 4);
        try_load(c, size);
        free(c);
    }
    return 0;
}
