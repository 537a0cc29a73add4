/* SPDX-License-Identifier: MIT */
/* libFuzzer target: canopy_predictor_load_mem on arbitrary bytes must never crash, leak
 * or read out of bounds; an error names the input. Each input is tried as given and
 * with its checksum recomputed (so mutations reach the model checks behind it). A
 * loaded predictor predicts a few rows, missing values included. */
#include "canopy.h"
#include "io/sectionfile.h"
#include "section_mutator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);

/* Edits trees, children, features, thresholds, base scores and leaf values with the
 * checksum kept valid (section_mutator.h). */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed) {
    return section_mutate(data, size, max_size, seed);
}

static void try_load(const uint8_t *buf, size_t size) {
    canopy_set_threads(1);
    canopy_predictor *p = NULL;
    canopy_status s = canopy_predictor_load_mem(buf, size, "fuzz.cpf", &p);
    if (s != CANOPY_OK) {
        if (p || strncmp(canopy_last_error(), "fuzz.cpf: ", 10) != 0) abort();
        return;
    }
    const canopy_forest *f = canopy_predictor_forest(p);
    canopy_forest_info info;
    canopy_forest_get_info(f, &info);
    if (info.n_features <= 64) {
        float x[3 * 64];
        for (int i = 0; i < 3 * 64; i++) x[i] = i % 7 == 0 ? NAN : (float)(i % 11) - 5.0f;
        canopy_points X = {x, 3, info.n_features, info.n_features};
        int32_t W = canopy_forest_output_width(f, CANOPY_FOREST_OUTPUT_PROB);
        double *out = malloc(sizeof(double) * 3 * (size_t)(W > 0 ? W : 1));
        for (int o = CANOPY_FOREST_OUTPUT_RAW; o <= CANOPY_FOREST_OUTPUT_CLASS; o++)
            canopy_predictor_predict(p, X, (canopy_forest_output)o, out, NULL);
        free(out);
    }
    canopy_predictor_free(p);
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
