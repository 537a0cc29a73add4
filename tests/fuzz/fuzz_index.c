/* SPDX-License-Identifier: MIT */
/* libFuzzer target: canopy_index_load_mem on arbitrary bytes must never crash, leak or
 * read out of bounds; an error names the input. Each input is tried twice: as given
 * (the checksum rejects nearly all mutations) and with its checksum recomputed, so
 * the structural checks behind it are fuzzed too. A loaded index answers a query. */
#include "canopy.h"
#include "io/sectionfile.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
        canopy_index_radius_count(ix, canopy_points_make(q, 4, 3), 0.5f, &o, out, NULL);
    } else if (info.d <= 8) {
        canopy_points qp = canopy_points_make(q, 32 / info.d < 4 ? 32 / info.d : 4, info.d);
        canopy_index_knn(ix, qp, 3, &o, out, NULL, NULL);
        canopy_index_radius_count(ix, qp, 0.5f, &o, out, NULL);
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
