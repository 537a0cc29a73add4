/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the lightgbm model importer (canopy_forest_load_mem) on arbitrary
 * bytes must never crash, leak or read out of bounds, nor allocate beyond what the
 * input can hold; an error leaves no model and names the input (issue 21). */
#include "fuzz_forest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_forest_check(CANOPY_FOREST_FORMAT_LIGHTGBM, data, size);
    return 0;
}
